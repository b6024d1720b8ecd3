"""Linear algebra: pinv, eigh, eigvalsh, svd, qr, lstsq and matrix_power, with rules of every order."""

import gast
import numpy as np

import runtime as rt
from runtime import syntax

from .batching_helpers import call_loop
from .registry import Example, defhelper, defprim

# Each rule below is an expression over registered functions and helpers with rules of their own (matmul_or_zero,
# matrix_transpose, solve_like, np.diagonal, ...), so that its derivatives have rules too.  They take the symbolic
# zero (0.0) for an operand that has no tangent or cotangent.


def _mm(x, y):
    return f"rt.matmul_or_zero({x}, {y})"


def _t(x):
    return f"rt.matrix_transpose({x})"


def _diagonal(x):
    return f"rt.diag_part({x})"


def _get(x, i):
    return f"rt.get({x}, {i})"


def _adjoint_pair(fn, transpose, rest=(), batched=True, flags=(), **kw):
    """Two linear helpers, each the other's adjoint: the VJP of one applies the other to g, its JVP itself to t.
    The parameters in `flags` (the last of `rest`) are passed by name."""
    names = tuple(p.split("=")[0] for p in rest)
    passed = [f"{n}={n}" if n in flags else n for n in names]
    for f, other, x in ((fn, transpose, "x"), (transpose, fn, "g")):

        def call(h, v):
            return f"rt.{h.__name__}({', '.join([v, *passed])})"

        batch = dict(batch=call(f, x), batch_needs_same=names) if batched else {}
        defhelper(
            f, params=[x, *rest], vjp={x: call(other, "g")}, jvp={x: call(f, "t")}, structural=names, **batch, **kw
        )


def _real(rule, what, like="a"):
    """The rules below hold for real matrices (transposes, not conjugate transposes): complex ones are refused."""
    return f"rt.real_only({rule}, {like}, {what!r})"


SQ, STACK = dict(a=(3, 3)), dict(a=(2, 3, 3))

# ---------------------------------------------------------------------------- pinv
#
# P = pinv(A), for A of constant rank (as in JAX: at a rank-deficient A, the derivative along changes that keep the
# rank, checked by tests/transforms/test_linalg_rules.py; where the rank changes, pinv jumps):
# dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P
# (Golub and Pereyra), and for a cotangent G, A_bar = -P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A).


def _pinv_jvp(p, a, t):
    first = "-" + _mm(p, _mm(t, p))
    second = _mm(_mm(p, _t(p)), _t(t))
    third = _mm(_t(t), _mm(_t(p), p))
    return f"{first} + ({second} - {_mm(_mm(second, a), p)}) + ({third} - {_mm(p, _mm(a, third))})"


def _pinv_vjp(p, a, g):
    first = "-" + _mm(_t(p), _mm(g, _t(p)))
    second = _mm(_t(g), _mm(p, _t(p)))
    third = _mm(_mm(_t(p), p), _t(g))
    return f"{first} + ({second} - {_mm(a, _mm(p, second))}) + ({third} - {_mm(_mm(third, p), a)})"


# With hermitian=True, NumPy reads the lower triangle of A only, as np.linalg.eigh does.
_PINV_A = "rt.hermitian_part(a, 'L', on=hermitian)"
defprim(
    "linalg.pinv",
    np.linalg.pinv,
    path="np.linalg.pinv",
    params=["a", "rcond=None", "hermitian=False", "rtol=None"],
    vjp={"a": _real(f"rt.hermitian_part_vjp({_pinv_vjp('ans', _PINV_A, 'g')}, 'L', on=hermitian)", "np.linalg.pinv")},
    jvp={"a": _real(_pinv_jvp("ans", _PINV_A, "rt.hermitian_part(t, 'L', on=hermitian)"), "np.linalg.pinv")},
    structural=("rcond", "hermitian", "rtol"),
    batch="np.linalg.pinv(a, rcond, hermitian)",
    batch_needs_same=("rcond", "hermitian", "rtol"),
    examples=[
        Example("np.linalg.pinv(a)", dict(a=(4, 3))),
        Example("np.linalg.pinv(a)", dict(a=(2, 4))),
        Example("np.linalg.pinv(a + 3.0 * np.eye(3))", SQ),
        Example("np.linalg.pinv(a)", dict(a=(2, 3, 2))),
        Example("np.linalg.pinv(a @ a.T + np.eye(3), hermitian=True)", SQ),
        Example("np.linalg.pinv(a + 4.0 * np.eye(3), hermitian=True)", SQ),
        Example("np.linalg.pinv(a, rcond=1e-10)", dict(a=(3, 2))),
    ],
)

