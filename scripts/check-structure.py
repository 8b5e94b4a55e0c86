#!/usr/bin/env python3
"""Print the structure report: import cycles between the Rust crates' source files and between
their top-level modules (every `crate::`, `super::`, `self::` and child path, in `use` and
inline), core files longer than the limit, references up to a crate root, import cycles
between the Python packages' modules, and package modules longer than theirs. The same check as tests/python/test_structure.py (its
parsers are tests/python/rust_structure.py and py_structure.py).

Usage: python3 scripts/check-structure.py [ROOT]   (ROOT: a tree with crates/*/src and python/*;
the repository by default. Exit status 1 if anything is reported.)
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))

import rust_structure  # noqa: E402  (found through the path entry above)


def main() -> int:
    s = rust_structure.analyse(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT)
    sys.stdout.write(rust_structure.report(s))
    return 1 if s.failed() else 0


if __name__ == "__main__":
    sys.exit(main())
