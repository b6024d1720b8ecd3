#!/bin/sh
# `make gpu-check` with the machine's python3, no virtualenv: tools/gpu_check.sh [OUT] [gpu_check.py options].
# On the device machine (no network): `tools/gpu_check.sh $OUT`, with gast, beniget and ruff carried as wheels in
# .whl/ where python3 lacks them (`python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12
# --platform manylinux2014_x86_64 -d .whl gast==0.7.0 beniget==0.5.0 ruff==0.17.6` here); ruff only lays the
# generated modules out.
set -u
cd "$(dirname "$0")/.." || exit 1
PY=${PYTHON:-python3}
OUT=${1:-.cache/gpu-check}
[ $# -gt 0 ] && shift
SITE=${TMPDIR:-/tmp}/gpu-check-site
if ls .whl/*.whl >/dev/null 2>&1; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --upgrade --target "$SITE" .whl/*.whl
    PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
elif ! "$PY" -c 'import gast, beniget' 2>/dev/null; then
    if ! timeout 60 "$PY" -m pip install -q --retries 0 --timeout 10 --target "$SITE" gast beniget; then
        echo "gpu-check: gast and beniget are missing and pip could not fetch them (no network?):" \
            "carry them as wheels in .whl/ (see this file's header)" >&2
        exit 2
    fi
    PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
fi
# JAX takes 75% of the GPU's memory at start unless told not to; CuPy needs its share.
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export TRANSPILE_CACHE_DIR="${TRANSPILE_CACHE_DIR:-$PWD/.cache/transpile}" TRANSPILE_QUIET=1
exec timeout 295 "$PY" tools/gpu_check.py --out "$OUT" "$@"
