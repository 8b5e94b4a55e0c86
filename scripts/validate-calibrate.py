"""Write the guest profile (validation/profiles/debian-6.1-tcg.toml and its wake-up samples)
from the kept boots of the calibration scenarios (validation/calibrate/) of the reference
sitting, by the rules of docs/VALIDATION.md ("Protocol"): reclaimlab.validate.calibrate.

Usage: .venv/bin/python scripts/validate-calibrate.py [--sitting DIR] [--out PROFILE] [--check]
Boots nothing. --check writes nothing and exits 1 when the profile on disk differs from what
the kept boots give.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reclaimlab.validate import calibrate, profile, sittings, spec
from reclaimlab.validate.errors import ValidateError

ROOT = Path(__file__).resolve().parents[1] / "validation"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sitting", type=Path, help="the sitting to calibrate on (default: the "
                   "reference, the latest complete one under validation/sittings/)")
    p.add_argument("--out", type=Path, default=profile.default_path(ROOT),
                   help="the profile to write (default: %(default)s)")
    p.add_argument("--check", action="store_true", help="compare with the profile on disk")
    args = p.parse_args()
    try:
        specs = [spec.load_for_script(path, args.sitting) for path in sittings.scenarios(ROOT)
                 if sittings.role(path) == "calibration"]
        c = calibrate.derive(specs)
    except ValidateError as e:
        print(f"validate-calibrate: {e}", file=sys.stderr)
        return e.exit_code
    text, samples = calibrate.render(c, args.out)
    if args.check:
        side = args.out.parent / calibrate.samples_name(args.out.stem)
        same = (args.out.is_file() and args.out.read_text() == text and side.is_file()
                and side.read_text() == samples)
        print(f"{args.out}: {'as derived' if same else 'differs from what the kept boots give'}")
        return 0 if same else 1
    calibrate.write(c, args.out)
    print(f"{args.out}: calibrated on {', '.join(c.scenarios)} of {c.sitting} "
          f"(slowdown {c.slowdown:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
