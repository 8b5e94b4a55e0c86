#!/usr/bin/env python3
"""Print the Rust crates' structure report: import cycles between source files and between
top-level modules, and core files longer than the limit. The same check as
tests/python/test_structure.py (its parser is tests/python/rust_structure.py).

Usage: python3 scripts/check-structure.py   (exit status 1 if anything is reported)
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))

import rust_structure  # noqa: E402  (found through the path entry above)


def main() -> int:
    s = rust_structure.analyse(ROOT)
    sys.stdout.write(rust_structure.report(s))
    return 1 if s.file_cycles or s.module_cycles or s.long_files else 0


if __name__ == "__main__":
    sys.exit(main())
