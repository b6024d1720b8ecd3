"""The on-disk module cache: location from the environment, reuse, atomic writes, corrupt entries regenerated."""

import os
import subprocess
import sys
import textwrap

import numpy as np

PROGRAM = textwrap.dedent("""
    import sys
    import numpy as np
    import transpile as tp

    def f(x):
        return np.sum(np.sin(x) * x)

    g = tp.grad(f)(np.arange(3.0))
    np.testing.assert_allclose(g, np.sin(np.arange(3.0)) + np.arange(3.0) * np.cos(np.arange(3.0)))
    print(g.__class__.__name__, "ok")
""")


def run(tmp_path, cache):
    script = tmp_path / "model.py"
    script.write_text(PROGRAM)
    env = dict(os.environ, TRANSPILE_CACHE_DIR=str(cache))
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return sorted(p for p in cache.iterdir() if p.suffix == ".py")


def test_cache_location_reuse_and_regeneration(tmp_path):
    cache = tmp_path / "cache"
    files = run(tmp_path, cache)
    assert len(files) == 1 and files[0].name.startswith("grad_f_")
    text = files[0].read_text()
    stamp = files[0].stat().st_mtime_ns
    # a second process reuses the file as it is
    assert run(tmp_path, cache) == files
    assert files[0].stat().st_mtime_ns == stamp
    # a corrupt entry (truncated write, garbage) is regenerated
    files[0].write_text(text[: len(text) // 2])
    assert run(tmp_path, cache) == files
    assert files[0].read_text() == text
    files[0].write_text("def broken(:\n")
    run(tmp_path, cache)
    assert files[0].read_text() == text
    # no temporary files are left behind by the atomic write
    assert not [p for p in cache.iterdir() if p.suffix == ".tmp"]


def test_changed_source_gets_a_new_entry(tmp_path):
    cache = tmp_path / "cache"
    first = run(tmp_path, cache)
    global PROGRAM
    saved = PROGRAM
    try:
        PROGRAM = PROGRAM.replace("np.sum(np.sin(x) * x)", "np.sum(np.sin(x) * x) + 0.0 * np.sum(x)")
        second = run(tmp_path, cache)
    finally:
        PROGRAM = saved
    assert len(second) == 2 and first[0] in second
    assert np.all([p.read_text().startswith('"""') for p in second])
