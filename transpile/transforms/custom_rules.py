"""Sweeps for functions that carry the user's own rule (custom_vjp, custom_jvp).

The generated functions have the usual names and signatures (`f_fwd`, `f_bwd`, `f_jvp`),
so callers need not know; their bodies call the user's rule instead of differentiating `f`.
"""

from __future__ import annotations

from runtime import syntax

from .. import naming
from ..errors import TranspileError
from .templates import Template, expression, literal, tuple_of

# custom_vjp in reverse mode: the user's forward rule, and the user's backward rule's cotangents, checked
_VJP_SWEEPS = Template(
    """
    def FWD(PARAMS):
        return USER_FWD(PARAMS)
    def BWD(RESIDUALS, ans_bar):
        cotangents = rt.check_cotangents(USER_BWD(RESIDUALS, ans_bar), COUNT, RULE)
        return COTANGENTS
    """
)
# custom_jvp in reverse mode: the user's rule, which is linear in the tangents, transposed
_JVP_SWEEPS = Template(
    """
    def FWD(PARAMS):
        pair, RESIDUALS = RULE_FWD(PRIMALS, rt.zeros_like_tree(PRIMALS))
        return pair[0], RESIDUALS
    def BWD(RESIDUALS, ans_bar):
        (tangents_bar,) = RULE_BWD(RESIDUALS, (0.0, ans_bar))
        return ADJOINTS
    """
)
# custom_jvp in forward mode: the user's rule itself
_TANGENT = Template(
    """
    def TANGENT(PARAMS):
        return RULE(PRIMALS, TANGENTS)
    """
)


def _functions(text, fn, kind_of):
    """Parse generated text; mark each function with its kind and source for the emitter."""
    defs = syntax.gast_parse(text).body
    for fdef in defs:
        fdef.kind = kind_of[fdef.name]
        fdef.source_fn = fn
        fdef.lineno = fn.lineno
    return defs


def custom_rule_sweeps(mode, fn, var):
    """Forward and adjoint sweeps of a custom_vjp or custom_jvp function."""
    params = list(fn.params)
    active = [i for i, m in enumerate(var.mask) if m]
    if fn.custom == "vjp":
        text = _VJP_SWEEPS.fill(
            FWD=var.fwd,
            BWD=var.bwd,
            PARAMS=params,
            RESIDUALS=naming.RESIDUALS,
            USER_FWD=mode.primal(fn.rule_keys["fwd"]),
            USER_BWD=mode.primal(fn.rule_keys["bwd"]),
            COUNT=literal(len(params)),
            RULE=literal(mode.program.functions[fn.rule_keys["bwd"]].qualname),
            COTANGENTS=tuple_of([expression("rt.get(cotangents, INDEX)", INDEX=literal(i)) for i in active]),
        )
    else:
        rule = mode.variant(fn.rule_keys["jvp"], (False, True))
        text = _JVP_SWEEPS.fill(
            FWD=var.fwd,
            BWD=var.bwd,
            PARAMS=params,
            RESIDUALS=naming.RESIDUALS,
            RULE_FWD=rule.fwd,
            RULE_BWD=rule.bwd,
            PRIMALS=tuple_of(params),
            ADJOINTS=tuple_of([expression("rt.get(tangents_bar, INDEX)", INDEX=literal(i)) for i in active]),
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
    params = list(fn.params)
    dots = [naming.tangent(p) for p, m in zip(params, var.mask) if m]
    given = iter(dots)
    tangents = [
        next(given) if m else expression("rt.zeros_like_tree(PARAM)", PARAM=p) for p, m in zip(params, var.mask)
    ]
    text = _TANGENT.fill(
        TANGENT=var.name,
        PARAMS=params + dots,
        RULE=mode.primal(fn.rule_keys["jvp"]),
        PRIMALS=tuple_of(params),
        TANGENTS=tuple_of(tangents),
    )
    return _functions(text, fn, {var.name: "tangent"})
