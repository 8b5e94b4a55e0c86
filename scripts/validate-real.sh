#!/usr/bin/env bash
# Regenerate every kept real-kernel result (validation/real/*.json and *.zoneinfo) by booting
# Debian's 6.1 kernel in QEMU for each validation scenario, REPS times (default 5), then
# rewrite the tables of docs/VALIDATION.md. Takes minutes per scenario under TCG. Then the
# free page reporting runs (validation/balloon-d4.toml and -d1: about 2 minutes a boot) and
# their table (all scenarios only), which needs a simulator that runs [[guest]] scenarios.
#   bash scripts/validate-real.sh            # all scenarios, 5 boots each
#   REPS=7 bash scripts/validate-real.sh validation/mix.toml
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPS="${REPS:-5}"
bash scripts/validate-setup.sh
[ -x .venv/bin/reclaimlab ] || bash scripts/setup.sh
if [ $# -gt 0 ]; then
    .venv/bin/reclaimlab validate --boot --reps "$REPS" "$@"
else
    .venv/bin/reclaimlab validate --boot --reps "$REPS" --all
fi
.venv/bin/reclaimlab validate --all --reps "$REPS" --format markdown --write-doc docs/VALIDATION.md >/dev/null
if [ $# -eq 0 ]; then
    .venv/bin/reclaimlab validate --balloon --boot --real-only --reps "$REPS" >/dev/null
    .venv/bin/reclaimlab validate --balloon --write-doc docs/VALIDATION.md >/dev/null
fi
echo "validate-real: kept results in validation/real/, tables in docs/VALIDATION.md"
