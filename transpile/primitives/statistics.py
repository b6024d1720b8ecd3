"""np.ptp, np.average, np.cov and np.corrcoef, each written as steps: calls of NumPy functions whose rules the
registry has (np.max, np.mean, np.dot, np.clip, ...) and of runtime/statistics.py's helpers (registry.stepwise).

Their derivatives, batching and jit are those of the steps.  The coverage table shows the rules of the entry each
name is an alias of: np.max's for np.ptp, rt.weights_along's for np.average, rt.variables_by_row's for np.cov and
np.corrcoef.  The helpers take vmap's batch axes in front of the examples (`lead` counts them), so that vmap calls
them once for all the examples.
"""

import inspect

import gast
import numpy as np

import runtime as rt

from .batch_rules import _expr
from .call_arguments import NO_VALUE, OUT_HINT, constant, is_none, read_arguments, refuse_given
from .registry import Example, alias, by_name, defhelper, stepwise


def _one_more_lead(helper, *arrays):
    """The batching rule of rt.<helper> (its last parameter `lead` counting the axes in front of each example in
    `arrays`, batched alike: batch_broadcast): the same call with one more, or None (vmap's loop over the examples)
    where another argument is batched or `lead` is not written in the call."""
    params = [p for p in inspect.signature(helper).parameters if p != "lead"]

    def rule(bound, batched):
        lead = bound.get("lead", constant(0))
        if any(flag for p, flag in batched.items() if p not in arrays) or not isinstance(lead, gast.Constant):
            return None
        given = [p for p in params if p in bound]
        template = f"rt.{helper.__name__}({', '.join(given)}, lead={lead.value + 1})"
        return _expr(template, **{p: bound[p] for p in given})

    return rule


# ---------------------------------------------------------------------------- np.ptp


@stepwise
def _ptp(args, keywords, error, call):
    """np.ptp(a, axis, keepdims=k) is np.max(a, axis, keepdims=k) - np.min(a, axis, keepdims=k): its derivative is
    theirs (shared among tied entries)."""
    bound = read_arguments("ptp", dict(a=NO_VALUE, axis=None, out=None, keepdims=False), args, keywords, error)
    refuse_given("ptp", bound, ["out"], error, OUT_HINT)
    a, how = bound["a"], dict(axis=bound["axis"], keepdims=bound["keepdims"])
    return call(by_name("sub"), call(np.max, a, **how), call(np.min, a, **how))


alias(by_name("max"), np.ptp, canonical=_ptp)
by_name("max").examples.extend(
    [
        Example("np.ptp(a)", dict(a=(3, 4))),
        Example("np.ptp(a, axis=0)", dict(a=(3, 4))),
        Example("np.ptp(a, axis=(0, 2), keepdims=True)", dict(a=(2, 3, 4))),
        Example("np.ptp(a, -1)", dict(a=(2, 3, 4))),
    ]
)


# ---------------------------------------------------------------------------- np.average


@stepwise
def _average(args, keywords, error, call):
    """np.average(a, axis): np.mean(a, axis); with weights, np.sum(a * w, axis) / np.sum(w, axis), w being the
    weights lined up with `a` (rt.weights_along: of a's shape, or along `axis`) in NumPy's result type, their sums
    checked for zeros (rt.weight_sums: NumPy's ZeroDivisionError).  returned=True adds the sums of the weights
    (the count of entries averaged, without weights), of the average's shape and type."""
    params = dict(a=NO_VALUE, axis=None, weights=None, returned=False, keepdims=False)
    bound = read_arguments("average", params, args, keywords, error, positional=4)
    a, axis, weights, returned = bound["a"], bound["axis"], bound["weights"], bound["returned"]
    how = dict(axis=axis, keepdims=bound["keepdims"])
    if not (isinstance(returned, gast.Constant) and isinstance(returned.value, (bool, int))):
        error(returned, "np.average's returned= must be written True or False", "it decides what the call returns")
    if is_none(weights):
        average = call(np.mean, a, **how)
        if not returned.value:
            return average
        count = call(by_name("truediv"), call(np.size, a), call(np.size, average))
        return gast.Tuple(elts=[average, call(np.full_like, average, count)], ctx=gast.Load())
    w = call(rt.weights_along, weights, a, axis)
    total = call(rt.weight_sums, call(np.sum, w, **how))
    average = call(by_name("truediv"), call(np.sum, call(by_name("mul"), a, w), **how), total)
    if not returned.value:
        return average
    return gast.Tuple(elts=[average, call(np.full_like, average, total)], ctx=gast.Load())


