"""Reductions (sum, mean, prod, max, min, var, std, and their NaN-skipping forms) and cumulative sums and products."""

import gast
import numpy as np

import runtime as rt

from .registry import Example, defhelper, defprim

X = dict(a=(3, 4))
R3 = dict(a=(2, 3, 4))
V = dict(a=(5,))
S = dict(a=())

# The adjoint of a reduction is g broadcast back over the reduced axes (rt.expand_reduced),
# times the derivative of the reduction with respect to each entry.
EXPAND = "rt.expand_reduced(g, a, axis=axis, keepdims=keepdims)"
REDUCE_PARAMS = ["a", "axis=None", "dtype=None", "out=None", "keepdims=False"]
# Parameters that only say how to reduce.  Marked structural so that, when adjoint code is differentiated
# again (where they arrive through the residuals, which are all active), they are not asked for a rule.
HOW = ("axis", "dtype", "out", "keepdims")

defprim(
    "sum",
    np.sum,
    batch="axis",
    path="np.sum",
    params=REDUCE_PARAMS,
    vjp={"a": EXPAND},
    methods=["sum"],
    jvp={"a": "np.sum(t, axis=axis, keepdims=keepdims)"},
    structural=HOW,
    examples=[
        Example("np.sum(a)", X),
        Example("np.sum(a, axis=0)", X),
        Example("a.sum(axis=1)", X),
        Example("np.sum(a, axis=(0, 2), keepdims=True)", R3),
        Example("np.sum(a, axis=-1)", R3),
        Example("a.sum()", V),
        Example("np.sum(a)", S),
        Example("np.sum(a, axis=None, keepdims=True)", X),
        Example("np.sum(a > 0) * a", X),
        Example("np.sum(a, 1, keepdims=True) * a", X),
    ],
)
defprim(
    "mean",
    np.mean,
    batch="axis",
    path="np.mean",
    params=REDUCE_PARAMS,
    vjp={"a": f"{EXPAND} * (np.size(ans) / np.size(a))"},
    methods=["mean"],
    jvp={"a": "np.mean(t, axis=axis, keepdims=keepdims)"},
    structural=HOW,
    examples=[
        Example("np.mean(a)", X),
        Example("a.mean(axis=0)", X),
        Example("np.mean(a, axis=-2)", R3),
        Example("np.mean(a, axis=(1, 2), keepdims=True)", R3),
        Example("np.mean(a)", S),
    ],
)
# NaN-skipping reductions: the NaN entries count as absent (0 in the sum, not counted in the mean) and get no
# derivative, as in JAX.
_KEPT = "np.where(np.isnan(a), 0.0, {})"
_PRESENT = "np.sum(~np.isnan(a), axis=axis, keepdims={})"  # the entries of each group that are not NaN
defprim(
    "nansum",
    np.nansum,
    batch="axis",
    path="np.nansum",
    params=REDUCE_PARAMS,
    vjp={"a": _KEPT.format(EXPAND)},
    jvp={"a": f"np.sum({_KEPT.format('t')}, axis=axis, keepdims=keepdims)"},
    structural=HOW,
    examples=[
        Example("np.nansum(a)", X),
        Example("np.nansum(a, axis=0)", X),
        Example("np.nansum(a, axis=(0, 2), keepdims=True)", R3),
        Example("np.nansum(np.where(a > 0.5, np.nan, a), axis=-1)", R3),
    ],
)
defprim(
    "nanmean",
    np.nanmean,
    batch="axis",
    path="np.nanmean",
    params=REDUCE_PARAMS,
    vjp={"a": _KEPT.format(f"rt.expand_reduced(g / {_PRESENT.format('keepdims')}, a, axis=axis, keepdims=keepdims)")},
    jvp={"a": f"np.sum({_KEPT.format('t')}, axis=axis, keepdims=keepdims) / {_PRESENT.format('keepdims')}"},
    structural=HOW,
    examples=[
        Example("np.nanmean(a)", X),
        Example("np.nanmean(a, axis=1)", X),
        Example("np.nanmean(a, axis=(0, 2), keepdims=True)", R3),
        Example("np.nanmean(np.where(a > 0.5, np.nan, a), axis=(1, 2))", R3),
    ],
)
# How many entries are not zero: an integer count, constant almost everywhere (no derivative, as np.argmax).
defprim(
    "count_nonzero",
    np.count_nonzero,
    batch="axis",
    path="np.count_nonzero",
    params=["a", "axis=None", "keepdims=False"],
    nondiff=True,
    examples=[
        Example("np.count_nonzero(a > 0.5) * a", X),
        Example("np.count_nonzero(a > 0.0, axis=1) * a.T", X),
        Example("np.count_nonzero(np.maximum(a, 0.0), axis=(0, 2), keepdims=True) * a", R3),
        Example("np.count_nonzero(a, axis=-1) * a", V),
    ],
)
# Order statistics (the default, linear method): d/da is rt.order_weights, nonzero at the one or two entries whose
# ranks the quantile falls between; a q with several values, another method, or q itself differentiated raise.
# The NaN-skipping forms rank the entries that are not NaN (the NaNs get zero; a group of NaNs only: NaN, as its
# value is, which NumPy warns of).
_AT_RANKS = "rt.order_weights(a, {q}, axis, method{skip})"  # skip: ", skip_nan=True" or ""
_ORDER_PARAMS = ["a", "q", "axis=None", "out=None", "overwrite_input=False", "method='linear'", "keepdims=False"]
_ORDER_HOW = ("axis", "out", "method", "keepdims")


