"""Forward-mode API: jvp and linearize."""

from __future__ import annotations

import inspect

import numpy as np

import runtime as rt
from runtime import pytree

from .. import naming
from ..codegen.cache import load_or_write
from ..codegen.module import module_text
from ..errors import TranspileError
from ..frontend.desugar import desugar_program
from ..frontend.methods import as_function
from ..transforms.forward import ForwardMode
from ..transforms.templates import Code, Docstring, Template, expression
from .boundary import api_boundary
from .common import (
    Bound,
    Generated,
    Names,
    Transform,
    _signature,
    bind_arguments,
    def_location,
    generated_function,
    internal_arguments,
    is_float_tree,
    reused,
    user_function,
)


def _structure(tree):
    if isinstance(tree, (tuple, list)):
        return (type(tree).__name__, tuple(_structure(v) for v in tree))
    if isinstance(tree, dict):
        return ("dict", tuple((k, _structure(v)) for k, v in tree.items()))
    return "leaf"


def _check_tangents(fun, primals, tangents):
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TranspileError(
            "jvp takes primals and tangents as tuples: jvp(f, (x, y), (x_dot, y_dot))", def_location(fun)
        )
    if len(primals) != len(tangents):
        raise TranspileError(
            f"jvp got {len(primals)} primals but {len(tangents)} tangents",
            def_location(fun),
            "give one tangent per primal, with the same structure, shape and dtype",
        )
    for i, (p, t) in enumerate(zip(primals, tangents)):
        if _structure(p) != _structure(t):
            raise TranspileError(
                f"the tangent of argument {i} has a different structure from its primal "
                f"({_structure(t)} instead of {_structure(p)})",
                def_location(fun),
                "build tangents with the primal's structure (same tuples, lists and dict keys)",
            )
        for leaf_p, leaf_t in zip(rt.float_leaves(p), rt.float_leaves(t)):
            if np.shape(leaf_p) != np.shape(leaf_t):
                raise TranspileError(
                    f"the tangent of argument {i} has shape {np.shape(leaf_t)} where its primal "
                    f"has shape {np.shape(leaf_p)}",
                    def_location(fun),
                    "tangents must have exactly the primal's shape",
                )
            dp, dt = np.result_type(leaf_p), np.result_type(leaf_t)
            if dp.kind in "fc" and dt != dp and not isinstance(leaf_p, float):
                raise TranspileError(
                    f"the tangent of argument {i} has dtype {dt} where its primal has {dp}",
                    def_location(fun),
                    f"cast the tangent: t.astype(np.{dp})",
                )


def _module(fun, mask, has_aux):
    """(Generated, its tangent function) of `fun`'s forward mode for the differentiated arguments `mask`."""

    def build(module_key_of):
        program = desugar_program(fun, differentiated=True)
        mode = ForwardMode(program)
        var = mode.variant(program.entry, mask)
        key = module_key_of(program)
        module, text = load_or_write(
            f"jvp_{program.entry}",
            key,
            lambda: module_text(program, "Forward mode (Jacobian-vector product)", mode, ""),
        )
        gen = Generated(module, text, program)
        return program, key, (gen, getattr(gen.module, var.name))

    return reused("jvp", fun, (mask, has_aux), build)


@api_boundary
def jvp(fun, primals, tangents, has_aux=False):
    """(fun(*primals), J @ tangents): the Jacobian-vector product, by forward mode."""
    fun = as_function(fun)
    if isinstance(primals, (tuple, list)) and isinstance(tangents, (tuple, list)):
        primals = internal_arguments(user_function(fun), primals, range(len(primals)))
        tangents = internal_arguments(user_function(fun), tangents)
    _check_tangents(fun, primals, tangents)
    values = bind_arguments(fun, tuple(primals), "jvp")
    fun = generated_function(fun, (len(primals), ()))
    mask = tuple(i < len(primals) and is_float_tree(v) for i, v in enumerate(values))
    gen, tangent_fn = _module(fun, mask, has_aux)
    gen.bind_captures()
    active = [t for t, m in zip(tangents, mask) if m]
    out, out_dot = tangent_fn(*values, *active)
    if has_aux:
        (out, aux), (out_dot, _) = out, rt.split_tangent(out_dot, 2)
        return pytree.from_internal((out, rt.materialize(out_dot, out), aux))
    return pytree.from_internal((out, rt.materialize(out_dot, out)))