by_name("mean").examples.extend(
    [
        Example("np.average(a)", dict(a=(3, 4))),
        Example("np.average(a, axis=(0, 2), keepdims=True)", dict(a=(2, 3, 4))),
        Example("np.average(a, 1, b)", dict(a=(3, 4), b=(3, 4)), domain="positive"),
        Example("np.average(a, weights=b)", dict(a=(3, 4), b=(3, 4)), domain="positive"),
        Example("np.average(a, axis=0, weights=b)", dict(a=(3, 4), b=(3,)), domain="positive"),
        Example("np.average(a, axis=(2, 0), weights=b, keepdims=True)", dict(a=(2, 3, 4), b=(4, 2)), domain="positive"),
        Example("np.average(a, axis=-1, weights=b, returned=True)[0]", dict(a=(3, 4), b=(4,)), domain="positive"),
        Example("np.average(a, axis=-1, weights=b, returned=True)[1]", dict(a=(3, 4), b=(4,)), domain="positive"),
        Example("np.average(a, axis=0, returned=True)[0]", dict(a=(3, 4))),
    ]
)
defhelper(
    rt.weights_along,
    params=["weights", "a", "axis=None", "lead=0"],
    vjp={"weights": "rt.weights_along_vjp(g, weights, a, axis, lead)"},
    jvp={"weights": "rt.weights_along(t, a, axis, lead)"},
    structural=("a", "axis", "lead"),
    batch=_one_more_lead(rt.weights_along, "weights", "a"),
    batch_broadcast=("weights", "a"),
)
defhelper(
    rt.weights_along_vjp,
    params=["g", "weights", "a", "axis=None", "lead=0"],
    vjp={"g": "rt.weights_along(g, a, axis, lead)"},
    jvp={"g": "rt.weights_along_vjp(t, weights, a, axis, lead)"},
    structural=("weights", "a", "axis", "lead"),
    batch=_one_more_lead(rt.weights_along_vjp, "g", "weights", "a"),
    batch_broadcast=("g", "weights", "a"),
)
defhelper(
    rt.weight_sums,
    params=["total"],
    vjp={"total": "g"},
    jvp={"total": "t"},
    batch="rt.weight_sums(total)",
)
alias(by_name("rt.weights_along"), np.average, canonical=_average)


# ---------------------------------------------------------------------------- np.cov and np.corrcoef

_COV = dict(m=NO_VALUE, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, dtype=None)


def _covariances(bound, call):
    """The (k, k) covariances of np.cov's variables (not squeezed), from its bound arguments."""
    rowvar = bound["rowvar"]
    x = call(rt.variables_by_row, bound["m"], rowvar, "m")
    if not is_none(bound["y"]):
        x = call(np.concatenate, (x, call(rt.variables_by_row, bound["y"], rowvar, "y")), axis=0)
    weights = None  # NumPy's w: fweights * aweights
    for name in ("fweights", "aweights"):
        if not is_none(bound.get(name, constant(None))):
            checked = call(rt.observation_weights, bound[name], x, name)
            weights = checked if weights is None else call(by_name("mul"), weights, checked)
            bound = {**bound, name: checked}
    ddof, bias = bound["ddof"], bound["bias"]
    if is_none(ddof):  # NumPy: 1, or 0 for a true `bias`
        if isinstance(bias, gast.Constant):
            ddof = constant(0 if bias.value else 1)
        else:
            ddof = call(np.logical_not, bias)
    sub = by_name("sub")
    if weights is None:
        observations = gast.Subscript(value=call(np.shape, x), slice=constant(1), ctx=gast.Load())
        count = call(sub, observations, ddof)
        deviations = call(sub, x, call(np.mean, x, axis=1, keepdims=True))
        weighted = deviations
    else:  # as np.average(x, axis=1, weights=w) computes the means, and NumPy the count
        total = call(rt.weight_sums, call(np.sum, weights))
        means = call(by_name("truediv"), call(np.sum, call(by_name("mul"), x, weights), axis=1, keepdims=True), total)
        if is_none(bound.get("aweights", constant(None))):
            count = call(sub, total, ddof)
        else:
            spread = call(sum, call(by_name("mul"), weights, bound["aweights"]))  # (Python's sum, as NumPy's)
            count = call(sub, total, call(by_name("truediv"), call(by_name("mul"), ddof, spread), total))
        deviations = call(sub, x, means)
        weighted = call(by_name("mul"), deviations, weights)
    count = call(np.maximum, count, 0.0)  # NumPy: 0.0 when not positive (and a warning)
    products = call(np.dot, deviations, call(np.conj, call(np.transpose, weighted)))
    return call(by_name("mul"), products, call(np.true_divide, 1, count))


