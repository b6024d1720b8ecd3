"""The on-disk module cache: location from the environment, reuse, atomic writes, corrupt entries regenerated,
private directories, and modules in memory when the cache cannot be written; faults in fresh processes."""

import json
import os
import stat
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from support import assert_tree_close, runs_in_new_processes

import transpile as tp
from transpile.codegen import cache, linemap

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


# ---------------------------------------------------------------- a private directory


def cubic_sum(x):
    return np.sum(x**3)


def test_new_cache_directories_and_entries_are_private(tmp_path):
    cache = tmp_path / "shared" / "cache"
    run(tmp_path, cache)
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert stat.S_IMODE((cache / "__pycache__").stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in cache.glob("*.py"))


def unsafe(path, mode):
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(mode)
    return path


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o722, 0o702])
def test_a_cache_directory_others_may_write_is_refused(tmp_path, monkeypatch, mode):
    monkeypatch.setenv(cache.ENV_VAR, str(unsafe(tmp_path / "cache", mode)))
    with pytest.raises(tp.TranspileError, match=f"the cache directory {tmp_path / 'cache'} is writable by") as info:
        cache.cache_dir()
    assert "TRANSPILE_CACHE_DIR" in info.value.hint and "chmod 700" in info.value.hint


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user takes root")
def test_a_cache_directory_of_another_user_is_refused(tmp_path, monkeypatch):
    other = unsafe(tmp_path / "cache", 0o700)
    os.chown(other, 12345, 12345)
    monkeypatch.setenv(cache.ENV_VAR, str(other))
    with pytest.raises(tp.TranspileError, match=r"is owned by another user \(uid 12345\)"):
        cache.cache_dir()


def test_bytecode_and_numba_cache_directories_are_checked_too(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "cache"))
    unsafe(tmp_path / "cache" / "__pycache__", 0o777)
    with pytest.raises(tp.TranspileError, match="__pycache__ is writable by group and others"):
        cache.cache_dir()
    (tmp_path / "cache" / "__pycache__").chmod(0o700)
    numba_dir = unsafe(tmp_path / "numba", 0o775)
    monkeypatch.setattr(cache, "_numba_cache_dir", lambda: str(numba_dir))
    with pytest.raises(tp.TranspileError, match=f"{numba_dir} is writable by its group") as info:
        cache.cache_dir()
    assert "NUMBA_CACHE_DIR" in info.value.hint
    numba_dir.chmod(0o755)  # readable by others is allowed: only writing would let them plant code
    assert cache.cache_dir() == str(tmp_path / "cache")


