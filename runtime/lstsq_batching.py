"""vmap's np.linalg.lstsq: every example's least-squares problem solved at once, through one stacked SVD."""

from __future__ import annotations

import numpy as np

from .namespace import array_namespace, asarray

__all__ = ["batched_lstsq"]


def _adjoint(x):
    return np.conj(np.swapaxes(x, -1, -2))


def batched_lstsq(a, b, rcond, a_batched, b_batched, size, mask=None):
    """np.linalg.lstsq(a, b, rcond) for each example (a batched operand carries the batch in axis 0), stacked: the
    solutions, the residuals, the ranks and the singular values.  The minimum-norm solution from the SVD of a, the
    singular values at or below rcond times the largest taken as zero, as LAPACK's gelsd (what NumPy calls) does.
    The residuals are the squared norms of b - a x when a has full column rank and more rows than columns, else
    none: examples that differ in this are refused (their residuals cannot be stacked), among those the mask selects
    (those running here, under vmap's per-example conditions; the others' residuals are computed alike)."""
    xp = array_namespace(a, b)
    a, b = asarray(a), asarray(b)
    a = a if a_batched else np.broadcast_to(a, (size,) + a.shape)
    vector = b.ndim - bool(b_batched) == 1
    b = b if b_batched else np.broadcast_to(b, (size,) + b.shape)
    if a.ndim != 3 or b.ndim not in (2, 3):
        raise np.linalg.LinAlgError("np.linalg.lstsq takes a 2-D matrix a and a 1-D or 2-D b for each example")
    rows, cols = a.shape[1:]
    dtype = np.result_type(a, b, np.float64)
    a, columns = a.astype(dtype, copy=False), (b[..., None] if vector else b).astype(dtype, copy=False)
    if columns.shape[1] != rows:
        raise np.linalg.LinAlgError("Incompatible dimensions")
    eps = np.finfo(dtype).eps
    cut = eps * max(rows, cols) if rcond is None else (eps if rcond < 0 else rcond)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    kept = s > cut * s[:, :1] if s.shape[1] else xp.zeros(s.shape, dtype=bool)
    inverse = np.divide(1.0, s, out=np.zeros_like(s), where=kept)
    x = _adjoint(vh) @ (inverse[..., None] * (_adjoint(u) @ columns))
    rank = np.sum(kept, axis=1)
    full = (rank == cols) & (rows > cols)
    if mask is not None:
        running = np.broadcast_to(asarray(mask, dtype=bool), (size,))
        full = full[running] if np.any(running) else full
    if np.any(full) != np.all(full):
        raise ValueError(
            "vmap of np.linalg.lstsq: some examples have residuals (full column rank) and others none: their results "
            "cannot be stacked"
        )
    if np.all(full) and size and rows > cols:
        residuals = np.sum(np.abs(columns - a @ x) ** 2, axis=1)
    else:
        residuals = xp.zeros((size, 0), dtype=s.dtype)
    return (x[..., 0] if vector else x), residuals, rank, s
