"""The Numba backend's table: the primitives called through a `jt.` lowering, and their parts in fused loop nests.

A lowering is a call template naming the primitive's parameters, options and flags by keyword
("jt.max(a, axis=axis, keepdims=keepdims)": `np.max(a, axis=1)` -> `jt.max(a, axis=1, keepdims=False)`), so that
NumPy's semantics survive what Numba lacks; a parameter it leaves out must keep its default (else the call is
refused at its line).  Grouped as the primitive files are (transpile/primitives/*.py).
"""

from __future__ import annotations

from ..tables import register_fusion, register_handover, register_lowering, register_operator_fusion


def lower(name: str, template: str) -> None:
    register_lowering(name, template, backend="numba")


def fuse(name: str, role: str) -> None:
    register_fusion(name, role, backend="numba")


# operators.py: an elementwise operator is fused as its scalar form
register_operator_fusion("map", backend="numba")
lower("matmul", "jt.matmul(x, y)")
fuse("invert", "")  # ~True is -2 for a Python bool, False for a NumPy one

# helpers.py: a gradient an entry returns is copied only where it shares memory (runtime/numba/handover.py)
register_handover("rt.materialize", "jt.materialize_uncopied(v, like)", backend="numba")

# containers.py
lower("make_dict", "jt.make_record(keys, items)")

