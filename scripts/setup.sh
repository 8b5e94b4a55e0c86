#!/usr/bin/env bash
# Set up (or refresh) the development environment: a virtualenv in .venv with reclaimlab
# installed in editable mode with its test dependencies and the `ray` extra (the sweep tests
# start a real Ray head), its Rust extension built in release mode by maturin.
# Idempotent: run it again after editing Rust code and the extension is rebuilt (cargo only
# recompiles what changed); Python edits need no re-run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

die() { echo "setup: error: $*" >&2; exit 1; }

command -v cargo >/dev/null 2>&1 \
    || die "cargo not found: install the Rust toolchain (rustup, https://rustup.rs) and make sure cargo is on PATH"
PYTHON="${PYTHON:-python3}"
command -v "$PYTHON" >/dev/null 2>&1 \
    || die "$PYTHON not found: install Python 3.11 or newer (Debian: apt-get install python3 python3-venv python3-pip)"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || die "Python 3.11 or newer is needed; $PYTHON is $("$PYTHON" -c 'import sys; print(sys.version.split()[0])')"

# A .venv that no longer runs (moved, or its Python was removed) is rebuilt from scratch.
if [ -e .venv ] && ! .venv/bin/python -c '' >/dev/null 2>&1; then
    echo "setup: .venv is broken; recreating it"
    rm -rf .venv
fi
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv with $PYTHON"
    "$PYTHON" -m venv .venv \
        || die "could not create a virtualenv (Debian: apt-get install python3-venv)"
fi

.venv/bin/python -m pip install --quiet --upgrade pip \
    || echo "setup: warning: could not upgrade pip; going on with $(.venv/bin/python -m pip --version)"
# pip always rebuilds a local project, so Rust edits are picked up here; maturin builds release.
echo "setup: building and installing reclaimlab (release build of the Rust extension; a few minutes the first time)"
.venv/bin/python -m pip install --quiet --editable '.[test,ray]'
.venv/bin/python -c 'import reclaimlab; print(f"setup: reclaimlab {reclaimlab.__version__} (engine {reclaimlab.ENGINE_VERSION}) ready in .venv")'
