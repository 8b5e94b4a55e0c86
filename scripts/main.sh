#!/usr/bin/env bash
# The main job: set up, run every example scenario (results/report.md), then reproduce the seed
# threads' experiments (results/reproduce/<experiment>/report.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
.venv/bin/reclaimlab examples --out results
.venv/bin/reclaimlab reproduce kswapd-highorder --out results/reproduce
echo "main: done; see results/report.md and results/reproduce/*/report.md"
