#!/usr/bin/env bash
# The main job: set up, run every example scenario (results/report.md), then reproduce every
# seed thread's experiment into one result store and write one HTML report with every check and
# its plots (results/reproduce/report.html, figures in results/reproduce/report-figures/), and
# run the example sweeps sweeps/kswapd-balance.toml, sweeps/memcg-high.toml and
# sweeps/memcg-controller.toml with their reports.
# Finished runs are kept in one result store, results/.store: running it
# again recomputes nothing that is up to date.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
.venv/bin/reclaimlab examples --out results
# Exit status 1 means a reproduction's check failed (a claim of a thread the model does not
# reproduce yet), 2 or more that something broke: the first finishes the job and is reported at
# the end, the second stops it here.
repro=0
.venv/bin/reclaimlab reproduce all --out results/reproduce --store results/.store || repro=$?
[ "$repro" -le 1 ] || exit "$repro"
# An example sweep and its HTML report (about half a minute).
.venv/bin/reclaimlab sweep sweeps/kswapd-balance.toml --out results/sweeps/kswapd-balance --store results/.store
.venv/bin/reclaimlab report results/sweeps/kswapd-balance
# memory.high from the whole footprint down to half of it: throughput, refaults, pressure.
.venv/bin/reclaimlab sweep sweeps/memcg-high.toml --out results/sweeps/memcg-high --store results/.store
.venv/bin/reclaimlab report results/sweeps/memcg-high
# A userspace controller on a cold footprint: none, senpai-like, TMO-like.
.venv/bin/reclaimlab sweep sweeps/memcg-controller.toml --out results/sweeps/memcg-controller --store results/.store
.venv/bin/reclaimlab report results/sweeps/memcg-controller
echo "main: done; see results/report.md, results/reproduce/report.html and results/reproduce/*/report.md," \
    "results/sweeps/kswapd-balance/report.html, results/sweeps/memcg-high/report.html," \
    "results/sweeps/memcg-controller/report.html"
if [ "$repro" -ne 0 ]; then
    echo "main: some reproduction checks FAIL (the FAIL lines of results/reproduce/*/report.md)" >&2
    exit 1
fi
