"""Writes through views of local arrays: NumPy's values, and gradients, tangents and batches that agree with them.

Each case writes through a view (or into the base of a live view); its value is checked against NumPy running the
function itself, its gradient and tangent against float64 central differences, and vmap against stacking.
"""

import inspect
import re

import numpy as np
import pytest
from support import assert_tree_close, load_module, numeric_grad

import runtime as rt
import transpile as tp
from transpile import TranspileError
from transpile.primitives import registry

rng = np.random.default_rng(12)
X = rng.normal(size=5) + 0.5
BATCH = rng.normal(size=(3, 5))


# ---------------------------------------------------------------- views that writes go through
def slice_augmented(x):
    y = x.copy()
    v = y[1:]
    v += 1.0
    return np.sum(y * x)


def row_written(x):
    out = np.zeros((2, 5))
    row = out[0]
    row[:] = x
    return np.sum(out * out)


def row_augmented(x):
    y = np.outer(x, x)
    row = y[1]
    row *= 2.0
    row[3] = x[0] ** 3
    return np.sum(y * y)


def column_and_step(x):
    y = np.outer(x, x[:3])
    col = y[:, 2]
    col += x
    every_other = y[::2]
    every_other[0] = np.sin(x[:3])
    every_other *= x[1]
    return np.sum(np.tanh(y))


def ellipsis_and_newaxis(x):
    y = np.outer(x, x)
    last = y[..., 0]
    last[1:] = x[:4] * 3.0
    lifted = y[None]
    lifted[0, 2] -= x
    return np.sum(y**2)


def transposed(x):
    y = np.outer(x, x[:3])
    t = y.T
    t *= x
    t[1] = np.cos(x)
    flipped = np.flip(y, 0)
    flipped[0] += x[:3]
    swapped = np.transpose(y)
    swapped[2, 1:] = x[1:] ** 2
    return np.sum(y * np.sin(y))


def view_of_view(x):
    y = x * 2.0
    v = y[1:]
    w = v[::2]
    w += x[:2]
    w[1] = x[4] ** 2
    return np.sum(y * x) + np.sum(v**2)


def base_written_view_read(x):
    y = x * 1.0
    v = y[1:]
    y[2] = 5.0 * x[0]
    y *= 0.5
    return np.sum(v * x[1:])


def read_then_written_through_another_name(x):
    y = x * 2.0
    a = np.sum(np.sin(y))  # the adjoint sweep reads y as it was here
    z = y
    z[0] = 7.0
    ones = np.ones(5)
    v = ones[1:]
    b = np.sum(v * x[1:])  # ... and v as it was here
    ones[1] = 7.0
    return a + b + np.sum(z[1:])


def number_then_write(x):
    y = x + 1.0
    s = y[1]  # a number: the write below does not change it
    y[1] = 5.0 * x[0]
    return s * x[2] + np.sum(y * y)


def number_named_twice(x):
    s = np.sum(x * x)
    best = s
    s += 1.0  # a NumPy number: s is bound anew, best keeps the old value
    return best * s


def array_named_twice(x):
    y = x * 2.0
    z = y
    y += 1.0  # one array, two names
    z[0] = x[1] ** 2
    return np.sum(y * z)


def zero_d_array_named_twice(x):
    total = np.zeros(())
    other = total
    total += x[2]  # a 0-d array changes in place, unlike a number
    return other * x[0]


def row_then_write(x):
    y = np.outer(x, x)
    r = y[1]  # a view: the write below changes it
    y[1, 2] = x[0]
    r2 = y[3]
    r2 += x
    return np.sum(r * x) + np.sum(y)


def number_augmented(x):
    y = x * 3.0
    s = y[0]
    s += x[1]  # a number: NumPy binds s to a new number, y is unchanged
    return s * np.sum(y)


def rows_in_a_loop(x):
    out = np.zeros((5, 5))
    for i in range(5):
        row = out[i]
        row[:] = x * i
        row[i] += x[i] ** 2
        if i > 0:
            above = out[i - 1]
            row -= 0.5 * above
    return np.sum(np.sin(out))


def iterate_rows(x):
    grid = np.outer(x, x)
    for row in grid:
        row += np.tanh(row)
    return np.sum(grid * x)


