"""np.linalg's array-API names, each rewritten to the NumPy function whose rules it shares."""

import gast
import numpy as np

from .registry import Example, alias, by_name

# Each name below takes positional-only operands and keyword-only options (as NumPy's signature says); its call is
# rewritten, before binding, to a call of an entry with rules (np.linalg.trace(x) is np.trace(x, 0, -2, -1)), so
# that it has that entry's derivatives, batching and jit lowering.  The coverage table shows the target's rules.


def _const(value):
    return gast.Constant(value=value, kind=None)


def _read(args, keywords, error, name, operands, options):
    """The operands (a list of AST) and the options given ({name: AST}) of a call of np.linalg.<name>."""
    if len(args) != operands:
        node = args[operands] if len(args) > operands else (args or [k.value for k in keywords] or [None])[-1]
        error(
            node,
            f"np.linalg.{name} takes {operands} positional argument(s), got {len(args)}",
            f"pass its options by keyword ({', '.join(options) or 'it has none'})",
        )
    given = {}
    for k in keywords:
        if k.arg not in options:
            error(k.value, f"np.linalg.{name} has no keyword argument {k.arg!r}", f"its options: {', '.join(options)}")
        given[k.arg] = k.value
    return list(args), given


def _keywords(values):
    return [gast.keyword(arg=key, value=value) for key, value in values.items()]


def _rewrite(target, name, operands, options, build):
    """A canonical= rewrite of np.linalg.<name> to a call of entry `target`: build(operands, options) gives the
    target's (args, kwargs as {name: AST})."""
    entry = by_name(target)

    def canonical(args, keywords, error):
        parts = _read(args, keywords, error, name, operands, options)
        new_args, new_kwargs = build(*parts, error)
        return entry, new_args, _keywords(new_kwargs)

    return entry, canonical


def _register(target, impl, name, operands, options, build, examples=()):
    entry, canonical = _rewrite(target, name, operands, options, build)
    alias(entry, impl, canonical=canonical)
    entry.examples.extend(examples)


def _is_constant(node, *values):
    return isinstance(node, gast.Constant) and any(node.value == v and type(node.value) is type(v) for v in values)


