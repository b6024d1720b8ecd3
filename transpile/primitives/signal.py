"""Bilinear products of signals and vectors: np.convolve, np.correlate, np.cross (real arrays)."""

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
        examples=_SIGNAL_EXAMPLES[_kind],
    )
# signal(a, v, mode, kind) is np.convolve or np.correlate: bilinear, like its two adjoints (each reads the argument
# it is the adjoint of for its shape only).
_HOW = "mode, kind"
defhelper(
    rt.signal,
    params=["a", "v", "mode", "kind"],
    structural=("mode", "kind"),
    vjp={"a": f"rt.signal_vjp_a(g, a, v, {_HOW})", "v": f"rt.signal_vjp_v(g, a, v, {_HOW})"},
    jvp={"a": f"rt.signal(t, v, {_HOW})", "v": f"rt.signal(a, t, {_HOW})"},
)
defhelper(
    rt.signal_vjp_a,
    params=["w", "a", "v", "mode", "kind"],
    structural=("a", "mode", "kind"),
    vjp={"w": f"rt.signal(g, v, {_HOW})", "v": f"rt.signal_vjp_v(w, g, v, {_HOW})"},
    jvp={"w": f"rt.signal_vjp_a(t, a, v, {_HOW})", "v": f"rt.signal_vjp_a(w, a, t, {_HOW})"},
)
defhelper(
    rt.signal_vjp_v,
    params=["w", "a", "v", "mode", "kind"],
    structural=("v", "mode", "kind"),
    vjp={"w": f"rt.signal(a, g, {_HOW})", "a": f"rt.signal_vjp_a(w, a, g, {_HOW})"},
    jvp={"w": f"rt.signal_vjp_v(t, a, v, {_HOW})", "a": f"rt.signal_vjp_v(w, t, v, {_HOW})"},
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
    examples=[
        Example("np.cross(a, b)", dict(a=(3,), b=(3,))),
        Example("np.cross(a, b)", dict(a=(4, 3), b=(3,))),
        Example("np.cross(a, b, axisa=0, axisb=1, axisc=0)", dict(a=(3, 2), b=(2, 3))),
        Example("np.cross(a, b, axis=0)", dict(a=(3, 2), b=(3, 1))),
    ],
)
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
