"""Bilinear products of signals and vectors: np.convolve, np.correlate and np.cross (complex arrays too)."""

import numpy as np

import runtime as rt

from .registry import Example, defhelper, defprim

_SIGNAL_EXAMPLES = {
    "convolve": [
        Example("np.convolve(a, b)", dict(a=(5,), b=(3,))),
        Example("np.convolve(a, b, mode='same')", dict(a=(4,), b=(5,))),
        Example("np.convolve(a, b, 'valid')", dict(a=(6,), b=(3,))),
        Example("np.convolve(a, b, mode='same')", dict(a=(2,), b=(3,))),
    ],
    "correlate": [
        Example("np.correlate(a, b)", dict(a=(5,), b=(3,))),
        Example("np.correlate(a, b, mode='same')", dict(a=(4,), b=(5,))),
        Example("np.correlate(a, b, 'full')", dict(a=(3,), b=(4,))),
        Example("np.correlate(a, b, mode='same')", dict(a=(2,), b=(3,))),
    ],
}
for _kind, _mode in [("convolve", "'full'"), ("correlate", "'valid'")]:
    defprim(
        _kind,
        getattr(np, _kind),
        path=f"np.{_kind}",
        params=["a", "v", f"mode={_mode}"],
        structural=("mode",),
        vjp={
            "a": f"rt.signal_vjp_a(g, a, v, mode, '{_kind}')",
            "v": f"rt.signal_vjp_v(g, a, v, mode, '{_kind}')",
        },
        jvp={"a": f"np.{_kind}(t, v, mode)", "v": f"np.{_kind}(a, t, mode)"},
        batch=f"rt.signal(a, v, mode, '{_kind}')",  # stacks of signals, the batch axis leading
        batch_needs_same=("mode",),
        batch_broadcast=("a", "v"),
        examples=_SIGNAL_EXAMPLES[_kind],
    )
# signal(a, v, mode, kind) is np.convolve or np.correlate: bilinear, like its two adjoints (each reads the argument
# it is the adjoint of for its shape only).  All three take stacks of signals (leading axes), so each batches as itself.
_HOW = "mode, kind"


def _stacks(helper, operands):
    """The batching rule of a signal helper: itself, every operand given the batch axis."""
    return dict(
        batch=f"rt.{helper}({', '.join(operands)}, {_HOW})", batch_needs_same=("mode", "kind"), batch_broadcast=operands
    )


defhelper(
    rt.signal,
    params=["a", "v", "mode", "kind"],
    structural=("mode", "kind"),
    vjp={"a": f"rt.signal_vjp_a(g, a, v, {_HOW})", "v": f"rt.signal_vjp_v(g, a, v, {_HOW})"},
    jvp={"a": f"rt.signal(t, v, {_HOW})", "v": f"rt.signal(a, t, {_HOW})"},
    **_stacks("signal", ("a", "v")),
)
defhelper(
    rt.signal_vjp_a,
    params=["w", "a", "v", "mode", "kind"],
    structural=("a", "mode", "kind"),
    vjp={"w": f"rt.signal(g, v, {_HOW})", "v": f"rt.signal_vjp_v(w, g, v, {_HOW})"},
    jvp={"w": f"rt.signal_vjp_a(t, a, v, {_HOW})", "v": f"rt.signal_vjp_a(w, a, t, {_HOW})"},
    **_stacks("signal_vjp_a", ("w", "a", "v")),
)
defhelper(
    rt.signal_vjp_v,
    params=["w", "a", "v", "mode", "kind"],
    structural=("v", "mode", "kind"),
    vjp={"w": f"rt.signal(a, g, {_HOW})", "a": f"rt.signal_vjp_a(w, a, g, {_HOW})"},
    jvp={"w": f"rt.signal_vjp_v(t, a, v, {_HOW})", "a": f"rt.signal_vjp_v(w, t, v, {_HOW})"},
    **_stacks("signal_vjp_v", ("w", "a", "v")),
)

