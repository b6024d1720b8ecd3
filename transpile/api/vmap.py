"""vmap: batching by source rewriting, with JAX's signature."""

from __future__ import annotations

import runtime as rt

from ..codegen import escape
from ..codegen.cache import cache_key, load_or_write
from ..codegen.module import module_text
from ..errors import TranspileError
from ..frontend.desugar import desugar_program
from ..transforms.batching import BATCH, BatchMode
from .boundary import api_boundary
from .common import (
    Generated,
    Names,
    _signature,
    def_location,
    generated_function,
    run_generated,
    source_texts,
    user_function,
)


def _mapped(spec):
    if spec is None:
        return False
    if isinstance(spec, int):
        return True
    values = spec.values() if isinstance(spec, dict) else spec
    return any(_mapped(s) for s in values)


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

    def __init__(self, fun, in_axes, out_axes, axis_name, axis_size):
        self.fun = fun
        self.user_fun = fun  # the user's function behind `fun` (vmap knows it)
        self.sig = _signature(fun)
        self.params = list(self.sig.parameters.values())
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
        if isinstance(in_axes, tuple):  # arguments left to their defaults are not mapped
            self.in_axes = in_axes + (None,) * (len(self.params) - len(in_axes))
        else:  # an int maps every argument without a default
            self.in_axes = tuple(in_axes if p.default is p.empty else None for p in self.params)
        self.out_axes = out_axes
        self.axis_name = axis_name
        self.axis_size = axis_size
        self._generated = None

    def entry_name(self, entry_key):
        return f"vmap_{entry_key}"

    def generated(self) -> Generated:
        if self._generated is None:
            program = desugar_program(self.fun)
            entry = program.functions[program.entry]
            mask = tuple(_mapped(s) for s in self.in_axes)
            key = cache_key(
                [
                    "vmap",
                    self.in_axes,
                    self.out_axes,
                    self.axis_name,
                    self.axis_size,
                    program.entry,
                    *source_texts(program),
                ]
            )

            def generate():
                mode = BatchMode(program, self.axis_name)
                var = mode.variant(program.entry, mask)
                bindings = "".join(line + "\n" for line in mode.bindings)
                entry_text = (bindings + "\n\n" if bindings else "") + self._entry_text(entry, var)
                return module_text(program, "Batched (vmap)", mode.functions, mode.primal_keys, entry_text)

            module, text = load_or_write(f"vmap_{program.entry}", key, generate)
            self._generated = Generated(module, text, program)
        return self._generated

    def _entry_text(self, entry, var):
        params = list(entry.params)
        fresh = Names(params)
        ans, batch = fresh("ans"), fresh(BATCH)
        specs, out_axes = escape.literal(tuple(self.in_axes)), escape.literal(self.out_axes)
        args = "(" + ", ".join(params) + ("," if len(params) == 1 else "") + ")"
        names = escape.literal(tuple(params))
        lines = [
            f"def {self.entry_name(entry.key)}({', '.join(params)}):",
            escape.docstring(f"`{entry.qualname}` over a batch: in_axes={specs}, out_axes={out_axes}.", "    "),
            f"    {batch} = rt.batch_size_of({args}, {specs}, {names}, {escape.literal(self.axis_size)})",
        ]
        for p, spec in zip(params, self.in_axes):
            if _mapped(spec):
                lines.append(f"    {p} = rt.prepare_batched({p}, {escape.literal(spec)}, {batch})")
        lines.append(f"    {ans} = {var.name}({', '.join(params + [batch])})")
        lines.append(f"    return rt.finish_batched({ans}, {out_axes}, {var.result_batched!r}, {batch})")
        return "\n".join(lines) + "\n"

    def __call__(self, *args, **kwargs):
        try:
            bound = self.sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TranspileError(f"bad call of vmap({self.fun.__name__}): {exc}", def_location(self.fun)) from None
        bound.apply_defaults()
        gen = self.generated()
        gen.bind_captures()
        entry = getattr(gen.module, self.entry_name(gen.program.entry))
        try:
            return run_generated(entry, list(bound.arguments.values()), self.user_fun, gen.program)
        except rt.BatchError as exc:
            raise TranspileError(f"vmap({self.fun.__name__}): {exc}", def_location(self.fun)) from None


@api_boundary
def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None):
    """`fun` mapped over an axis of its arguments, by rewriting it to work on whole batches."""
    import functools

    transform = Vectorized(generated_function(fun), in_axes, out_axes, axis_name, axis_size)
    transform.user_fun = user_function(fun)

    @functools.wraps(fun)
    @api_boundary
    def vectorized(*args, **kwargs):
        return transform(*args, **kwargs)

    vectorized.__transpile__ = transform
    del vectorized.__wrapped__
    return vectorized
