#!/usr/bin/env python3
"""The model's swap-ins summarised as the guest's are (docs/MODEL.md item 11; diagnosis only, in
no score): the validation scenario merged with the guest profile as `reclaimlab validate` runs
it (`--sim-out`), run with the kernel trace, whose swapin_lookup / swapin_cluster / swapin_read
events are the guest's kprobe events (initramfs.SWAPIN_PROBES), summarised by
swapintrace.swapins. The summary is written as DIR/SCENARIO.swapin.json beside the run's swap
counters, to set beside a traced boot's `real/SCENARIO.swapin.json`.

    python scripts/model-swapin.py validation/predict/ext4-create-walk-200.toml \\
        --out validation/sittings/2026-12-01-swapin-diagnosis/sim
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import reclaimlab
from reclaimlab.validate import swapintrace

COUNTERS = ("pgmajfault", "pswpin", "pswpout", "swap_ra", "swap_ra_hit",
            "workingset_refault_anon", "workingset_activate_anon")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    name = args.scenario.stem
    with tempfile.TemporaryDirectory() as d:
        # The scenario as validate simulates it: the profile merged, the host's settings set.
        subprocess.run([sys.executable, "-m", "reclaimlab", "validate", str(args.scenario),
                        "--reps", "1", "--sim-out", d], check=True, stdout=subprocess.DEVNULL)
        merged = Path(d) / f"{name}.toml"
        r = reclaimlab.run(merged, seed=args.seed, trace="kernel")
    # The model's trace shifts its clock by 1 s; its workloads start at 0.
    summary = swapintrace.swapins(r.trace, start_s=1.0)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{name}.swapin.json"
    path.write_text(json.dumps({
        "what": "the model's run of the scenario as validate simulates it, its swap-ins traced "
                "with the guest's events and summarised as a traced boot's are "
                "(reclaimlab.validate.swapintrace.swapins)",
        "scenario": name,
        "seed": args.seed,
        "engine": reclaimlab.ENGINE_VERSION,
        "command": f"python scripts/model-swapin.py {args.scenario} --out {args.out}",
        "vmstat": {k: r.vmstat[k] for k in COUNTERS},
        "accesses": [t["accesses"] for t in r.summary["threads"]],
        "swapin": summary,
    }, indent=1) + "\n")
    print(f"{path}: {summary['misses']} misses, {summary['readahead_hits']} readahead hits, "
          f"windows {summary['windows']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