_AXES = "axisa, axisb, axisc, axis"
_AXES_PARAMS = ["axisa=-1", "axisb=-1", "axisc=-1", "axis=None"]
defprim(
    "cross",
    np.cross,
    path="np.cross",
    params=["a", "b", *_AXES_PARAMS],
    structural=("axisa", "axisb", "axisc", "axis"),
    vjp={"a": f"rt.cross_vjp_a(g, a, b, {_AXES})", "b": f"rt.cross_vjp_b(g, a, b, {_AXES})"},
    jvp={"a": f"np.cross(t, b, {_AXES})", "b": f"np.cross(a, t, {_AXES})"},
    # np.cross itself, on both operands batched and given as many axes (after the batch axis) and their vector axes
    # counted from the end, so that NumPy broadcasts the examples' vectors as it does one example's
    batch="np.cross(np.reshape(a, rt.rank_aligned(a, b)), np.reshape(b, rt.rank_aligned(b, a)), "
    "rt.vector_axis(axisa, axis, a), rt.vector_axis(axisb, axis, b), rt.vector_axis(axisc, axis, None))",
    batch_needs_same=("axisa", "axisb", "axisc", "axis"),
    batch_broadcast=("a", "b"),
    examples=[
        Example("np.cross(a, b)", dict(a=(3,), b=(3,))),
        Example("np.cross(a, b)", dict(a=(4, 3), b=(3,))),
        Example("np.cross(a, b, axisa=0, axisb=1, axisc=0)", dict(a=(3, 2), b=(2, 3))),
        Example("np.cross(a, b, axis=0)", dict(a=(3, 2), b=(3, 1))),
    ],
)
for _helper in (rt.rank_aligned, rt.vector_axis):  # read only shapes
    defhelper(_helper, params=[], varargs="args", nondiff=True, batch="shape", batch_same=True)
defhelper(
    rt.cross_vjp_a,
    params=["w", "a", "b", *_AXES_PARAMS],
    structural=("a", "axisa", "axisb", "axisc", "axis"),
    vjp={"w": f"np.cross(g, b, {_AXES})", "b": f"rt.cross_vjp_b(w, g, b, {_AXES})"},
    jvp={"w": f"rt.cross_vjp_a(t, a, b, {_AXES})", "b": f"rt.cross_vjp_a(w, a, t, {_AXES})"},
)
defhelper(
    rt.cross_vjp_b,
    params=["w", "a", "b", *_AXES_PARAMS],
    structural=("b", "axisa", "axisb", "axisc", "axis"),
    vjp={"w": f"np.cross(a, g, {_AXES})", "a": f"rt.cross_vjp_a(w, a, g, {_AXES})"},
    jvp={"w": f"rt.cross_vjp_b(t, a, b, {_AXES})", "a": f"rt.cross_vjp_b(w, t, b, {_AXES})"},
)

# np.interp(x, xp, fp) and the helpers of its derivatives, each a function of (x, xp) and linear in one more argument:
#   S(c) = rt.interp_slope(x, xp, c), the slope of the segment x falls in (0 outside xp's range), constant in x;
#   T(v) = rt.interp_fp_tangent(v, x, xp), np.interp with v for fp (and 0 for given left and right);
#   and their transposes S'(v) = rt.interp_slope_vjp, T'(v) = rt.interp_fp_vjp.
# A move u of the points xp moves them by -S(.) * T(u) (np.interp, T), -S(c) * S(u) (S), -S'(v * T(u)) (T') and
# -S'(v * S(u)) (S'); a move of x by t moves T(v) by S(v) * t and T'(v) by S'(v * t).  left and right (numbers)
# count where x falls outside xp's range.  With period=, the helpers read the points NumPy does (runtime/signals.py);
# the period itself has no rule.
_I = "left, right, period"
_S = "rt.interp_slope(x, xp, {}, " + _I + ")"
_ST = "rt.interp_slope_vjp({}, x, xp, {}, " + _I + ")"
_T = "rt.interp_fp_tangent({}, x, xp, " + _I + ")"
_TT = "rt.interp_fp_vjp({}, x, xp, {}, " + _I + ")"
_INTERP_PARAMS = ["x", "xp", "fp", "left=None", "right=None", "period=None"]
_INTERP_RULES = dict(
    vjp={
        "x": "g * " + _S.format("fp"),
        "xp": "-" + _TT.format("g * " + _S.format("fp"), "xp"),
        "fp": _TT.format("g", "fp"),
        "left": "rt.interp_outside_vjp(g, x, xp, 'left', period)",
        "right": "rt.interp_outside_vjp(g, x, xp, 'right', period)",
    },
    jvp={
        "left": "rt.interp_outside(t, x, xp, 'left', period)",
        "right": "rt.interp_outside(t, x, xp, 'right', period)",
        "x": "t * " + _S.format("fp"),
        "xp": f"-({_S.format('fp')} * {_T.format('t')})",
        "fp": _T.format("t"),
    },
)


def _interp_stacks(helper, operands):
    """The batching rule of np.interp and of its helpers, which take stacks: the helper, every operand batched."""
    call = f"rt.{helper}({', '.join(operands)})"
    arrays = tuple(p for p in operands if p not in ("side", "period"))
    return dict(batch=call, batch_needs_same=("period", "side"), batch_broadcast=arrays)


