"""A pytest plugin that projects the full suite's time from a sample: every Nth test of each file, CPU-timed.

    PYTHONPATH=.:tools .venv/bin/python -m pytest -p suite_sample --sample=20 [-n 2 --dist loadfile] tests

runs the first test of each file and every 20th after it, and writes `.cache/suite_sample/WORKER.json` after each
test: per test file the tests run, their CPU seconds (the worker's and its children's: ruff, fresh interpreters)
and wall seconds.  `python tools/suite_sample.py [files...]` merges the files (one per xdist worker) and prints
per directory the projected full-suite CPU time: the sample's times times the file's tests over the tests run.
CPU time is kept because it changes less than wall time with other load on the machine.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, ".cache", "suite_sample")


def pytest_addoption(parser):
    parser.addoption("--sample", type=int, default=0, help="run every Nth test of each file (and its first)")


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class _Sampler:
    def __init__(self, every):
        self.every = every
        self.totals = defaultdict(lambda: {"tests": 0, "run": 0, "cpu": 0.0, "wall": 0.0})

    def pytest_collection_modifyitems(self, session, config, items):
        kept, deselected, seen = [], [], defaultdict(int)
        for item in items:
            path = item.nodeid.split("::")[0]
            self.totals[path]["tests"] += 1
            (kept if seen[path] % self.every == 0 else deselected).append(item)
            seen[path] += 1
        if deselected:
            config.hook.pytest_deselected(items=deselected)
        items[:] = kept

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        cpu, wall = _cpu(), time.perf_counter()
        yield
        row = self.totals[item.nodeid.split("::")[0]]
        row["run"] += 1
        row["cpu"] += _cpu() - cpu
        row["wall"] += time.perf_counter() - wall
        self._write()  # after every test: a run stopped part way still leaves what it measured

    def _write(self):
        os.makedirs(OUT, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(os.path.join(OUT, f"{worker}.json"), "w") as handle:
            json.dump({"every": self.every, "files": self.totals}, handle, indent=1)


def pytest_configure(config):
    every = config.getoption("--sample")
    if every > 0:
        config.pluginmanager.register(_Sampler(every), "suite_sample_sampler")


def projection(paths) -> dict:
    """Per directory: tests, tests run, and projected CPU and wall seconds of the whole directory."""
    files = {}
    for path in paths:
        with open(path) as handle:
            for name, row in json.load(handle)["files"].items():
                merged = files.setdefault(name, {"tests": row["tests"], "run": 0, "cpu": 0.0, "wall": 0.0})
                for key in ("run", "cpu", "wall"):
                    merged[key] += row[key]
    directories = defaultdict(lambda: {"tests": 0, "run": 0, "cpu": 0.0, "wall": 0.0, "files": []})
    for name, row in files.items():
        scale = row["tests"] / row["run"] if row["run"] else 0.0
        parts = name.split("/")
        where = directories["/".join(parts[:2]) if len(parts) > 2 else name]
        where["tests"] += row["tests"]
        where["run"] += row["run"]
        where["cpu"] += row["cpu"] * scale
        where["wall"] += row["wall"] * scale
        where["files"].append((row["cpu"] * scale, name, row["tests"]))
    return directories


def main(argv) -> None:
    paths = argv or [os.path.join(OUT, name) for name in sorted(os.listdir(OUT))]
    directories = projection(paths)
    total_cpu = sum(d["cpu"] for d in directories.values())
    print(f"{'directory':<28}{'tests':>7}{'run':>6}{'CPU s':>9}{'wall s':>9}   heaviest files (projected CPU s)")
    for name, d in sorted(directories.items(), key=lambda kv: -kv[1]["cpu"]):
        top = ", ".join(f"{f.rsplit('/', 1)[-1]} {c:.0f}" for c, f, _ in sorted(d["files"], reverse=True)[:3])
        print(f"{name:<28}{d['tests']:>7}{d['run']:>6}{d['cpu']:>9.0f}{d['wall']:>9.0f}   {top}")
    print(f"{'total':<28}{sum(d['tests'] for d in directories.values()):>7}{'':>6}{total_cpu:>9.0f}")


if __name__ == "__main__":
    main(sys.argv[1:])