# ---------------------------------------------------------------------------- eigh, eigvalsh
#
# A = V diag(w) V^T with the triangle UPLO names mirrored (what NumPy reads); with X = V^T sym(dA) V,
# dw = diag(X) and dV = V (F o X), F[i, j] = 1 / (w[j] - w[i]) off the diagonal (rt.gap_scaled): distinct
# eigenvalues.  The adjoint of the mirrored matrix is V (diag(w_bar) + F o (V^T V_bar)) V^T, folded back onto the
# triangle NumPy reads (rt.hermitian_part_vjp).
_W, _V = _get("ans", 0), _get("ans", 1)
_EIGH_X = _mm(_t(_V), _mm("rt.hermitian_part(t, UPLO)", _V))
_EIGH_INNER = f"rt.diag_embed({_get('g', 0)}) + rt.gap_scaled({_mm(_t(_V), _get('g', 1))}, {_W})"
defprim(
    "linalg.eigh",
    np.linalg.eigh,
    path="rt.eigh",
    aliases=(rt.eigh,),
    params=["a", "UPLO='L'"],
    container=True,
    vjp={"a": _real(f"rt.hermitian_part_vjp({_mm(_V, _mm(_EIGH_INNER, _t(_V)))}, UPLO)", "np.linalg.eigh")},
    jvp={"a": _real(f"({_diagonal(_EIGH_X)}, {_mm(_V, f'rt.gap_scaled({_EIGH_X}, {_W})')})", "np.linalg.eigh")},
    structural=("UPLO",),
    batch="rt.eigh(a, UPLO)",
    batch_needs_same=("UPLO",),
    examples=[
        Example("np.linalg.eigh(a)[0]", SQ),
        Example("np.linalg.eigh(a + a.T)[1] ** 2", SQ),
        Example("np.linalg.eigh(a, 'U')[0] * np.sum(np.linalg.eigh(a, 'U')[1] ** 2, axis=0)", SQ),
        Example("np.linalg.eigh(a)[1] @ np.diag(np.arange(3.0)) @ np.linalg.eigh(a)[1].T", SQ),
        Example("np.linalg.eigh(a)[0] + np.linalg.eigh(a)[1][..., 0, :] ** 2", STACK),
        Example("np.outer(np.linalg.eigh(a, UPLO='U')[1][:, 0], np.linalg.eigh(a, UPLO='U')[1][:, 0])", dict(a=(4, 4))),
    ],
)
_EIGVALSH_V = _get("rt.eigh(a, UPLO)", 1)
defprim(
    "linalg.eigvalsh",
    np.linalg.eigvalsh,
    path="np.linalg.eigvalsh",
    params=["a", "UPLO='L'"],
    vjp={
        "a": _real(
            f"rt.hermitian_part_vjp({_mm(_EIGVALSH_V, _mm('rt.diag_embed(g)', _t(_EIGVALSH_V)))}, UPLO)",
            "np.linalg.eigvalsh",
        )
    },
    jvp={
        "a": _real(
            _diagonal(_mm(_t(_EIGVALSH_V), _mm("rt.hermitian_part(t, UPLO)", _EIGVALSH_V))), "np.linalg.eigvalsh"
        )
    },
    structural=("UPLO",),
    batch="np.linalg.eigvalsh(a, UPLO)",
    batch_needs_same=("UPLO",),
    examples=[
        Example("np.linalg.eigvalsh(a)", SQ),
        Example("np.linalg.eigvalsh(a, 'U')", dict(a=(4, 4))),
        Example("np.linalg.eigvalsh(a)", STACK),
    ],
)
_adjoint_pair(rt.hermitian_part, rt.hermitian_part_vjp, rest=("UPLO='L'", "on=True"), flags=("on",))
# gap_scaled(x, w) = x / (w_j - w_i) off the diagonal: linear in x (its own adjoint); in w, its derivative along dw
# is -gap_scaled(gap_scaled(x, w), w) o gaps(dw), gaps(dw)[i, j] = dw[j] - dw[i].
defhelper(
    rt.gap_scaled,
    params=["x", "w"],
    vjp={"x": "rt.gap_scaled(g, w)", "w": "rt.gaps_vjp(-g * rt.gap_scaled(rt.gap_scaled(x, w), w))"},
    jvp={"x": "rt.gap_scaled(t, w)", "w": "rt.gated(-rt.gap_scaled(rt.gap_scaled(x, w), w) * rt.gaps(t), x)"},
    batch="rt.gap_scaled(x, w)",
    batch_broadcast=("x", "w"),
)
_adjoint_pair(rt.gaps, rt.gaps_vjp)
defhelper(
    rt.scale_columns,
    params=["x", "d"],
    vjp={"x": "rt.scale_columns(g, d)", "d": "rt.column_dots(g, x)"},
    jvp={"x": "rt.scale_columns(t, d)", "d": "rt.scale_columns(x, t)"},
    batch="rt.scale_columns(x, d)",
    batch_broadcast=("x", "d"),
)
defhelper(
    rt.column_dots,
    params=["x", "y"],
    vjp={"x": "rt.scale_columns(y, g)", "y": "rt.scale_columns(x, g)"},
    jvp={"x": "rt.column_dots(t, y)", "y": "rt.column_dots(x, t)"},
    batch="rt.column_dots(x, y)",
    batch_broadcast=("x", "y"),
)
_adjoint_pair(rt.diag_part, rt.diag_embed)