_INTERP_ALL = ("x", "xp", "fp", "left", "right", "period")
defprim(
    "interp",
    np.interp,
    path="np.interp",
    params=_INTERP_PARAMS,
    **_INTERP_RULES,
    **_interp_stacks("interp", _INTERP_ALL),
    examples=[
        # the points xp move with b: every rule of every helper has a move to follow (second order included)
        Example("np.interp(a, np.cumsum(b * b) - 1.0, c)", dict(a=(6,), b=(4,), c=(4,))),
        Example("np.interp(a, np.cumsum(b * b) - 0.5, c, left=-2.0, right=3.0)", dict(a=(2, 3), b=(3,), c=(3,))),
        Example("np.interp(a, np.array([-1.0, 0.0, 0.5, 2.0]), b)", dict(a=(5,), b=(4,))),
        Example("np.interp(a, np.array([-0.5, 0.5]), b, left=-2.0, right=3.0)", dict(a=(2, 3), b=(2,))),
        Example("np.interp(a, np.array([0.0, 1.0, 3.0]), b * b)", dict(a=(), b=(3,))),
        Example("np.interp(a, np.linspace(-1.0, 1.0, 6), np.sin(np.linspace(-1.0, 1.0, 6)))", dict(a=(4,))),
        Example(
            "np.interp(a, np.array([-0.5, 0.0, 0.5]), b, left=c[0], right=2.0 * c[1])", dict(a=(6,), b=(3,), c=(2,))
        ),
        Example("np.interp(a, np.array([0.0, 1.0, 2.5, 3.0]), b, period=4.0)", dict(a=(6,), b=(4,))),
        Example("np.interp(a, np.cumsum(b * b) + 0.3, c * c, period=2.0)", dict(a=(2, 3), b=(4,), c=(4,))),
    ],
)
# rt.interp: np.interp of stacks (vmap's batching rule), with np.interp's rules
defhelper(rt.interp, params=_INTERP_PARAMS, **_INTERP_RULES, **_interp_stacks("interp", _INTERP_ALL))
defhelper(
    rt.interp_slope,
    **_interp_stacks("interp_slope", _INTERP_ALL),
    params=["x", "xp", "fp", "left=None", "right=None", "period=None"],
    structural=("x", "left", "right", "period"),  # the slope is constant in x between the points xp
    vjp={"fp": _ST.format("g", "fp"), "xp": "-" + _ST.format("g * " + _S.format("fp"), "xp")},
    jvp={"fp": _S.format("t"), "xp": f"-({_S.format('fp')} * {_S.format('t')})"},
)
defhelper(
    rt.interp_slope_vjp,
    **_interp_stacks("interp_slope_vjp", ("v", "x", "xp", "like", "left", "right", "period")),
    params=["v", "x", "xp", "like", "left=None", "right=None", "period=None"],
    structural=("x", "like", "left", "right", "period"),
    vjp={"v": _S.format("g"), "xp": "-" + _ST.format("v * " + _S.format("g"), "xp")},
    jvp={"v": _ST.format("t", "like"), "xp": "-" + _ST.format(f"v * {_S.format('t')}", "like")},
)
defhelper(
    rt.interp_fp_tangent,
    **_interp_stacks("interp_fp_tangent", ("v", "x", "xp", "left", "right", "period")),
    params=["v", "x", "xp", "left=None", "right=None", "period=None"],
    structural=("left", "right", "period"),
    vjp={
        "v": _TT.format("g", "v"),
        "x": "g * " + _S.format("v"),
        "xp": "-" + _TT.format("g * " + _S.format("v"), "xp"),
    },
    jvp={"v": _T.format("t"), "x": "t * " + _S.format("v"), "xp": f"-({_S.format('v')} * {_T.format('t')})"},
)
defhelper(
    rt.interp_fp_vjp,
    **_interp_stacks("interp_fp_vjp", ("v", "x", "xp", "like", "left", "right", "period")),
    params=["v", "x", "xp", "like", "left=None", "right=None", "period=None"],
    structural=("like", "left", "right", "period"),
    vjp={
        "v": _T.format("g"),
        "x": "v * " + _S.format("g"),
        "xp": "-" + _TT.format("v * " + _S.format("g"), "xp"),
    },
    jvp={
        "v": _TT.format("t", "like"),
        "x": _ST.format("v * t", "like"),
        "xp": "-" + _ST.format(f"v * {_T.format('t')}", "like"),
    },
)
# Constant in x and xp away from xp's ends (x exactly at an end is a kink of np.interp anyway); zero with a period,
# which makes NumPy ignore left and right.
for _helper, _other in [(rt.interp_outside, "interp_outside_vjp"), (rt.interp_outside_vjp, "interp_outside")]:
    defhelper(
        _helper,
        params=["v", "x", "xp", "side", "period=None"],
        structural=("x", "xp", "side", "period"),
        vjp={"v": f"rt.{_other}(g, x, xp, side, period)"},
        jvp={"v": f"rt.{_helper.__name__}(t, x, xp, side, period)"},
        **_interp_stacks(_helper.__name__, ("v", "x", "xp", "side", "period")),
    )
