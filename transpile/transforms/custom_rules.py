"""Sweeps for functions that carry the user's own rule (custom_vjp, custom_jvp).

The generated functions have the usual names and signatures (`f_fwd`, `f_bwd`, `f_jvp`),
so callers need not know; their bodies call the user's rule instead of differentiating `f`.
"""

from __future__ import annotations

import gast

from .. import naming
from ..codegen import escape
from ..errors import TranspileError


def _functions(text, fn, kind_of):
    """Parse generated text; mark each function with its kind and source for the emitter."""
    defs = gast.parse(text).body
    for fdef in defs:
        fdef.kind = kind_of[fdef.name]
        fdef.source_fn = fn
        fdef.lineno = fn.lineno
    return defs


def _params_text(names):
    return ", ".join(names)


def _tuple_text(items):
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def custom_rule_sweeps(mode, fn, var):
    """Forward and adjoint sweeps of a custom_vjp or custom_jvp function."""
    params = list(fn.params)
    active = [i for i, m in enumerate(var.mask) if m]
    args = _params_text(params)
    if fn.custom == "vjp":
        fwd = mode.primal(fn.rule_keys["fwd"])
        bwd = mode.primal(fn.rule_keys["bwd"])
        what = escape.literal(mode.program.functions[fn.rule_keys["bwd"]].qualname)
        text = (
            f"def {var.fwd}({args}):\n"
            f"    return {fwd}({args})\n"
            f"def {var.bwd}({naming.RESIDUALS}, ans_bar):\n"
            f"    cotangents = rt.check_cotangents({bwd}({naming.RESIDUALS}, ans_bar), {len(params)}, {what})\n"
            f"    return {_tuple_text([f'rt.get(cotangents, {i})' for i in active])}\n"
        )
    else:  # custom_jvp in reverse mode: transpose the user's rule, which is linear in the tangents
        rule = mode.variant(fn.rule_keys["jvp"], (False, True))
        primals = _tuple_text(params)
        text = (
            f"def {var.fwd}({args}):\n"
            f"    pair, {naming.RESIDUALS} = {rule.fwd}({primals}, rt.zeros_like_tree({primals}))\n"
            f"    return pair[0], {naming.RESIDUALS}\n"
            f"def {var.bwd}({naming.RESIDUALS}, ans_bar):\n"
            f"    (tangents_bar,) = {rule.bwd}({naming.RESIDUALS}, (0.0, ans_bar))\n"
            f"    return {_tuple_text([f'rt.get(tangents_bar, {i})' for i in active])}\n"
        )
    return _functions(text, fn, {var.fwd: "forward", var.bwd: "adjoint"})


def custom_rule_tangent(mode, fn, var):
    """The tangent-carrying version of a custom_jvp function: the user's rule itself."""
    if fn.custom == "vjp":
        raise TranspileError(
            f"`{fn.qualname}` is a custom_vjp function, which has no forward-mode rule",
            fn.location(None),
            "differentiate it in reverse mode (grad, vjp, jacrev), or give it a custom_jvp rule",
        )
    rule = mode.primal(fn.rule_keys["jvp"])
    params = list(fn.params)
    dots = iter(naming.tangent(p) for p, m in zip(params, var.mask) if m)
    tangents = [next(dots) if m else f"rt.zeros_like_tree({p})" for p, m in zip(params, var.mask)]
    dot_params = [naming.tangent(p) for p, m in zip(params, var.mask) if m]
    text = (
        f"def {var.name}({_params_text(params + dot_params)}):\n"
        f"    return {rule}({_tuple_text(params)}, {_tuple_text(tangents)})\n"
    )
    return _functions(text, fn, {var.name: "tangent"})