# ---------------------------------------------------------------------------- svd
#
# A = U diag(s) V^T (reduced, distinct nonzero singular values), k = min(m, n), dP = U^T dA V, F[i, j] =
# 1 / (s[j]^2 - s[i]^2) off the diagonal:
#   ds = diag(dP), dU = U (F o (dP S + S dP^T)) + (I - U U^T) dA V S^-1,
#   dV = V (F o (S dP + dP^T S)) + (I - V V^T) dA^T U S^-1;
# and for cotangents U_bar, s_bar, V_bar, with J = F o (U^T U_bar) and K = F o (V^T V_bar):
#   A_bar = U (diag(s_bar) + (J + J^T) S + S (K + K^T)) V^T + (I - U U^T) U_bar S^-1 V^T + U S^-1 V_bar^T (I - V V^T).
# With compute_uv=False the rules compute the factors themselves (rt.svd_factors).


def _cols(x, d):
    return f"rt.scale_columns({x}, {d})"


def _rows(x, d):
    return _t(_cols(_t(x), d))


def _svd_jvp(fac, t):
    u, s, vh = _get(fac, 0), _get(fac, 1), _get(fac, 2)
    v = _t(vh)
    s2, inv = f"{s} * {s}", f"1.0 / {s}"
    dp = _mm(_t(u), _mm(t, v))
    du = _mm(u, f"rt.gap_scaled({_cols(dp, s)} + {_rows(_t(dp), s)}, {s2})")
    z = _mm(t, v)
    du += " + " + _cols(f"({z} - {_mm(u, _mm(_t(u), z))})", inv)
    dv = _mm(v, f"rt.gap_scaled({_rows(dp, s)} + {_cols(_t(dp), s)}, {s2})")
    y = _mm(_t(t), u)
    dv += " + " + _cols(f"({y} - {_mm(v, _mm(vh, y))})", inv)
    return du, _diagonal(dp), _t(dv)


