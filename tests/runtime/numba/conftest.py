"""What the tests of runtime/numba share: running a script in a new process with a cache directory of its own."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _run(script, argument, cache):
    """The JSON object the last line of `script`'s output holds, run with `argument` and TRANSPILE_CACHE_DIR=cache."""
    env = dict(os.environ, TRANSPILE_CACHE_DIR=str(cache), PYTHONPATH=ROOT)
    env.pop("NUMBA_CACHE_DIR", None)
    done = subprocess.run(
        [sys.executable, str(script), argument], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture
def run_in_new_process():
    return _run