def test_numba_reads_its_cache_directory_from_the_environment(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba.core.config", None)
    monkeypatch.setenv(cache.NUMBA_ENV_VAR, "/somewhere/numba")
    assert cache._numba_cache_dir() == "/somewhere/numba"


FRESH_PROCESS = textwrap.dedent(
    """
    import errno, inspect, json, os, sys, traceback, warnings
    import numpy as np
    sys.path.insert(0, {tests!r})
    cache_path = os.environ["TRANSPILE_CACHE_DIR"]
    {fault}
    import transpile as tp
    from codegen.test_cache import cubic_sum

    warnings.simplefilter("always")
    with warnings.catch_warnings(record=True) as caught:
        try:
            grad = tp.grad(cubic_sum)
            module = grad.__transpile__.generated().module
            try:
                module.grad_cubic_sum(None)
            except TypeError as exc:
                where = traceback.format_exception(exc)[-2]
            result = dict(
                grad=grad(np.array([0.5, 1.5])).tolist(),
                second=tp.grad(tp.grad(cubic_sum))(0.5),
                source="def grad_cubic_sum" in tp.source(grad),
                inspect="def grad_cubic_sum" in inspect.getsource(module.grad_cubic_sum),
                traceback=where,
                {jit}
            )
        except tp.TranspileError as exc:
            result = dict(error=str(exc))
    result["warnings"] = [str(w.message) for w in caught if w.category.__name__ == "CacheWarning"]
    print(json.dumps(result))
    """
)
JIT = 'jit=tp.jit(cubic_sum)(np.array([0.5, 1.5])), jit_source=tp.source(tp.jit(cubic_sum)).split("def ")[0],'
FULL_DISK = """
def full(src, dst, *args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device", dst)
os.replace = full
"""
READ_ONLY = """
real_open = os.open
def read_only(path, flags, *args, **kwargs):
    if flags & os.O_CREAT and str(path).startswith(cache_path):
        raise PermissionError(errno.EACCES, "Permission denied", path)
    return real_open(path, flags, *args, **kwargs)
os.open = read_only
"""


def in_a_fresh_process(cache_dir, fault="", jit=False):
    tests = os.path.dirname(os.path.dirname(__file__))
    script = FRESH_PROCESS.format(tests=tests, fault=fault, jit=JIT if jit else "")
    return runs_in_new_processes(script, cache_dir, times=1)[0]


def assert_runs(result, warnings=0):
    assert "error" not in result, result.get("error")
    assert_tree_close(result["grad"], [0.75, 6.75], rtol=1e-12, atol=0)
    assert result["second"] == pytest.approx(3.0, rel=1e-12)
    assert result["source"] and result["inspect"]
    frame, line = result["traceback"].splitlines()[:2]
    assert "grad_cubic_sum_" in frame and "x**3" in line  # the generated line is shown where it fails
    assert len(result["warnings"]) == warnings


def no_temporary_files(directory):
    return not [p for p in directory.rglob("*") if p.suffix == ".tmp"]


@pytest.mark.parametrize("fault", [FULL_DISK, READ_ONLY], ids=["full disk", "read-only"])
def test_a_cache_that_cannot_be_written_keeps_modules_in_memory(tmp_path, fault):
    directory = tmp_path / "cache"
    directory.mkdir(mode=0o700)
    result = in_a_fresh_process(directory, fault)
    assert_runs(result, warnings=1)
    assert f"transpile cannot write its cache directory ({directory}: " in result["warnings"][0]
    assert "<transpile: in memory>/grad_cubic_sum_" in result["traceback"]
    assert no_temporary_files(directory) and not list(directory.glob("*.py"))


def test_compiled_code_runs_from_memory_without_numbas_disk_cache(tmp_path):
    directory = tmp_path / "cache"
    directory.mkdir(mode=0o700)
    result = in_a_fresh_process(directory, FULL_DISK, jit=True)
    assert_runs(result, warnings=1)
    assert result["jit"] == pytest.approx(0.5**3 + 1.5**3, rel=1e-12)
    assert "@jt.njit\n" in result["jit_source"] and "cache=True" not in result["jit_source"]
    assert no_temporary_files(directory) and not list(directory.rglob("*.nbi"))


@pytest.mark.parametrize("kind", ["file", "dangling link"])
def test_a_cache_path_that_is_not_a_directory_keeps_modules_in_memory(tmp_path, kind):
    path = tmp_path / "cache"
    if kind == "file":
        path.write_text("not a directory")
    else:
        path.symlink_to(tmp_path / "missing")
    result = in_a_fresh_process(path)
    assert_runs(result, warnings=1)
    assert f"({path}: " in result["warnings"][0]


def test_a_refused_directory_is_a_clear_error_in_a_fresh_process(tmp_path):
    result = in_a_fresh_process(unsafe(tmp_path / "cache", 0o777))
    assert "is writable by group and others" in result["error"] and str(tmp_path / "cache") in result["error"]


def test_entries_that_cannot_be_read_or_imported_are_generated_again(tmp_path):
    directory = tmp_path / "cache"
    assert_runs(in_a_fresh_process(directory))
    entries = {p: p.read_text() for p in directory.glob("grad_cubic_sum_*.py")}
    assert len(entries) == 1
    ((path, text),) = entries.items()
    key = path.stem.rsplit("_", 1)[1]
    for damage in (
        os.urandom(64) + b"\xff\xfe" + text.encode(),  # not UTF-8
        text.replace("return", "retur", 1).encode(),  # a changed entry: its digest no longer matches
        cache._entry_text("raise RuntimeError('planted')", key).encode(),  # intact, but fails when imported
    ):
        path.write_bytes(damage)
        assert_runs(in_a_fresh_process(directory))
        assert path.read_text() == text
    assert no_temporary_files(directory)


def test_a_generated_module_that_fails_when_imported_is_a_located_error(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "cache"))
    key = cache.cache_key(["a module that fails", str(tmp_path)])
    with pytest.raises(tp.TranspileError, match="fails when imported: ZeroDivisionError") as info:
        cache.load_or_write("failing", key, lambda: "x = 1\ny = 1 / 0\n")
    assert info.value.location.lineno == 2 and info.value.location.text() == "y = 1 / 0"
    assert f"transpile_generated.failing_{key}" not in sys.modules


# ---------------------------------------------------------------- two processes at once (pytest-xdist workers)

RACER = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    import transpile as tp

    {functions}

    start = float(sys.argv[1])
    while time.time() < start:  # both processes begin together
        time.sleep(0.005)
    x = np.linspace(0.1, 1.0, 4)
    errors = []
    for k, f in enumerate(FUNCTIONS, start=1):
        g = tp.grad(f)(x)
        want = np.cos(x) * x**k + k * np.sin(x) * x ** (k - 1)
        errors.append(float(np.max(np.abs(g - want))))
    print(json.dumps(errors))
""")
RACED = 12  # modules each process generates


def _racer_text():
    """The racing script: functions f1 ... f12, x -> sum(sin(x) * x**k), each its own generated module."""
    functions = "\n".join(f"def f{k}(x):\n    return np.sum(np.sin(x) * x**{k})\n" for k in range(1, RACED + 1))
    listed = ", ".join(f"f{k}" for k in range(1, RACED + 1))
    return RACER.replace("{functions}", f"{functions}\nFUNCTIONS = [{listed}]")


def test_two_processes_writing_one_cache_at_once_read_intact_entries(tmp_path):
    """Two processes (two test workers) that generate the same modules into one cache at the same moment both
    import intact modules with the right gradients, and leave intact entries and no temporary files."""
    script = tmp_path / "racer.py"
    script.write_text(_racer_text())
    directory = tmp_path / "cache"
    env = dict(os.environ, TRANSPILE_CACHE_DIR=str(directory))
    start = str(time.time() + 3.0)
    procs = [
        subprocess.Popen([sys.executable, str(script), start], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
        errors = np.array(json.loads(out.decode().splitlines()[-1]))
        assert errors.shape == (RACED,) and np.all(errors < 1e-12), errors
    entries = sorted(directory.glob("*.py"))
    assert len(entries) == RACED
    for path in entries:
        key = path.stem.rsplit("_", 1)[1]
        text = cache._read_entry(str(path), key)
        assert text is not None and linemap.read_map(str(path), text) is not None, path.name
    assert no_temporary_files(directory)