def _svd_vjp(fac, ub, sb, vhb):
    u, s, vh = _get(fac, 0), _get(fac, 1), _get(fac, 2)
    v = _t(vh)
    s2, inv = f"{s} * {s}", f"1.0 / {s}"
    j = f"rt.gap_scaled({_mm(_t(u), ub)}, {s2})"
    k = f"rt.gap_scaled({_mm(vh, _t(vhb))}, {s2})"
    inner = f"rt.diag_embed({sb}) + {_cols(f'({j} + {_t(j)})', s)} + {_rows(f'({k} + {_t(k)})', s)}"
    main = _mm(u, _mm(inner, vh))
    left = _mm(f"({ub} - {_mm(u, _mm(_t(u), ub))})", _rows(vh, inv))
    right = _mm(_cols(u, inv), f"({vhb} - {_mm(_mm(vhb, v), vh)})")
    return f"{main} + {left} + {right}"


_FAC = (
    "rt.svd_checked(rt.svd_factors(a, ans, full_matrices=full_matrices, compute_uv=compute_uv, hermitian=hermitian), "
    "a, full_matrices=full_matrices, compute_uv=compute_uv)"
)
_SVD_T = "rt.hermitian_part(t, 'L', on=hermitian)"
_SVD_PARTS = [f"rt.svd_part(g, {i}, compute_uv=compute_uv)" for i in range(3)]
defprim(
    "linalg.svd",
    np.linalg.svd,
    path="rt.svd",
    aliases=(rt.svd,),
    params=["a", "full_matrices=True", "compute_uv=True", "hermitian=False"],
    container=True,
    vjp={"a": _real(f"rt.hermitian_part_vjp({_svd_vjp(_FAC, *_SVD_PARTS)}, 'L', on=hermitian)", "np.linalg.svd")},
    jvp={"a": _real(f"rt.svd_result({', '.join(_svd_jvp(_FAC, _SVD_T))}, compute_uv=compute_uv)", "np.linalg.svd")},
    structural=("full_matrices", "compute_uv", "hermitian"),
    batch="rt.svd(a, full_matrices=full_matrices, compute_uv=compute_uv, hermitian=hermitian)",
    batch_needs_same=("full_matrices", "compute_uv", "hermitian"),
    examples=[
        Example("np.linalg.svd(a, compute_uv=False)", dict(a=(4, 3))),
        Example("np.linalg.svd(a, full_matrices=False)[0] ** 2", dict(a=(4, 3))),
        Example("np.linalg.svd(a, full_matrices=False)[2] ** 2", dict(a=(2, 4))),
        Example("np.linalg.svd(a)[1] + np.linalg.svd(a)[0][0] * np.linalg.svd(a)[2][:, 1]", SQ),
        Example("np.linalg.svd(a, False)[0] * np.array([3.0, 2.0]) @ np.linalg.svd(a, False)[0].T", dict(a=(3, 2))),
        Example("np.linalg.svd(a, compute_uv=False)", dict(a=(2, 3, 2))),
        Example("np.linalg.svd(a, full_matrices=False)[2] ** 2", dict(a=(2, 2, 3))),
        Example("np.linalg.svd(a @ a.T + np.eye(3), hermitian=True)[0] ** 2", SQ),
    ],
)
defhelper(
    rt.svd_factors,
    params=["a", "computed", "full_matrices=True", "compute_uv=True", "hermitian=False"],
    container=True,
    vjp={
        "a": (
            "rt.keep_if(rt.hermitian_part_vjp("
            + _svd_vjp(
                "rt.svd(a, full_matrices=False, compute_uv=True, hermitian=hermitian)",
                *[_get("g", i) for i in range(3)],
            )
            + ", 'L', on=hermitian), flag=compute_uv, keep=False)"
        ),
        "computed": "rt.keep_if(g, flag=compute_uv, keep=True)",
    },
    jvp={
        "a": (
            "rt.keep_if(("
            + ", ".join(_svd_jvp("rt.svd(a, full_matrices=False, compute_uv=True, hermitian=hermitian)", _SVD_T))
            + "), flag=compute_uv, keep=False)"
        ),
        "computed": "rt.keep_if(t, flag=compute_uv, keep=True)",
    },
    structural=("full_matrices", "compute_uv", "hermitian"),
    # a stack of matrices: the same call (its flags the same for every example)
    batch="rt.svd_factors(a, computed, full_matrices=full_matrices, compute_uv=compute_uv, hermitian=hermitian)",
    batch_needs_same=("full_matrices", "compute_uv", "hermitian"),
    batch_broadcast=("a", "computed"),
)
defhelper(
    rt.keep_if,
    params=["x", "flag", "keep=True"],
    container=True,
    vjp={"x": "rt.keep_if(g, flag=flag, keep=keep)"},
    jvp={"x": "rt.keep_if(t, flag=flag, keep=keep)"},
    structural=("flag", "keep"),
)
_adjoint_pair(rt.svd_part, rt.svd_unpart, rest=("i", "compute_uv"), flags=("compute_uv",), container=True)
defhelper(
    rt.svd_result,
    params=["u", "s", "vh", "compute_uv"],
    container=True,
    vjp={
        "u": "rt.svd_part(g, 0, compute_uv=compute_uv)",
        "s": "rt.svd_part(g, 1, compute_uv=compute_uv)",
        "vh": "rt.svd_part(g, 2, compute_uv=compute_uv)",
    },
    jvp={
        "u": "rt.svd_result(t, 0.0, 0.0, compute_uv=compute_uv)",
        "s": "rt.svd_result(0.0, t, 0.0, compute_uv=compute_uv)",
        "vh": "rt.svd_result(0.0, 0.0, t, compute_uv=compute_uv)",
    },
    structural=("compute_uv",),
)
defhelper(
    rt.svd_checked,
    params=["x", "like", "full_matrices", "compute_uv"],
    container=True,
    vjp={"x": "rt.svd_checked(g, like, full_matrices=full_matrices, compute_uv=compute_uv)"},
    jvp={"x": "rt.svd_checked(t, like, full_matrices=full_matrices, compute_uv=compute_uv)"},
    structural=("like", "full_matrices", "compute_uv"),
    batch="rt.svd_checked(x, like, full_matrices=full_matrices, compute_uv=compute_uv)",
    batch_needs_same=("full_matrices", "compute_uv"),
    batch_broadcast=("x",),
)
defhelper(
    rt.qr_checked,
    params=["x", "like", "mode"],
    container=True,
    vjp={"x": "rt.qr_checked(g, like, mode)"},
    jvp={"x": "rt.qr_checked(t, like, mode)"},
    structural=("like", "mode"),
)

