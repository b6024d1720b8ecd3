"""runtime/numba/helper_cache.py: a helper compiled for one function is read from disk by a later process."""

import textwrap

import numba
import pytest

from runtime.numba import helper_cache, linking

pytestmark = pytest.mark.skipif(not helper_cache.ENABLED, reason="TRANSPILE_HELPER_CACHE=0")


# Two callers of the same helpers; each run compiles one.  `checked` raises with a value computed at run time,
# which Numba boxes through the helper's environment: a library read from disk must have it set too.
_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numba
    import numpy as np
    from numba.extending import register_jitable
    from runtime.numba import helper_cache

    helper_cache.CACHED_MODULES += ("__main__",)  # this script's helpers, for the test

    @register_jitable
    def checked(x, n):
        if n > x.shape[0]:
            raise ValueError("longer than the array", n)
        return x[:n].sum()

    @register_jitable
    def scaled(x, factor):
        return np.tanh(x) * factor

    @numba.njit
    def first(x, n):
        return checked(scaled(x, 2.0), n) + 1.0

    @numba.njit
    def second(x, n):
        return checked(scaled(x, 3.0), n) * 2.0

    caller = first if sys.argv[1] == "first" else second
    x = np.linspace(-1.0, 1.0, 7)
    value = caller(x, 5)
    try:
        caller(x, 9)
        raised = None
    except ValueError as error:
        raised = list(error.args)
    print(json.dumps({"value": float(value), "raised": raised, "saved": dict(helper_cache.saved),
                      "loaded": dict(helper_cache.loaded)}))
    """
)


def test_a_later_process_links_the_helpers_an_earlier_one_compiled(tmp_path, run_in_new_process):
    import numpy as np

    script = tmp_path / "helpers_script.py"
    script.write_text(_SCRIPT)
    cache = tmp_path / "cache"
    x = np.linspace(-1.0, 1.0, 7)

    earlier = run_in_new_process(script, "first", cache)
    assert earlier["value"] == pytest.approx(np.sum(np.tanh(x[:5]) * 2.0) + 1.0, rel=1e-15)
    assert earlier["raised"] == ["longer than the array", 9]
    assert earlier["saved"].get("checked") and earlier["saved"].get("scaled") and not earlier["loaded"]

    later = run_in_new_process(script, "second", cache)  # another function: the helpers are read, not compiled
    assert later["value"] == pytest.approx(np.sum(np.tanh(x[:5]) * 3.0) * 2.0, rel=1e-15)
    assert later["raised"] == ["longer than the array", 9]
    assert later["loaded"].get("checked") and later["loaded"].get("scaled")
    assert not later["saved"].get("checked") and not later["saved"].get("scaled")


def test_the_key_names_the_runtime_sources_the_versions_the_mode_the_caller_flags_and_the_promotion_rules():
    @numba.njit
    def caller(x):
        return x + 1

    cache = helper_cache.HelperCache(helper_cache.runtime_digest.__wrapped__)
    key = cache._index_key((numba.float64,), caller.targetctx.codegen())
    assert helper_cache.runtime_digest() in key and helper_cache.VERSIONS in key and linking.TAGS in key
    assert len(key[-3]) == len(helper_cache.INHERITED)
    assert key[-1] is False  # not compiled with NumPy's promotion rules (promotion.numpy_code)


def test_only_runtime_and_numba_implementations_get_a_cache():
    from numba.core import caching
    from numba.np import arraymath

    from runtime.numba import helpers

    def outside(x):
        return x * 2

    assert isinstance(helper_cache._cached(numba.njit(outside))._cache, caching.NullCache)
    assert isinstance(helper_cache._cached(numba.njit(helpers._sum_to))._cache, helper_cache.HelperCache)
    assert isinstance(helper_cache._cached(numba.njit(arraymath.array_sum))._cache, helper_cache.HelperCache)


def test_entries_of_other_runtime_sources_or_versions_are_outdated():
    current = ("sig", helper_cache.runtime_digest(), helper_cache.VERSIONS)
    assert not helper_cache._outdated(current)
    assert helper_cache._outdated(("sig", "0" * 64, helper_cache.VERSIONS))
    assert helper_cache._outdated(("sig", helper_cache.runtime_digest(), ("1.26.0", "0.42.0")))


def test_a_saved_helper_keeps_its_bitcode_and_no_type_annotation():
    @numba.njit
    def helper(x):
        return x * 2.0

    assert helper(1.5) == 3.0
    (compiled,) = helper.overloads.values()
    impl = object.__new__(helper_cache._Impl)  # reduce() reads nothing of the cache it belongs to
    payload = impl.reduce(compiled)
    assert payload[0][1] == "bitcode"
    assert helper_cache.UNANNOTATED in payload and str(compiled.type_annotation) not in payload


def _closure_over(value):
    return lambda: value


def test_a_closure_over_a_numba_type_digests_alike_whatever_number_its_process_gave_the_type():
    from numba.core import serialize

    here = numba.types.Array(numba.float64, 2, "C")
    elsewhere = object.__new__(type(here))  # the same type as another process numbers it, having made others first
    elsewhere.__dict__.update(vars(here), _code=here._code + 17)
    assert serialize.dumps((here,)) != serialize.dumps((elsewhere,))  # Numba's own key tells them apart
    assert helper_cache.closure_bytes(_closure_over(here)) == helper_cache.closure_bytes(_closure_over(elsewhere))

    other = numba.types.Array(numba.float64, 2, "F")
    assert helper_cache.closure_bytes(_closure_over(other)) != helper_cache.closure_bytes(_closure_over(here))
    assert helper_cache.closure_bytes(lambda: 1) == b""  # no closure


# np.empty's implementation closes over the result's array type; the later process numbers its types otherwise
_EMPTY_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numba
    import numpy as np
    from numba.core import types
    from runtime.numba import helper_cache

    if sys.argv[1] == "later":
        made_first = [types.Array(types.int16, ndim, "A") for ndim in range(1, 9)]

    @numba.njit
    def square(n):
        return np.empty((n, n), np.float64).shape

    square(3)
    print(json.dumps({"saved": dict(helper_cache.saved), "loaded": dict(helper_cache.loaded)}))
    """
)


def test_a_later_process_that_made_other_types_first_reads_an_implementation_closed_over_a_type(
    tmp_path, run_in_new_process
):
    script = tmp_path / "empty_script.py"
    script.write_text(_EMPTY_SCRIPT)
    empty = "ol_np_empty.<locals>.impl"
    assert run_in_new_process(script, "earlier", tmp_path / "cache")["saved"].get(empty) == 1
    later = run_in_new_process(script, "later", tmp_path / "cache")
    assert later["loaded"].get(empty) == 1 and empty not in later["saved"]
