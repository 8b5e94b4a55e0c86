"""Close a sitting (scripts/validate-real.sh's last step): mark validation/sittings/<date>/
complete when every scenario due in it has REPS kept boots, else say why it is partial
(docs/VALIDATION.md, "Protocol"). A partial sitting never becomes the reference. With --begin
(the script's first step): start the sitting's record, every calibration and prediction
scenario due in it. With --resume (an interrupted sitting, RESUME=1): print the scenario files
still to boot, one a line, and note the resumption in the record. With --idle-check (before the
first boot): exit 2 if other processes take more than a tenth of a core over 5 s, since a
sitting measures the guest's pace and needs the host to itself.

Usage: .venv/bin/python scripts/validate-sitting.py SITTING_DIR [--reps N] [--begin|--resume|--idle-check]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reclaimlab.validate import hostload, sittings
from reclaimlab.validate.errors import ValidateError

ROOT = Path(__file__).resolve().parents[1] / "validation"
# The idle check: how long it watches, and the share of one core other processes may take.
IDLE_CHECK_S = 5.0
IDLE_LIMIT = 0.10


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sitting", type=Path)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--begin", action="store_true", help="start the record: what is due")
    p.add_argument("--lru", choices=("classic", "mglru"), default="classic",
                   help="with --begin: the page-replacement algorithm the sitting's guests run")
    p.add_argument("--resume", action="store_true",
                   help="print the scenario files an interrupted sitting has still to boot")
    p.add_argument("--idle-check", action="store_true",
                   help="exit 2 unless the host's other processes are quiet (over 5 s)")
    args = p.parse_args()
    if args.idle_check:
        share = hostload.others_share(IDLE_CHECK_S)
        if share > IDLE_LIMIT:
            print(f"validate-sitting: {args.sitting}: the host is busy: other processes used "
                  f"{share:.2f} cores over {IDLE_CHECK_S:.0f} s (a sitting allows {IDLE_LIMIT:.2f}). "
                  "A sitting measures the guest's pace, so it needs the host to itself "
                  "(docs/VALIDATION.md, \"A third sitting started and stopped\"): stop them and "
                  "start again, or FORCE=1 to sit anyway (each boot records the CPU the others "
                  "took, `others_cpu_s`)", file=sys.stderr)
            return 2
        print(f"{args.sitting}: other processes used {share:.2f} cores over {IDLE_CHECK_S:.0f} s")
        return 0
    if args.resume:
        try:
            left = sittings.resume(args.sitting, ROOT)
        except ValidateError as e:
            print(f"validate-sitting: {e}", file=sys.stderr)
            return 2
        files = {p.stem: p for p in sittings.scenarios(ROOT)}
        gone = [n for n in left if n not in files]
        if gone:
            print(f"validate-sitting: {args.sitting}: due scenarios no longer under {ROOT}: "
                  f"{', '.join(gone)}; a sitting cannot resume without them", file=sys.stderr)
            return 2
        for n in left:
            print(files[n].relative_to(ROOT.parent))
        return 0
    if args.begin:
        due = sittings.begin(args.sitting, args.lru)
        print(f"{args.sitting}: {len(due)} scenarios due: {', '.join(due)}")
        return 0
    if not args.sitting.is_dir():
        print(f"validate-sitting: {args.sitting}: no such sitting directory", file=sys.stderr)
        return 2
    why = sittings.finish(args.sitting, ROOT, args.reps)
    if why:
        try:
            ref = (f"the reference stays "
                   f"{sittings.reference(ROOT, sittings.lru_of(args.sitting))}")
        except ValidateError as e:
            ref = str(e)
        print(f"{args.sitting}: partial ({'; '.join(why)}); {ref}")
        return 1
    print(f"{args.sitting}: complete; it is the reference sitting now")
    return 0


if __name__ == "__main__":
    sys.exit(main())