def _input_kept(position):
    """A canonical= check: np.median(a, overwrite_input=True) (and np.quantile's, np.percentile's) may sort `a` in
    place, which transpile does not follow (the derivative would read the sorted entries): refused."""

    def check(args, keywords, error):
        given = args[position : position + 1] + [k.value for k in keywords if k.arg == "overwrite_input"]
        for value in given:
            if not (isinstance(value, gast.Constant) and value.value is False):
                error(
                    value,
                    "`overwrite_input=` other than False lets NumPy sort the input in place, and transpile does not "
                    "follow writes made inside a function (the value or the gradient would miss it)",
                    "leave out `overwrite_input=`",
                )
        return args, keywords

    return check


_HAS_NANS = "np.where(a > 0.5, np.nan, a)"  # about a third NaN, the nansum example's way
for _name, _impl, _q, _skip in [
    ("quantile", np.quantile, "q", ""),
    ("percentile", np.percentile, "np.divide(q, 100.0)", ""),
    ("nanquantile", np.nanquantile, "q", ", skip_nan=True"),
    ("nanpercentile", np.nanpercentile, "np.divide(q, 100.0)", ", skip_nan=True"),
]:
    _at_ranks = _AT_RANKS.format(q=_q, skip=_skip)
    _qs = (0.3, 0.75, 0.5, 0.4) if "quantile" in _name else (30.0, 75.0, 50.0, 40.0)
    defprim(
        _name,
        _impl,
        batch="axis",
        path=f"np.{_name}",
        params=_ORDER_PARAMS,
        vjp={"a": f"{_at_ranks} * {EXPAND}"},  # (the weights first: they refuse several q)
        jvp={"a": f"np.sum(t * {_at_ranks}, axis=axis, keepdims=keepdims)"},
        structural=_ORDER_HOW,
        canonical=_input_kept(4),
        examples=[
            Example(f"np.{_name}(a, {_qs[0]})", X),
            Example(f"np.{_name}(a, {_qs[1]}, axis=1)", X),
            Example(f"np.{_name}(a, {_qs[2]}, axis=(0, 2), keepdims=True)", R3),
        ]
        + ([Example(f"np.{_name}({_HAS_NANS}, {_qs[3]}, axis=-1)", R3)] if _skip else []),
    )