def _is_integer(node):
    """Whether node is an integer written out (`1`, `-1`)."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    return isinstance(node, gast.Constant) and type(node.value) is int


# ---------------------------------------------------------------------------- transposes, products, diagonals

_register(
    "swapaxes",
    np.linalg.matrix_transpose,
    "matrix_transpose",
    1,
    (),
    lambda ops, opts, error: ([ops[0], _const(-1), _const(-2)], {}),
    [Example("np.linalg.matrix_transpose(a)", dict(a=(2, 3, 4)))],
)
_register(  # NumPy 2's np.matrix_transpose (another function object): the same
    "swapaxes",
    np.matrix_transpose,
    "matrix_transpose",
    1,
    (),
    lambda ops, opts, error: ([ops[0], _const(-1), _const(-2)], {}),
    [Example("np.matrix_transpose(a)", dict(a=(3, 4)))],
)
_register(
    "np_matmul",
    np.linalg.matmul,
    "matmul",
    2,
    (),
    lambda ops, opts, error: (ops, {}),
    [Example("np.linalg.matmul(a, b)", dict(a=(2, 3, 4), b=(4, 2)))],
)
_register(
    "tensordot",
    np.linalg.tensordot,
    "tensordot",
    2,
    ("axes",),
    lambda ops, opts, error: (ops, opts),
    [Example("np.linalg.tensordot(a, b, axes=1)", dict(a=(2, 3), b=(3, 4)))],
)
# np.linalg.outer takes 1-D vectors only (np.outer flattens): an einsum keeps that refusal.
_register(
    "einsum",
    np.linalg.outer,
    "outer",
    2,
    (),
    lambda ops, opts, error: ([_const("i,j->ij"), *ops], {}),
    [Example("np.linalg.outer(a, b)", dict(a=(3,), b=(4,)))],
)
_register(
    "cross",
    np.linalg.cross,
    "cross",
    2,
    ("axis",),
    lambda ops, opts, error: (ops, opts),  # np.cross's axis=-1 is np.linalg.cross's
    [
        Example("np.linalg.cross(a, b)", dict(a=(2, 3), b=(3,))),
        Example("np.linalg.cross(a, b, axis=0)", dict(a=(3, 2), b=(3, 2))),
    ],
)
_register(
    "trace",
    np.linalg.trace,
    "trace",
    1,
    ("offset", "dtype"),
    lambda ops, opts, error: (
        [ops[0], opts.get("offset", _const(0)), _const(-2), _const(-1)],
        {"dtype": opts["dtype"]} if "dtype" in opts else {},
    ),
    [Example("np.linalg.trace(a)", dict(a=(2, 3, 3))), Example("np.linalg.trace(a, offset=1)", dict(a=(3, 4)))],
)
_register(
    "diagonal",
    np.linalg.diagonal,
    "diagonal",
    1,
    ("offset",),
    lambda ops, opts, error: ([ops[0], opts.get("offset", _const(0)), _const(-2), _const(-1)], {}),
    [Example("np.linalg.diagonal(a)", dict(a=(2, 3, 3))), Example("np.linalg.diagonal(a, offset=-1)", dict(a=(4, 3)))],
)
_register(
    "linalg.svd",
    np.linalg.svdvals,
    "svdvals",
    1,
    (),
    lambda ops, opts, error: (ops, {"compute_uv": _const(False)}),
    [Example("np.linalg.svdvals(a)", dict(a=(2, 4, 3)))],
)

# ---------------------------------------------------------------------------- norms
#
# np.linalg.norm reads axis=None, and a pair of axes, as a matrix norm; vector_norm reads them as the vector norm of
# the entries named (all of them for axis=None).  The two agree for one axis, and for the 2-norm (the Frobenius norm
# of those entries) whatever the axes; with axis=None and another order, vector_norm is norm of x.ravel().


def _vector_norm(ops, opts, error):
    x, axis, keepdims = ops[0], opts.get("axis", _const(None)), opts.get("keepdims", _const(False))
    order = opts.get("ord")
    if order is None or _is_constant(order, 2, 2.0):
        return [x, _const(None), axis, keepdims], {}
    if _is_constant(axis, None):
        if not _is_constant(keepdims, False):
            error(
                keepdims,
                "np.linalg.vector_norm with axis=None, keepdims and an order other than 2 is not supported",
                "pass the axes, e.g. axis=(0, 1), or leave out keepdims",
            )
        flat = gast.Call(func=gast.Attribute(value=x, attr="ravel", ctx=gast.Load()), args=[], keywords=[])
        return [flat, order, _const(None), _const(False)], {}
    one = _is_integer(axis) or isinstance(axis, gast.Tuple) and len(axis.elts) == 1
    if not one:
        error(
            axis,
            "np.linalg.vector_norm over several axes, with an order other than 2, is not supported",
            "write the axes as one number (or a one-item tuple), or reshape x so that they are one axis",
        )
    return [x, order, axis, keepdims], {}


_register(
    "linalg.norm",
    np.linalg.vector_norm,
    "vector_norm",
    1,
    ("axis", "keepdims", "ord"),
    _vector_norm,
    [
        Example("np.linalg.vector_norm(a)", dict(a=(3, 4))),
        Example("np.linalg.vector_norm(a, ord=1)", dict(a=(3, 4)), domain="away"),
        Example("np.linalg.vector_norm(a, axis=(0, 2), keepdims=True)", dict(a=(2, 3, 4))),
        Example("np.linalg.vector_norm(a, axis=-1, ord=3)", dict(a=(2, 3)), domain="away"),
    ],
)
_register(
    "linalg.norm",
    np.linalg.matrix_norm,
    "matrix_norm",
    1,
    ("keepdims", "ord"),
    lambda ops, opts, error: (
        [ops[0], opts.get("ord", _const("fro")), gast.Tuple(elts=[_const(-2), _const(-1)], ctx=gast.Load())],
        {"keepdims": opts.get("keepdims", _const(False))},
    ),
    [
        Example("np.linalg.matrix_norm(a)", dict(a=(2, 3, 4))),
        Example("np.linalg.matrix_norm(a, ord=1, keepdims=True)", dict(a=(3, 4)), domain="away"),
    ],
)

# ---------------------------------------------------------------------------- written as expressions


def _vecdot(args, keywords, error):
    """np.linalg.vecdot(x1, x2, axis=a) is np.sum(np.conj(x1) * x2, axis=a), written as methods (x1.conj())."""
    (x1, x2), opts = _read(args, keywords, error, "vecdot", 2, ("axis",))
    conj = gast.Call(func=gast.Attribute(value=x1, attr="conj", ctx=gast.Load()), args=[], keywords=[])
    product = gast.BinOp(left=conj, op=gast.Mult(), right=x2)
    axis = gast.keyword(arg="axis", value=opts.get("axis", _const(-1)))
    return gast.Call(func=gast.Attribute(value=product, attr="sum", ctx=gast.Load()), args=[], keywords=[axis])


def _multi_dot(args, keywords, error):
    """np.linalg.multi_dot([a, b, c]) is a @ b @ c (a 1-D first or last array is a row or a column, as in `@`)."""
    for k in keywords:
        error(k.value, f"np.linalg.multi_dot's {k.arg}= is not supported", "assign the result instead")
    if len(args) != 1 or not isinstance(args[0], (gast.List, gast.Tuple)) or len(args[0].elts) < 2:
        error(
            args[0] if args else None,
            "np.linalg.multi_dot needs its arrays written out in the call, at least two of them",
            "write np.linalg.multi_dot([a, b, c]), or a @ b @ c",
        )
    items = args[0].elts
    if any(isinstance(item, gast.Starred) for item in items):
        error(items[0], "np.linalg.multi_dot needs its arrays written out in the call", "write a @ b @ c")
    product = items[0]
    for item in items[1:]:
        product = gast.BinOp(left=product, op=gast.MatMult(), right=item)
    return product


alias(by_name("mul"), np.linalg.vecdot, canonical=_vecdot)
by_name("mul").examples.extend(
    [
        Example("np.linalg.vecdot(a, b)", dict(a=(2, 3), b=(3,))),
        Example("np.linalg.vecdot(a, b, axis=0)", dict(a=(3, 2), b=(3, 2))),
    ]
)
alias(by_name("matmul"), np.linalg.multi_dot, canonical=_multi_dot)
by_name("matmul").examples.extend(
    [
        Example("np.linalg.multi_dot([a, b, c])", dict(a=(2, 3), b=(3, 4), c=(4, 2))),
        Example("np.linalg.multi_dot((a, b, c))", dict(a=(3,), b=(3, 4), c=(4,))),
    ]
)
