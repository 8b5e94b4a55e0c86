#!/usr/bin/env bash
# The main job: set up, then run every example scenario and write results/report.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
.venv/bin/reclaimlab examples --out results
echo "main: done; see results/report.md"
