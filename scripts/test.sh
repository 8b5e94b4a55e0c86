#!/usr/bin/env bash
# Every test: set up, the linters (rustfmt, clippy) and the structure check, then the Rust
# core's tests and the Python tests.
# (reclaimlab-py is a cdylib for Python and is tested through Python, not with cargo.)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
# The kernel's trace post-processing script, for the trace compatibility test.
bash scripts/fetch-postprocess.sh
# Headless Chromium, for the test that renders the HTML report in a real browser.
bash scripts/fetch-chromium.sh

# The linters first: they are quicker than the tests and say exactly what is wrong.
echo "test: cargo fmt --all --check"
cargo fmt --all --check
echo "test: cargo clippy --release -p reclaimlab-core -p reclaimlab-py --all-targets -- -D warnings"
cargo clippy --release -p reclaimlab-core -p reclaimlab-py --all-targets -- -D warnings
# The structure check (loops between Rust files and modules, between Python modules) is part
# of the Python tests below (tests/python/test_structure.py); this prints its report first.
echo "test: python3 scripts/check-structure.py"
python3 scripts/check-structure.py

echo "test: cargo test --release -p reclaimlab-core"
cargo test --release -p reclaimlab-core

# One pytest-xdist worker per core (tests/python/conftest.py says how they share the files);
# PYTEST_WORKERS=0 runs them all in this process.
workers="${PYTEST_WORKERS:-auto}"
echo "test: python -m pytest tests/python -q -n $workers --dist loadgroup"
# Any non-zero pytest exit fails this script, including 5 ("no tests collected").
.venv/bin/python -m pytest tests/python -q -n "$workers" --dist loadgroup