# ---------------------------------------------------------------------------- qr
#
# A = Q R (reduced, A square or tall, R invertible).  With X = Q^T dA R^-1 and O = tril(X, -1) - tril(X, -1)^T
# (Q^T dQ is antisymmetric, dR R^-1 upper triangular): dQ = Q O + (I - Q Q^T) dA R^-1 and dR = (X - O) R.  For
# cotangents Q_bar, R_bar: Y = R_bar R^T + tril(W - W^T, -1) with W = Q^T Q_bar - R_bar R^T, and
# A_bar = (Q (Y - Q^T Q_bar) + Q_bar) R^-T.
_QR = "rt.qr_checked(ans, a, mode)"  # raises first for the modes and shapes without rules
_Q, _R = _get(_QR, 0), _get(_QR, 1)
_QR_Z = _t(f"rt.solve_like({_t(_R)}, {_t('t')}, {_R})")  # dA R^-1
_QR_X = _mm(_t(_Q), _QR_Z)
_QR_O = f"rt.skew_lower({_QR_X})"
_QR_DQ = f"{_mm(_Q, _QR_O)} + ({_QR_Z} - {_mm(_Q, _mm(_t(_Q), _QR_Z))})"
_QR_DR = _mm(f"({_QR_X} - {_QR_O})", _R)
_QB, _RB = _get("g", 0), _get("g", 1)
_RB_RT = _mm(_RB, _t(_R))
_QR_Y = f"{_RB_RT} + rt.skew_lower_vjp({_mm(_t(_Q), _QB)} - {_RB_RT})"
_QR_INNER = f"{_mm(_Q, f'({_QR_Y} - {_mm(_t(_Q), _QB)})')} + {_QB}"
defprim(
    "linalg.qr",
    np.linalg.qr,
    path="rt.qr",
    aliases=(rt.qr,),
    params=["a", "mode='reduced'"],
    container=True,
    vjp={"a": _real(_t(f"rt.solve_like({_R}, {_t(_QR_INNER)}, {_R})"), "np.linalg.qr")},
    jvp={"a": _real(f"({_QR_DQ}, {_QR_DR})", "np.linalg.qr")},
    structural=("mode",),
    batch="rt.qr(a, mode)",
    batch_needs_same=("mode",),
    examples=[
        Example("np.linalg.qr(a)[0] * np.linalg.qr(a)[1][0]", SQ),
        Example("np.linalg.qr(a)[1] + np.sum(np.linalg.qr(a)[0])", dict(a=(4, 3))),
        Example("np.linalg.qr(a, 'reduced')[0]", dict(a=(2, 4, 3))),
        Example("np.linalg.qr(a, mode='complete')[1]", STACK),
    ],
)
_adjoint_pair(rt.skew_lower, rt.skew_lower_vjp)

