"""vmap: batching by source rewriting, with JAX's signature."""

from __future__ import annotations

import numpy as np

import runtime as rt
from runtime import pytree

from ..codegen import escape
from ..codegen.cache import cache_key, load_or_write
from ..codegen.module import module_text
from ..errors import TranspileError
from ..frontend.desugar import desugar_program
from ..frontend.methods import as_function
from ..transforms.batching import BATCH, BatchMode
from ..transforms.templates import Code, Docstring, Template, literal, tuple_of
from .boundary import api_boundary, caller_location
from .common import (
    Generated,
    Names,
    Transform,
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


def _is_node_spec(spec) -> bool:
    """An in_axes entry written as a pytree node: a NamedTuple or an object of a registered class."""
    return type(spec) in pytree._NODES or pytree.is_namedtuple(spec)


def _spec_text(spec) -> str:
    return f"{type(spec).__name__}(...)" if _is_node_spec(spec) else repr(spec)


def _same_meta(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:  # arrays: compared by content
        return np.array_equal(a, b) if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) else a is b


def _mismatch(value, spec, where, inside=False):
    """What makes the in_axes entry `spec` (as the user wrote it) no prefix of the argument `value`'s structure,
    or None: a node written in in_axes (`Params(W=0, b=None)`) needs an argument of its class, with the same
    meta fields, and its fields' entries are checked in turn (an axis against its field's arrays)."""
    if type(spec) is int and inside:
        for leaf in pytree.tree_leaves(value):
            if np.ndim(leaf) == 0 or not -np.ndim(leaf) <= spec < np.ndim(leaf):
                return f"in_axes {spec} is out of range for `{where}`, which has {np.ndim(leaf)} dimension(s)"
    if type(spec) in (tuple, list) and isinstance(value, (tuple, list)) and len(spec) == len(value):
        return next(
            filter(None, (_mismatch(v, e, f"{where}[{i}]", inside) for i, (v, e) in enumerate(zip(value, spec)))), None
        )
    if type(spec) is dict and isinstance(value, dict) and set(spec) == set(value):
        return next(filter(None, (_mismatch(value[k], e, f"{where}[{k!r}]", inside) for k, e in spec.items())), None)
    if spec is None or type(spec) is int or not _is_node_spec(spec):
        return None
    kind = type(spec).__name__
    if type(value) is not type(spec):
        got = value.cls.__name__ if isinstance(value, pytree.Fields) else type(value).__name__
        return f"in_axes gives `{where}` as a {kind}, but the argument there is a {got}"
    if pytree.is_namedtuple(spec):
        pairs = [(name, getattr(value, name), getattr(spec, name)) for name in type(spec)._fields]
    else:
        specs, values = pytree.as_fields(spec), pytree.as_fields(value)
        for name, meta in specs.meta.items():
            if not _same_meta(meta, values.meta.get(name)):
                return (
                    f"in_axes gives `{where}` as a {kind} whose meta field `{name}` is {meta!r}, but the argument's "
                    f"is {values.meta.get(name)!r} (a node in in_axes must have the argument's meta fields, as in JAX)"
                )
        pairs = [(name, values[name], specs[name]) for name in specs]
    for name, item, entry in pairs:
        found = _mismatch(item, entry, f"{where}.{name}", inside=True)
        if found:
            return found
    return None


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
        f"{what} entries must be ints, None, or tuples, lists and dicts (with string or number keys) of them, or "
        f"NamedTuples and registered objects holding them as fields; got {spec!r}",
        caller_location() or def_location(fun),
    )


_VMAP_ENTRY = Template(
    """
    def ENTRY(PARAMS):
        DOC
        BATCH = SIZE_OF(ARGS, SPECS, NAMES, SIZE)
        PREPARE
        ANS = BATCHED_FN(BATCHED_ARGS)
        return rt.finish_batched(ANS, OUT_AXES, batched=RESULT_BATCHED, size=BATCH)
    """
)
_PREPARE = Template("PARAM = rt.prepare_batched(PARAM, SPEC, BATCH)")


