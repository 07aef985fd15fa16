"""stablejit.scipy.linalg: SciPy's linear algebra names and defaults, as jax.scipy.linalg.

SciPy's defaults differ from NumPy's: cholesky and cho_factor give the *upper* factor
(lower=False), solve_triangular assumes an *upper* triangle, qr's default mode is
"full" and its mode "r" returns a 1-tuple. Factorisations bind the linalg primitives
(LAPACK on the host) through stablejit.numpy.linalg; the rest are compositions.
"""

from __future__ import annotations

import math

from .. import numpy as snp
from ..compiler import dtypes as dt
from ..compiler.primitives import linalg as la
from ..dispatch import bind1
from ..errors import at_user_line
from ..numpy import linalg as nla
from ..numpy._operands import promote_operands
from ..promotion import default_float
from ..tensor import Tensor

_TRANS = {0: "N", "N": "N", 1: "T", "T": "T", 2: "C", "C": "C"}


def _matrices(name: str, *xs) -> list[Tensor]:
    """The operands promoted to one inexact dtype (integers become the default float)."""
    ts, dtype = promote_operands(*xs)
    if not dtype.is_inexact:
        ts = [snp.astype(t, default_float()) for t in ts]
    if ts[0].ndim < 2 or ts[0].shape[-1] != ts[0].shape[-2]:
        raise ValueError(at_user_line(f"scipy.linalg.{name}: needs a square matrix (or a "
                                      f"stack of them), got shape {ts[0].shape}"))
    return ts


def _adjoint(x: Tensor) -> Tensor:
    t = snp.matrix_transpose(x)
    return snp.conj(t) if x.dtype.is_complex else t


def _triangular(a: Tensor, b: Tensor, *, lower: bool, trans: str = "N",
                unit_diagonal: bool = False) -> Tensor:
    """Solve op(a) x = b, b a vector or a matrix (batches of either broadcast)."""
    vector = b.ndim == 1
    if vector:
        b = b[:, None]
    batch = snp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = snp.broadcast_to(a, batch + a.shape[-2:])
    b = snp.broadcast_to(b, batch + b.shape[-2:])
    x = bind1(la.triangular_solve, a, b, left_side=True, lower=lower, transpose_a=trans,
              unit_diagonal=unit_diagonal)
    return x[..., 0] if vector else x


def solve_triangular(a, b, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False, debug=None,
                     check_finite: bool = True) -> Tensor:
    """Solve a x = b for x with a triangular (the upper triangle unless lower=True);
    trans 0/'N', 1/'T' or 2/'C' solves with a, its transpose or its conjugate transpose."""
    del overwrite_b, debug, check_finite  # SciPy's memory and checking options
    if trans not in _TRANS:
        raise ValueError(at_user_line(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' "
                                      f"or 'C', got {trans!r}"))
    a, b = _matrices("solve_triangular", a, b)
    return _triangular(a, b, lower=lower, trans=_TRANS[trans], unit_diagonal=unit_diagonal)


