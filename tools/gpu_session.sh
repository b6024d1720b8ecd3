#!/bin/sh
# One device call for a GPU session (about 3 minutes): `make gpu-check`'s run, then where the time goes and the
# CUDA graph trial, everything under OUT.  On the device machine: `tools/gpu_session.sh $OUT`, with `.whl` carried
# (gast, beniget and ruff as wheels: see tools/gpu_check.sh).
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${1:?usage: tools/gpu_session.sh OUT}
mkdir -p "$OUT"
tools/gpu_check.sh "$OUT" > "$OUT/run.log" 2>&1
echo "gpu_check exit status $?" >> "$OUT/run.log"
tail -12 "$OUT/run.log"
SITE=${TMPDIR:-/tmp}/gpu-check-site  # where gpu_check.sh installed the carried wheels
export PYTHONPATH="$PWD:$SITE${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export TRANSPILE_CACHE_DIR="${TRANSPILE_CACHE_DIR:-$PWD/.cache/transpile}" TRANSPILE_QUIET=1
timeout 150 "${PYTHON:-python3}" tools/gpu_profile.py "$OUT" elementwise mlp_grad per_example_grads lj_forces 2>&1 | tail -6
timeout 150 "${PYTHON:-python3}" tools/gpu_graph_trial.py > "$OUT/graph.log" 2>&1
tail -20 "$OUT/graph.log"
