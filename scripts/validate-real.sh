#!/usr/bin/env bash
# One sitting (docs/VALIDATION.md, "Protocol"): boot Debian's 6.1 kernel in QEMU for every
# calibration and prediction scenario (validation/calibrate/, validation/predict/), REPS times
# each (default 5), in one run, into validation/sittings/<date>/ (SITTING to name another):
# each scenario's kept boots (real/<scenario>.json and .zoneinfo, each boot with its start
# time; an aborted boot kept in the file's `aborted` with why), one more boot of each tracing
# every task (real/<scenario>.tasks.json, the workload's CPU time), and the sitting's record
# of every boot (sitting.json). Then scripts/validate-sitting.py marks the sitting complete
# only if every scenario has REPS kept boots: a complete sitting is the new reference, and the
# guest profile is derived again from its calibration boots (scripts/validate-calibrate.py);
# a partial one (some scenarios given on the command line, or a boot aborted) stays beside the
# reference and never replaces it. Last, the tables of docs/VALIDATION.md. Takes minutes per
# scenario under TCG; keep the host otherwise idle (the guest's pace is part of what is
# measured). Then the free page reporting runs (validation/balloon-d4.toml and -d1: about
# 2 minutes a boot) and their table (full sittings only), a separate comparison.
# The guest runs under TCG, as every kept sitting did, even where KVM works: the costs and
# the pace are TCG's (ACCEL=kvm for a sitting of its own under KVM, and a profile of its own).
#   bash scripts/validate-real.sh            # a sitting: every scenario, 5 boots each
#   REPS=7 bash scripts/validate-real.sh validation/predict/mix.toml   # a partial re-sitting
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPS="${REPS:-5}"
ACCEL="${ACCEL:-tcg}"
SITTING="${SITTING:-validation/sittings/$(date -u +%F)}"
bash scripts/validate-setup.sh
[ -x .venv/bin/reclaimlab ] || bash scripts/setup.sh
if [ $# -gt 0 ]; then
    scenarios=("$@")
else
    scenarios=(validation/calibrate/*.toml validation/predict/*.toml)
fi
if [ -e "$SITTING/sitting.json" ]; then
    echo "validate-real: $SITTING exists; a sitting is one run (SITTING=... to name another)" >&2
    exit 2
fi
mkdir -p "$SITTING/real"
# The record first: every calibration and prediction scenario is due in this sitting.
.venv/bin/python scripts/validate-sitting.py "$SITTING" --begin
.venv/bin/reclaimlab validate --boot --sitting "$SITTING" --accel "$ACCEL" --reps "$REPS" \
    "${scenarios[@]}" >/dev/null
for f in "${scenarios[@]}"; do
    .venv/bin/python scripts/validate-trace.py "$f" --tasks --accel "$ACCEL" --sitting "$SITTING"
done
if .venv/bin/python scripts/validate-sitting.py "$SITTING" --reps "$REPS"; then
    .venv/bin/python scripts/validate-calibrate.py
fi
.venv/bin/reclaimlab validate --all --reps "$REPS" --format markdown --write-doc docs/VALIDATION.md >/dev/null
if [ $# -eq 0 ]; then
    .venv/bin/reclaimlab validate --balloon --boot --accel "$ACCEL" --real-only --reps "$REPS" >/dev/null
    .venv/bin/reclaimlab validate --balloon --write-doc docs/VALIDATION.md >/dev/null
fi
echo "validate-real: the sitting in $SITTING (sitting.json says whether it is complete), tables in docs/VALIDATION.md"
