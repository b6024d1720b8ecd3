"""Numba's performance warnings while the Numba backend compiles become one actionable warning, or nothing."""

import warnings

from numba import types
from numba.core.errors import NumbaPerformanceWarning

from transpile.backends.numba.performance import JitPerformanceWarning, performance_warnings


def performance_warning():
    warnings.warn("'@' is faster on contiguous arrays", NumbaPerformanceWarning, stacklevel=1)


def test_a_performance_warning_about_a_strided_argument_says_what_to_pass():
    strided, contiguous = types.Array(types.float64, 2, "A"), types.Array(types.float64, 2, "C")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with performance_warnings("jit(f)", {"a": strided, "b": contiguous}):
            performance_warning()
            performance_warning()
    assert [w.category for w in caught] == [JitPerformanceWarning]
    assert "`a`" in str(caught[0].message) and "`b`" not in str(caught[0].message)
    assert "np.ascontiguousarray" in str(caught[0].message)


def test_performance_warnings_about_generated_code_are_dropped_and_others_pass():
    contiguous = types.Array(types.float64, 2, "C")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with performance_warnings("jit(f)", {"a": contiguous}):
            performance_warning()
            warnings.warn("something else", UserWarning, stacklevel=1)
    assert [(w.category, str(w.message)) for w in caught] == [(UserWarning, "something else")]
