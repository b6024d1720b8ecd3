"""Helpers for the CLI tests: run `transpile` in-process, isolate what it imports, find ruff."""

import contextlib
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLI_TESTS = Path(__file__).resolve().parent
GOLDEN = CLI_TESTS / "golden"
FIXTURES = CLI_TESTS / "fixtures"
SAMPLES = ROOT / "samples"


def run_cli(args, cwd=ROOT):
    """`transpile ARGS` in this process, from `cwd`: (exit code, stdout, stderr).

    The user modules the command imports (and the sys.path entries it adds) are removed afterwards, so
    that tests can reuse file names.
    """
    from transpile import cli

    saved_path, saved_modules, saved_cwd = list(sys.path), set(sys.modules), os.getcwd()
    out, err = io.StringIO(), io.StringIO()
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main([str(a) for a in args])
    finally:
        os.chdir(saved_cwd)
        sys.path[:] = saved_path
        for name in set(sys.modules) - saved_modules:
            module_file = getattr(sys.modules[name], "__file__", None) or ""
            if name.split(".")[0] not in ("transpile", "transpile_generated", "runtime") and (
                "site-packages" not in module_file
            ):
                del sys.modules[name]
    return code, out.getvalue(), err.getvalue()


def ruff_executable():
    """The ruff next to this interpreter or on PATH, else None."""
    candidate = Path(sys.executable).parent / "ruff"
    if candidate.exists():
        return str(candidate)
    return shutil.which("ruff")


def run_ruff(ruff, args, cwd):
    return subprocess.run([ruff, *args], cwd=cwd, capture_output=True, text=True)
