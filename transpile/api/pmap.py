"""pmap: vmap whose examples run on devices, one slice of the leading axis per device (CPU devices: threads).

Called, a pmap runs the function on each slice on its own device thread (runtime/devices.py), and its collectives
meet between the threads.  Met by a transform (grad, vmap, jit, an enclosing pmap's transforms), it is the vmap
with the same axis name, which computes the same numbers: the transform batches or differentiates that (a pmap
spanning MPI processes: the vmap of this process's slices, whose collectives exchange with the others).  Each
device runs the function compiled as jit compiles it (Numba's code, which releases the GIL, on CPU devices; the CuPy
backend's on GPUs), its collectives calling back to Python (runtime/numba/collectives.py); a function jit cannot
compile runs as NumPy code, with jit's JitFallbackWarning, and under tp.disable_jit() every device runs NumPy code.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np

import runtime
from runtime import devices as rt_devices
from runtime import nccl as rt_nccl
from runtime import pytree

from ..backends.cupy.transfer import on_device, to_device
from ..codegen import escape
from ..errors import TranspileError
from ..frontend.methods import as_function
from .boundary import api_boundary, caller_location
from .common import Names, _signature, def_location, generated_function, user_function, wrapped
from .defined import define
from .jit import JitFallbackWarning, jit
from .unbound import is_unbound
from .vmap import Vectorized

_BACKENDS = (None, "cpu", "gpu", "cuda")
_building = threading.local()  # `inside`: a pmap across processes is being batched (the pmaps in it are local)


class DeviceCountError(TranspileError, ValueError):
    """A pmap needs more devices than there are (or than it was given)."""


def _leaves_at(value, spec, what):
    """(leaf, axis) pairs of `value` under the in_axes entry `spec` (an int for a whole subtree, None, or a tuple,
    list or dict of entries matching the value's containers)."""
    if spec is None:
        return []
    if type(spec) is int:
        return [(leaf, spec) for leaf in pytree.tree_leaves(value)]
    if isinstance(spec, (tuple, list)) and isinstance(value, (tuple, list)) and len(spec) == len(value):
        return [pair for v, s in zip(value, spec) for pair in _leaves_at(v, s, what)]
    if isinstance(spec, dict) and isinstance(value, dict) and set(spec) == set(value):
        return [pair for k in spec for pair in _leaves_at(value[k], spec[k], what)]
    raise TranspileError(f"pmap: in_axes entry {spec!r} does not match the structure of `{what}`")


def _slice(value, spec, index):
    """Device `index`'s part of `value` under the in_axes entry `spec` (a copy: devices own their slices)."""
    if spec is None:
        return value
    if type(spec) is int:
        return pytree.tree_map(lambda leaf: np.moveaxis(np.asarray(leaf), spec, 0)[index].copy(), value)
    if isinstance(spec, dict):
        return pytree.same_kind(value, {k: _slice(value[k], spec[k], index) for k in value})
    return pytree.same_kind(value, [_slice(v, s, index) for v, s in zip(value, spec)])


def _stacked(results, spec, what):
    """The devices' results as one value: each leaf stacked along out_axes (None: the same on every device)."""
    first = results[0]
    if spec is None:
        for other in results[1:]:
            same = pytree.tree_map(lambda a, b: bool(np.array_equal(a, b)), first, other)
            if not all(pytree.tree_leaves(same)):
                raise TranspileError(f"{what}: out_axes is None for an output that differs per device; give it an axis")
        return first
    if type(spec) is int:
        return pytree.tree_map(lambda *leaves: np.moveaxis(np.stack(leaves), 0, spec), *results)
    if isinstance(spec, dict) and isinstance(first, dict):
        return pytree.same_kind(first, {k: _stacked([r[k] for r in results], spec[k], what) for k in first})
    if isinstance(spec, (tuple, list)) and isinstance(first, (tuple, list)) and len(spec) == len(first):
        return pytree.same_kind(first, [_stacked([r[i] for r in results], s, what) for i, s in enumerate(spec)])
    raise TranspileError(f"{what}: out_axes {spec!r} does not match the structure of the result")


def _on_host(leaf):
    """A CuPy array's host copy (a GPU pmap slices its arguments and stacks its results on the host)."""
    return leaf.get() if on_device(leaf) else leaf


class Parallel(Vectorized):
    """pmap of one function: called, its slices run on device threads; transformed, it is its vmap."""

    kind = "pmap"

    def __init__(self, fun, in_axes, out_axes, axis_name, static_argnums, devices, backend, sig):
        self.static_argnums = tuple(sorted(static_argnums))
        params = list(sig.parameters.values())
        if self.static_argnums:
            if not all(type(i) is int and 0 <= i < len(params) for i in self.static_argnums):
                raise TranspileError(
                    f"static_broadcasted_argnums={static_argnums!r}: give positions of `{fun.__name__}`'s arguments",
                    def_location(fun),
                )
            if type(in_axes) is int or in_axes is None:
                in_axes = tuple(in_axes for _ in params)
            in_axes = tuple(None if i in self.static_argnums else s for i, s in enumerate(in_axes))
        super().__init__(fun, in_axes, out_axes, axis_name, None, sig)
        if backend not in _BACKENDS:
            raise TranspileError(
                f"pmap: backend={backend!r} is not a backend: give None or 'cpu' (CPU devices: threads), or 'gpu'",
                def_location(fun),
            )
        self.on_gpus = backend in ("gpu", "cuda") or any(d.platform == "gpu" for d in devices or ())
        if self.on_gpus:
            try:
                rt_nccl.cupy_with_nccl()
            except rt_nccl.GpuUnavailable as exc:
                raise TranspileError(
                    f"pmap(backend={backend or 'gpu'!r}): {exc}",
                    def_location(fun),
                    "leave backend=None to run on CPU devices (threads)",
                ) from None
        self.devices = None if devices is None else list(devices)
        self.callable = fun  # what each device runs: pmap() gives it the function compiled (_compiled)
        self._across_entries = {}  # a call's pattern -> its entry under a transform, spanning the MPI processes

    def _devices_for(self, size):
        """The devices of a call mapping `size` slices: its own, or the next free ones of every device."""
        name = getattr(self.user_fun, "__name__", "function")
        if self.devices is not None:
            if size != len(self.devices):
                raise DeviceCountError(
                    f"pmap({name}): leading axis size of input to pmapped function must equal the number of local "
                    f"devices passed to pmap. Got axis_size={size}, num_local_devices={len(self.devices)}",
                    caller_location() or def_location(self.user_fun),
                )
            return self.devices
        everything = rt_nccl.local_gpu_devices() if self.on_gpus else rt_devices.local_devices()
        outer = rt_devices.enclosing_size()
        if size * outer > len(everything):
            nested = f" ({outer} for the enclosing pmaps times {size})" if outer > 1 else ""
            raise DeviceCountError(
                f"pmap({name}): compiling computation that requires {size * outer} logical devices{nested}, but only "
                f"{len(everything)} devices are available" + (" in this process" if self._across() else ""),
                caller_location() or def_location(self.user_fun),
                f"map fewer slices, or set ${rt_devices.CPU_DEVICES_ENV_VAR} (CPU devices are threads; "
                f"default: the core count)",
            )
        start = rt_devices.enclosing_offset() * size
        return everything[start : start + size]

    def _across(self):
        """Whether a call spans the MPI job's processes: an outermost pmap on the default devices, after
        tp.distributed.initialize() (each process maps its own slices; the axis has every process's)."""
        return self.devices is None and rt_devices.process_count() > 1 and rt_devices.outermost()

    def entry_function(self, call=None, nones=frozenset()):
        """The vmap this pmap is under a transform; for a pmap spanning the MPI job's processes, the vmap of this
        process's slices whose collectives also exchange with the other processes (runtime/processes.py; not
        specialized for None arguments)."""
        outermost = rt_devices.outermost() and not getattr(_building, "inside", False)
        if self.devices is None and rt_devices.process_count() > 1 and outermost:
            key = repr(call)
            if key not in self._across_entries:
                self._across_entries[key] = self._across_entry(call)
            return self._across_entries[key]
        return super().entry_function(call, nones)

    def _across_entry(self, call):
        """`pmap_across_f(*params)`, written as NumPy source that the transform reads as any callee: each argument
        passed through rt.process_shared (whose adjoint sums an unmapped argument's cotangent over the processes),
        the vmap of this process's slices, its batch a ProcessBatch that its collectives exchange over, and its
        results through rt.process_replicated (an output of out_axes None: the same on every process, its
        cotangent counted once)."""
        axes = self.in_axes if call is None else self.axes_for(*call)
        params = [p.name for p in self.params]
        fresh = Names(params)
        rt_name, vmapped, ans = fresh("rt"), fresh("vmapped"), fresh("ans")
        name = escape.identifier(f"pmap_across_{getattr(self.user_fun, '__name__', 'f').replace('<lambda>', 'lambda')}")
        body = [
            f"{p} = {rt_name}.process_shared({p}, {escape.literal(spec)})"
            for i, (p, spec) in enumerate(zip(params, axes))
            if i not in self.static_argnums
        ]
        body.append(f"{ans} = {vmapped}({', '.join(params)})")
        body.append(f"return {rt_name}.process_replicated({ans}, {escape.literal(self.out_axes)})")
        doc = f"{name}: the pmap of this MPI process's slices, as the vmap whose collectives exchange with the others."
        _building.inside = True
        try:
            gen = self.generated(axes, size_of="process_batch_size_of")
        finally:
            _building.inside = False
        namespace = {rt_name: runtime, vmapped: getattr(gen.module, self.entry_name(gen.program.entry))}
        return define("pmap", name, params, body, doc, namespace)

    def __call__(self, *args, **kwargs):
        name = getattr(self.user_fun, "__name__", "function")
        try:
            bound = self.sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TranspileError(f"bad call of pmap({name}): {exc}", def_location(self.user_fun)) from None
        axes = dict(zip((p.name for p in self.params), self.axes_for(len(args), kwargs)))
        names = list(bound.arguments)
        values = list(bound.arguments.values())
        sizes = {}
        for what, value in zip(names, values):
            spec = axes[what]
            for leaf, axis in _leaves_at(value, spec, what):
                if not -np.ndim(leaf) <= axis < np.ndim(leaf):
                    raise TranspileError(
                        f"pmap({name}): in_axes {axis} is out of range for `{what}`, which has {np.ndim(leaf)} "
                        "dimension(s)",
                        caller_location() or def_location(self.user_fun),
                    )
                sizes.setdefault(np.shape(leaf)[axis], what)
        if len(sizes) != 1 or 0 in sizes:
            problem = (
                "inconsistent sizes for the mapped axis: " + ", ".join(f"`{w}` has {n}" for n, w in sizes.items())
                if len(sizes) > 1
                else f"the mapped axis of `{sizes[0]}` is empty: a pmap needs at least one slice"
                if sizes
                else "pmap needs at least one mapped argument (an in_axes entry that is not None)"
            )
            raise TranspileError(f"pmap({name}): {problem}", caller_location() or def_location(self.user_fun))
        size = next(iter(sizes))
        placed = self._devices_for(size)
        if self.on_gpus:
            values = [pytree.tree_map(_on_host, v) for v in values]
        per_device = [[_slice(v, axes[n], i) for n, v in zip(names, values)] for i in range(size)]

        def run(*items):
            if self.on_gpus:  # onto this thread's GPU
                items = to_device(items, numbers=False)
            call = self.sig.bind_partial()  # as the caller passed them (a *args parameter's tuple spread again)
            call.arguments = dict(zip(names, items))
            return self.callable(*call.args, **call.kwargs)

        timeout = rt_devices.collective_timeout()
        group_type = rt_nccl.NcclGroup if self.on_gpus else rt_devices.Group
        results = rt_devices.run_on_devices(
            run, per_device, self.axis_name, placed, timeout, self._across(), group_type
        )
        if self.on_gpus:  # stacked on the first GPU, through the host
            with rt_nccl.cupy_with_nccl().cuda.Device(placed[0].ordinal):
                results = to_device([pytree.tree_map(_on_host, r) for r in results], numbers=False)
        return _stacked(results, self.out_axes, f"pmap({name})")


@api_boundary
def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(), devices=None, backend=None):
    """`fun` mapped over the leading axis of its arguments, one slice per device, with collectives between the
    devices over `axis_name` (JAX's pmap).  Each device runs `fun` on its own thread, compiled as `jit(fun)`
    compiles it (its collectives call back to Python in numba.objmode; the compiled code releases the GIL), or as
    NumPy code where jit cannot compile it (a JitFallbackWarning says why) and under `tp.disable_jit()`; under a
    transform (grad, vmap, ...) a pmap is the vmap with the same axis name."""
    fun = as_function(fun)
    if is_unbound(fun):
        raise TranspileError(
            f"pmap({fun.__qualname__}) of a method taken from its class would map `self`",
            def_location(user_function(fun)),
            "pmap the object's method instead",
        )
    if isinstance(static_broadcasted_argnums, int):
        static_broadcasted_argnums = (static_broadcasted_argnums,)
    sig = _signature(fun)
    transform = Parallel(
        generated_function(fun), in_axes, out_axes, axis_name, static_broadcasted_argnums, devices, backend, sig
    )
    transform.user_fun = user_function(fun)
    transform.callable = _compiled(fun, transform.static_argnums, transform.on_gpus)
    return wrapped(fun, transform)


_COMPILED_LIBRARIES = ("numpy", "scipy", "builtins")  # their functions (pmap(np.mean)) run as they are


def _compiled(fun, static_argnums, on_gpus):
    """What each device runs: `fun` compiled as jit compiles it, falling back to its NumPy code with a
    JitFallbackWarning where jit cannot compile it.  As it is: a jitted function, a NumPy function, and an inner
    pmap (whose devices run its function compiled)."""
    module = getattr(fun, "__module__", None) or type(fun).__module__  # a ufunc has None
    if getattr(fun, "__transpile_jit__", None) is not None or module.partition(".")[0] in _COMPILED_LIBRARIES:
        return fun
    if isinstance(getattr(fun, "__transpile__", None), Parallel):
        return fun
    backend = "cupy" if on_gpus else "numba"
    try:
        return jit(fun, static_argnums=static_argnums, fallback="numpy", verbose=False, backend=backend)
    except TranspileError as exc:
        name = getattr(fun, "__name__", "function")
        message = f"pmap({name}) runs the NumPy code instead of compiled code: {exc.message}"
        warnings.warn(message, JitFallbackWarning, stacklevel=4)  # at the caller of pmap()
        return fun
