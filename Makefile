# Everything runs from a virtualenv in .venv/, created on first use: on a fresh clone,
# `make demo` and `make test` install the project (`pip install -e .[dev,mpi,samples]`) and then run.
# CuPy (the `gpu` extra, hundreds of MB) is added only where `nvidia-smi -L` lists a GPU,
# or when asked: `make install-gpu`.

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# Generated modules go to a cache inside the checkout (git-ignored), never to $HOME.
export TRANSPILE_CACHE_DIR := $(CURDIR)/.cache/transpile

.PHONY: install install-gpu bytecode test demo bench bench-env gpu-check lint clean

EXTRAS := $(shell nvidia-smi -L 2>/dev/null | grep -q '^GPU' && echo dev,mpi,samples,gpu || echo dev,mpi,samples)

install: $(STAMP)

install-gpu:
	test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -e '.[dev,mpi,samples,gpu]'
	touch $(STAMP)

# Reinstalls whenever the package metadata changes.  pip byte-compiles every file it installs, one at a time (8 s
# of a 17.6 s install here); compileall does it on every core instead, leaving out the packages' own test suites,
# which nothing imports (4.4 s).
$(STAMP): setup.cfg pyproject.toml
	test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --no-compile -e '.[$(EXTRAS)]'
	$(VPY) -m compileall -q -j 0 -x '/tests?/' $$($(VPY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
	touch $@

# One pytest worker per core (pytest-xdist, in the dev extra), each file on one worker (loadfile) in the order
# tests/conftest.py gives (no reorder): the files that compile with Numba last, so that progress shows at once, and no
# two workers compile the same functions.  (loadgroup's groups are lost under pytest 9, which ignores the node id
# xdist 3.8 rewrites to name the group: every file was split between the workers.)
TEST_WORKERS ?= auto

# The project's modules byte-compiled, as pip does for an installed package: this machine sets
# PYTHONDONTWRITEBYTECODE=1, under which every new process (the tests' subprocesses, jit's background workers, a
# warm start) compiled the checkout's 220 modules from source again, 0.45 s each time.
bytecode: $(STAMP)
	$(VPY) -m compileall -q transpile runtime

test: bytecode
	$(VPY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=15

demo: bytecode
	$(VPY) samples/mlp.py

# Comparison frameworks for bench/baselines.py live in their own virtualenv, kept apart from .venv/.
# torch==2.13.0 (not a range): pip on these machines takes the CPU build of that release from local
# disk; a bare `torch` or a range admitting newer releases pulls a CUDA build of several GB from PyPI.
BENCH_PYTHON ?= python3.11
BENCH_VENV := .venv-bench
BENCH_STAMP := $(BENCH_VENV)/.installed

bench: bytecode $(BENCH_STAMP)
	$(VPY) bench/bench_grad.py
	$(VPY) bench/bench_remat.py
	$(VPY) bench/bench_vmap.py
	$(VPY) bench/bench_jit.py
	$(VPY) bench/bench_parallel.py

bench-env: $(BENCH_STAMP)

$(BENCH_STAMP):
	test -x $(BENCH_VENV)/bin/python || $(BENCH_PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install numpy jax 'torch==2.13.0'
	touch $@

# The GPU backend on a CUDA device in under 5 minutes (tools/gpu_check.py): its gpu tests, then timings against JAX on
# the same device; report.md and report.json go to $(GPU_CHECK_OUT).  Runs with the machine's python3, not .venv/.
GPU_CHECK_OUT ?= .cache/gpu-check

gpu-check:
	tools/gpu_check.sh $(GPU_CHECK_OUT)

lint: $(STAMP)
	$(VENV)/bin/ruff check transpile runtime tests samples bench tools

# Leaves .venv/ alone: `rm -rf .venv` to start from scratch.
clean:
	rm -rf .cache .pytest_cache .ruff_cache build dist *.egg-info
	find . -name __pycache__ -type d -not -path './$(VENV)/*' -prune -exec rm -rf {} +