for _name, _impl, _skip in [("median", np.median, ""), ("nanmedian", np.nanmedian, ", skip_nan=True")]:
    _at_ranks = f"rt.order_weights(a, 0.5, axis{_skip})"
    defprim(
        _name,
        _impl,
        batch="axis",
        path=f"np.{_name}",
        params=["a", "axis=None", "out=None", "overwrite_input=False", "keepdims=False"],
        vjp={"a": f"{_at_ranks} * {EXPAND}"},
        jvp={"a": f"np.sum(t * {_at_ranks}, axis=axis, keepdims=keepdims)"},
        structural=("axis", "out", "keepdims"),
        canonical=_input_kept(3),
        examples=[
            Example(f"np.{_name}(a)", X),
            Example(f"np.{_name}(a, axis=0)", X),
            Example(f"np.{_name}(a, axis=-1, keepdims=True)", R3),
            Example(f"np.{_name}(a)", V),
        ]
        + ([Example(f"np.{_name}({_HAS_NANS}, axis=(0, 2))", R3)] if _skip else []),
    )
defhelper(
    rt.order_weights,
    params=["a", "q", "axis=None", "method='linear'", "skip_nan=False"],
    nondiff=True,
    batch="rt.order_weights(a, q, rt.batch_axis(axis, a), method, skip_nan)",
    batch_broadcast=("a",),
)
defprim(
    "prod",
    np.prod,
    batch="axis",
    path="np.prod",
    params=REDUCE_PARAMS,
    vjp={"a": f"{EXPAND} * rt.prod_others(a, axis)"},
    methods=["prod"],
    jvp={"a": "np.sum(t * rt.prod_others(a, axis), axis=axis, keepdims=keepdims)"},
    structural=HOW,
    examples=[
        Example("np.prod(a)", X),
        Example("np.prod(a, axis=0)", X),
        Example("a.prod(axis=-1)", R3),
        Example("np.prod(a, axis=(0, 2), keepdims=True)", R3),
        Example("a.prod()", V),
        Example("np.prod(a)", S),
        Example("np.prod(a, axis=0)", dict(a=(1, 3))),
    ],
)
# np.nanprod: np.prod's rule with the NaN entries as 1, and no derivative for them.
_ONES = "np.where(np.isnan(a), 1.0, a)"
defprim(
    "nanprod",
    np.nanprod,
    batch="axis",
    path="np.nanprod",
    params=REDUCE_PARAMS,
    vjp={"a": _KEPT.format(f"{EXPAND} * rt.prod_others({_ONES}, axis)")},
    jvp={"a": f"np.sum({_KEPT.format('t')} * rt.prod_others({_ONES}, axis), axis=axis, keepdims=keepdims)"},
    structural=HOW,
    examples=[
        Example("np.nanprod(a)", X),
        Example("np.nanprod(a, axis=0)", X),
        Example("np.nanprod(a, axis=(0, 2), keepdims=True)", R3),
        Example("np.nanprod(np.where(a > 0.5, np.nan, a), axis=-1)", R3),
        Example("np.nanprod(np.where(a > 0.5, np.nan, a * (np.arange(4) % 2)), axis=1)", X),
    ],
)
defhelper(
    rt.prod_others,
    params=["a", "axis=None"],
    vjp={"a": "rt.prod_others_vjp(g, a, axis)"},
    jvp={"a": "rt.prod_others_vjp(t, a, axis)"},
    structural=("axis",),
)
defhelper(
    rt.prod_others_vjp,
    params=["v", "a", "axis=None"],
    vjp={"v": "rt.prod_others_vjp(g, a, axis)", "a": "rt.prod_others_vjp2(v, g, a, axis)"},
    jvp={"v": "rt.prod_others_vjp(t, a, axis)", "a": "rt.prod_others_vjp2(v, t, a, axis)"},
    structural=("axis",),
)
# The third derivative of np.prod along two directions (symmetric in v and w); no rule for `a`: fourth order.
defhelper(
    rt.prod_others_vjp2,
    params=["v", "w", "a", "axis=None"],
    vjp={"v": "rt.prod_others_vjp2(g, w, a, axis)", "w": "rt.prod_others_vjp2(v, g, a, axis)"},
    jvp={"v": "rt.prod_others_vjp2(t, w, a, axis)", "w": "rt.prod_others_vjp2(v, t, a, axis)"},
    structural=("axis",),
)