@stepwise
def _cov(args, keywords, error, call):
    """np.cov(m, y, rowvar, bias, ddof, fweights, aweights): the deviations from each variable's (weighted) mean,
    multiplied as NumPy does (np.dot(d, (d * w).T.conj()) * (1 / (n - ddof))), squeezed."""
    bound = read_arguments("cov", _COV, args, keywords, error, positional=7)
    refuse_given("cov", bound, ["dtype"], error, "leave out dtype= and cast the result: np.cov(m).astype({param})")
    return call(rt.squeezed_covariances, _covariances(bound, call), bound["m"], bound["y"])


@stepwise
def _corrcoef(args, keywords, error, call):
    """np.corrcoef(x, y, rowvar): np.cov's covariances divided by the standard deviations on either side, as NumPy
    divides, and clipped to [-1, 1] with np.clip (its derivative rule) on the real part."""
    params = dict(x=NO_VALUE, y=None, rowvar=True, dtype=None)
    bound = read_arguments("corrcoef", params, args, keywords, error, positional=3)
    refuse_given("corrcoef", bound, ["dtype"], error, "leave out dtype= and cast the result")
    covariances = _covariances(
        dict(m=bound["x"], y=bound["y"], rowvar=bound["rowvar"], bias=constant(False), ddof=constant(None)), call
    )
    deviations = call(np.sqrt, call(np.real, call(np.diagonal, covariances)))
    rows = call(by_name("truediv"), covariances, call(np.expand_dims, deviations, 1))
    c = call(by_name("truediv"), rows, deviations)
    real = call(np.real, c)
    imaginary = call(by_name("sub"), c, real)  # 0 for real values
    clipped = call(by_name("add"), call(np.clip, real, -1, 1), imaginary)
    return call(rt.squeezed_covariances, clipped, bound["x"], bound["y"])


by_name("dot").examples.extend(
    [
        Example("np.cov(a)", dict(a=(3, 5))),
        Example("np.cov(a)", dict(a=(5,))),
        Example("np.cov(a, b)", dict(a=(5,), b=(5,))),
        Example("np.cov(a, rowvar=False, ddof=0)", dict(a=(5, 3))),
        Example("np.cov(a, b, False, True)", dict(a=(5, 2), b=(5, 3))),
        Example("np.cov(a, aweights=b)", dict(a=(3, 5), b=(5,)), domain="positive"),
        Example("np.cov(a, fweights=np.arange(1, 6), aweights=b, ddof=0)", dict(a=(2, 5), b=(5,)), domain="positive"),
        Example("np.cov(a, rowvar=False, fweights=np.array([1, 2, 3, 1]))", dict(a=(4, 3))),
        Example("np.corrcoef(a)", dict(a=(3, 5))),
        Example("np.corrcoef(a, b)", dict(a=(5,), b=(5,))),
        Example("np.corrcoef(a, b, rowvar=False)", dict(a=(6, 2), b=(6,))),
    ]
)
defhelper(
    rt.variables_by_row,
    params=["x", "rowvar", "name", "lead=0"],
    vjp={"x": "rt.variables_by_row_vjp(g, x, rowvar, name, lead)"},
    jvp={"x": "rt.variables_by_row(t, rowvar, name, lead)"},
    structural=("rowvar", "name", "lead"),
    batch=_one_more_lead(rt.variables_by_row, "x"),
)
defhelper(
    rt.variables_by_row_vjp,
    params=["g", "like", "rowvar", "name", "lead=0"],
    vjp={"g": "rt.variables_by_row(g, rowvar, name, lead)"},
    jvp={"g": "rt.variables_by_row_vjp(t, like, rowvar, name, lead)"},
    structural=("like", "rowvar", "name", "lead"),
    batch=_one_more_lead(rt.variables_by_row_vjp, "g", "like"),
    batch_broadcast=("g", "like"),
)
defhelper(  # (vmap's axes are those of c in front of its last two)
    rt.squeezed_covariances,
    params=["c", "m_like", "y_like=None"],
    vjp={"c": "rt.reshape(g, np.shape(c))"},
    jvp={"c": "rt.squeezed_covariances(t, m_like, y_like)"},
    structural=("m_like", "y_like"),
    batch="rt.squeezed_covariances(c, m_like, y_like)",
    batch_broadcast=("c", "m_like"),
)
alias(by_name("rt.variables_by_row"), np.cov, canonical=_cov)
alias(by_name("rt.variables_by_row"), np.corrcoef, canonical=_corrcoef)
defhelper(
    rt.observation_weights,
    params=["w", "x", "name", "lead=0"],
    vjp={"w": "g"},
    jvp={"w": "t"},
    structural=("x", "name", "lead"),
    batch=_one_more_lead(rt.observation_weights, "w", "x"),
    batch_broadcast=("w", "x"),
)