# ---------------------------------------------------------------------------- lstsq
#
# For A of full rank the solution is x = pinv(A) b, and the residuals r = sum((b - A x)^2, axis=0) (m > n) have
# dr = 2 sum(res o (db - dA x), axis=0), res = b - A x (A^T res = 0 at the solution); the singular values are
# those of np.linalg.svd(A, compute_uv=False).  The rank has no derivative.
_P = "np.linalg.pinv(a)"
_X = _get("ans", 0)
_BC, _XC = "rt.as_column(b, b)", f"rt.as_column({_X}, b)"
_RES = f"({_BC} - {_mm('a', _XC)})"
_SVD_A = "rt.svd(a, full_matrices=False)"
_LSTSQ_SB = f"rt.diag_embed({_get('g', 3)})"
_RW = f"rt.as_weights({_get('g', 1)}, {_get('ans', 1)}, {_XC})"  # the residuals' cotangent, one weight per column
_XB = f"rt.as_column({_get('g', 0)}, b)"
_LSTSQ_A = (
    _pinv_vjp(_P, "a", _mm(_XB, _t(_BC)))
    + f" - 2.0 * {_mm(_cols(_RES, _RW), _t(_XC))}"
    + f" + {_mm(_get(_SVD_A, 0), _mm(_LSTSQ_SB, _get(_SVD_A, 2)))}"
)
_LSTSQ_B = f"rt.from_column({_mm(_t(_P), _XB)} + 2.0 * {_cols(_RES, _RW)}, b)"


def _lstsq_tangent(dx, dr, ds):
    tangent = f"rt.lstsq_checked(({dx}, rt.from_weights({dr}, {_get('ans', 1)}, {_XC}), 0.0, {ds}), ans, a)"
    return _real(_real(tangent, "np.linalg.lstsq"), "np.linalg.lstsq", "b")


