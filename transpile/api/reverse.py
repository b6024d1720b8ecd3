"""Reverse-mode API: grad, value_and_grad and vjp."""

from __future__ import annotations

import runtime as rt
from runtime import pytree

from .. import naming
from ..codegen.cache import load_or_write
from ..codegen.module import module_text
from ..frontend.desugar import desugar_program
from ..frontend.methods import as_function
from ..transforms.reverse import ReverseMode
from ..transforms.templates import Code, Docstring, Template, expression, literal, tuple_of
from .boundary import api_boundary
from .common import (
    Bound,
    Generated,
    Names,
    Transform,
    bind_arguments,
    generated_function,
    internal_arguments,
    is_float_tree,
    make_transformed,
    reused,
    run_generated,
    user_function,
)

_GRADIENT_ENTRY = Template(
    """
    def ENTRY(PARAMS):
        DOC
        ANS, RESIDUALS = FWD(PARAMS)
        UNPACK
        (BARS,) = BWD(RESIDUALS, SEED)
        return RESULT
    """
)
_UNPACK_AUX = Template("VALUE, AUX = ANS")


class Gradient(Transform):
    """grad: the entry runs the forward sweep, seeds the output with 1 and runs the adjoint sweep."""

    kind = "grad"
    title = "Gradient"

    def summary(self, entry):
        return f"{self.title} with respect to {self.with_respect_to(entry)}"

    def build(self, program, entry, mask):
        mode = ReverseMode(program)
        var = mode.variant(program.entry, mask)
        return mode, self.entry_text(entry, var)

    def entry_text(self, entry, var):
        params = list(entry.params)
        fresh = Names(params)
        ans, residuals = fresh(naming.OUTPUT), fresh(naming.RESIDUALS)
        diff = [params[i] for i in sorted(self.argnums)]
        bars = dict(zip(diff, [fresh(naming.adjoint(p)) for p in diff]))
        value = aux = ans
        if self.has_aux:
            value, aux = fresh("value"), fresh("aux")
        # holomorphic=True: a complex output is seeded with 1.0 (its real part checked instead), giving f'(z)
        checked = expression("np.real(VALUE)", VALUE=value) if self.holomorphic else value
        seed = expression("rt.scalar_seed(CHECKED, QUALNAME)", CHECKED=checked, QUALNAME=literal(entry.qualname))
        if self.has_aux:
            seed = expression("(SEED, 0.0)", SEED=seed)
        grads = [expression("rt.materialize(BAR, PARAM)", BAR=bars[params[i]], PARAM=params[i]) for i in self.argnums]
        return _GRADIENT_ENTRY.fill(
            ENTRY=self.entry_name(entry.key),
            PARAMS=params,
            DOC=Docstring(f"{self.summary(entry)} of `{entry.qualname}`."),
            ANS=ans,
            RESIDUALS=residuals,
            FWD=var.fwd,
            UNPACK=_UNPACK_AUX.fill(VALUE=value, AUX=aux, ANS=ans) if self.has_aux else None,
            BARS=list(bars.values()),
            BWD=var.bwd,
            SEED=seed,
            RESULT=self.result(grads[0] if self.single else tuple_of(grads), value, aux),
        )

    def result(self, grad, value, aux):
        return expression("GRAD, AUX", GRAD=grad, AUX=aux) if self.has_aux else grad


class ValueAndGradient(Gradient):
    kind = "value_and_grad"
    title = "Value and gradient"

    def result(self, grad, value, aux):
        if self.has_aux:
            return expression("(VALUE, AUX), GRAD", VALUE=value, AUX=aux, GRAD=grad)
        return expression("VALUE, GRAD", VALUE=value, GRAD=grad)