@api_boundary
def linearize(fun, *primals):
    """(fun(*primals), jvp_fn) where jvp_fn(*tangents) is the Jacobian-vector product at primals."""
    fun = as_function(fun)
    user = user_function(fun)
    primals = tuple(internal_arguments(user, primals, range(len(primals))))
    values = bind_arguments(fun, primals, "linearize")
    fun = generated_function(fun, (len(primals), ()))
    mask = tuple(i < len(primals) and is_float_tree(v) for i, v in enumerate(values))
    gen, tangent_fn = _module(fun, mask, False)
    gen.bind_captures()
    out = fun(*values)
    primal_out = pytree.from_internal(out)

    def check(*tangents):
        _check_tangents(fun, primals, tangents)

    @api_boundary
    def jvp_fn(*tangents):
        tangents = internal_arguments(user, tangents)
        check(*tangents)
        gen.bind_captures()
        _, out_dot = tangent_fn(*values, *[t for t, m in zip(tangents, mask) if m])
        return pytree.from_internal(rt.materialize(out_dot, out))

    jvp_fn.__name__ = naming.tangent_function(getattr(fun, "__name__", "f"))
    # one tangent per primal, named after its parameter (jit binds calls by this signature)
    params = list(_signature(fun).parameters)
    fresh = Names(params)
    names = [fresh(naming.tangent(p)) for p in params[: len(primals)]]
    jvp_fn.__signature__ = inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names])
    linearized = LinearizedEntry(fun, mask, len(primals))
    jvp_fn.__transpile_bound__ = Bound(user, values, linearized.entry_function, check)
    return primal_out, jvp_fn


_TANGENT_ENTRY = Template(
    """
    def ENTRY(PARAMS):
        DOC
        ANS, ANS_DOT = TANGENT_FN(ARGS)
        UNPACK
        return RESULT
    """
)

_SPLIT_AUX = Template("(ANS, AUX), (ANS_DOT, _) = ANS, rt.split_tangent(ANS_DOT, 2)")


def _materialized(tangent, primal) -> Code:
    return expression("rt.materialize(TANGENT, PRIMAL)", TANGENT=tangent, PRIMAL=primal)


class LinearizedEntry(Transform):
    """What jit compiles for the function linearize returns: the tangent of the output, from the primals and one
    tangent per primal (those of primals without a derivative are not read)."""

    kind = "linearized"

    def __init__(self, fun, mask, count):  # (never called like `fun`: no signature to check calls by)
        self.fun = self.user_fun = fun
        self.argnums, self.single, self.has_aux = tuple(i for i, active in enumerate(mask) if active), False, False
        self.count = count  # the primals linearize was given: one tangent each
        self.inner, self._generated = None, {}

    def key_parts(self):
        return [*super().key_parts(), self.count]

    def summary(self, entry):
        return f"The Jacobian-vector product of `{entry.qualname}` (the function linearize returns)"

    def build(self, program, entry, mask):
        mode = ForwardMode(program)
        var = mode.variant(program.entry, mask)
        params = list(entry.params)
        fresh = Names(params)
        dots = [fresh(naming.tangent(p)) for p in params[: self.count]]
        ans, ans_dot = fresh(naming.OUTPUT), fresh(naming.tangent(naming.OUTPUT))
        active = [dots[i] for i in self.argnums]
        return mode, _TANGENT_ENTRY.fill(
            ENTRY=self.entry_name(entry.key),
            PARAMS=params + dots,
            DOC=Docstring(f"{self.summary(entry)} at ({', '.join(params)})."),
            ANS=ans,
            ANS_DOT=ans_dot,
            TANGENT_FN=var.name,
            ARGS=params + active,
            UNPACK=None,
            RESULT=_materialized(ans_dot, ans),
        )


