# Everything runs from a virtualenv in .venv/, created on first use: on a fresh clone,
# `make demo` and `make test` install the project (`pip install -e .[dev]`) and then run.

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# Generated modules go to a cache inside the checkout (git-ignored), never to $HOME.
export TRANSPILE_CACHE_DIR := $(CURDIR)/.cache/transpile

.PHONY: install test demo bench lint clean

install: $(STAMP)

# Reinstalls whenever the package metadata changes.
$(STAMP): setup.cfg pyproject.toml
	test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -e '.[dev,gpu]'
	touch $@

test: $(STAMP)
	$(VPY) -m pytest -q

demo: $(STAMP)
	$(VPY) samples/mlp.py

bench: $(STAMP)
	$(VPY) bench/bench_grad.py
	$(VPY) bench/bench_remat.py
	$(VPY) bench/bench_vmap.py

lint: $(STAMP)
	$(VENV)/bin/ruff check transpile runtime tests samples bench

# Leaves .venv/ alone: `rm -rf .venv` to start from scratch.
clean:
	rm -rf .cache .pytest_cache .ruff_cache build dist *.egg-info
	find . -name __pycache__ -type d -not -path './$(VENV)/*' -prune -exec rm -rf {} +
