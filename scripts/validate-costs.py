"""Print what a sitting's boots measured of the guest's costs (reclaimlab.validate.costs): the
reclaim costs by a page's fate and the disks' request latencies from the scored boots'
traces, and the workload tasks' CPU time from the scenario's `--tasks` boot, if kept. These
are the figures a sitting's own `[cost]`, `[swap]` and `[disk]` took before the protocol;
under it the guest profile takes the calibration scenarios' (scripts/validate-calibrate.py;
docs/VALIDATION.md, "Protocol").

Usage: .venv/bin/python scripts/validate-costs.py SCENARIO.toml [...]
Boots nothing: reads each scenario's kept results (real/<scenario>.json,
real/<scenario>.tasks.json: a calibration or prediction scenario's in the reference sitting,
a sitting's own scenario's beside it).
"""

from __future__ import annotations

import sys
from pathlib import Path

from reclaimlab.validate import balloon, costs, spec, store
from reclaimlab.validate.errors import ValidateError


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) > 1 else 2
    for arg in sys.argv[1:]:
        if Path(arg).is_file() and balloon.is_guest_scenario(Path(arg)):
            print(f"{arg}: a [[guest]] scenario (validate --balloon); skipped")
            continue
        try:
            s = spec.load_for_script(arg)
            reps = store.load(s)["reps"]
        except ValidateError as e:
            print(f"validate-costs: {e}", file=sys.stderr)
            return e.exit_code
        print("\n".join(costs.describe(s, reps)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