class TangentEntry(Transform):
    """jvp(f, primals, tangents) written inside a transformed function: an entry taking primals then tangents."""

    kind = "jvp"

    def summary(self, entry):
        return "Values and tangents (forward mode)"

    def build(self, program, entry, mask):
        mode = ForwardMode(program)
        var = mode.variant(program.entry, mask)
        params = list(entry.params)
        fresh = Names(params)
        dots = [fresh(naming.tangent(p)) for p, m in zip(params, mask) if m]
        ans, ans_dot = fresh("ans"), fresh(naming.tangent("ans"))
        return mode, _TANGENT_ENTRY.fill(
            ENTRY=self.entry_name(entry.key),
            PARAMS=params + dots,
            DOC=Docstring(f"`{entry.qualname}` and its tangent along ({', '.join(dots)})."),
            ANS=ans,
            ANS_DOT=ans_dot,
            TANGENT_FN=var.name,
            ARGS=params + dots,
            UNPACK=None,
            RESULT=[ans, _materialized(ans_dot, ans)],
        )


def tangent_entry(fun, active=None):
    """The generated function computing (fun(*primals), tangent) from primals followed by the tangents of the first
    `active` of them (all by default; the others, the values a lifted closure closes over, have none)."""
    fun = generated_function(fun)
    count = len(_signature(fun).parameters)
    transform = TangentEntry(fun, tuple(range(count if active is None else active)), False)
    gen = transform.generated()
    return getattr(gen.module, transform.entry_name(gen.program.entry))


def written_jvp(program, fn, params, mask, fresh, has_aux, inner_text):
    """The module `transpile jvp` writes: the tangent functions tp.jvp runs, and an entry
    jvp_F(*args, *tangents) returning (value, Jacobian-vector product); (module text, the standalone entry)."""
    from ..codegen.standalone import Entry

    active = [p for p, m in zip(params, mask) if m]
    wrt = " and ".join(f"`{p}`" for p in active)
    aux_note = " The auxiliary output is returned unchanged as `aux`." if has_aux else ""
    mode = ForwardMode(program)
    var = mode.variant(program.entry, mask)
    text = module_text(program, "Forward mode (Jacobian-vector product)", mode, "")
    name = f"jvp_{program.entry}"
    dots = [fresh(naming.tangent(p)) for p in active]
    ans, ans_dot, aux = fresh(naming.OUTPUT), fresh(naming.tangent(naming.OUTPUT)), fresh("aux")
    entry_text = _TANGENT_ENTRY.fill(
        ENTRY=name,
        PARAMS=params + dots,
        DOC=Docstring(f"`{fn.qualname}` and its Jacobian-vector product along the tangents {', '.join(dots)}."),
        ANS=ans,
        ANS_DOT=ans_dot,
        TANGENT_FN=var.name,
        ARGS=params + dots,
        UNPACK=_SPLIT_AUX.fill(ANS=ans, AUX=aux, ANS_DOT=ans_dot) if has_aux else None,
        RESULT=[ans, _materialized(ans_dot, ans)] + ([aux] if has_aux else []),
    )
    annotations = {p: p for p in params}
    annotations.update(zip(dots, active))
    entry = Entry(
        name=name,
        title=f"Jacobian-vector product of `{inner_text}` along {wrt} (forward mode)",
        returns=(
            "(value, tangent): the value of `" + inner_text + "` and its Jacobian-vector product, "
            "with the structure, shapes and dtypes of the value" + (", and aux" if has_aux else "") + "." + aux_note
        ),
        params=params + dots,
        call=(
            f"the arguments of `{inner_text}`, then one tangent per differentiated argument, with "
            "its structure, shapes and dtypes"
        ),
        annotations=annotations,
        extra_text=entry_text,
        defaults=False,
    )
    return text, entry
