#!/usr/bin/env bash
# Regenerate every kept real-kernel result (validation/real/*.json and *.zoneinfo) by booting
# Debian's 6.1 kernel in QEMU for each validation scenario, REPS times (default 5), then
# rewrite the tables of docs/VALIDATION.md. Takes minutes per scenario under TCG.
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
echo "validate-real: kept results in validation/real/, tables in docs/VALIDATION.md"
