"""Diagonals of matrices: diag, diagflat, diagonal, trace, fill_diagonal and the index helpers
diag_indices, tril_indices, triu_indices (and their *_from forms).

A diagonal is a strided slice of the flattened last two axes, so it stays a static
slice inside jit; index helpers take static sizes and build their indices with NumPy.
"""

from __future__ import annotations

import builtins

import numpy as np

from ..compiler.primitives import shape_ops as so
from ..dispatch import bind1
from ..errors import at_user_line
from ..promotion import DEFAULT_INT
from ..tensor import Tensor
from ._elementwise import select
from ._inplace import numpy_form
from ._manipulation import concatenate, moveaxis, reshape, tile
from ._operands import as_tensor, asarray, broadcast_to, normalize_axis, values_in
from ._reductions import sum


def diagflat(v, k: int = 0) -> Tensor:
    """A square matrix with the flattened input on its k-th diagonal."""
    v = as_tensor(v)
    return diag(reshape(v, (v.size,)), k)


def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """The `offset`-th diagonal of the (axis1, axis2) planes, as a new last axis."""
    x = as_tensor(a)
    if x.ndim < 2:
        raise ValueError(at_user_line(f"diagonal needs at least 2 dimensions, got shape "
                                      f"{x.shape}"))
    a1, a2 = normalize_axis(axis1, x.ndim, "axis1"), normalize_axis(axis2, x.ndim, "axis2")
    if a1 == a2:
        raise ValueError(at_user_line(f"diagonal: axis1 and axis2 are both {axis1}; they "
                                      f"must name two different axes"))
    x = moveaxis(x, (a1, a2), (-2, -1))
    x = x[..., :, offset:] if offset >= 0 else x[..., -offset:, :]
    n, m = x.shape[-2:]
    k = builtins.max(builtins.min(n, m), 0)
    if k == 0:
        return reshape(x, x.shape[:-2] + (0,))
    flat = reshape(x, x.shape[:-2] + (n * m,))
    return flat[..., : (k - 1) * (m + 1) + 1: m + 1]


def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None) -> Tensor:
    """The sum of the `offset`-th diagonal of the (axis1, axis2) planes."""
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def diag(v, k: int = 0) -> Tensor:
    """A 1-D input becomes a square matrix with it on the k-th diagonal; a 2-D input
    gives its k-th diagonal."""
    v = as_tensor(v)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError(at_user_line(f"diag needs a 1-D or 2-D input, got shape {v.shape}"))
    n = v.shape[0] + builtins.abs(k)
    rows = bind1(so.iota, shape=(n, n), dtype=DEFAULT_INT, dimension=0)
    cols = bind1(so.iota, shape=(n, n), dtype=DEFAULT_INT, dimension=1)
    zero = v._backend.scalar(0, v.dtype)
    padded = concatenate([v, broadcast_to(zero, (builtins.abs(k),))], 0)
    # entry (i, i + k) holds v[i] for k >= 0, entry (j - k, j) holds v[j] for k < 0
    along = padded[:, None] if k >= 0 else padded[None, :]
    return select(cols - rows == k, broadcast_to(along, (n, n)), zero)


def fill_diagonal(a, val, wrap: bool = False, *, inplace: bool = True) -> Tensor | None:
    """Set the main diagonal of `a` to `val` (flattened, repeated or cut as needed).

    NumPy's form, the default (inplace=True): a itself changes (through its views;
    under jit in the caller) and the result is None. JAX's form (inplace=False): a
    stays as it is and the result is a new tensor. wrap=True (NumPy's; jax has only
    False) continues a tall matrix's diagonal after every (columns + 1)-th row."""
    def filled(x: Tensor) -> Tensor:
        if x.ndim < 2:
            raise ValueError(at_user_line(f"fill_diagonal needs at least 2 dimensions, got "
                                          f"shape {x.shape}"))
        if x.ndim > 2 and len(set(x.shape)) != 1:
            raise ValueError(at_user_line(
                f"fill_diagonal: all dimensions of a tensor with more than 2 must be equal, "
                f"got shape {x.shape}"))
        # NumPy's rule: every (step)-th flat element; a tall matrix stops after the
        # square part unless wrap=True
        step = x.shape[1] + 1 if x.ndim == 2 else 1 + int(np.cumprod(x.shape[:-1]).sum())
        end = x.size if wrap or x.ndim > 2 else x.shape[1] * x.shape[1]
        positions = np.arange(0, builtins.min(end, x.size), step)
        v = reshape(values_in(x, val), (-1,))
        if positions.size == 0 or v.shape[0] == 0:
            return x
        reps = -(-positions.size // v.shape[0])
        v = tile(v, reps)[: positions.size] if v.shape[0] > 1 else \
            broadcast_to(v, positions.shape)
        flat = reshape(x, (x.size,)).at[asarray(positions)].set(v)
        return reshape(flat, x.shape)

    return numpy_form("fill_diagonal", "a", a, inplace, filled)


def diag_indices(n: int, ndim: int = 2) -> tuple[Tensor, ...]:
    """Indices of the main diagonal of an n x n x ... (ndim times) tensor."""
    i = bind1(so.iota, shape=(n,), dtype=DEFAULT_INT, dimension=0)
    return (i,) * ndim


def diag_indices_from(arr) -> tuple[Tensor, ...]:
    x = as_tensor(arr)
    if x.ndim < 2 or len(set(x.shape)) != 1:
        raise ValueError(at_user_line(f"diag_indices_from needs a tensor of at least 2 equal "
                                      f"dimensions, got shape {x.shape}"))
    return diag_indices(x.shape[0], x.ndim)


def _index_pair(rows_cols) -> tuple[Tensor, Tensor]:
    r, c = rows_cols
    return asarray(r.astype(DEFAULT_INT.np)), asarray(c.astype(DEFAULT_INT.np))


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Tensor, Tensor]:
    """Row and column indices of the lower triangle (on and below the k-th diagonal)."""
    return _index_pair(np.tril_indices(n, k, m))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Tensor, Tensor]:
    """Row and column indices of the upper triangle (on and above the k-th diagonal)."""
    return _index_pair(np.triu_indices(n, k, m))


def _matrix_shape(arr, name: str) -> tuple[int, int]:
    shape = as_tensor(arr).shape
    if len(shape) != 2:
        raise ValueError(at_user_line(f"{name} needs a 2-D tensor, got shape {shape}"))
    return shape


def tril_indices_from(arr, k: int = 0) -> tuple[Tensor, Tensor]:
    n, m = _matrix_shape(arr, "tril_indices_from")
    return tril_indices(n, k, m)


def triu_indices_from(arr, k: int = 0) -> tuple[Tensor, Tensor]:
    n, m = _matrix_shape(arr, "triu_indices_from")
    return triu_indices(n, k, m)