class PullbackEntry(Transform):
    """What jit compiles for the function vjp returns: the forward sweep then the adjoint sweep, from the primals
    and the cotangent.  (The residuals vjp keeps cannot be passed instead: NumPy's tapes are cons cells, compiled
    sweeps' are lists.)"""

    kind = "pullback"

    def __init__(self, fun, mask, count, has_aux):  # (never called like `fun`: no signature to check calls by)
        self.fun = self.user_fun = fun
        self.argnums, self.single = tuple(i for i, active in enumerate(mask) if active), False
        self.count = count  # the primals vjp was given: one adjoint each
        self.has_aux = has_aux
        self.inner, self._generated = None, {}

    def key_parts(self):
        return [*super().key_parts(), self.count]

    def summary(self, entry):
        return f"The vector-Jacobian product of `{entry.qualname}` (the function vjp returns)"

    def build(self, program, entry, mask):
        mode = ReverseMode(program)
        var = mode.variant(program.entry, mask)
        params = list(entry.params)
        fresh = Names(params)
        cotangent = fresh("cotangent")
        bars = {params[i]: fresh(naming.adjoint(params[i])) for i in self.argnums}
        sweeps = None
        if bars:
            residuals = fresh(naming.RESIDUALS)
            sweeps = _PULLBACK_SWEEPS.fill(
                RESIDUALS=residuals,
                FWD=var.fwd,
                PARAMS=params,
                BARS=list(bars.values()),
                BWD=var.bwd,
                SEED=expression("(COTANGENT, 0.0)", COTANGENT=cotangent) if self.has_aux else cotangent,
            )
        adjoints = [
            expression("rt.materialize(BAR, PARAM)", BAR=bars.get(p, Code("0.0")), PARAM=p)
            for p in params[: self.count]
        ]
        text = _PULLBACK_ENTRY.fill(
            ENTRY=self.entry_name(entry.key),
            PARAMS=params + [cotangent],
            DOC=Docstring(f"{self.summary(entry)} at ({', '.join(params)})."),
            SWEEPS=sweeps,
            ADJOINTS=adjoints,
        )
        return mode, text


_PULLBACK_ENTRY = Template(
    """
    def ENTRY(PARAMS):
        DOC
        SWEEPS
        return (ADJOINTS,)
    """
)
_PULLBACK_SWEEPS = Template(
    """
    RESIDUALS = FWD(PARAMS)[1]
    (BARS,) = BWD(RESIDUALS, SEED)
    """
)


@api_boundary
def grad(fun, argnums=0, has_aux=False, holomorphic=False):
    """The gradient of scalar-valued `fun` with respect to argument(s) `argnums`; with holomorphic=True, of a
    complex-valued `fun` of complex arguments: its complex derivative f'(z)."""
    return make_transformed(fun, Gradient, argnums, has_aux, holomorphic)


@api_boundary
def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False):
    """Like grad, but returns (value, gradient)."""
    return make_transformed(fun, ValueAndGradient, argnums, has_aux, holomorphic)


@api_boundary
def vjp(fun, *primals, has_aux=False):
    """(fun(*primals), vjp_fn): vjp_fn(cotangent) gives one adjoint per primal."""
    fun = as_function(fun)
    user, values = user_function(fun), bind_arguments(fun, primals, "vjp")
    values = internal_arguments(user, values, range(len(primals)))
    fun = generated_function(fun, (len(primals), ()))
    mask = tuple(i < len(primals) and is_float_tree(v) for i, v in enumerate(values))

    def build(module_key_of):
        program = desugar_program(fun, differentiated=True)
        mode = ReverseMode(program)
        mode.variant(program.entry, mask)  # the module text may come from the cache, `single_use` never does
        key = module_key_of(program)
        module, text = load_or_write(
            f"vjp_{program.entry}",
            key,
            lambda: module_text(program, "Forward and adjoint sweeps", mode, ""),
        )
        # adjoint sweeps that restore overwritten regions in place consume their residuals
        single_use = any(v.restores_in_place for v in mode.variants.values())
        return program, key, (Generated(module, text, program), single_use)

    gen, single_use = reused("vjp", fun, (mask, has_aux), build)
    program = gen.program
    gen.bind_captures()
    fwd = getattr(gen.module, naming.forward_sweep(program.entry))
    bwd = getattr(gen.module, naming.adjoint_sweep(program.entry))
    out, residuals = fwd(*values)
    aux = None
    if has_aux:
        out, aux = out
    fresh = [residuals]

    def check(cotangent):
        run_generated(rt.check_cotangent, (out, cotangent, program.functions[program.entry].qualname), user, program)

    @api_boundary
    def vjp_fn(cotangent):
        cotangent = pytree.to_internal(cotangent)  # a registered object (one the function built) as its fields
        check(cotangent)
        seed = (cotangent, 0.0) if has_aux else cotangent
        gen.bind_captures()
        saved = fresh.pop() if fresh else fwd(*values)[1]
        if not single_use:
            fresh.append(saved)
        bars = iter(run_generated(bwd, (saved, seed), user, program))
        return pytree.from_internal(
            tuple(
                rt.materialize(next(bars) if mask[i] else 0.0, value) for i, value in enumerate(values[: len(primals)])
            )
        )

    pullback = PullbackEntry(fun, mask, len(primals), has_aux)
    vjp_fn.__transpile_bound__ = Bound(user, values, pullback.entry_function, check)
    # (new names: `check` reads the output as transformed code returned it, Fields and all)
    user_out, user_aux = pytree.from_internal(out), pytree.from_internal(aux)
    return (user_out, vjp_fn, user_aux) if has_aux else (user_out, vjp_fn)