def cholesky(a, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Tensor:
    """The Cholesky factor of a Hermitian positive definite a: upper (a = U^H U) by
    default, lower (a = L L^H) with lower=True. Only the named triangle of a is read."""
    del overwrite_a, check_finite
    (a,) = _matrices("cholesky", a)
    l = bind1(la.cholesky, a if lower else _adjoint(a))
    return l if lower else _adjoint(l)


def cho_factor(a, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Tensor, bool]:
    """(c, lower) for cho_solve: c the Cholesky factor (upper unless lower=True)."""
    del overwrite_a, check_finite
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower: tuple, b, overwrite_b: bool = False,
              check_finite: bool = True) -> Tensor:
    """Solve a x = b given cho_factor(a)."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    c, b = _matrices("cho_solve", c, b)
    if lower:  # a = L L^H
        y = _triangular(c, b, lower=True)
        return _triangular(c, y, lower=True, trans="C")
    y = _triangular(c, b, lower=False, trans="C")  # a = U^H U
    return _triangular(c, y, lower=False)


def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """(lu, piv): L (unit diagonal, below) and U (on and above) of a = P L U in one
    matrix, and 0-based int32 pivots (row i was swapped with row piv[i])."""
    del overwrite_a, check_finite
    (a,) = _matrices("lu_factor", a)
    lu, piv, _ = nla.lu_factor(a)
    return lu, piv


def _pivots_to_permutation(piv: Tensor, m: int) -> Tensor:
    """The row permutation that the sequence of swaps i <-> piv[i] makes of range(m)."""
    rows = snp.arange(m, dtype=piv.dtype)
    perm = snp.broadcast_to(rows, piv.shape[:-1] + (m,))
    for i in range(piv.shape[-1]):
        j = piv[..., i:i + 1]
        at_i = perm[..., i:i + 1]
        at_j = snp.take_along_axis(perm, j, axis=-1)
        perm = snp.where(rows == i, at_j, snp.where(rows == j, at_i, perm))
    return perm


def _permutation_matrix(perm: Tensor, dtype) -> Tensor:
    """P with P[..., i, j] = (perm[i] == j), so P @ b == b[perm]."""
    m = perm.shape[-1]
    return snp.astype(perm[..., :, None] == snp.arange(m, dtype=perm.dtype), dtype)


def lu_solve(lu_and_piv: tuple, b, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Tensor:
    """Solve a x = b (trans=0), a^T x = b (1) or a^H x = b (2) given lu_factor(a)."""
    del overwrite_b, check_finite
    lu, piv = lu_and_piv
    if trans not in (0, 1, 2):
        raise ValueError(at_user_line(f"lu_solve: trans must be 0, 1 or 2, got {trans!r}"))
    lu, b = _matrices("lu_solve", lu, b)
    vector = b.ndim == 1
    if vector:
        b = b[:, None]
    p = _permutation_matrix(_pivots_to_permutation(snp.asarray(piv), lu.shape[-1]),
                            lu.dtype)
    if trans == 0:  # P a = L U
        y = _triangular(lu, snp.matmul(p, b), lower=True, unit_diagonal=True)
        x = _triangular(lu, y, lower=False)
    else:  # a^T = U^T L^T P
        op = "T" if trans == 1 else "C"
        y = _triangular(lu, b, lower=False, trans=op)
        y = _triangular(lu, y, lower=True, trans=op, unit_diagonal=True)
        x = snp.matmul(snp.matrix_transpose(p), y)
    return x[..., 0] if vector else x


def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """(p, l, u) with a = p @ l @ u, or (p @ l, u) with permute_l=True; a may be
    rectangular (m x n): l is m x k, u is k x n, k = min(m, n)."""
    del overwrite_a, check_finite
    a = snp.asarray(a)
    if not a.dtype.is_inexact:
        a = snp.astype(a, default_float())
    if a.ndim < 2:
        raise ValueError(at_user_line(f"scipy.linalg.lu: needs a matrix, got shape "
                                      f"{a.shape}"))
    packed, _, perm = nla.lu_factor(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    p = snp.matrix_transpose(_permutation_matrix(perm, a.dtype))
    l = snp.tril(packed, -1)[..., :, :k] + snp.eye(m, k, dtype=a.dtype)
    u = snp.triu(packed)[..., :k, :]
    return (snp.matmul(p, l), u) if permute_l else (p, l, u)


def qr(a, overwrite_a: bool = False, lwork=None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True):
    """(q, r) for mode "full" (q is m x m) or "economic" (q is m x k); (r,) for "r"."""
    del overwrite_a, lwork, check_finite
    if pivoting:
        raise NotImplementedError(at_user_line(
            "scipy.linalg.qr(pivoting=True) is not supported; use pivoting=False"))
    if mode not in ("full", "economic", "r"):
        raise ValueError(at_user_line(f"scipy.linalg.qr: mode must be 'full', 'economic' "
                                      f"or 'r', got {mode!r}"))
    q, r = nla.qr(a, mode="reduced" if mode == "economic" else "complete")
    return (r,) if mode == "r" else (q, r)


def svd(a, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd"):
    """(u, s, vh) with a = u @ diag(s) @ vh, or s alone with compute_uv=False."""
    del overwrite_a, check_finite, lapack_driver
    if not compute_uv:
        return nla.svdvals(a)
    u, s, vh = nla.svd(a, full_matrices=full_matrices)
    return u, s, vh


def eigh(a, b=None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True,
         eigvals=None, type: int = 1, check_finite: bool = True):  # noqa: A002 (SciPy's name)
    """(w, v) of a Hermitian a (eigenvalues ascending), or w with eigvals_only. The
    generalized problem (b), eigvals= and type != 1 are not supported (as in jax)."""
    del overwrite_a, overwrite_b, turbo, check_finite
    if b is not None or eigvals is not None or type != 1:
        raise NotImplementedError(at_user_line(
            "scipy.linalg.eigh: only the standard problem is supported (b=None, "
            "eigvals=None, type=1)"))
    w, v = nla.eigh(a, UPLO="L" if lower else "U")
    return w if eigvals_only else (w, v)


def inv(a, overwrite_a: bool = False, check_finite: bool = True) -> Tensor:
    """The inverse of square matrices, as scipy.linalg.inv (overwrite_a and check_finite
    are accepted and ignored). See stablejit.numpy.linalg.inv.
    """
    del overwrite_a, check_finite
    return nla.inv(a)


def det(a, overwrite_a: bool = False, check_finite: bool = True) -> Tensor:
    """The determinant of square matrices, as scipy.linalg.det (overwrite_a and
    check_finite are accepted and ignored). See stablejit.numpy.linalg.det.
    """
    del overwrite_a, check_finite
    return nla.det(a)


def solve(a, b, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen") -> Tensor:
    """Solve a x = b; assume_a="pos" (positive definite) solves through a Cholesky
    factor of the triangle `lower` names, anything else through LU."""
    del overwrite_a, overwrite_b, debug, check_finite
    if assume_a != "pos":
        return nla.solve(a, b)
    a, b = _matrices("solve", a, b)
    return cho_solve(cho_factor(a, lower=lower), b)


def block_diag(*arrs) -> Tensor:
    """The block diagonal matrix of the arguments (scalars and vectors are 1-row
    matrices)."""
    if not arrs:
        return snp.zeros((1, 0))  # the default float
    ts, _ = promote_operands(*arrs)
    for i, t in enumerate(ts):
        if t.ndim > 2:
            raise ValueError(at_user_line(f"block_diag: argument {i} has {t.ndim} "
                                          f"dimensions; each must have at most 2"))
    ts = [snp.atleast_2d(t) for t in ts]
    total = sum(t.shape[1] for t in ts)
    rows, col = [], 0
    for t in ts:
        rows.append(snp.pad(t, ((0, 0), (col, total - col - t.shape[1]))))
        col += t.shape[1]
    return snp.concatenate(rows, axis=0)


# ---- expm: scaling and squaring with Pade approximants (Higham 2005), as jax -----------

_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}
# (largest 1-norm each Pade order serves, the orders) per precision
_PADE_RANGES = {
    "single": ((4.258730016922831e-001, 1.880152677804762e+000), (3, 5, 7), 3.925724783138660),
    "double": ((1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001,
                2.097847961257068e+000), (3, 5, 7, 9, 13), 5.371920351148152),
}


def _pade(a: Tensor, order: int) -> tuple[Tensor, Tensor]:
    """(U, V): the odd and even parts of the order-m Pade numerator of exp(a)."""
    b = _PADE[order]
    ident = snp.eye(a.shape[-1], dtype=a.dtype)
    a2 = snp.matmul(a, a)
    powers = [ident, a2]
    if order == 13:
        a4 = snp.matmul(a2, a2)
        a6 = snp.matmul(a4, a2)
        u = snp.matmul(a, snp.matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
                       + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
        v = snp.matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 \
            + b[2] * a2 + b[0] * ident
        return u, v
    while len(powers) < (order + 1) // 2:
        powers.append(snp.matmul(powers[-1], a2))
    u = snp.matmul(a, sum(b[2 * i + 1] * p for i, p in enumerate(powers)))
    v = sum(b[2 * i] * p for i, p in enumerate(powers))
    return u, v


def expm(A, *, upper_triangular: bool = False, max_squarings: int = 16) -> Tensor:
    """The matrix exponential (of each matrix of a stack); nan where more than
    max_squarings squarings would be needed."""
    (a,) = _matrices("expm", A)
    precision = "double" if a.dtype in (dt.float64, dt.complex128) else "single"
    bounds, orders, max_norm = _PADE_RANGES[precision]
    norm = snp.max(snp.sum(snp.abs(a), axis=-2), axis=-1)  # the 1-norm of each matrix
    n_squarings = snp.maximum(0.0, snp.floor(snp.log2(norm / max_norm)))
    scale = snp.astype(2.0 ** n_squarings, a.dtype)[..., None, None]
    a = a / scale
    # the Pade order each matrix needs: the number of bounds its norm reaches
    order_index = sum(snp.astype(norm >= bound, dt.int32) for bound in bounds)
    u = v = None
    for i, order in enumerate(orders):
        ui, vi = _pade(a, order)
        pick = (order_index == i)[..., None, None]
        u = ui if u is None else snp.where(pick, ui, u)
        v = vi if v is None else snp.where(pick, vi, v)
    p, q = u + v, v - u
    r = _triangular(q, p, lower=False) if upper_triangular else nla.solve(q, p)
    for i in range(max_squarings):
        r = snp.where((i < n_squarings)[..., None, None], snp.matmul(r, r), r)
    return snp.where((n_squarings > max_squarings)[..., None, None], math.nan, r)


__all__ = ["solve_triangular", "cholesky", "cho_factor", "cho_solve", "lu_factor",
           "lu_solve", "lu", "qr", "svd", "eigh", "inv", "det", "solve", "block_diag",
           "expm"]



def __dir__() -> list[str]:  # dir(), help() and tab completion show the public names only
    return sorted(__all__)