# max and min: the gradient is shared equally among tied extrema, as in JAX.
_TIES = "rt.tie_weights(a, ans, axis=axis, keepdims=keepdims)"
_EXTREME = dict(
    batch="axis",
    params=["a", "axis=None", "out=None", "keepdims=False"],
    vjp={"a": f"{EXPAND} * {_TIES}"},
    jvp={"a": f"np.sum(t * {_TIES}, axis=axis, keepdims=keepdims)"},
    structural=HOW,
)
for _name, _fn, _alias in [("max", np.max, np.amax), ("min", np.min, np.amin)]:
    defprim(
        _name,
        _fn,
        path=f"np.{_name}",
        methods=[_name],
        aliases=(_alias,),
        **_EXTREME,
        examples=[
            Example(f"np.{_name}(a)", X),
            Example(f"np.{_name}(a, axis=0)", X),
            Example(f"a.{_name}(axis=-1)", R3),
            Example(f"np.{_name}(a, axis=(0, 2), keepdims=True)", R3),
            Example(f"np.a{_name}(a, 1)", X),
            Example(f"a.{_name}()", V),
            Example(f"np.{_name}(a)", S),
        ],
    )
# np.nanmax and np.nanmin: a NaN never attains the extreme, so the same rule shares the gradient among the tied
# entries that are not NaN (a group of NaNs only: NaN, as its extreme is).
for _name, _fn in [("nanmax", np.nanmax), ("nanmin", np.nanmin)]:
    defprim(
        _name,
        _fn,
        path=f"np.{_name}",
        **_EXTREME,
        examples=[
            Example(f"np.{_name}(a)", X),
            Example(f"np.{_name}(a, axis=0)", X),
            Example(f"np.{_name}(a, axis=(0, 2), keepdims=True)", R3),
            Example(f"np.{_name}(np.where(a > 0.5, np.nan, a), axis=-1)", R3),
        ],
    )
defhelper(
    rt.tie_weights,
    params=["a", "best", "axis=None", "keepdims=False"],
    nondiff=True,
)