defprim(
    "linalg.lstsq",
    np.linalg.lstsq,
    path="rt.lstsq",
    aliases=(rt.lstsq,),
    params=["a", "b", "rcond=None"],
    container=True,
    vjp={
        "a": _real(_real(f"rt.lstsq_checked({_LSTSQ_A}, ans, a)", "np.linalg.lstsq"), "np.linalg.lstsq", "b"),
        "b": _real(_real(f"rt.lstsq_checked({_LSTSQ_B}, ans, a)", "np.linalg.lstsq"), "np.linalg.lstsq", "b"),
    },
    jvp={
        "a": _lstsq_tangent(
            f"rt.from_column({_mm(_pinv_jvp(_P, 'a', 't'), _BC)}, b)",
            f"-2.0 * rt.column_dots({_RES}, {_mm('t', _XC)})",
            _diagonal(_mm(_t(_get(_SVD_A, 0)), _mm("t", _t(_get(_SVD_A, 2))))),
        ),
        "b": _lstsq_tangent(
            f"rt.from_column({_mm(_P, 'rt.as_column(t, b)')}, b)",
            f"2.0 * rt.column_dots({_RES}, rt.as_column(t, b))",
            "0.0",
        ),
    },
    structural=("rcond",),
    batch="rt.batched_lstsq(a, b, rcond, a_batched=a_batched, b_batched=b_batched, size=B, mask=mask)",
    batch_needs_same=("rcond",),
    examples=[
        Example("np.linalg.lstsq(a, b)[0]", dict(a=(5, 3), b=(5,))),
        Example("np.linalg.lstsq(a, b, rcond=None)[0]", dict(a=(4, 2), b=(4, 3))),
        Example("np.linalg.lstsq(a, b)[1] + np.linalg.lstsq(a, b)[3][0]", dict(a=(5, 2), b=(5,))),
        Example("np.linalg.lstsq(a, b, None)[1] * np.linalg.lstsq(a, b, None)[0][0]", dict(a=(4, 2), b=(4, 3))),
        Example("np.linalg.lstsq(a, b)[0]", dict(a=(2, 4), b=(2,))),
        Example("np.linalg.lstsq(a, b)[3]", dict(a=(4, 3), b=(4,))),
    ],
)
# vmap's np.linalg.lstsq: one stacked SVD.  Differentiated, it is the loop over the examples that it batches, each
# np.linalg.lstsq with its rules above.
_BATCHED_LSTSQ = ("a", "b", "rcond", "a_batched", "b_batched", "size", "mask")


def _lstsq_loop(args, kwargs, fresh):
    bound = {**dict(zip(_BATCHED_LSTSQ, args)), **{k.arg: k.value for k in kwargs}}
    flags = [bound["a_batched"], bound["b_batched"], gast.Constant(value=False, kind=None)]
    return call_loop(
        {
            "fn": syntax.gast_parse("np.linalg.lstsq", mode="eval").body,
            "args": gast.Tuple(elts=[bound["a"], bound["b"], bound["rcond"]], ctx=gast.Load()),
            "flags": gast.Tuple(elts=flags, ctx=gast.Load()),
            "size": bound["size"],
            "mask": bound.get("mask", gast.Constant(value=None, kind=None)),
        },
        fresh,
    )


defhelper(
    rt.batched_lstsq,
    params=[*_BATCHED_LSTSQ[:-1], "mask=None"],
    container=True,
    structural=("rcond", "a_batched", "b_batched", "size", "mask"),
    differentiated_as=_lstsq_loop,
)
defhelper(
    rt.lstsq_checked,
    params=["x", "result", "like"],
    container=True,
    vjp={"x": "rt.lstsq_checked(g, result, like)"},
    jvp={"x": "rt.lstsq_checked(t, result, like)"},
    structural=("result", "like"),
)
defhelper(
    rt.as_weights,
    params=["v", "like", "columns"],
    vjp={"v": "rt.from_weights(g, like, columns)"},
    jvp={"v": "rt.as_weights(t, like, columns)"},
    structural=("like", "columns"),
)
defhelper(
    rt.from_weights,
    params=["v", "like", "columns"],
    vjp={"v": "rt.as_weights(g, like, columns)"},
    jvp={"v": "rt.from_weights(t, like, columns)"},
    structural=("like", "columns"),
)

