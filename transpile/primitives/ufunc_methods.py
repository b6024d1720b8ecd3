"""Ufunc methods (np.add.reduce, np.logaddexp.reduce, ...) written as reductions and scans with rules.

`ufunc.reduce(a, axis=0, dtype, out, keepdims, initial, where)` of np.add, np.multiply, np.maximum and np.minimum is
np.sum, np.prod, np.max and np.min along `axis` (0 unless given: the ufunc's default, not theirs);
`ufunc.accumulate(a, axis=0, dtype, out)` of np.add and np.multiply is np.cumsum and np.cumprod.  np.logaddexp.reduce
(np.logaddexp2.reduce) is the log of the sum of the exponentials, shifted by the largest entry (held constant:
rt.stop_gradient), which NumPy reaches pairwise: the same value to rounding, and the softmax of the entries
as its derivative.  out=, initial= and where= are refused with a located error, as is a method of another ufunc
(the registry has no rule for it).
"""

import gast
import numpy as np

import runtime as rt

from .call_arguments import NO_VALUE, OUT_HINT, is_none, read_arguments, refuse_given
from .registry import Example, alias_ufunc_method, by_name, stepwise

_REDUCE = dict(array=NO_VALUE, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=True)
_ACCUMULATE = dict(array=NO_VALUE, axis=0, dtype=None, out=None)


def _bound_reduce(name, args, keywords, error, typed):
    """The call's arguments, those the rewrite cannot keep refused: out=, initial=, where= other than True, and
    dtype= where the reduction written for it has none (`typed` false)."""
    bound = read_arguments(name, _REDUCE, args, keywords, error, positional=5)
    refuse_given(name, bound, ["out"], error, OUT_HINT)
    refuse_given(name, bound, ["initial"], error, "leave it out and combine it with the result yourself")
    refuse_given(name, bound, [] if typed else ["dtype"], error, "leave out dtype= and cast the array first")
    where = bound["where"]
    if not (isinstance(where, gast.Constant) and where.value is True):
        error(where, f"np.{name}'s where= is not supported", "select the entries first, e.g. with np.where")
    return bound


def _reduce_as(name, reduction, typed):
    """The rewrite of np.<name> (a ufunc's reduce) as np.<reduction>(array, axis, [dtype,] keepdims=...)."""

    @stepwise
    def rewrite(args, keywords, error, call):
        bound = _bound_reduce(name, args, keywords, error, typed)
        options = dict(axis=bound["axis"], keepdims=bound["keepdims"])
        if typed and not is_none(bound["dtype"]):
            options["dtype"] = bound["dtype"]
        return call(reduction, bound["array"], **options)

    return rewrite


def _accumulate_as(name, scan):
    """The rewrite of np.<name> (a ufunc's accumulate) as np.<scan>(array, axis, dtype): an int axis, as NumPy
    requires of accumulate (np.cumsum would flatten for None)."""

    @stepwise
    def rewrite(args, keywords, error, call):
        bound = read_arguments(name, _ACCUMULATE, args, keywords, error, positional=4)
        refuse_given(name, bound, ["out"], error, OUT_HINT)
        if is_none(bound["axis"]):
            error(bound["axis"], f"np.{name}'s axis must be an int", "reshape the array to one axis first")
        options = dict(axis=bound["axis"])
        if not is_none(bound["dtype"]):
            options["dtype"] = bound["dtype"]
        return call(scan, bound["array"], **options)

    return rewrite


def _log_sum_exp(name, exp, log):
    """The rewrite of np.<name> (np.logaddexp.reduce in base e, np.logaddexp2.reduce in base 2): `log` of the sum
    of `exp` of the entries less their largest (0 where that is not finite: all -inf gives -inf, an inf gives
    inf, a nan gives nan), plus that largest."""

    @stepwise
    def rewrite(args, keywords, error, call):
        bound = _bound_reduce(name, args, keywords, error, typed=False)
        a, axis, keepdims = bound["array"], bound["axis"], bound["keepdims"]
        top = call(np.max, a, axis=axis, keepdims=True)
        shift = call(rt.stop_gradient, call(np.where, call(np.isfinite, top), top, 0.0))
        total = call(np.sum, call(exp, call(by_name("sub"), a, shift)), axis=axis, keepdims=keepdims)
        return call(by_name("add"), call(log, total), call(np.sum, shift, axis=axis, keepdims=keepdims))

    return rewrite


for _ufunc, _reduction, _typed in (
    (np.add, np.sum, True),
    (np.multiply, np.prod, True),
    (np.maximum, np.max, False),
    (np.minimum, np.min, False),
):
    _name = f"{_ufunc.__name__}.reduce"
    alias_ufunc_method(by_name(_reduction.__name__), _ufunc, "reduce", canonical=_reduce_as(_name, _reduction, _typed))
for _ufunc, _scan in ((np.add, np.cumsum), (np.multiply, np.cumprod)):
    _name = f"{_ufunc.__name__}.accumulate"
    alias_ufunc_method(by_name(_scan.__name__), _ufunc, "accumulate", canonical=_accumulate_as(_name, _scan))
for _ufunc, _exp, _log in ((np.logaddexp, np.exp, np.log), (np.logaddexp2, np.exp2, np.log2)):
    _name = f"{_ufunc.__name__}.reduce"
    alias_ufunc_method(by_name(_ufunc.__name__), _ufunc, "reduce", canonical=_log_sum_exp(_name, _exp, _log))

M = dict(a=(3, 4))
by_name("sum").examples.extend(
    [
        Example("np.add.reduce(a)", M),
        Example("np.add.reduce(a, 1, keepdims=True)", M),
        Example("np.add.reduce(a, axis=None)", M),
    ]
)
by_name("prod").examples.append(Example("np.multiply.reduce(a, axis=1)", M))
by_name("max").examples.append(Example("np.maximum.reduce(a, axis=-1)", M))
by_name("min").examples.append(Example("np.minimum.reduce(a)", M))
by_name("cumsum").examples.append(Example("np.add.accumulate(a, axis=1)", M))
by_name("cumprod").examples.append(Example("np.multiply.accumulate(a)", dict(a=(4,))))
by_name("logaddexp").examples.extend(
    [
        Example("np.logaddexp.reduce(a)", M),
        Example("np.logaddexp.reduce(a, axis=1, keepdims=True)", M),
        Example("np.logaddexp.reduce(a, axis=None)", dict(a=(5,))),
    ]
)
by_name("logaddexp2").examples.append(Example("np.logaddexp2.reduce(a, axis=1)", M))