_VJP_ENTRY = Template(
    """
    def ENTRY(PARAMS):
        DOC
        ANS, RESIDUALS = FWD(PARAMS)
        UNPACK
        KEEP

        def INNER(COT):
            INNER_DOC
            rt.check_cotangent(ANS, COT, QUALNAME)
            TAKE
            (BARS,) = BWD(USE, SEED)
            return (RESULTS,)

        return RESULT
    """
)
_KEEP_RESIDUALS = Template("FRESH = [RESIDUALS]  # the adjoint sweep consumes its residuals")
_TAKE_RESIDUALS = Template("SAVED = FRESH.pop() if FRESH else FWD(PARAMS)[1]")


def written_vjp(program, fn, params, mask, fresh, has_aux, inner_text):
    """The module `transpile vjp` writes: the sweeps tp.vjp runs, and an entry vjp_F(*args) returning
    (value, vjp_fn) as tp.vjp(F, *args) does; (module text, the standalone entry)."""
    from ..codegen.standalone import Entry

    active = [p for p, m in zip(params, mask) if m]
    wrt = " and ".join(f"`{p}`" for p in active)
    aux_note = " The auxiliary output is returned unchanged as `aux`." if has_aux else ""
    mode = ReverseMode(program)
    var = mode.variant(program.entry, mask)
    text = module_text(program, "Forward and adjoint sweeps", mode, "")
    single_use = any(v.restores_in_place for v in mode.variants.values())
    name = f"vjp_{program.entry}"
    ans, residuals, aux, cot, saved, fresh_list = (
        fresh(n) for n in (naming.OUTPUT, naming.RESIDUALS, "aux", "cotangent", "saved", "fresh")
    )
    inner_name = fresh(f"{program.entry}_vjp")
    bars = [fresh(naming.adjoint(p)) for p in active]
    by_param = dict(zip(active, bars))
    entry_text = _VJP_ENTRY.fill(
        ENTRY=name,
        PARAMS=params,
        DOC=Docstring(f"`{fn.qualname}` at the given arguments and its vector-Jacobian product function."),
        ANS=ans,
        RESIDUALS=residuals,
        FWD=var.fwd,
        UNPACK=_UNPACK_AUX.fill(VALUE=ans, AUX=aux, ANS=ans) if has_aux else None,
        KEEP=_KEEP_RESIDUALS.fill(FRESH=fresh_list, RESIDUALS=residuals) if single_use else None,
        INNER=inner_name,
        COT=cot,
        INNER_DOC=Docstring(f"One cotangent per argument of `{fn.qualname}` (zero where not differentiated)."),
        QUALNAME=literal(fn.qualname),
        TAKE=_TAKE_RESIDUALS.fill(SAVED=saved, FRESH=fresh_list, FWD=var.fwd, PARAMS=params) if single_use else None,
        BARS=bars,
        BWD=var.bwd,
        USE=saved if single_use else residuals,
        SEED=expression("(COT, 0.0)", COT=cot) if has_aux else cot,
        RESULTS=[expression("rt.materialize(BAR, PARAM)", BAR=by_param.get(p, Code("0.0")), PARAM=p) for p in params],
        RESULT=[ans, inner_name] + ([aux] if has_aux else []),
    )
    entry = Entry(
        name=name,
        title=f"Vector-Jacobian product of `{inner_text}` with respect to {wrt}",
        returns=(
            "(value, vjp_fn): the value of `" + inner_text + "` and a function that maps a "
            "cotangent of the value (same structure, shapes and dtypes) to a tuple with one "
            "cotangent per argument, zero for arguments not differentiated"
            + (", and aux" if has_aux else "")
            + "."
            + aux_note
        ),
        params=params,
        call=f"the arguments of `{inner_text}`",
        annotations={p: p for p in params},
        extra_text=entry_text,
    )
    return text, entry


def grad_returns(*, structure, has_aux, grad_like, **_):
    """What a written grad module's entry returns (text, how to annotate it)."""
    if has_aux:
        return f"(gradient, aux): the gradient {structure}.", None
    return f"the gradient, {structure}.", grad_like


def value_and_grad_returns(*, inner_text, structure, has_aux, grad_like, inner_is_leaf, **_):
    """What a written value_and_grad module's entry returns (text, how to annotate it)."""
    if has_aux:
        return f"((value, aux), gradient): the gradient {structure}.", None
    text = f"(value, gradient): the value of `{inner_text}` and its gradient, {structure}."
    return text, ("value_and", grad_like) if inner_is_leaf else None
