"""vmap: batching by source rewriting, with JAX's signature."""

from __future__ import annotations

import runtime as rt
from runtime import pytree

from ..codegen import escape
from ..codegen.cache import cache_key, load_or_write
from ..codegen.module import module_text
from ..errors import TranspileError
from ..frontend.desugar import desugar_program
from ..frontend.methods import as_function
from ..transforms.batching import BATCH, BatchMode
from .boundary import api_boundary
from .common import (
    Generated,
    Names,
    _signature,
    def_location,
    generated_function,
    internal_arguments,
    run_generated,
    source_texts,
    user_function,
    wrapped,
)
from .unbound import is_unbound, unbound_transform


def _mapped(spec):
    if spec is None:
        return False
    if isinstance(spec, int):
        return True
    values = spec.values() if isinstance(spec, dict) else spec
    return any(_mapped(s) for s in values)


def _spec_entry(spec):
    """An in_axes entry as vmap writes it: a NamedTuple as a tuple, a registered object as the dict of its data
    fields (their axes), as transformed code takes such arguments."""
    if type(spec) in pytree._NODES:
        return {k: _spec_entry(v) for k, v in pytree.as_fields(spec).items()}
    if isinstance(spec, (tuple, list)) and type(spec) not in (tuple, list):
        return tuple(_spec_entry(s) for s in spec)
    if type(spec) in (tuple, list):
        return type(spec)(_spec_entry(s) for s in spec)
    if type(spec) is dict:
        return {k: _spec_entry(v) for k, v in spec.items()}
    return spec


def _check_spec(spec, fun, what):
    """Axes are plain ints and None, in tuples, lists and dicts keyed by plain values: they are written into
    the generated module as literals (escape.literal)."""
    if spec is None or type(spec) is int:
        return
    if type(spec) in (tuple, list):
        for s in spec:
            _check_spec(s, fun, what)
        return
    if type(spec) is dict and all(escape.literal(k) is not None for k in spec):
        for s in spec.values():
            _check_spec(s, fun, what)
        return
    raise TranspileError(
        f"{what} entries must be ints, None, or tuples, lists and dicts (with string or number keys) of them; "
        f"got {spec!r}",
        def_location(fun),
    )


