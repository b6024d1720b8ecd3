"""The public API, with JAX's names and signatures: grad, value_and_grad, vjp, source."""
from __future__ import annotations

import functools
import inspect

import gast
import numpy as np

import runtime as rt

from . import naming
from .codegen.cache import cache_key, load_or_write
from .codegen.module import module_text
from .errors import Location, TranspileError
from .frontend.desugar import desugar_program
from .frontend.parse import parse_function
from .transforms.reverse import ReverseMode


class _Generated:
    """A generated module and the program it came from."""

    def __init__(self, module, text, program):
        self.module = module
        self.text = text
        self.program = program
        module.__transpile_captures__ = program.captures

    def bind_captures(self):
        namespace = self.module.__dict__
        for cap_name, cap in self.program.captures.items():
            namespace[cap_name] = cap.read()


def _signature(fun):
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        raise TranspileError(f"{fun!r} is not a Python function", hint="pass a function defined with def or lambda")


def _def_location(fun):
    code = getattr(inspect.unwrap(fun), "__code__", None)
    if code is None:
        return None
    return Location(code.co_filename, code.co_firstlineno, 0)


def _param_location(fun, index):
    """Where parameter `index` of `fun` is written."""
    try:
        parsed = parse_function(inspect.unwrap(fun))
        return parsed.location(parsed.node.args.args[index])
    except (TranspileError, IndexError):
        return _def_location(fun)


def _return_location(fun):
    """Where `fun` returns (its last return statement)."""
    try:
        parsed = parse_function(inspect.unwrap(fun))
    except TranspileError:
        return _def_location(fun)
    returns = [n for n in gast.walk(parsed.node) if isinstance(n, gast.Return)]
    return parsed.location(returns[-1] if returns else parsed.node)


def _normalize_argnums(fun, argnums, nparams):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not nums or not all(isinstance(n, int) for n in nums):
        raise TranspileError(f"argnums must be an int or a non-empty tuple of ints, got {argnums!r}",
                             _def_location(fun))
    fixed = []
    for n in nums:
        if not -nparams <= n < nparams:
            raise TranspileError(f"argnums {n} is out of range: `{fun.__name__}` takes {nparams} argument(s)",
                                 _def_location(fun))
        fixed.append(n % nparams)
    return single, tuple(fixed)


def _sources(program):
    parts = []
    for fn in program.functions.values():
        parts.append(fn.filename)
        parts.append(fn.lineno)
        parts.append(inspect.getsource(fn.source_object) if getattr(fn, "source_object", None) else "")
    return parts


def _all_source_text(program):
    import linecache
    texts = []
    for fn in program.functions.values():
        lines = linecache.getlines(fn.filename)
        texts.append(fn.filename + "\n" + "".join(lines))
    return texts


def _float_leaves_check(fun, value, position, pname):
    """Differentiated arguments must hold floating-point values only."""
    for leaf in _leaves(value):
        dtype = np.asarray(leaf).dtype if not isinstance(leaf, float) else np.dtype(float)
        if dtype.kind not in "fc":
            raise TranspileError(
                f"argument {position} (`{pname}`) of `{fun.__name__}` holds {dtype} values, which cannot be "
                "differentiated", _param_location(fun, position),
                "pass floats (e.g. 1.0 instead of 1, or x.astype(float)), or leave this argument out of argnums")


def _leaves(value):
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    else:
        yield value


class _ReverseTransform:
    """grad / value_and_grad of one function: generated lazily, then called like the original."""

    def __init__(self, fun, argnums, has_aux, kind):
        self.fun = fun
        self.sig = _signature(fun)
        self.params = [p for p in self.sig.parameters.values()]
        for p in self.params:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY):
                raise TranspileError(f"`{fun.__name__}` has a *args, **kwargs or keyword-only parameter, "
                                     "which transformed functions do not support", _def_location(fun),
                                     "list the parameters explicitly")
        self.single, self.argnums = _normalize_argnums(fun, argnums, len(self.params))
        self.has_aux = has_aux
        self.kind = kind
        self._generated = None

    def generated(self) -> _Generated:
        if self._generated is None:
            self._generated = self._generate()
        return self._generated

    def _generate(self):
        program = desugar_program(self.fun)
        entry = program.functions[program.entry]
        mask = tuple(i in self.argnums for i in range(len(entry.params)))
        key = cache_key([self.kind, self.argnums, self.has_aux, program.entry, *_all_source_text(program)])

        def generate():
            mode = ReverseMode(program)
            var = mode.variant(program.entry, mask)
            return module_text(program, self._summary(entry), mode.functions, mode.primal_keys,
                               self._entry_text(entry, var))

        module, text = load_or_write(f"{self.kind}_{program.entry}", key, generate)
        return _Generated(module, text, program)

    def _summary(self, entry):
        names = [entry.params[i] for i in self.argnums]
        what = {"grad": "Gradient", "value_and_grad": "Value and gradient"}[self.kind]
        args = ", ".join(f"`{n}` (argument {i})" for n, i in zip(names, self.argnums))
        return f"{what} with respect to {args}"

    def entry_name(self, entry_key):
        return f"{self.kind}_{entry_key}"

    def _entry_text(self, entry, var):
        params = list(entry.params)
        taken = set(params)

        def fresh(base):
            candidate = base
            while candidate in taken:
                candidate += "_"
            taken.add(candidate)
            return candidate

        ans, residuals = fresh(naming.OUTPUT), fresh(naming.RESIDUALS)
        diff = [params[i] for i in sorted(self.argnums)]
        bars = [fresh(naming.adjoint(p)) for p in diff]
        lines = [f"def {self.entry_name(entry.key)}({', '.join(params)}):"]
        lines.append(f'    """{self._summary(entry)} of `{entry.qualname}`."""')
        lines.append(f"    {ans}, {residuals} = {var.fwd}({', '.join(params)})")
        value = ans
        if self.has_aux:
            value, aux = fresh("value"), fresh("aux")
            lines.append(f"    {value}, {aux} = {ans}")
        seed = f"rt.scalar_seed({value}, {entry.qualname!r})"
        if self.has_aux:
            seed = f"({seed}, 0.0)"
        lines.append(f"    ({', '.join(bars)},) = {var.bwd}({residuals}, {seed})")
        by_name = dict(zip(diff, bars))
        grads = [f"rt.materialize({by_name[params[i]]}, {params[i]})" for i in self.argnums]
        grad_expr = grads[0] if self.single else "(" + ", ".join(grads) + ("," if len(grads) == 1 else "") + ")"
        if self.kind == "grad":
            result = f"{grad_expr}, {aux}" if self.has_aux else grad_expr
        else:
            result = f"({value}, {aux}), {grad_expr}" if self.has_aux else f"{value}, {grad_expr}"
        lines.append(f"    return {result}")
        return "\n".join(lines) + "\n"

    def __call__(self, *args, **kwargs):
        try:
            bound = self.sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TranspileError(f"bad call of {self.kind}({self.fun.__name__}): {exc}", _def_location(self.fun))
        bound.apply_defaults()
        values = list(bound.arguments.values())
        for i in self.argnums:
            _float_leaves_check(self.fun, values[i], i, self.params[i].name)
        gen = self.generated()
        gen.bind_captures()
        entry = getattr(gen.module, self.entry_name(gen.program.entry))
        try:
            return entry(*values)
        except rt.OutputError as exc:
            message, _, hint = str(exc).partition("; ")
            raise TranspileError(message, _return_location(self.fun), hint or None) from None


