#!/usr/bin/env bash
# Every test: set up, then the Rust core's tests and the Python tests.
# (reclaimlab-py is a cdylib for Python and is tested through Python, not with cargo.)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
# The kernel's trace post-processing script, for the trace compatibility test.
bash scripts/fetch-postprocess.sh
# Headless Chromium, for the test that renders the HTML report in a real browser.
bash scripts/fetch-chromium.sh

echo "test: cargo test --release -p reclaimlab-core"
cargo test --release -p reclaimlab-core

echo "test: python -m pytest tests/python -q"
# Any non-zero pytest exit fails this script, including 5 ("no tests collected").
.venv/bin/python -m pytest tests/python -q
