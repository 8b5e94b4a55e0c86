"""Boot one validation scenario with kswapd and direct reclaim traced, and keep what the trace
says (validate/ktrace.py) in its sitting's real/<scenario>.trace.json: kswapd's runs and time on
a CPU, what it was doing when each direct reclaim began, and the boost wake-ups.

With --shrinkers the boot also traces every `do_shrink_slab` call, and the file kept is
<scenario>.shrinkers.json: the kswapd summary, the vmstat delta, and each of the kernel's
shrinkers' calls, planned and done scans and frees (shrinktrace.shrinkers), the figures behind
`slabs_scanned`.

With --swapin the boot also puts kprobes on the workload's swap-in path (initramfs.SWAPIN_PROBES:
each swap-cache lookup and whether it found the page, each readahead window chosen, each page
read), and the file kept is <scenario>.swapin.json: the kswapd summary, the vmstat delta, and
the workload's faults in order (swapintrace.swapins: misses, readahead hits, windows by size,
hits per gap between misses, runs of misses), docs/MODEL.md item 10. Its transcript is kept
apart from the other modes' (work-swapin/ in the cache), so it replaces no other traced boot.

With --tasks the boot traces every task's scheduler events, and the file kept is
<scenario>.tasks.json beside it: the same summary, and where each workload task's time went
(ktrace.workload_time: on its vCPU, in I/O wait, preempted, in direct reclaim), the figures
behind a scenario's workload costs. That boot runs slower than the standard traced one (its
trace is larger), so it is kept apart from the scenario's scored boots.

Usage: .venv/bin/python scripts/validate-trace.py SCENARIO [--tasks | --shrinkers | --swapin]
           [--accel kvm|tcg] [--sitting DIR]
       .venv/bin/python scripts/validate-trace.py SCENARIO --console PATH   (an earlier boot's
       console transcript instead of a new boot)
SCENARIO is a name in validation/calibrate/ or validation/predict/ (the result goes to the
real/ of --sitting DIR, by default the reference sitting's) or a scenario file (a sitting's own:
the real/ directory beside it). Needs what `reclaimlab validate --boot` needs (bash
scripts/validate-setup.sh).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

from reclaimlab.validate import guest, kernel, ktrace, shrinktrace, spec, store, swapintrace
from reclaimlab.validate.errors import ValidateError

ROOT = Path(__file__).resolve().parent.parent
SHOWN = ("allocstall_movable", "pgscan_kswapd", "pgsteal_kswapd", "pgscan_direct",
         "pgsteal_direct", "pageoutrun", "pswpout", "pgskip_dma32", "compact_stall",
         "thp_fault_alloc", "thp_fault_fallback")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("scenario")
    p.add_argument("--accel", choices=("kvm", "tcg"), default="tcg")
    p.add_argument("--console", type=Path, help="summarise this console transcript instead")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--tasks", action="store_true",
                   help="trace every task's scheduler events; keep <scenario>.tasks.json")
    what.add_argument("--shrinkers", action="store_true",
                   help="trace every shrinker call; keep <scenario>.shrinkers.json")
    what.add_argument("--swapin", action="store_true",
                   help="trace the workload's swap-ins (kprobes); keep <scenario>.swapin.json")
    p.add_argument("--sitting", type=Path, help="the sitting to keep the result in (DIR/real/)")
    args = p.parse_args()
    kind = ("tasks" if args.tasks else "shrinkers" if args.shrinkers
            else "swapin" if args.swapin else "trace")
    date = datetime.date.today().isoformat()
    try:
        s = spec.load_for_script(spec.find(args.scenario, ROOT / "validation"), args.sitting)
        kept = s.real_dir / f"{s.name}.{kind}.json"
        if args.console is not None:
            if not args.console.is_file():
                raise ValidateError(f"{args.console}: no such transcript")
            console = args.console
            accel = "as recorded"
            if kept.is_file():
                # Summarised again (a newer summary): the boot is still the one kept.
                was = json.loads(kept.read_text())
                accel, date = was.get("accel", accel), was.get("date", date)
        else:
            k = kernel.fetch_kernel(store.CACHE)
            work = store.CACHE / ("work-swapin" if args.swapin else "work-trace") / s.name
            guest.boot(s, k, work, kernel.busybox_binary(), kernel.build_workload(store.CACHE), 1,
                       args.accel == "kvm", all_tasks=args.tasks, shrinkers=args.shrinkers,
                       swapin=args.swapin)
            console = work / "console.log"
            accel = args.accel.upper()
        # The harness prints over its virtio-serial port and the kernel over the console.
        text = guest.read_transcript(console)
        rep = guest.rep_from_transcript(text, str(console))
    except ValidateError as e:
        print(f"validate-trace: {e}", file=sys.stderr)
        return e.exit_code
    summary = rep.get("kswapd_trace")
    if not summary or not summary.get("traced_s"):
        print("validate-trace: the transcript has no trace of the workload; nothing written",
              file=sys.stderr)
        return 1
    out = {
        "what": "one traced boot of the scenario: kswapd's runs and CPU time, and what kswapd "
                "was doing when each direct reclaim began (reclaimlab.validate.ktrace)",
        "scenario": s.name, "accel": accel, "kernel": rep["kernel"],
        "date": date,
        "wall_time_s": rep["wall_time_s"],
        "guest_settings": rep.get("guest_settings", {}),
        "vmstat_delta": {c: rep["vmstat_delta"].get(c) for c in SHOWN},
        "trace": summary,
    }
    # A boot traced for more than kswapd keeps every vmstat delta and that trace's own summary.
    extra = {
        "tasks": ("every task's scheduler events: where each workload task's time went",
                  "workload_time", ktrace.workload_time),
        "shrinkers": ("every shrinker call: what each of the kernel's shrinkers scanned and "
                      "freed", "shrinkers", shrinktrace.shrinkers),
        "swapin": ("the workload's swap-ins: each lookup, window and page read, in order",
                   "swapin", swapintrace.swapins),
    }
    if kind in extra:
        what, key, summarise = extra[kind]
        out["what"] = (f"one boot of the scenario tracing {what} "
                       f"({summarise.__module__}.{summarise.__name__}) beside the kswapd summary")
        out["vmstat_delta"] = rep["vmstat_delta"]
        section = guest.parse_transcript(text).sections["sched"]
        try:
            # The swap-ins' stretches of 5 s are counted from the workload's start.
            out[key] = (summarise(section, start_s=rep.get("phases", {}).get("workload"))
                        if kind == "swapin" else summarise(section))
        except swapintrace.SwapinTraceError as e:
            print(f"validate-trace: {console}: {e}; nothing written", file=sys.stderr)
            return 1
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text(json.dumps(out, indent=1) + "\n")
    at = summary["kswapd_at_direct_reclaim"]
    print(f"{kept}: {summary['direct_reclaims']} direct reclaims (kswapd {at}), "
          f"kswapd on a CPU {summary['kswapd_on_cpu_s']} s of {summary['traced_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
