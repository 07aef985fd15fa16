"""stablejit.lax.linalg: jax.lax.linalg's factorizations with its signatures and result
orders (eigh gives (vectors, values); lu gives (lu, pivots, permutation);
triangular_solve solves from the right unless left_side=True), over the implementations
of stablejit.numpy.linalg, so that JAX code calling `lax.linalg` ports by changing the
import. Batch axes lead, as in JAX."""

from __future__ import annotations

import builtins
import enum

from .. import numpy as snp
from ..compiler import dtypes as dt
from ..control_flow import scan
from ..errors import at_user_line
from ..numpy._operands import as_tensor
from ..tensor import Tensor


class SvdAlgorithm(enum.Enum):
    """svd's `algorithm=`, accepted for JAX's signature: every choice runs XLA's LAPACK
    SVD on the host (jax picks the algorithm on GPUs and TPUs only)."""

    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"


def _matrices(name: str, x) -> Tensor:
    t = as_tensor(x)
    if t.ndim < 2 or t.dtype.kind not in "fc":
        raise TypeError(at_user_line(
            f"lax.linalg.{name} needs floating-point or complex matrices (..., m, n), got "
            f"{t.dtype.name}{list(t.shape)}"))
    return t


# (stablejit.numpy.linalg's cholesky and eigh take the Hermitian part (x + x^H) / 2 of
# their input, which is symmetrize_input=True; without it, the one triangle is read)
def _from_triangle(x: Tensor, lower: bool) -> Tensor:
    """The Hermitian matrix whose `lower` (or upper) triangle x holds; the other
    triangle of x is not read."""
    t = snp.tril(x) if lower else snp.triu(x)
    strict = snp.matrix_transpose(snp.tril(x, -1) if lower else snp.triu(x, 1))
    return t + (snp.conj(strict) if x.dtype.kind == "c" else strict)


def cholesky(x, *, symmetrize_input: bool = True) -> Tensor:
    """The lower Cholesky factor L of a Hermitian positive-definite x (x = L L^H); NaNs
    where x is not positive definite. symmetrize_input uses (x + x^H) / 2, otherwise the
    lower triangle of x is read.

    Example:
        >>> stablejit.lax.linalg.cholesky(snp.asarray([[4.0, 2.0], [2.0, 5.0]]))
        Tensor<f32[2,2] xla:host:0>
        [[2., 0.],
         [1., 2.]]
    """
    x = _matrices("cholesky", x)
    return snp.linalg.cholesky(x if symmetrize_input else _from_triangle(x, True))


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False) -> Tensor:
    """x solving op(a) @ x = b (left_side=True) or x @ op(a) = b (the default, as JAX's),
    where a is triangular (its `lower` or upper triangle is read) and op(a) is a,
    a^T (transpose_a), conj(a) (conjugate_a) or a^H (both)."""
    a = _matrices("triangular_solve", a)
    b = as_tensor(b)
    if conjugate_a and not transpose_a and a.dtype.kind == "c":
        a = snp.conj(a)
    trans = ("C" if conjugate_a and a.dtype.kind == "c" else "T") if transpose_a else "N"
    return snp.linalg.triangular_solve(a, b, lower=lower, left_side=left_side,
                                       transpose_a=trans, unit_diagonal=unit_diagonal)


def qr(x, *, pivoting: bool = False, full_matrices: bool = True,
       use_magma: bool | None = None) -> tuple[Tensor, Tensor]:
    """(q, r) with x = q @ r: q (m, m) and r (m, n) with full_matrices, else (m, k) and
    (k, n), k = min(m, n). use_magma is accepted for JAX's signature (a GPU choice)."""
    del use_magma
    if pivoting:
        raise NotImplementedError(at_user_line(
            "lax.linalg.qr(pivoting=True) is not supported: column-pivoted QR has no XLA "
            "lowering here; factor without pivoting, or pivot on the host with scipy"))
    q, r = snp.linalg.qr(_matrices("qr", x), mode="complete" if full_matrices else "reduced")
    return q, r


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index: tuple[int, int] | None = None,
         implementation=None) -> tuple[Tensor, Tensor]:
    """(v, w): the eigenvectors (columns of v) and ascending real eigenvalues w of a
    Hermitian x — JAX's order, the reverse of numpy.linalg.eigh's. symmetrize_input uses
    (x + x^H) / 2, otherwise the `lower` (or upper) triangle is read. subset_by_index
    (lo, hi) keeps eigenvalues lo..hi-1. Eigenvalues always come sorted (which
    sort_eigenvalues=False allows); implementation is accepted for JAX's signature."""
    del sort_eigenvalues, implementation
    x = _matrices("eigh", x)
    w, v = snp.linalg.eigh(x if symmetrize_input else _from_triangle(x, lower))
    if subset_by_index is not None:
        lo, hi = _subset("eigh", subset_by_index, w.shape[-1])
        w, v = w[..., lo:hi], v[..., lo:hi]
    return v, w


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: tuple[int, int] | None = None, algorithm=None):
    """(u, s, vh) with x = u @ diag(s) @ vh and s descending, or s alone without
    compute_uv. subset_by_index (lo, hi) keeps singular values lo..hi-1 (with
    full_matrices=False). algorithm (SvdAlgorithm) is accepted for JAX's signature."""
    del algorithm
    x = _matrices("svd", x)
    if subset_by_index is not None and full_matrices and compute_uv:
        raise ValueError(at_user_line(
            "lax.linalg.svd: subset_by_index needs full_matrices=False (as in JAX)"))
    if not compute_uv:
        s = snp.linalg.svd(x, compute_uv=False)
        if subset_by_index is not None:
            lo, hi = _subset("svd", subset_by_index, s.shape[-1])
            s = s[..., lo:hi]
        return s
    u, s, vh = snp.linalg.svd(x, full_matrices=full_matrices)
    if subset_by_index is not None:
        lo, hi = _subset("svd", subset_by_index, s.shape[-1])
        u, s, vh = u[..., :, lo:hi], s[..., lo:hi], vh[..., lo:hi, :]
    return u, s, vh