def stencil(x):
    u = np.outer(x, np.ones(3))
    for _ in range(3):
        inner = u[1:-1]
        inner += 0.1 * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u**2)


def view_in_a_branch(x):
    y = x.copy()
    if x[0] > 0:
        v = y[:2]
        v *= 3.0
    else:
        v = y[3:]
        v[0] = 1.0
    return np.sum(y * x) + np.sum(v)


def rebinding_is_a_new_array(x):
    y = x.copy()
    v = y[1:]
    v = v + 1.0  # a new array: y is unchanged
    v[0] = 7.0
    return np.sum(y * x) + np.sum(v * x[1:])


def advanced_index_copies(x):
    y = x * 2.0
    picked = y[[0, 2, 4]]
    picked += 1.0
    masked = y[np.abs(x) >= 0.0]
    masked *= 0.0
    return np.sum(y * x) + np.sum(picked**2) + np.sum(masked)


def chained_assignment(x):
    a = b = np.zeros(5)
    a += x  # one array, two names
    b[0] = x[1] ** 2
    return np.sum(a * x) + np.sum(b)


def swapped_then_written(x):
    y = x * 2.0
    z = x * 3.0
    y, z = z, y
    w = y
    y[0] = 7.0 * x[2]
    return np.sum(w * x) + np.sum(z)


def copied_in_then_source_written(x):
    a = np.zeros(5)
    b = x * 2.0
    a[...] = b  # copies b's values
    b[0] = 9.0
    return np.sum(a * x) + np.sum(b)


def overlapping_slices(x):
    y = x * 1.0
    y[1:] += y[:-1]  # NumPy reads the right-hand side before it writes
    return np.sum(y * x)


def zero_d_arrays_named_twice(x):
    t = np.array(0.0)
    u = t
    t += x[0] * x[1]
    f = np.full((), 2.0)
    g = f
    f *= x[3]
    return u * x[2] + g


def rows_of_rows(x):
    out = []
    for i in range(3):
        row = []
        for j in range(2):
            row.append(x[i] * (j + 1.0))
        out.append(row)
    return out[1][0] * out[2][1] + len(out)


def einsum_of_two_then_written(x):
    w = np.outer(x, x)
    h = np.einsum("ij,j->i", w, x)
    h += 1.0
    return np.sum(h * x) + np.sum(w)


def helper_returning_a_new_array(a):
    return a * 2.0


def calls_helper(x):
    y = x.copy()
    v = y[:3]
    w = helper_returning_a_new_array(v)
    w += 1.0
    v[0] = 4.0
    return np.sum(y * x) + np.sum(w)


CASES = [
    slice_augmented,
    row_written,
    row_augmented,
    column_and_step,
    ellipsis_and_newaxis,
    transposed,
    view_of_view,
    base_written_view_read,
    read_then_written_through_another_name,
    number_then_write,
    row_then_write,
    number_augmented,
    number_named_twice,
    array_named_twice,
    rows_in_a_loop,
    iterate_rows,
    stencil,
    view_in_a_branch,
    rebinding_is_a_new_array,
    advanced_index_copies,
    calls_helper,
    zero_d_array_named_twice,
    chained_assignment,
    swapped_then_written,
    copied_in_then_source_written,
    overlapping_slices,
    zero_d_arrays_named_twice,
    rows_of_rows,
    einsum_of_two_then_written,
]


@pytest.mark.parametrize("f", CASES)
def test_value_is_numpys(f):
    x = X.copy()
    value, _ = tp.value_and_grad(f)(x)
    np.testing.assert_allclose(value, f(X.copy()), rtol=1e-12)
    np.testing.assert_array_equal(x, X)  # the writes went into the function's own arrays