class Vectorized:
    """vmap of one function: the entry moves mapped axes to the front, runs the batched code, moves them back."""

    kind = "vmap"

    def __init__(self, fun, in_axes, out_axes, axis_name, axis_size, sig=None):
        self.fun = fun
        self.user_fun = fun  # the user's function behind `fun` (vmap knows it)
        self.sig = sig or _signature(fun)
        self.params = list(self.sig.parameters.values())
        if _is_node_spec(in_axes):  # a NamedTuple is a tuple, but in_axes=Params(...) is rarely one per argument
            raise TranspileError(
                f"in_axes is a {type(in_axes).__name__}: give a tuple with one entry per argument",
                caller_location() or def_location(fun),
                f"in_axes=({type(in_axes).__name__}(...), None) maps the fields of the first argument as written",
            )
        self.user_spec = in_axes  # as the user wrote it: nodes are checked against the arguments at each call
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
        self.inner = None  # what `fun` was made from (see Transform.source_function)
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
            elif p.kind is p.VAR_KEYWORD:  # (pmap's) **kwargs: mapped where it holds arguments passed by name
                named = {q.name for q in self.params}
                axes.append(0 if any(k not in named for k in keywords) else None)
            else:
                axes.append(0 if p.name in keywords else None)
        return tuple(axes)

    def check_nodes(self, values):
        """The arguments against the nodes the user wrote in in_axes (`Params(W=0, b=None)`): a located error at
        the user's call where one is not of the node's class, meta fields or axes."""
        if not isinstance(self.user_spec, (tuple, list)):
            return
        for param, entry, value in zip(self.params, self.user_spec, values):
            found = _mismatch(value, entry, param.name)
            if found:
                raise TranspileError(
                    f"vmap({self.fun.__name__}): {found}",
                    caller_location() or def_location(self.user_fun),
                    "pass an argument of the structure in_axes gives, or give in_axes the argument's",
                )

    def check_static_call(self, args, kwargs):
        """A caller that runs the entry written for `self.in_axes` (jit) refuses a call that JAX maps otherwise."""
        bound = self.sig.bind(*args, **kwargs)
        bound.apply_defaults()
        self.check_nodes(list(bound.arguments.values()))
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

    def generated(self, in_axes=None, nones=frozenset(), size_of="batch_size_of") -> Generated:
        """The module batching `fun` over `in_axes`, one axis per parameter (default: `self.in_axes`), for calls
        passing None to the parameters `nones` (see Transform.source_function), its batch size from `rt.<size_of>`
        (pmap across MPI processes: rt.process_batch_size_of)."""
        in_axes = self.in_axes if in_axes is None else in_axes
        nones = frozenset(nones)
        if any(gen.program.stale() for gen in self._generated.values()):
            self._generated.clear()  # an attribute holds another method or object now: build for it
        if (repr(in_axes), nones, size_of) not in self._generated:  # (axes may be dicts)
            program = desugar_program(self.source_function(nones), nones=nones)
            entry = program.functions[program.entry]
            mask = tuple(_mapped(s) for s in in_axes)
            specialized = [("nones", sorted(nones))] if nones else []
            size_key = [] if size_of == "batch_size_of" else [size_of]
            parts = [in_axes, self.out_axes, self.axis_name, self.axis_size, *size_key, *specialized, program.entry]
            key = cache_key(["vmap", *parts, *source_texts(program)])

            def generate():
                mode = BatchMode(program, self.axis_name)
                var = mode.variant(program.entry, mask)
                bindings = "".join(line + "\n" for line in mode.bindings)
                entry_text = (bindings + "\n\n" if bindings else "") + self._entry_text(entry, var, in_axes, size_of)
                return module_text(program, "Batched (vmap)", mode, entry_text)

            module, text = load_or_write(f"vmap_{program.entry}", key, generate)
            self._generated[repr(in_axes), nones, size_of] = Generated(module, text, program)
        return self._generated[repr(in_axes), nones, size_of]

    source_function = Transform.source_function

    def entry_function(self, call=None, nones=frozenset()):
        """The generated entry for a call passing (positional count, keyword names); None: `self.in_axes`; and
        None to the parameters `nones`."""
        gen = self.generated(None if call is None else self.axes_for(*call), nones)
        return getattr(gen.module, self.entry_name(gen.program.entry))

    def _entry_text(self, entry, var, in_axes, size_of):
        params = list(entry.params)
        fresh = Names(params)
        ans, batch = fresh("ans"), fresh(BATCH)
        specs, out_axes = literal(in_axes), literal(self.out_axes)
        prepared = [
            _PREPARE.fill(PARAM=p, SPEC=literal(spec), BATCH=batch) for p, spec in zip(params, in_axes) if _mapped(spec)
        ]
        return _VMAP_ENTRY.fill(
            ENTRY=self.entry_name(entry.key),
            PARAMS=params,
            DOC=Docstring(f"`{entry.qualname}` over a batch: in_axes={specs}, out_axes={out_axes}."),
            BATCH=batch,
            SIZE_OF=Code(f"rt.{size_of}"),
            ARGS=tuple_of(params),
            SPECS=specs,
            NAMES=literal(tuple(params)),
            SIZE=literal(self.axis_size),
            PREPARE=prepared,
            ANS=ans,
            BATCHED_FN=var.name,
            BATCHED_ARGS=params + [batch],
            OUT_AXES=out_axes,
            RESULT_BATCHED=literal(var.result_batched),
        )

    def __call__(self, *args, **kwargs):
        try:
            bound = self.sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TranspileError(f"bad call of vmap({self.fun.__name__}): {exc}", def_location(self.user_fun)) from None
        bound.apply_defaults()
        axes = self.axes_for(len(args), kwargs)
        self.check_nodes(list(bound.arguments.values()))
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
    transform.inner = fun
    transform.user_fun = user_function(fun)
    return wrapped(fun, transform)


def written_entry(spec, transform, entry_name, params, inner_text):
    """How a written vmap module's header describes its entry."""
    from ..codegen.standalone import Entry

    in_axes = transform.in_axes if len(set(map(repr, transform.in_axes))) > 1 else transform.in_axes[0]
    options = f"in_axes={in_axes!r}, out_axes={transform.out_axes!r}"
    if transform.axis_name is not None:
        options += f", axis_name={transform.axis_name!r}"
    mapped = [p for p, axes in zip(params, transform.in_axes) if axes is not None]
    return Entry(
        name=entry_name,
        title=f"`{inner_text}` mapped over a batch axis (vmap, {options})",
        returns=(
            f"the results of `{inner_text}` for every example, stacked along out_axes={transform.out_axes!r}, "
            "as jax.vmap returns them."
        ),
        params=params,
        call=(
            f"the arguments of `{inner_text}`, with a batch axis where in_axes says ("
            + (", ".join(f"`{p}`" for p in mapped) or "none")
            + ")"
        ),
        annotations={p: p for p, axes in zip(params, transform.in_axes) if axes is None},  # unmapped: as given
    )