def generated_function(fun):
    """The plain function behind `fun`: for a transformed function, its generated entry point."""
    transform = getattr(fun, "__transpile__", None)
    if transform is None:
        return fun
    gen = transform.generated()
    return getattr(gen.module, transform.entry_name(gen.program.entry))


def _make(fun, argnums, has_aux, kind):
    transform = _ReverseTransform(generated_function(fun), argnums, has_aux, kind)

    @functools.wraps(fun)
    def transformed(*args, **kwargs):
        return transform(*args, **kwargs)

    transformed.__transpile__ = transform
    del transformed.__wrapped__
    return transformed


def grad(fun, argnums=0, has_aux=False):
    """The gradient of scalar-valued `fun` with respect to argument(s) `argnums`."""
    return _make(fun, argnums, has_aux, "grad")


def value_and_grad(fun, argnums=0, has_aux=False):
    """Like grad, but returns (value, gradient)."""
    return _make(fun, argnums, has_aux, "value_and_grad")


def source(transformed) -> str:
    """The generated module behind a transformed function, as text."""
    transform = getattr(transformed, "__transpile__", None)
    if transform is None:
        raise TranspileError(f"{transformed!r} was not made by transpile", hint="pass e.g. tp.grad(f)")
    return transform.generated().text.rsplit("\n# transpile-cache-key", 1)[0] + "\n"


def vjp(fun, *primals, has_aux=False):
    """(fun(*primals), vjp_fn): vjp_fn(cotangent) gives one adjoint per primal."""
    fun = generated_function(fun)
    sig = _signature(fun)
    try:
        bound = sig.bind(*primals)
    except TypeError as exc:
        raise TranspileError(f"bad call of vjp({fun.__name__}): {exc}", _def_location(fun))
    bound.apply_defaults()
    values = list(bound.arguments.values())
    mask = tuple(i < len(primals) and all(np.asarray(leaf).dtype.kind in "fc" for leaf in _leaves(v))
                 for i, v in enumerate(values))
    fun = generated_function(fun)
    program = desugar_program(fun)
    key = cache_key(["vjp", mask, has_aux, program.entry, *_all_source_text(program)])

    mode = ReverseMode(program)
    mode.variant(program.entry, mask)  # the analysis is cheap; the module text may come from the cache

    def generate():
        return module_text(program, "Forward and adjoint sweeps", mode.functions, mode.primal_keys, "")

    module, text = load_or_write(f"vjp_{program.entry}", key, generate)
    # adjoint sweeps that restore overwritten regions in place consume their residuals
    single_use = any(v.restores_in_place for v in mode.variants.values())
    gen = _Generated(module, text, program)
    gen.bind_captures()
    entry = program.functions[program.entry]
    fwd = getattr(module, naming.forward_sweep(entry.key))
    bwd = getattr(module, naming.adjoint_sweep(entry.key))
    out, residuals = fwd(*values)
    aux = None
    if has_aux:
        out, aux = out
    fresh = [residuals]

    def vjp_fn(cotangent):
        seed = (cotangent, 0.0) if has_aux else cotangent
        gen.bind_captures()
        saved = fresh.pop() if fresh else fwd(*values)[1]
        if not single_use:
            fresh.append(saved)
        bars = iter(bwd(saved, seed))
        result = []
        for i, value in enumerate(values[:len(primals)]):
            result.append(rt.materialize(next(bars), value) if mask[i] else rt.materialize(0.0, value))
        return tuple(result)

    vjp_fn.__transpile_text__ = text
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)