# elementwise.py: these run NumPy's own SIMD inner loop (runtime/numba/numpy_loops.py), not a libm call per element
NUMPY_LOOPS = frozenset(
    ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan"]
    + ["arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "cbrt"]
)
for _name in sorted(NUMPY_LOOPS):
    lower(_name, f"jt.{_name}(x)")
# these are fused into loop nests as their scalar form (fusion.py)
SCALAR_FORMS = frozenset(["sqrt", "square", "abs", "negative"])
for _name in sorted(SCALAR_FORMS):
    fuse(_name, "map")
lower("heaviside", "jt.heaviside(x1, x2)")
lower("fix", "jt.fix(x)")  # Numba has no np.fix

# reductions.py
lower("sum", "jt.sum(a, axis=axis, keepdims=keepdims)")
fuse("sum", "sum")
lower("mean", "jt.mean(a, axis=axis, keepdims=keepdims)")
lower("prod", "jt.prod(a, axis=axis, keepdims=keepdims)")
lower("nansum", "jt.nansum(a, axis=axis, keepdims=keepdims)")
lower("nanmean", "jt.nanmean(a, axis=axis, keepdims=keepdims)")
lower("median", "jt.median(a, axis=axis, keepdims=keepdims)")
lower("nanmedian", "jt.nanmedian(a, axis=axis, keepdims=keepdims)")
lower("nanmax", "jt.nanmax(a, axis=axis, keepdims=keepdims)")
lower("nanmin", "jt.nanmin(a, axis=axis, keepdims=keepdims)")
lower("quantile", "jt.quantile(a, q, axis=axis, method=method, keepdims=keepdims)")
lower("percentile", "jt.percentile(a, q, axis=axis, method=method, keepdims=keepdims)")
lower("nanquantile", "jt.nanquantile(a, q, axis=axis, method=method, keepdims=keepdims)")
lower("nanpercentile", "jt.nanpercentile(a, q, axis=axis, method=method, keepdims=keepdims)")
lower("max", "jt.max(a, axis=axis, keepdims=keepdims)")
lower("min", "jt.min(a, axis=axis, keepdims=keepdims)")
lower("var", "jt.var(a, axis=axis, ddof=ddof, keepdims=keepdims)")
lower("std", "jt.std(a, axis=axis, ddof=ddof, keepdims=keepdims)")
lower("nanvar", "jt.nanvar(a, axis=axis, ddof=ddof, keepdims=keepdims)")
lower("nanstd", "jt.nanstd(a, axis=axis, ddof=ddof, keepdims=keepdims)")
lower("nanprod", "jt.nanprod(a, axis=axis, keepdims=keepdims)")  # Numba's takes no axis
lower("count_nonzero", "jt.count_nonzero(a, axis=axis, keepdims=keepdims)")  # Numba's: no keepdims, no tuple axis
lower("cumsum", "jt.cumsum(a, axis)")
lower("cumprod", "jt.cumprod(a, axis)")
lower("cumulative_sum", "jt.cumulative_sum(x, axis, include_initial)")
lower("cumulative_prod", "jt.cumulative_prod(x, axis, include_initial)")
lower("nancumsum", "jt.nancumsum(a, axis)")  # Numba's takes no axis
lower("nancumprod", "jt.nancumprod(a, axis)")  # Numba's takes no axis

# products.py
lower("dot", "jt.dot(a, b)")
lower("np_matmul", "jt.matmul(x, y)")
lower("inner", "jt.inner(a, b)")
lower("tensordot", "jt.tensordot(a, b, axes)")
lower("vdot", "jt.vdot(a, b)")
lower("kron", "jt.kron(a, b)")
lower("einsum", "jt.einsum(optimize, operands)")
lower("linalg.norm", "jt.norm(x, ord=ord, axis=axis, keepdims=keepdims)")
lower("linalg.inv", "jt.inv(a)")
lower("linalg.solve", "jt.solve(a, b)")
lower("linalg.det", "jt.det(a)")
lower("linalg.slogdet", "jt.slogdet(a)")
lower("linalg.cholesky", "jt.cholesky(a)")
lower("trace", "jt.trace(a, offset, axis1, axis2)")
lower("diagonal", "jt.diagonal(a, offset, axis1, axis2)")

# shape.py
lower("reshape", "jt.reshape(a, shape)")
lower("ravel", "jt.ravel(a)")
lower("flatten", "jt.flatten(a)")
lower("copy_method", "jt.copy(x)")
lower("astype", "jt.astype(x, dtype)")
lower("expand_dims", "jt.expand_dims(a, axis)")
lower("squeeze", "jt.squeeze(a, axis)")
lower("concatenate", "jt.concatenate(arrays, axis)")
lower("stack", "jt.stack(arrays, axis)")
lower("hstack", "jt.hstack(tup)")
lower("vstack", "jt.vstack(tup)")
lower("flip", "jt.flip(m, axis)")
lower("rot90", "jt.rot90(m, k, axes)")
lower("tile", "jt.tile(A, reps)")
lower("repeat", "jt.repeat(a, repeats, axis)")

# indexing.py
lower("getitem", "jt.getitem(x, idx)")
lower("setitem", "jt.setitem(x, idx, v)")
lower("ix_", "jt.ix_(args)")  # Numba has no np.ix_

# constructors.py
lower("full", "jt.full(shape, fill_value, dtype)")  # Numba's fills with a number only
lower("full_like", "jt.full_like(a, fill_value, dtype, shape)")  # Numba's fills with a number only, and takes no shape=
lower(
    "linspace", "jt.linspace(start, stop, num, endpoint=endpoint, retstep=retstep, dtype=dtype, axis=axis)"
)  # Numba's: numbers, no keywords
lower(
    "logspace", "jt.logspace(start, stop, num, endpoint=endpoint, base=base, dtype=dtype, axis=axis)"
)  # Numba's: no endpoint, base or axis
lower("geomspace", "jt.geomspace(start, stop, num, endpoint=endpoint, dtype=dtype, axis=axis)")
lower("argmax", "jt.argmax(a, axis=axis, keepdims=keepdims)")
lower("argmin", "jt.argmin(a, axis=axis, keepdims=keepdims)")
lower("nanargmax", "jt.nanargmax(a, axis=axis, keepdims=keepdims)")  # Numba's takes no keepdims
lower("nanargmin", "jt.nanargmin(a, axis=axis, keepdims=keepdims)")
lower("argsort", "jt.argsort(a, axis)")
lower("argpartition", "jt.argpartition(a, kth, axis)")  # Numba's takes no axis=

# binning.py (np.digitize and np.bincount: Numba's own)
lower("searchsorted", "jt.searchsorted(a, v, side, sorter)")  # Numba's: no sorter, and side a constant

# copies.py
for _name in ("atleast_1d", "atleast_2d", "atleast_3d"):
    lower(_name, f"jt.{_name}(ary)")  # Numba's takes arrays only
    lower(f"{_name}_arrays", f"jt.{_name}(arys)")  # Numba's takes one array
lower("meshgrid", "jt.meshgrid(xi, copy, sparse, indexing)")  # Numba has no np.meshgrid

# differences.py
lower("gradient", "jt.gradient(f, axis, edge_order, spacing)")  # Numba has no np.gradient; the spacings go last

# fft.py
for _name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
    lower(_name, f"jt.{_name}(a, n, axis, norm)")
for _name in ("fftn", "ifftn", "fft2", "ifft2", "rfftn", "rfft2", "irfftn", "irfft2"):
    lower(_name, f"jt.{_name}(a, s, axes, norm)")
lower("fftfreq", "jt.fftfreq(n, d)")
lower("rfftfreq", "jt.rfftfreq(n, d)")
lower("fftshift", "jt.fftshift(x, axes)")
lower("ifftshift", "jt.ifftshift(x, axes)")

# rearranging.py
lower("sort", "jt.sort(a, axis)")
lower("partition", "jt.partition(a, kth, axis)")  # Numba's takes no axis=
lower("take", "jt.take(a, indices, axis, mode)")
lower("take_along_axis", "jt.take_along_axis(arr, indices, axis)")
lower("roll", "jt.roll(a, shift, axis)")
lower("rollaxis", "jt.rollaxis(a, axis, start)")
lower("diff", "jt.diff(a, n, axis, prepend, append)")
lower("ediff1d", "jt.ediff1d(ary, to_end, to_begin)")  # Numba's casts no to_end nor to_begin
lower("trapezoid", "jt.trapezoid(y, x, dx, axis)")
lower("pad", "jt.pad_modes(array, pad_width, mode, constant_values, reflect_type, stat_length, end_values)")
# Numba's own takes a tuple (np.dstack: of arrays of as many dimensions)
lower("column_stack", "jt.column_stack(tup)")
lower("dstack", "jt.dstack(tup)")
lower("select", "jt.select(condlist, choicelist, default)")

# signal.py
lower("convolve", "jt.convolve(a, v, mode)")  # Numba's takes no mode
lower("correlate", "jt.correlate(a, v, mode)")  # Numba's takes no mode
lower("cross", "jt.cross(a, b, axisa, axisb, axisc, axis)")  # Numba's takes no axes
lower("interp", "jt.interp_with_period(x, xp, fp, left, right, period)")  # Numba's: no left, right or period

# polynomials.py
lower("polyval", "jt.polyval(p, x)")  # Numba has none

# helpers.py: the adjoint helpers that sum a value down to an operand's shape, or spread a reduced one back
fuse("rt.unbroadcast", "unbroadcast")
fuse("rt.expand_reduced", "expand")

# builtins_math.py
lower("py_pow", "jt.py_pow(x, y)")
lower("np_array", "jt.array(object, dtype)")
for _name in ("float64", "float32", "float16"):
    lower(f"np.{_name}", f"jt.{_name}(x)")

# linalg.py
lower("linalg.pinv", "jt.pinv(a, rcond=rcond, hermitian=hermitian, rtol=rtol)")
lower("linalg.eigvalsh", "jt.eigvalsh(a, UPLO)")
lower("linalg.matrix_power", "jt.matrix_power(a, n)")
lower("linalg.cond", "jt.cond(x, p)")

# edits.py (np.insert, np.extract, np.resize and np.vander: Numba's own; its np.insert takes no axis= nor a slice)
lower("delete", "jt.delete(arr, obj, axis)")  # Numba's takes no axis= nor a boolean obj
lower("compress", "jt.compress(condition, a, axis)")  # Numba has no np.compress
lower("unwrap", "jt.unwrap(p, discont, axis, period)")  # Numba's takes no axis but the last
lower("choose", "jt.choose(a, choices, mode)")  # Numba has no np.choose
