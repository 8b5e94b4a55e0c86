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
# scenario under TCG; the host must be otherwise idle (the guest's pace is part of what is
# measured): it refuses to begin while other processes take more than a tenth of a core
# (FORCE=1 to sit anyway), and each boot records the CPU they took (`others_cpu_s`). Then
# the free page reporting runs (validation/balloon-d4.toml and -d1: about 2 minutes a boot)
# and their table (full sittings only), a separate comparison.
# The guest runs under TCG, as every kept sitting did, even where KVM works: the costs and
# the pace are TCG's (ACCEL=kvm for a sitting of its own under KVM, and a profile of its own).
# An interrupted sitting (the host needed, the session over) goes on with RESUME=1 and the
# same SITTING: the scenarios without kept boots are booted (one under way when it stopped
# from its first boot), the traces not yet made are made, the rest is as for a new sitting.
# The order puts what the scores need first: every scenario's boots, the calibration
# scenarios' task traces (the profile is derived from them), the sitting's record, profile
# and tables; then the prediction scenarios' task traces (diagnosis, in no score) and the
# free page reporting runs; DIAGNOSIS=0 stops after the tables (about 35 minutes sooner),
# and a later RESUME=1 of the same sitting makes what was left.
#   bash scripts/validate-real.sh            # a sitting: every scenario, 5 boots each
#   RESUME=1 SITTING=validation/sittings/2026-11-29-b bash scripts/validate-real.sh
#   REPS=7 bash scripts/validate-real.sh validation/predict/mix.toml   # a partial re-sitting
# LRU=mglru makes the protocol's second run: every scenario again with the guest's
# multi-generational LRU switched on (and the model's, `[policy] lru = "mglru"`), into
# validation/sittings/<date>-mglru, scored with the same profile; the profile is not derived
# from it and it makes no task traces and no balloon runs (docs/VALIDATION.md, "Under the
# multi-generational LRU").
#   LRU=mglru bash scripts/validate-real.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPS="${REPS:-5}"
ACCEL="${ACCEL:-tcg}"
LRU="${LRU:-classic}"
case "$LRU" in
    classic) SITTING="${SITTING:-validation/sittings/$(date -u +%F)}" ;;
    mglru) SITTING="${SITTING:-validation/sittings/$(date -u +%F)-mglru}" ;;
    *) echo "validate-real: LRU=$LRU: give classic or mglru" >&2; exit 2 ;;
esac
bash scripts/validate-setup.sh
[ -x .venv/bin/reclaimlab ] || bash scripts/setup.sh
RESUME="${RESUME:-0}"
# The guest's pace is measured: begin (or go on) only on a quiet host, unless FORCE=1.
if [ "${FORCE:-0}" != 1 ]; then
    .venv/bin/python scripts/validate-sitting.py "$SITTING" --idle-check
fi
if [ $# -gt 0 ]; then
    scenarios=("$@")
else
    scenarios=(validation/calibrate/*.toml validation/predict/*.toml)
fi
if [ "$RESUME" = 1 ]; then
    if [ $# -gt 0 ]; then
        echo "validate-real: RESUME=1 goes on with what the sitting's record lists; give no scenarios" >&2
        exit 2
    fi
    # What is left to boot, from the record (an error, and exit 2, if there is no such sitting).
    left="$(.venv/bin/python scripts/validate-sitting.py "$SITTING" --resume)"
    mapfile -t to_boot <<<"$left"
    [ -n "$left" ] || to_boot=()
    echo "validate-real: resuming $SITTING: ${#to_boot[@]} scenarios left to boot" >&2
elif [ -e "$SITTING/sitting.json" ]; then
    echo "validate-real: $SITTING exists; a sitting is one run (SITTING=... to name another," \
        "RESUME=1 to go on with an interrupted one)" >&2
    exit 2
else
    mkdir -p "$SITTING/real"
    # The record first: every calibration and prediction scenario is due in this sitting.
    .venv/bin/python scripts/validate-sitting.py "$SITTING" --begin --lru "$LRU"
    to_boot=("${scenarios[@]}")
fi
if [ ${#to_boot[@]} -gt 0 ]; then
    .venv/bin/reclaimlab validate --boot --lru "$LRU" --sitting "$SITTING" --accel "$ACCEL" --reps "$REPS" \
        "${to_boot[@]}" >/dev/null
fi
# One boot of each tracing every task; a trace kept already (a resumed sitting) is not redone.
trace_tasks() {
    # The task traces measure the two-list guest (the profile's inputs, and diagnosis).
    [ "$LRU" = classic ] || return 0
    for f in "$@"; do
        [ -e "$SITTING/real/$(basename "$f" .toml).tasks.json" ] && continue
        .venv/bin/python scripts/validate-trace.py "$f" --tasks --accel "$ACCEL" --sitting "$SITTING"
    done
}
calibration=() prediction=()
for f in "${scenarios[@]}"; do
    case "$f" in
        */calibrate/*) calibration+=("$f") ;;
        *) prediction+=("$f") ;;
    esac
done
trace_tasks "${calibration[@]}"
if .venv/bin/python scripts/validate-sitting.py "$SITTING" --reps "$REPS" && [ "$LRU" = classic ]; then
    .venv/bin/python scripts/validate-calibrate.py
fi
.venv/bin/reclaimlab validate --all --lru "$LRU" --reps "$REPS" --format markdown --write-doc docs/VALIDATION.md >/dev/null
if [ "${DIAGNOSIS:-1}" = 0 ]; then
    echo "validate-real: DIAGNOSIS=0: the prediction scenarios' task traces and the free page" \
        "reporting runs are left (RESUME=1 SITTING=$SITTING makes them)" >&2
    exit 0
fi
trace_tasks "${prediction[@]}"
if [ $# -eq 0 ] && [ "$LRU" = classic ]; then
    .venv/bin/reclaimlab validate --balloon --boot --accel "$ACCEL" --real-only --reps "$REPS" >/dev/null
    .venv/bin/reclaimlab validate --balloon --write-doc docs/VALIDATION.md >/dev/null
fi
echo "validate-real: the sitting in $SITTING (sitting.json says whether it is complete), tables in docs/VALIDATION.md"