class Vectorized:
    """vmap of one function: the entry moves mapped axes to the front, runs the batched code, moves them back."""

    kind = "vmap"

    def __init__(self, fun, in_axes, out_axes, axis_name, axis_size, sig=None):
        self.fun = fun
        self.user_fun = fun  # the user's function behind `fun` (vmap knows it)
        self.sig = sig or _signature(fun)
        self.params = list(self.sig.parameters.values())
        if type(in_axes) in (tuple, list):
            in_axes = type(in_axes)(_spec_entry(s) for s in in_axes)
        _check_spec(in_axes, fun, "in_axes")
        _check_spec(out_axes, fun, "out_axes")
        if axis_size is not None and (type(axis_size) is not int or axis_size < 1):
            raise TranspileError(f"axis_size must be a positive int or None, got {axis_size!r}", def_location(fun))
        if isinstance(in_axes, list):
            in_axes = tuple(in_axes)
        required = sum(1 for p in self.params if p.default is p.empty)
        if isinstance(in_axes, tuple) and not required <= len(in_axes) <= len(self.params):
            raise TranspileError(
                f"in_axes has {len(in_axes)} entries but `{fun.__name__}` takes {len(self.params)} argument(s)",
                def_location(fun),
                "give one entry per argument (None for arguments that are not mapped)",
            )
        self.spec = in_axes
        # generated_function, jit and the CLI: a call passing every argument without a default (keyword-only ones
        # by name), and those in_axes names by position
        leading = next(
            (i for i, p in enumerate(self.params) if p.default is not p.empty or p.kind == p.KEYWORD_ONLY),
            len(self.params),
        )
        named = [p.name for p in self.params if p.kind == p.KEYWORD_ONLY and p.default is p.empty]
        self.in_axes = self.axes_for(len(in_axes) if isinstance(in_axes, tuple) else leading, named)
        self.out_axes = out_axes
        self.axis_name = axis_name
        self.axis_size = axis_size
        self._generated = {}

    def axes_for(self, positional, keywords):
        """Each parameter's axis for a call passing `positional` arguments by position and `keywords` by name,
        as JAX maps them: in_axes gives those passed by position (an int, every one of them), the others passed
        by name are mapped along axis 0, and parameters left to their defaults are not mapped."""
        spec = self.spec
        if isinstance(spec, tuple) and positional > len(spec):
            raise TranspileError(
                f"in_axes has {len(spec)} entries but {positional} arguments were passed by position to "
                f"vmap({self.fun.__name__})",
                def_location(self.user_fun),
                "give one in_axes entry per argument passed by position (None for arguments that are not mapped)",
            )
        axes = []
        for i, p in enumerate(self.params):
            if isinstance(spec, tuple) and i < len(spec):
                axes.append(spec[i])
            elif i < positional:
                axes.append(spec)
            else:
                axes.append(0 if p.name in keywords else None)
        return tuple(axes)

    def check_static_call(self, args, kwargs):
        """A caller that runs the entry written for `self.in_axes` (jit) refuses a call that JAX maps otherwise."""
        axes = self.axes_for(len(args), kwargs)
        if axes != self.in_axes:
            names = ", ".join(f"`{p.name}`" for p, a, b in zip(self.params, axes, self.in_axes) if a != b)
            raise TranspileError(
                f"this call of vmap({self.fun.__name__}) maps {names} differently from the compiled entry "
                f"(in_axes={axes!r}, compiled for {self.in_axes!r}): JAX maps every argument passed by position "
                "with an int in_axes, and arguments passed by name along axis 0",
                def_location(self.user_fun),
                f"give vmap in_axes={axes!r} and pass every argument by position",
            )

    def entry_name(self, entry_key):
        return f"vmap_{entry_key}"

    def generated(self, in_axes=None) -> Generated:
        """The module batching `fun` over `in_axes`, one axis per parameter (default: `self.in_axes`)."""
        in_axes = self.in_axes if in_axes is None else in_axes
        if any(gen.program.stale() for gen in self._generated.values()):
            self._generated.clear()  # an attribute holds another method or object now: build for it
        if repr(in_axes) not in self._generated:  # (axes may be dicts)
            program = desugar_program(self.fun)
            entry = program.functions[program.entry]
            mask = tuple(_mapped(s) for s in in_axes)
            key = cache_key(
                ["vmap", in_axes, self.out_axes, self.axis_name, self.axis_size, program.entry, *source_texts(program)]
            )

            def generate():
                mode = BatchMode(program, self.axis_name)
                var = mode.variant(program.entry, mask)
                bindings = "".join(line + "\n" for line in mode.bindings)
                entry_text = (bindings + "\n\n" if bindings else "") + self._entry_text(entry, var, in_axes)
                return module_text(program, "Batched (vmap)", mode.functions, mode.primal_keys, entry_text)

            module, text = load_or_write(f"vmap_{program.entry}", key, generate)
            self._generated[repr(in_axes)] = Generated(module, text, program)
        return self._generated[repr(in_axes)]

    def entry_function(self, call=None):
        """The generated entry for a call passing (positional count, keyword names); None: `self.in_axes`."""
        gen = self.generated(None if call is None else self.axes_for(*call))
        return getattr(gen.module, self.entry_name(gen.program.entry))

    def _entry_text(self, entry, var, in_axes):
        params = list(entry.params)
        fresh = Names(params)
        ans, batch = fresh("ans"), fresh(BATCH)
        specs, out_axes = escape.literal(in_axes), escape.literal(self.out_axes)
        args = "(" + ", ".join(params) + ("," if len(params) == 1 else "") + ")"
        names = escape.literal(tuple(params))
        lines = [
            f"def {self.entry_name(entry.key)}({', '.join(params)}):",
            escape.docstring(f"`{entry.qualname}` over a batch: in_axes={specs}, out_axes={out_axes}.", "    "),
            f"    {batch} = rt.batch_size_of({args}, {specs}, {names}, {escape.literal(self.axis_size)})",
        ]
        for p, spec in zip(params, in_axes):
            if _mapped(spec):
                lines.append(f"    {p} = rt.prepare_batched({p}, {escape.literal(spec)}, {batch})")
        lines.append(f"    {ans} = {var.name}({', '.join(params + [batch])})")
        lines.append(f"    return rt.finish_batched({ans}, {out_axes}, {var.result_batched!r}, {batch})")
        return "\n".join(lines) + "\n"

    def __call__(self, *args, **kwargs):
        try:
            bound = self.sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TranspileError(f"bad call of vmap({self.fun.__name__}): {exc}", def_location(self.user_fun)) from None
        bound.apply_defaults()
        axes = self.axes_for(len(args), kwargs)
        values = internal_arguments(
            self.user_fun, list(bound.arguments.values()), [i for i, a in enumerate(axes) if _mapped(a)]
        )
        gen = self.generated(axes)
        gen.bind_captures()
        entry = getattr(gen.module, self.entry_name(gen.program.entry))
        try:
            return pytree.from_internal(run_generated(entry, values, self.user_fun, gen.program))
        except rt.BatchError as exc:
            hint = "JAX maps arguments passed by name along axis 0: pass unmapped ones by position" if kwargs else None
            raise TranspileError(f"vmap({self.fun.__name__}): {exc}", def_location(self.user_fun), hint) from None


@api_boundary
def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None):
    """`fun` mapped over an axis of its arguments, by rewriting it to work on whole batches."""
    fun = as_function(fun)
    if is_unbound(fun):  # Layer.loss, called with its object first: not mapped
        what = f"vmap({fun.__qualname__})"
        if not (isinstance(in_axes, (tuple, list)) and in_axes and in_axes[0] is None):
            raise TranspileError(
                f"{what} would map `self`, the object the method belongs to",
                def_location(user_function(fun)),
                "give in_axes=(None, ...) (one entry per argument, None for `self`), or vmap the object's method",
            )

        def make(bound):
            return vmap(bound, tuple(in_axes[1:]), out_axes, axis_name, axis_size)

        return unbound_transform(fun, what, make)
    transform = Vectorized(generated_function(fun), in_axes, out_axes, axis_name, axis_size, _signature(fun))
    transform.user_fun = user_function(fun)
    return wrapped(fun, transform)
