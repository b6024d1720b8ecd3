"""runtime/numba/sources.py: helpers written as text live in files named by text and globals, so they are cached."""

import json
import os
import textwrap

import numpy as np
import pytest

from runtime.numba import fused, helper_cache, sources

pytestmark = pytest.mark.skipif(not helper_cache.ENABLED, reason="TRANSPILE_HELPER_CACHE=0")

TEXT = "def scaled(x):\n    return np.asarray(x, dtype) * factor\n"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSPILE_CACHE_DIR", str(tmp_path))
    return tmp_path / "helpers" / "sources"


def test_a_function_lives_in_a_file_named_by_its_text_and_the_globals_it_reads(cache):
    first = sources.function_from_text("scaled", TEXT, {"np": np, "dtype": np.float32, "factor": 2, "unread": object()})
    again = sources.function_from_text("scaled", TEXT, {"np": np, "dtype": np.float32, "factor": 2})
    other = sources.function_from_text("scaled", TEXT, {"np": np, "dtype": np.float64, "factor": 2})

    assert first.__code__.co_filename == again.__code__.co_filename != other.__code__.co_filename
    assert os.path.dirname(first.__code__.co_filename) == str(cache)
    assert first([1.5]).dtype == np.float32 and other([1.5]).dtype == np.float64
    with open(first.__code__.co_filename) as file:
        written = file.read()
    assert written == "# dtype: numpy:float32\n# factor: int 2\n# np: module numpy\n" + TEXT
    assert first.__module__ == "runtime.numba.sources"  # so that the helper cache serves it


def test_a_global_that_cannot_be_named_in_another_process_leaves_the_function_without_a_file(cache):
    class Made:  # a class made at run time: another process's could differ
        pass

    function = sources.function_from_text("scaled", TEXT, {"np": np, "dtype": Made, "factor": 2})
    assert function.__code__.co_filename == "<generated>" and not hasattr(function, sources.DIGEST)
    assert not cache.exists()


def test_values_are_described_by_what_names_them_in_any_process():
    made = sources.function_from_text("scaled", TEXT, {"np": np, "dtype": np.float32, "factor": 2})
    assert sources.described(fused.spread) == "runtime.numba.fused:spread"  # a Numba intrinsic, by its definition
    assert sources.described(np.float64) == "numpy:float64"
    assert sources.described(np.dtype("int8")) == "dtype('int8')"
    assert sources.described((1, 2.0, "a")) == "tuple(int 1, float 2.0, str 'a')"
    assert sources.described(made) == f"source {getattr(made, sources.DIGEST)}"
    assert sources.described(json) is None  # a module whose code no helper key covers
    assert sources.described(lambda x: x) is None
    assert sources.described(object()) is None


# A fused block compiled in one process is read by the next; float32 inputs get their own loop nest.
_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import runtime.numba as jt
    from runtime.numba import helper_cache, promotion

    @promotion.njit
    def block(x, y):
        return jt.kernel("x, y -> z, s", "z = np.tanh(x * y)", "s = jt.sum(z, axis=None, keepdims=False)", x, y)

    dtype = np.dtype(sys.argv[1])
    z, s = block(np.linspace(0.0, 1.0, 12, dtype=dtype).reshape(3, 4), np.arange(4, dtype=dtype))
    print(json.dumps({"z": z.tolist(), "s": float(s), "dtype": str(z.dtype), "loaded": dict(helper_cache.loaded)}))
    """
)


def test_a_later_process_reads_a_fused_loop_nest_an_earlier_one_compiled(tmp_path, run_in_new_process):
    script = tmp_path / "nest_script.py"
    script.write_text(_SCRIPT)
    cache = tmp_path / "cache"
    x, y = np.linspace(0.0, 1.0, 12).reshape(3, 4), np.arange(4.0)

    earlier = run_in_new_process(script, "float64", cache)
    later = run_in_new_process(script, "float64", cache)
    narrow = run_in_new_process(script, "float32", cache)

    assert not earlier["loaded"].get("impl") and later["loaded"].get("impl")
    for result in (earlier, later):
        np.testing.assert_allclose(result["z"], np.tanh(x * y), rtol=1e-15)
        assert result["s"] == pytest.approx(np.tanh(x * y).sum(), rel=1e-14) and result["dtype"] == "float64"
    assert narrow["dtype"] == "float32" and not narrow["loaded"].get("impl")
    np.testing.assert_allclose(narrow["z"], np.tanh((x * y).astype(np.float32)), rtol=1e-6)