# ---------------------------------------------------------------------------- matrix_power
#
# d(A^n) along dA is the top-right block of [[A, dA], [0, A]]^n, for every integer n (0 and negative ones too), and
# its adjoint for G the top-right block of [[A^T, G], [0, A^T]]^n: matrix powers, whose rules are these again.
defprim(
    "linalg.matrix_power",
    np.linalg.matrix_power,
    path="np.linalg.matrix_power",
    view="maybe",  # n=1: NumPy returns the argument itself
    params=["a", "n"],
    vjp={"a": "rt.block_corner(np.linalg.matrix_power(rt.block_upper(rt.matrix_transpose(a), g), n))"},
    jvp={"a": "rt.block_corner(np.linalg.matrix_power(rt.block_upper(a, t), n))"},
    structural=("n",),
    batch="np.linalg.matrix_power(a, n)",
    batch_needs_same=("n",),
    examples=[
        Example("np.linalg.matrix_power(a, 3)", SQ),
        Example("np.linalg.matrix_power(a, 0)", SQ),
        Example("np.linalg.matrix_power(a, 1)", dict(a=(2, 2))),
        Example("np.linalg.matrix_power(a + 3.0 * np.eye(3), -2)", SQ),
        Example("np.linalg.matrix_power(a, 2)", STACK),
        Example("np.linalg.matrix_power(a + 3.0 * np.eye(2), -1)", dict(a=(2, 2, 2))),
    ],
)
defhelper(
    rt.block_upper,
    params=["x", "y"],
    vjp={"x": "rt.block_corner(g, 0)", "y": "rt.block_corner(g, 1)"},
    jvp={"x": "rt.block_upper(t, 0.0)", "y": "rt.block_upper(0.0, t)"},
    batch="rt.block_upper(x, y)",
    batch_broadcast=("x", "y"),
)
defhelper(
    rt.block_corner,
    params=["m", "which=1"],
    vjp={"m": "rt.block_corner_vjp(g, which)"},
    jvp={"m": "rt.block_corner(t, which)"},
    structural=("which",),
    batch="rt.block_corner(m, which)",
    batch_needs_same=("which",),
)
defhelper(
    rt.block_corner_vjp,
    params=["v", "which=1"],
    vjp={"v": "rt.block_corner(g, which)"},
    jvp={"v": "rt.block_corner_vjp(t, which)"},
    structural=("which",),
    batch="rt.block_corner_vjp(v, which)",
    batch_needs_same=("which",),
)

# ---------------------------------------------------------------------------- cond
#
# No derivative rule yet (differentiating through it raises); NumPy computes it for stacks of matrices.
defprim(
    "linalg.cond",
    np.linalg.cond,
    path="np.linalg.cond",
    params=["x", "p=None"],
    batch="np.linalg.cond(x, p)",
    batch_needs_same=("p",),
    examples=[
        # a not differentiated (a comparison passes no derivative): vmap and jit are what these check
        Example("np.linalg.cond((a > 0.0) + 3.0 * np.eye(3)) * a", SQ),
        Example("np.linalg.cond((a > 0.0) + 3.0 * np.eye(3), 1)", STACK, grad=False),
        Example("np.linalg.cond((a > 0.0) + 3.0 * np.eye(3, 2), -2)", dict(a=(3, 2)), grad=False),
    ],
)

# ---------------------------------------------------------------------------- vmap's rules
defhelper(rt.solve_layout, params=["a", "b", "which"], nondiff=True, batch="shape", batch_same=True)
