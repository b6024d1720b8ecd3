"""tools/gpu_check.py (`make gpu-check`) end to end on the fake GPU: its report, its correctness checks, its figures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
WORKLOADS = ["elementwise", "mlp_grad", "per_example_grads", "lj_forces"]


def test_fake_run_writes_a_report_whose_checks_ran(tmp_path):
    out = tmp_path / "report"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    command = [sys.executable, "tools/gpu_check.py", "--fake", "--out", str(out), "--warmup", "1", "--repeats", "2"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["fake"] is True
    assert report["environment"]["gpu"].startswith("fake GPU") and report["environment"]["jax"] is None
    # the fake-gpu twins of the gpu tests ran in a child pytest and passed; its log is kept
    tests = report["tests"]
    assert tests["ok"] and tests["exit_status"] == 0 and tests["counts"]["passed"] >= 3
    assert tests["counts"].get("failed", 0) == 0 and "passed" in (out / "pytest.log").read_text()
    # every workload ran through kernels on the (fake) device and agreed with its NumPy reference
    assert list(report["workloads"]) == WORKLOADS
    assert report["fake_gpu_log"]["launches"] > 0 and report["fake_gpu_log"]["nvrtc"] > 0
    for name, row in report["workloads"].items():
        assert "error" not in row, (name, row)
        assert row["check"]["ok"] and row["check"]["max_rel_error"] < 1e-5, (name, row["check"])
        assert row["ours_s"] > 0 and "jax_s" not in row
    # bytes moved by x * x + x * 2.0 on a float32 array: read once, written once
    shape = report["sizes"]["elementwise"]
    elementwise = report["workloads"]["elementwise"]
    assert np.isclose(elementwise["gb_s"], 2 * 4 * np.prod(shape) / elementwise["ours_s"] / 1e9)
    table = (out / "report.md").read_text()
    assert table in done.stdout  # the report printed is the one written
    for name in WORKLOADS:
        assert f"| {name} |" in table and "WRONG" not in table