def _subset(name: str, subset, n: int) -> tuple[int, int]:
    lo, hi = (int(i) for i in subset)
    if not 0 <= lo <= hi <= n:
        raise ValueError(at_user_line(
            f"lax.linalg.{name}: subset_by_index {tuple(subset)} is not a range within "
            f"0..{n}"))
    return lo, hi


def lu(x) -> tuple[Tensor, Tensor, Tensor]:
    """(lu, pivots, permutation) of x = P L U with partial pivoting: L (unit diagonal,
    below) and U (on and above) packed in one matrix, int32 0-based pivots (row i was
    swapped with row pivots[i]) and the int32 row permutation they make."""
    return snp.linalg.lu_factor(_matrices("lu", x))


def lu_pivots_to_permutation(pivots, permutation_size: int) -> Tensor:
    """The row permutation of range(permutation_size) that the swaps i <-> pivots[..., i]
    make, in order (int32, batch axes as pivots')."""
    piv = as_tensor(pivots)
    if piv.dtype.kind not in "iu" or piv.ndim < 1:
        raise TypeError(at_user_line(
            f"lax.linalg.lu_pivots_to_permutation needs integer pivots (..., k), got "
            f"{piv.dtype.name}{list(piv.shape)}"))
    m = int(permutation_size)
    if piv.shape[-1] > m:
        raise ValueError(at_user_line(
            f"lax.linalg.lu_pivots_to_permutation: {piv.shape[-1]} pivots do not fit a "
            f"permutation of size {m}"))
    piv = snp.astype(piv, dt.int32)
    rows = snp.arange(m, dtype=dt.int32)
    perm = snp.broadcast_to(rows, piv.shape[:-1] + (m,))
    for i in builtins.range(piv.shape[-1]):
        j = piv[..., i:i + 1]
        at_i = perm[..., i:i + 1]
        at_j = snp.take_along_axis(perm, j, axis=-1)
        # swap positions i and j: i takes perm[j]; j takes perm[i]
        perm = snp.where(rows == i, at_j, snp.where(rows == j, at_i, perm))
    return perm


def tridiagonal_solve(dl, d, du, b, *, perturb_singular: bool = False) -> Tensor:
    """x solving T @ x = b for the tridiagonal T with sub-diagonal dl (dl[..., 0] is
    ignored), diagonal d and super-diagonal du (du[..., -1] is ignored), each (..., m);
    b is (..., m, n). The Thomas algorithm (no pivoting: T should be diagonally dominant
    or otherwise well conditioned). perturb_singular is accepted for JAX's signature."""
    del perturb_singular
    dl, d, du, b = (as_tensor(v) for v in (dl, d, du, b))
    m = d.shape[-1]
    if b.ndim < 2 or b.shape[-2] != m or builtins.any(v.shape != d.shape for v in (dl, du)):
        raise ValueError(at_user_line(
            f"lax.linalg.tridiagonal_solve: dl, d and du need one shape (..., m) and b "
            f"(..., m, n), got {dl.shape}, {d.shape}, {du.shape} and {b.shape}"))
    # the ignored corners are zeros (a NaN there must not reach the solution)
    at = snp.arange(m)
    dl, du = snp.where(at == 0, 0, dl), snp.where(at == m - 1, 0, du)
    # scan along m: move that axis first
    dl_, d_, du_ = (snp.moveaxis(v, -1, 0) for v in (dl, d, du))
    b_ = snp.moveaxis(b, -2, 0)
    zero_c = snp.zeros_like(d_[0])
    zero_x = snp.zeros_like(b_[0])

    def forward(carry, row):
        c_prev, y_prev = carry
        lo, di, up, bi = row
        denom = di - lo * c_prev
        c = up / denom
        y = (bi - lo[..., None] * y_prev) / denom[..., None]
        return (c, y), (c, y)

    _, (c, y) = scan(forward, (zero_c, zero_x), (dl_, d_, du_, b_))

    def backward(x_next, row):
        ci, yi = row
        x = yi - ci[..., None] * x_next
        return x, x

    _, x = scan(backward, zero_x, (c, y), reverse=True)
    return snp.moveaxis(x, 0, -2)


__all__ = ["SvdAlgorithm", "cholesky", "eigh", "lu", "lu_pivots_to_permutation", "qr",
           "svd", "triangular_solve", "tridiagonal_solve"]


def __dir__() -> list[str]:  # dir(), help() and tab completion show the public names only
    return sorted(__all__)