@pytest.mark.parametrize("f", CASES)
def test_gradient_against_central_differences(f):
    assert_tree_close(tp.grad(f)(X), numeric_grad(f, [X]), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("f", CASES)
def test_tangent_against_central_differences(f):
    direction = np.linspace(-1.0, 1.0, 5)
    value, tangent = tp.jvp(f, (X,), (direction,))
    eps = 1e-6
    expected = (f(X + eps * direction) - f(X - eps * direction)) / (2 * eps)
    np.testing.assert_allclose(value, f(X.copy()), rtol=1e-12)
    np.testing.assert_allclose(tangent, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(direction, np.linspace(-1.0, 1.0, 5))  # nor into the tangent given


@pytest.mark.parametrize("f", CASES)
def test_vmap_against_stacking(f):
    batch = BATCH.copy()
    got = tp.vmap(f)(batch)
    np.testing.assert_allclose(got, np.stack([f(row.copy()) for row in BATCH]), rtol=1e-12)
    np.testing.assert_array_equal(batch, BATCH)


# ---------------------------------------------------------------- every view in the registry, written through
VIEW_EXAMPLES = [
    example
    for prim in registry.all_primitives()
    if prim.view == "view"
    for example in prim.examples
    if set(example.shapes) == {"a"} and example.shapes["a"] != ()
]


@pytest.mark.parametrize("example", VIEW_EXAMPLES, ids=[e.expr for e in VIEW_EXAMPLES])
def test_writing_through_each_view_of_the_registry(example, tmp_path):
    expr = re.sub(r"\ba\b", "b", example.expr)
    module = load_module(
        tmp_path,
        "import numpy as np\n\n\n"
        "def written(a):\n"
        "    b = a * 1.0\n"
        f"    v = {expr}\n"
        "    v *= 3.0\n"
        "    return np.sum(np.sin(b) * np.arange(1.0, b.size + 1.0).reshape(b.shape))\n",
    )
    a = np.random.default_rng(3).normal(size=example.shapes["a"])
    value, grad = tp.value_and_grad(module.written)(a)
    np.testing.assert_allclose(value, module.written(a.copy()), rtol=1e-12)
    np.testing.assert_allclose(grad, numeric_grad(module.written, [a]), rtol=1e-6, atol=1e-7)


def view_returned(x):
    y = np.outer(x, x[:2])
    col = y[:, 1]
    y[0] = np.exp(x[:2])
    col *= x
    return col


def test_a_returned_view_through_jacobians_and_vjp():
    expected = view_returned(X.copy())
    jac = tp.jacrev(view_returned)(X)
    np.testing.assert_allclose(tp.jacfwd(view_returned)(X), jac, rtol=1e-10, atol=1e-12)
    numeric = np.stack([numeric_grad(lambda x, k=k: view_returned(x)[k], [X]) for k in range(5)])
    np.testing.assert_allclose(jac, numeric, rtol=1e-6, atol=1e-6)
    out, pullback = tp.vjp(view_returned, X)
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    cotangent = np.arange(5.0)
    np.testing.assert_allclose(pullback(cotangent)[0], cotangent @ jac, rtol=1e-10)


def test_hessian_of_writes_through_views():
    hess = tp.hessian(row_augmented)(X)
    numeric = np.stack([numeric_grad(lambda x, k=k: tp.grad(row_augmented)(x)[k], [X]) for k in range(5)])
    np.testing.assert_allclose(hess, numeric, rtol=1e-5, atol=1e-5)


def test_jit_runs_the_rewritten_writes():
    np.testing.assert_allclose(tp.jit(rows_in_a_loop)(X), rows_in_a_loop(X.copy()), rtol=1e-12)
    np.testing.assert_allclose(
        tp.jit(tp.grad(slice_augmented))(X), numeric_grad(slice_augmented, [X]), rtol=1e-6, atol=1e-6
    )
    stacked = np.stack([number_then_write(row.copy()) for row in BATCH])
    np.testing.assert_allclose(tp.jit(tp.vmap(number_then_write))(BATCH), stacked, rtol=1e-12)
    with pytest.raises(rt.BatchError, match="`s` may be a 0-d array: under vmap"):  # Numba's test, as NumPy's
        tp.jit(tp.vmap(copy_of_a_zero_d_array_named_twice))(BATCH)


def test_the_normal_form_writes_into_the_base():
    text = tp.frontend.normal_form_source(row_augmented)
    assert "row[" not in text.split("row = y[1]", 1)[1]
    assert "y[1, 3] = " in text


# ---------------------------------------------------------------- refused: located errors
def view_chosen_by_a_branch(x):
    y = x.copy()
    if x[0] > 0:
        v = y[:2]
    else:
        v = y[2:4]
    v += 1.0
    return np.sum(y * x)


def base_written_under_a_branch_view(x):
    y = x.copy()
    v = y[:2] if x[0] > 0 else y[1:3]
    y[1] = 0.0
    return np.sum(v * x[:2])


def view_of_an_argument(x):
    v = x[1:]
    v[0] = 1.0
    return np.sum(v)


def slice_of_an_argument_seen_later(x):
    tail = x[1:]
    tail += 1.0
    return np.sum(x)


def view_stored_in_a_list(x):
    y = x.copy()
    parts = [y[:2], y[2:]]
    y[0] = 3.0
    return np.sum(parts[0] * x[:2])


def takes_a_view(a):
    a[0] = 2.0
    return a


def view_passed_to_a_writer(x):
    y = x.copy()
    z = takes_a_view(y[1:])
    return np.sum(y) + np.sum(z)


def first_row(a):
    return a[0]


def view_returned_by_a_helper(x):
    y = np.outer(x, x)
    r = first_row(y)
    r += 1.0
    return np.sum(y)


def adds_in_place(a):
    a += 1.0
    return np.sum(a)


def caller_sees_a_write_in_a_helper(x):
    y = x.copy()
    s = adds_in_place(y)
    return s + np.sum(y * x)


def reshaped_then_written(x):
    y = np.outer(x, x)
    flat = y.reshape(-1)
    flat[0] = 1.0
    return np.sum(y * y)


def asarray_then_written(x):
    y = x.copy()
    z = np.asarray(y)
    z[0] = 1.0
    return np.sum(y * x)


def read_only_view_written(x):
    y = x.copy()
    b = np.broadcast_to(y, (2, 5))
    b[0, 0] = 1.0
    return np.sum(y)


def unknown_index(x, k):
    y = x.copy()
    v = y[k]
    v += 1.0
    return np.sum(y * x)


def index_rebound(x):
    y = np.outer(x, x)
    i = 1
    row = y[i]
    i = 2
    row[0] = 5.0
    return np.sum(y * x)


def view_made_in_a_loop_of_a_rebound_array(x):
    y = x.copy()
    total = 0.0
    for _ in range(3):
        v = y[1:]
        old = y
        y = y * 2.0
        v += 1.0
        total = total + np.sum(old * x)
    return total


TABLE = np.arange(6.0)


def view_of_a_module_array(x):
    row = TABLE[1:3]
    row[0] = x[0]
    return np.sum(TABLE * x[0])


def adds_into_first(a, b):
    a += 1.0
    return np.sum(a * b)


def same_array_twice_to_a_writer(x):
    y = x.copy()
    s = adds_into_first(y, y)
    return s + np.sum(y)


def real_part(x):
    y = x.copy()
    r = y.real
    r[0] = 5.0
    return np.sum(y)


def view_method(x):
    y = x.copy()
    v = y.view()
    return np.sum(v)


def copied_into_by_numpy(x):
    y = np.zeros(5)
    np.copyto(y, x)
    return np.sum(y * x)


def ufunc_out(x):
    c = np.zeros(5)
    d = np.add(x, x, out=c)
    return np.sum(c * x) + np.sum(d)


def reduction_out(x):
    y = np.outer(x, x)
    c = np.zeros(5)
    s = np.sum(y, axis=0, out=c)
    return np.sum(c * x) + np.sum(s)


def diagonal_filled(x):
    a = np.outer(x, x)
    np.fill_diagonal(a, 0.0)
    return np.sum(a)


def lists_concatenated(x):
    y = x * 1.0
    lst = [y] + [x]
    y[0] = 5.0
    return np.sum(lst[0] * x)


def list_repeated(x):
    y = x * 1.0
    lst = [y] * 2
    y *= 2.0
    return np.sum(lst[1] * x)


def tuples_concatenated(x):
    y = x * 1.0
    t = (y,) + (x,)
    y *= 2.0
    return np.sum(t[0] * x)


def stored_into_a_list_of_none(x):
    y = x * 1.0
    lst = [None] * 2
    lst[0] = y
    y[0] = 5.0
    return np.sum(lst[0] * x)


def make_two(n):
    return [None] * n


def stored_into_a_helpers_list(x):
    y = x * 1.0
    lst = make_two(2)
    lst[1] = y
    y *= 3.0
    return np.sum(lst[1] * x)


def item_written_through_a_list(x):
    lst = [x * 1.0] * 2
    a = lst[0]
    a[0] = 5.0
    return np.sum(lst[1] * x)


def list_appended_under_two_names(x):
    lst = [x * 1.0]
    other = lst
    lst.append(x * 2.0)
    return np.sum(other[-1] * x)


def list_appended_inside_another(x):
    inner = [x * 1.0]
    outer = [inner]
    inner.append(x * 5.0)
    return np.sum(outer[0][-1] * x)


def dict_item_set_under_two_names(x):
    d = {"a": x * 1.0}
    other = d
    d["a"] = x * 3.0
    return np.sum(other["a"] * x)


def diagonal_seen_after_a_write(x):
    y = np.outer(x, x)
    d = np.diag(y)  # a read-only view of a 2-D array's diagonal
    y[0, 0] = 5.0
    return np.sum(d * x)


def einsum_diagonal_written(x):
    y = np.outer(x, x)
    d = np.einsum("ii->i", y)  # a view of y
    d[0] = 5.0
    return np.sum(y * x)


def larger_of_two_written(x):
    a = np.zeros(())
    b = np.ones(())
    m = max(a, b)  # b itself
    m += x[0]
    return b * x[1]


def at_least_1d_written(x):
    y = x * 1.0
    z = np.atleast_1d(y)  # y itself
    z[0] = 5.0
    return np.sum(y * x)


def written_through_a_chained_index(x):
    a = x * 1.0
    a[1:][0] = 5.0
    return np.sum(a * x)


def written_through_a_transpose(x):
    a = np.outer(x, x[:3])
    a.T[0] = 1.0
    return np.sum(a * a)


def filled_by_a_method(x):
    a = x * 1.0
    a.fill(0.5)
    return np.sum(a * x)


REFUSED = [
    (view_chosen_by_a_branch, "v += 1.0", "may be a view of different arrays"),
    (base_written_under_a_branch_view, "y[1] = 0.0", "may be a view of different arrays"),
    (view_of_an_argument, "v[0] = 1.0", "view of the argument `x`"),
    (slice_of_an_argument_seen_later, "tail += 1.0", "view of the argument `x`"),
    (view_stored_in_a_list, "y[0] = 3.0", "held in a tuple, list or dict"),
    (view_passed_to_a_writer, "a[0] = 2.0", "argument `a`"),
    (view_returned_by_a_helper, "r += 1.0", "returns its argument or a view of it"),
    (caller_sees_a_write_in_a_helper, "s = adds_in_place(y)", "writes into its argument 1 in place"),
    (reshaped_then_written, "flat[0] = 1.0", "returns its argument, a view of it or a copy"),
    (asarray_then_written, "z[0] = 1.0", "returns its argument, a view of it or a copy"),
    (read_only_view_written, "b[0, 0] = 1.0", "read-only view"),
    (unknown_index, "v += 1.0", "its index may be an integer"),
    (index_rebound, "row[0] = 5.0", "which its index reads, is bound again"),
    (view_made_in_a_loop_of_a_rebound_array, "v += 1.0", "may be a view of different arrays"),
    (view_of_a_module_array, "row[0] = x[0]", "a value of the function's module"),
    (same_array_twice_to_a_writer, "s = adds_into_first(y, y)", "passes the same array"),
    (real_part, "r[0] = 5.0", "returns its argument, a view of it or a copy"),
    (view_method, "y.view", "method `.view()` is not supported"),
    (copied_into_by_numpy, "np.copyto(y, x)", "`np.copyto` writes into its argument `y` in place"),
    (ufunc_out, "np.add(x, x, out=c)", "`np.add` writes into its argument `c` in place"),
    (reduction_out, "np.sum(y, axis=0, out=c)", "`np.sum` writes into its argument `c` in place"),
    (diagonal_filled, "np.fill_diagonal(a, 0.0)", "`np.fill_diagonal` writes into its argument `a` in place"),
    (lists_concatenated, "y[0] = 5.0", "held in a tuple, list or dict"),
    (list_repeated, "y *= 2.0", "held in a tuple, list or dict"),
    (tuples_concatenated, "y *= 2.0", "held in a tuple, list or dict"),
    (stored_into_a_list_of_none, "y[0] = 5.0", "held in a tuple, list or dict"),
    (stored_into_a_helpers_list, "y *= 3.0", "held in a tuple, list or dict"),
    (item_written_through_a_list, "a[0] = 5.0", "held in a tuple, list or dict"),
    (list_appended_under_two_names, "lst.append", "`lst` is changed in place, and `other` refers to it too"),
    (list_appended_inside_another, "inner.append", "`inner` is changed in place, and `outer` refers to it too"),
    (dict_item_set_under_two_names, 'd["a"] = x * 3.0', "`d` is changed in place, and `other` refers to it too"),
    (diagonal_seen_after_a_write, "y[0, 0] = 5.0", "`np.diag` returns its argument, a view of it or a copy"),
    (einsum_diagonal_written, "d[0] = 5.0", "`np.einsum` with one operand returns a view of it"),
    (larger_of_two_written, "m += x[0]", "`max` returns one of its arguments itself"),
    (at_least_1d_written, "z[0] = 5.0", "`np.atleast_1d` returns its argument, a view of it or a copy"),
    (written_through_a_chained_index, "a[1:][0] = 5.0", "in-place writes are only supported into a local array"),
    (written_through_a_transpose, "a.T[0] = 1.0", "in-place writes are only supported into a local array"),
    (filled_by_a_method, "a.fill", "method `.fill()` is not supported"),
]


@pytest.mark.parametrize("f, line, message", REFUSED, ids=[f.__name__ for f, _, _ in REFUSED])
def test_refused_with_a_located_error(f, line, message):
    args = (X, 1) if f is unknown_index else (X,)
    for transform in (tp.grad, tp.vmap):
        with pytest.raises(TranspileError) as info:
            transform(f)(*args)
        err = info.value
        source = inspect.getsource(takes_a_view if f is view_passed_to_a_writer else f)
        lines, start = inspect.getsourcelines(takes_a_view if f is view_passed_to_a_writer else f)
        offset = next(i for i, text in enumerate(lines) if line in text)
        assert err.location.filename == __file__
        assert err.location.lineno == start + offset, str(err)
        assert err.location.col == lines[offset].index(line.split()[0] if " " in line else line), str(err)
        assert message in err.message, err.message
        assert err.hint
        assert line in source


def copy_of_a_zero_d_array_named_twice(x):
    t = np.zeros(())
    s = t.copy()  # a 0-d array here; x.copy() of a number would be a number
    u = s
    s += x[0]
    return u * x[2] + t


def test_a_value_that_may_be_a_zero_d_array_or_a_number_is_refused_under_vmap_only():
    f = copy_of_a_zero_d_array_named_twice
    np.testing.assert_allclose(tp.value_and_grad(f)(X)[0], f(X.copy()), rtol=1e-12)
    assert_tree_close(tp.grad(f)(X), numeric_grad(f, [X]), rtol=1e-6, atol=1e-6)
    lines, start = inspect.getsourcelines(f)
    line = start + next(i for i, text in enumerate(lines) if "s += x[0]" in text)
    with pytest.raises(TranspileError, match=rf"test_views.py:{line}: `s` may be a 0-d array: under vmap"):
        tp.vmap(f)(BATCH)


def argument_named_twice(x, a):
    b = a
    a += 1.0  # binds a anew if it is a number; NumPy would change the caller's array if it is one
    return np.sum(x) * np.sum(a * b)


def test_augmented_assignment_to_an_argument_another_name_sees():
    assert_tree_close(tp.grad(argument_named_twice)(X, 3.0), numeric_grad(argument_named_twice, [X, 3.0]))
    lines, start = inspect.getsourcelines(argument_named_twice)
    with pytest.raises(ValueError, match=f"test_views.py:{start + 2}: `a` may be a view of the argument `a`"):
        tp.grad(argument_named_twice)(X, np.ones(3))
