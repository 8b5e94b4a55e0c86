#!/usr/bin/env bash
# Regenerate every kept real-kernel result (validation/real/*.json and *.zoneinfo) by booting
# Debian's 6.1 kernel in QEMU for each validation scenario, REPS times (default 5); pool each
# scenario's kswapd wake-up latencies from those boots (<scenario>.kswapd-wakeup.json) and
# boot it once more tracing every task (<scenario>.tasks.json, the workload's CPU time); print
# the costs the boots measured (scripts/validate-costs.py: a scenario's [cost], [swap] and
# [disk] take them by hand, and a test checks that they agree); then rewrite the tables of
# docs/VALIDATION.md. Takes minutes per scenario under TCG; keep the host otherwise idle (the
# guest's pace is part of what is measured). Then the free page reporting runs
# (validation/balloon-d4.toml and -d1: about 2 minutes a boot) and their table (all scenarios
# only), which needs a simulator that runs [[guest]] scenarios.
# The guest runs under TCG, as every kept sitting did, even where KVM works: the costs and
# the pace are TCG's (ACCEL=kvm for a sitting of its own under KVM).
#   bash scripts/validate-real.sh            # all scenarios, 5 boots each
#   REPS=7 bash scripts/validate-real.sh validation/mix.toml
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPS="${REPS:-5}"
ACCEL="${ACCEL:-tcg}"
bash scripts/validate-setup.sh
[ -x .venv/bin/reclaimlab ] || bash scripts/setup.sh
if [ $# -gt 0 ]; then
    scenarios=("$@")
else
    scenarios=()
    for f in validation/*.toml; do
        grep -q '^\[\[guest\]\]' "$f" || scenarios+=("$f")
    done
fi
.venv/bin/reclaimlab validate --boot --accel "$ACCEL" --reps "$REPS" "${scenarios[@]}"
for f in "${scenarios[@]}"; do
    .venv/bin/python scripts/validate-wakeup.py "$f" --kept
    .venv/bin/python scripts/validate-trace.py "$f" --tasks --accel "$ACCEL"
done
.venv/bin/python scripts/validate-costs.py "${scenarios[@]}"
.venv/bin/reclaimlab validate --all --reps "$REPS" --format markdown --write-doc docs/VALIDATION.md >/dev/null
if [ $# -eq 0 ]; then
    .venv/bin/reclaimlab validate --balloon --boot --accel "$ACCEL" --real-only --reps "$REPS" >/dev/null
    .venv/bin/reclaimlab validate --balloon --write-doc docs/VALIDATION.md >/dev/null
fi
echo "validate-real: kept results in validation/real/, tables in docs/VALIDATION.md"