# (np.var of complex values is real: its derivative conjugates, which this rule does not)
_MOMENT = "rt.real_only(a - np.mean(a, axis=axis, keepdims=True), a, 'np.var and np.std')"
_COUNT = "(np.size(a) / np.size(ans) - ddof)"  # entries per reduction group, less ddof
MOMENT_PARAMS = ["a", "axis=None", "dtype=None", "out=None", "ddof=0", "keepdims=False"]  # ddof has a rule
defprim(
    "var",
    np.var,
    batch="axis",
    path="np.var",
    params=MOMENT_PARAMS,
    vjp={"a": f"{EXPAND} * {_MOMENT} * (2.0 / {_COUNT})", "ddof": f"g * ans / {_COUNT}"},
    methods=["var"],
    jvp={"a": f"np.sum(t * {_MOMENT}, axis=axis, keepdims=keepdims) * (2.0 / {_COUNT})", "ddof": f"t * ans / {_COUNT}"},
    unbroadcast=("ddof",),
    structural=HOW,
    examples=[
        Example("np.var(a)", X),
        Example("np.var(a, axis=0)", X),
        Example("a.var(axis=1, ddof=1)", X),
        Example("np.var(a, axis=(0, 2), keepdims=True)", R3),
        Example("np.var(a, ddof=1)", V),
        Example("np.var(b, axis=1, ddof=a)", dict(a=(), b=(2, 5)), domain="unit"),
    ],
)
defprim(
    "std",
    np.std,
    batch="axis",
    path="np.std",
    params=MOMENT_PARAMS,
    vjp={
        "a": f"rt.expand_reduced(g / ans, a, axis=axis, keepdims=keepdims) * {_MOMENT} / {_COUNT}",
        "ddof": f"g * 0.5 * ans / {_COUNT}",
    },
    methods=["std"],
    jvp={
        "a": f"np.sum(t * {_MOMENT}, axis=axis, keepdims=keepdims) / ({_COUNT} * ans)",
        "ddof": f"t * 0.5 * ans / {_COUNT}",
    },
    unbroadcast=("ddof",),
    structural=HOW,
    examples=[
        Example("np.std(a)", X),
        Example("np.std(a, axis=1)", X),
        Example("a.std(axis=0, ddof=1)", X),
        Example("np.std(a, axis=(-1, 0), keepdims=True)", R3),
        Example("a.std()", V),
        Example("b.std(ddof=a)", dict(a=(), b=(5,)), domain="unit"),
    ],
)
# np.nanvar and np.nanstd: the moments of the entries that are not NaN (a NaN entry gets no derivative from them); ddof
# has no rule here (differentiated, it raises).
_NAN_DEVIATION = "np.where(np.isnan(a), 0.0, a - np.nanmean(a, axis=axis, keepdims=True))"
_NAN_MOMENT = f"rt.real_only({_NAN_DEVIATION}, a, 'np.nanvar and np.nanstd')"
_NAN_COUNT = "(" + _PRESENT + " - ddof)"  # less ddof
defprim(
    "nanvar",
    np.nanvar,
    batch="axis",
    path="np.nanvar",
    params=MOMENT_PARAMS,
    vjp={"a": f"{EXPAND} * {_NAN_MOMENT} * (2.0 / {_NAN_COUNT.format(True)})"},
    jvp={"a": f"np.sum(t * {_NAN_MOMENT}, axis=axis, keepdims=keepdims) * (2.0 / {_NAN_COUNT.format('keepdims')})"},
    structural=HOW,
    examples=[
        Example("np.nanvar(a)", X),
        Example("np.nanvar(a, axis=1, ddof=1)", X),
        Example("np.nanvar(a, axis=(0, 2), keepdims=True)", R3),
        Example("np.nanvar(np.where(a > 0.5, np.nan, a), axis=(1, 2))", R3),
    ],
)
defprim(
    "nanstd",
    np.nanstd,
    batch="axis",
    path="np.nanstd",
    params=MOMENT_PARAMS,
    vjp={
        "a": f"rt.expand_reduced(g / ans, a, axis=axis, keepdims=keepdims) * {_NAN_MOMENT} / {_NAN_COUNT.format(True)}"
    },
    jvp={"a": f"np.sum(t * {_NAN_MOMENT}, axis=axis, keepdims=keepdims) / ({_NAN_COUNT.format('keepdims')} * ans)"},
    structural=HOW,
    examples=[
        Example("np.nanstd(a)", X),
        Example("np.nanstd(a, axis=0, ddof=1)", X),
        Example("np.nanstd(a, axis=(0, 2), keepdims=True)", R3),
        Example("np.nanstd(np.where(a > 0.5, np.nan, a), axis=(1, 2))", R3),
    ],
)

defprim(
    "cumsum",
    np.cumsum,
    path="np.cumsum",
    params=["a", "axis=None", "dtype=None", "out=None"],
    vjp={"a": "rt.cumsum_vjp(g, a, axis)"},
    methods=["cumsum"],
    jvp={"a": "np.cumsum(t, axis)"},
    structural=HOW,
    batch="np.cumsum(np.reshape(a, rt.batch_flat_shape(a, axis)), rt.batch_scan_axis(axis, a), dtype)",
    batch_needs_same=("axis", "dtype"),
    examples=[
        Example("np.cumsum(a)", X),
        Example("np.cumsum(a, axis=0)", X),
        Example("a.cumsum(axis=-1)", R3),
        Example("a.cumsum()", V),
        Example("np.cumsum(a, 1)", X),
        Example("np.cumsum(a)", S),
    ],
)
defhelper(
    rt.cumsum_vjp,
    params=["v", "like", "axis=None"],
    vjp={"v": "np.cumsum(g, axis)"},
    jvp={"v": "rt.cumsum_vjp(t, like, axis)"},
    structural=("like", "axis"),
)
# np.nancumsum: np.cumsum's rule with the NaN entries as 0, and no derivative for them.
defprim(
    "nancumsum",
    np.nancumsum,
    path="np.nancumsum",
    params=["a", "axis=None", "dtype=None", "out=None"],
    vjp={"a": _KEPT.format("rt.cumsum_vjp(g, a, axis)")},
    jvp={"a": f"np.cumsum({_KEPT.format('t')}, axis)"},
    structural=HOW,
    batch="np.nancumsum(np.reshape(a, rt.batch_flat_shape(a, axis)), rt.batch_scan_axis(axis, a), dtype)",
    batch_needs_same=("axis", "dtype"),
    examples=[
        Example("np.nancumsum(a)", X),
        Example("np.nancumsum(a, axis=0)", X),
        Example("np.nancumsum(a, -1)", R3),
        Example("np.nancumsum(np.where(a > 0.5, np.nan, a), axis=1)", R3),
        Example("np.nancumsum(a)", S),
    ],
)

