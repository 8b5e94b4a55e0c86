"""Measure kswapd's wake-up latency in the validation guest, the figure behind the validation
scenarios' `[cost] wakeup_latency`: one boot of a validation scenario (default
anon-seq-reread) with kswapd0's sched_wakeup/sched_switch events traced during the workload
(the guest's /init always traces them), written to the reference sitting's real/kswapd-wakeup.json
(anon-seq-reread) or real/<scenario>.kswapd-wakeup.json (any other scenario).

Usage: .venv/bin/python scripts/validate-wakeup.py [SCENARIO] [--accel kvm|tcg]
                                                   [--from sched_wakeup|wakeup_kswapd]
`--from wakeup_kswapd` measures from the allocator's mm_vmscan_wakeup_kswapd to kswapd's
mm_vmscan_kswapd_wake (balance_pgdat starting) instead: the whole wait of an allocation that
woke kswapd, including a stall of kswapd's vCPU after its switch onto it (docs/VALIDATION.md,
"What a traced boot shows"), which is what the simulator's wake-up latency stands for; take
such a boot in the same sitting as the kept results it is to go with.
`--kept` boots nothing: it pools the samples that every kept boot of the scenario recorded
(real/<scenario>.json: `kswapd_wait_us` of each rep with `--from wakeup_kswapd`,
`kswapd_wakeup_us` with the default; the guest's /init traces every boot), so the samples come
from the very boots the scenario is scored against.
SCENARIO is a name in validation/calibrate/ or predict/ (the reference sitting's real/) or a
scenario file (a sitting's own: its real/ directory). The guest profile pools the calibration
boots' latencies itself (scripts/validate-calibrate.py); these files are the sittings' own.
Needs what `reclaimlab validate --boot` needs (bash scripts/validate-setup.sh), except with
`--kept`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
from pathlib import Path

from reclaimlab.validate import guest, kernel, spec, store
from reclaimlab.validate.errors import ValidateError

ROOT = Path(__file__).resolve().parent.parent
# What the two kinds of samples measure (the `what` of the file written).
SCHED_WHAT = ("kswapd0 wake-up latency: microseconds from each sched_wakeup of kswapd0 to the "
              "next sched_switch onto it")
WAIT_WHAT = ("kswapd0 wake-up latency: microseconds from the allocator's first "
             "mm_vmscan_wakeup_kswapd after a kswapd run began to the next "
             "mm_vmscan_kswapd_wake")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("scenario", nargs="?", default="anon-seq-reread")
    p.add_argument("--accel", choices=("kvm", "tcg"), default="tcg")
    p.add_argument("--from", dest="start", choices=("sched_wakeup", "wakeup_kswapd"),
                   default="sched_wakeup")
    p.add_argument("--kept", action="store_true",
                   help="pool the waits the kept boots recorded instead of booting")
    args = p.parse_args()
    if args.kept:
        return from_kept(args.scenario, args.start)
    try:
        s = load(args.scenario)
        k = kernel.fetch_kernel(store.CACHE)
        rep = guest.boot(s, k, store.CACHE / "work-wakeup" / s.name, kernel.busybox_binary(),
                         kernel.build_workload(store.CACHE), 1, args.accel == "kvm")
    except ValidateError as e:
        print(f"validate-wakeup: {e}", file=sys.stderr)
        return e.exit_code
    lat = rep.get("kswapd_wakeup_us" if args.start == "sched_wakeup" else "kswapd_wait_us", [])
    what = (SCHED_WHAT if args.start == "sched_wakeup" else WAIT_WHAT)
    return keep(s, lat, {
        "what": what + ", during one run of the scenario's workload",
        "wall_time_s": rep["wall_time_s"],
        "scenario": s.name, "accel": args.accel.upper(), "kernel": rep["kernel"],
        "date": datetime.date.today().isoformat(),
    })


def load(scenario: str) -> spec.GuestSpec:
    """validation/calibrate/ or predict/<scenario>.toml, or the scenario file itself; a
    ValidateError (exit 2) naming it when it is missing or malformed."""
    return spec.load_for_script(spec.find(scenario, ROOT / "validation"))


def summary(lat: list[float]) -> dict:
    q = statistics.quantiles(lat, n=10)
    return {"wakeups": len(lat), "mean_us": round(statistics.fmean(lat), 1),
            "median_us": statistics.median(lat), "p10_us": q[0], "p90_us": q[-1]}


def keep(s: spec.GuestSpec, lat: list[float], fields: dict) -> int:
    """Write the samples ``lat`` with ``fields`` and their summary; 1 (nothing written) when
    there are too few to draw from."""
    if len(lat) < 10:
        print(f"validate-wakeup: only {len(lat)} kswapd wake-ups traced; nothing written",
              file=sys.stderr)
        return 1
    write(s, fields | summary(lat) | {"latencies_us": lat})
    return 0


def write(s: spec.GuestSpec, out: dict) -> None:
    # anon-seq-reread's boot is the validation scenarios' default sample; another scenario's
    # boot keeps its own (its workloads keep the vCPUs busier or idler than anon-seq-reread's).
    name = "kswapd-wakeup" if s.name == "anon-seq-reread" else f"{s.name}.kswapd-wakeup"
    path = s.real_dir / f"{name}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"{path}: {out['wakeups']} wake-ups, mean {out['mean_us']} us, "
          f"median {out['median_us']} us")


def from_kept(scenario: str, start: str) -> int:
    """The samples of every kept boot of ``scenario``, pooled, as the scenario's samples:
    ``start`` says which (see --from)."""
    try:
        s = load(scenario)
        kept = store.load(s)
    except ValidateError as e:
        print(f"validate-wakeup: {e}", file=sys.stderr)
        return e.exit_code
    reps = kept["reps"]
    field = "kswapd_wakeup_us" if start == "sched_wakeup" else "kswapd_wait_us"
    if not all(field in r for r in reps):
        print(f"validate-wakeup: the kept boots of {s.name} predate the traced /init (no "
              f"{field}); regenerate them with scripts/validate-real.sh {s.path}",
              file=sys.stderr)
        return 2
    what = SCHED_WHAT if start == "sched_wakeup" else WAIT_WHAT
    return keep(s, [x for r in reps for x in r[field]], {
        "what": what + ", pooled over the kept boots of the scenario (the boots it is "
                "scored against)",
        "scenario": s.name, "accel": kept["accel"], "kernel": kept["kernel"],
        "date": kept["date"][:10], "boots": len(reps),
        "wall_time_s": [r["wall_time_s"] for r in reps],
    })


if __name__ == "__main__":
    sys.exit(main())