# np.cumprod: y[i] = a[i] * y[i - 1].  With p[i] = y[i - 1] (1 first), the product of the entries before i, the
# tangent is the scan s[i] = p[i] t[i] + a[i] s[i - 1], and the adjoint of a[j] is p[j] times r[j] = g[j] +
# a[j + 1] r[j + 1].  Neither divides by an entry, so zeros in `a` get the exact derivative.  Rules are written in
# the shape of `a` (axis=None flattens: np.reshape), and runtime/scans.py's helpers have rules of every order.
_BEFORE = "rt.shift(np.reshape(ans, np.shape(a)), axis, 1, 1.0)"
defprim(
    "cumprod",
    np.cumprod,
    path="np.cumprod",
    params=["a", "axis=None", "dtype=None", "out=None"],
    # batched: each example flattened for axis=None, then the scan along the axis after the examples'
    batch="np.cumprod(np.reshape(a, rt.batch_flat_shape(a, axis)), rt.batch_scan_axis(axis, a), dtype)",
    batch_needs_same=("axis", "dtype"),
    vjp={"a": f"{_BEFORE} * rt.scan_back(rt.reshape(g, np.shape(a)), a, axis)"},
    methods=["cumprod"],
    jvp={"a": f"np.reshape(rt.scan(t * {_BEFORE}, a, axis), np.shape(ans))"},
    structural=HOW,
    examples=[
        Example("np.cumprod(a, axis=0)", X),
        Example("np.cumprod(a)", X),
        Example("a.cumprod(axis=-1)", R3),
        Example("np.cumprod(a, 1)", X),
        Example("a.cumprod()", V),
        Example("np.cumprod(a)", S),
        Example("np.cumprod(a * (np.arange(5) % 2), 0)", V),
    ],
)
# np.nancumprod: np.cumprod's rule with the NaN entries as 1 (ans is the np.cumprod of those), and no derivative for
# them.
defprim(
    "nancumprod",
    np.nancumprod,
    path="np.nancumprod",
    params=["a", "axis=None", "dtype=None", "out=None"],
    batch="np.nancumprod(np.reshape(a, rt.batch_flat_shape(a, axis)), rt.batch_scan_axis(axis, a), dtype)",
    batch_needs_same=("axis", "dtype"),
    vjp={"a": _KEPT.format(f"{_BEFORE} * rt.scan_back(rt.reshape(g, np.shape(a)), {_ONES}, axis)")},
    jvp={"a": f"np.reshape(rt.scan({_KEPT.format('t')} * {_BEFORE}, {_ONES}, axis), np.shape(ans))"},
    structural=HOW,
    examples=[
        Example("np.nancumprod(a, axis=0)", X),
        Example("np.nancumprod(a)", X),
        Example("np.nancumprod(a, -1)", R3),
        Example("np.nancumprod(np.where(a > 0.5, np.nan, a), axis=1)", R3),
        Example("np.nancumprod(np.where(a > 0.5, np.nan, a * (np.arange(5) % 2)))", V),
        Example("np.nancumprod(a)", S),
    ],
)
# np.cumulative_sum and np.cumulative_prod (NumPy 2): np.cumsum's and np.cumprod's rules, their values NumPy's own
# (which asks for axis= for an input of more than one dimension); include_initial=True puts a constant first (0 or
# 1) along the axis: the adjoint drops it (rt.without_initial), the tangent puts a zero there (rt.with_initial).
_CUMULATIVE_PARAMS = ["x", "axis=None", "dtype=None", "out=None", "include_initial=False"]
_SCANNED = "rt.without_initial({}, axis, include_initial)"
_BEFORE_X = f"rt.shift(np.reshape({_SCANNED.format('ans')}, np.shape(x)), axis, 1, 1.0)"
for _name, _impl, _vjp, _jvp in [
    (
        "cumulative_sum",
        np.cumulative_sum,
        f"rt.cumsum_vjp({_SCANNED.format('g')}, x, axis)",
        "np.cumulative_sum(t, axis=axis, include_initial=include_initial)",
    ),
    (
        "cumulative_prod",
        np.cumulative_prod,
        f"{_BEFORE_X} * rt.scan_back(rt.reshape({_SCANNED.format('g')}, np.shape(x)), x, axis)",
        f"rt.with_initial(np.reshape(rt.scan(t * {_BEFORE_X}, x, axis), np.shape({_SCANNED.format('ans')})), axis, "
        "include_initial)",
    ),
]:
    defprim(
        _name,
        _impl,
        path=f"np.{_name}",
        params=_CUMULATIVE_PARAMS,
        batch=f"np.{_name}(np.reshape(x, rt.batch_flat_shape(x, axis)), axis=rt.batch_cumulative_axis(axis, x), "
        "dtype=dtype, include_initial=include_initial)",
        batch_needs_same=("axis", "dtype", "include_initial"),
        vjp={"x": _vjp},
        jvp={"x": _jvp},
        structural=HOW + ("include_initial",),
        examples=[
            Example(f"np.{_name}(a, axis=0)", X),
            Example(f"np.{_name}(a, axis=-1, include_initial=True)", R3),
            Example(f"np.{_name}(a)", V),
            Example(f"np.{_name}(a, include_initial=True)", S),
            Example(f"np.{_name}(a * (np.arange(5) % 2), include_initial=True)", V),
            Example(f"np.{_name}(a, axis=1, include_initial=False)", X),
        ],
    )
for _helper, _other in [(rt.without_initial, "with_initial"), (rt.with_initial, "without_initial")]:
    defhelper(
        _helper,
        params=["v", "axis=None", "include_initial=False"],
        structural=("axis", "include_initial"),
        vjp={"v": f"rt.{_other}(g, axis, include_initial)"},
        jvp={"v": f"rt.{_helper.__name__}(t, axis, include_initial)"},
        batch=f"rt.{_helper.__name__}(v, rt.batch_scan_axis(axis, v), include_initial)",
    )
for _helper in [rt.batch_flat_shape, rt.batch_scan_axis, rt.batch_cumulative_axis]:  # read only shapes
    defhelper(
        _helper,
        params=["a", "axis"] if _helper is rt.batch_flat_shape else ["axis", "a"],
        nondiff=True,
        batch="shape",
        batch_same=True,
    )
_SCAN = ("axis",)
defhelper(
    rt.shift,
    params=["x", "axis=None", "step=1", "fill=0.0"],
    vjp={"x": "rt.shift(g, axis, -step)"},
    jvp={"x": "rt.shift(t, axis, step)"},
    structural=("axis", "step", "fill"),
)
defhelper(
    rt.scan,
    params=["b", "c", "axis=None"],
    vjp={"b": "rt.scan_back(g, c, axis)", "c": "rt.shift(ans, axis, 1) * rt.scan_back(g, c, axis)"},
    jvp={"b": "rt.scan(t, c, axis)", "c": "rt.scan(t * rt.shift(ans, axis, 1), c, axis)"},
    structural=_SCAN,
)
defhelper(
    rt.scan_back,
    params=["v", "c", "axis=None"],
    vjp={"v": "rt.scan(g, c, axis)", "c": "rt.shift(rt.scan(g, c, axis), axis, 1) * ans"},
    jvp={"v": "rt.scan_back(t, c, axis)", "c": "rt.scan_back(rt.shift(t * ans, axis, -1), c, axis)"},
    structural=_SCAN,
)
