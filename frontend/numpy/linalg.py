"""stablejit.numpy.linalg: the NumPy / array API linear algebra extension.

Factorisations bind the linalg primitives (LAPACK on the host); everything else is a
composition of them with the rest of stablejit.numpy. Inputs of eigh and cholesky are
symmetrised ((a + a^H) / 2) first, as in JAX, so gradients are symmetric too.
"""

from __future__ import annotations

import builtins
import math
from typing import NamedTuple

from ..compiler import dtypes as dt
from ..compiler.ir import Attrs
from ..compiler.primitives import linalg as la
from ..dispatch import bind, bind1
from ..errors import at_user_line
from ..promotion import default_float
from ..tensor import Tensor
from . import _elementwise as E
from . import _reductions as R
from ._creation import arange, eye, zeros
from ._manipulation import expand_dims, matrix_transpose, moveaxis, reshape, stack
from ._operands import as_tensor, broadcast_shapes, broadcast_to, promote_operands
from ._products import matmul, outer, tensordot, vecdot

__all__ = ["cholesky", "qr", "eig", "eigvals", "eigh", "eigvalsh", "svd", "svdvals", "solve",
           "inv", "det",
           "slogdet", "norm", "matrix_norm", "vector_norm", "matrix_power", "matrix_rank",
           "pinv", "outer", "vecdot", "cross", "trace", "diagonal", "tensordot", "matmul",
           "matrix_transpose", "lu_factor", "triangular_solve", "lstsq", "multi_dot", "cond",
           "tensorinv", "tensorsolve"]


class EigResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


def _float_matrix(x, name: str, square: bool = False) -> Tensor:
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(at_user_line(f"linalg.{name}: needs a matrix (or a stack of "
                                      f"matrices), got shape {x.shape}"))
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(at_user_line(f"linalg.{name}: needs square matrices, got shape "
                                      f"{x.shape}"))
    if not x.dtype.is_inexact:
        x = x.astype(default_float())
    elif x.dtype in (dt.float16, dt.bfloat16):
        x = x.astype(dt.float32)
    return x


def _h(x: Tensor) -> Tensor:
    t = matrix_transpose(x)
    return E.conj(t) if x.dtype.is_complex else t


def _symmetrize(x: Tensor) -> Tensor:
    return (x + _h(x)) * 0.5


def _eye_like(x: Tensor) -> Tensor:
    return eye(x.shape[-1], dtype=x.dtype)


def cholesky(x, *, upper: bool = False) -> Tensor:
    """The Cholesky factor of Hermitian positive-definite matrices: lower L with
    x = L @ L^H (upper=True: the upper factor U = L^H).

    Only the lower triangle of x is read (as NumPy's, the matrix is taken as Hermitian).
    Works on the last two axes; leading axes are a batch. A matrix that is not positive
    definite gives NaNs, as jax (NumPy raises LinAlgError).

    Raises:
        ValueError: if x is not a (batch of) square matrix.

    Example:
        >>> snp.linalg.cholesky(snp.asarray([[4.0, 2.0], [2.0, 2.0]]))
        Tensor<f32[2,2] xla:host:0>
        [[2., 0.],
         [1., 1.]]
    """
    x = _float_matrix(x, "cholesky", True)
    l = bind1(la.cholesky, _symmetrize(x))
    return _h(l) if upper else l


def triangular_solve(a, b, *, lower: bool = False, left_side: bool = True,
                     transpose_a: str = "N", unit_diagonal: bool = False) -> Tensor:
    """Solve op(a) x = b (left_side) or x op(a) = b with a triangular."""
    a = _float_matrix(a, "triangular_solve", True)
    b = as_tensor(b).astype(a.dtype)
    return bind1(la.triangular_solve, a, b, left_side=left_side, lower=lower,
                 transpose_a=transpose_a, unit_diagonal=unit_diagonal)


def qr(x, mode: str = "reduced"):
    """The QR decomposition of matrices: x = q @ r, q with orthonormal columns, r upper
    triangular.

    mode: 'reduced' (q is (..., m, k), r is (..., k, n) with k = min(m, n)), 'complete'
    (q is (..., m, m)) or 'r' (r alone). Returns QRResult(Q, R), or R for mode='r'.

    Raises:
        ValueError: for another mode, or x with fewer than two axes.

    Example:
        >>> q, r = snp.linalg.qr(snp.asarray([[3.0, 0.0], [4.0, 5.0]]))
        >>> r  # NumPy's signs: R's diagonal may be negative
        Tensor<f32[2,2] xla:host:0>
        [[-5., -4.],
         [ 0.,  3.]]
    """
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(at_user_line(f"linalg.qr: mode must be 'reduced', 'complete' or "
                                      f"'r', got {mode!r}"))
    x = _float_matrix(x, "qr")
    q, r = bind(la.qr, (x,), Attrs({"full_matrices": mode == "complete"}))
    return r if mode == "r" else QRResult(q, r)


def eigh(x, UPLO: str = "L"):
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices.

    UPLO: which triangle to read, 'L' (default) or 'U'. Returns EighResult(eigenvalues,
    eigenvectors), the eigenvectors as columns. Works on the last two axes; leading axes
    are a batch.

    Raises:
        ValueError: if x is not a (batch of) square matrix.

    Example:
        >>> w, v = snp.linalg.eigh(snp.asarray([[2.0, 0.0], [0.0, 1.0]]))
        >>> w
        Tensor<f32[2] xla:host:0>
        [1., 2.]
    """
    x = _float_matrix(x, "eigh", True)
    w, v = bind(la.eigh, (_symmetrize(x),), Attrs({"lower": UPLO == "L"}))
    return EighResult(w, v)


def eigvalsh(x, UPLO: str = "L") -> Tensor:
    """The eigenvalues (ascending) of Hermitian matrices: eigh's, without the
    eigenvectors. UPLO: which triangle to read, 'L' or 'U'.

    Example:
        >>> snp.linalg.eigvalsh(snp.asarray([[2.0, 1.0], [1.0, 2.0]]))
        Tensor<f32[2] xla:host:0>
        [1., 3.]
    """
    return eigh(x, UPLO)[0]


def eig(a) -> EigResult:
    """Eigenvalues w and right eigenvectors v (columns, unit norm) of general square
    matrices, both complex: a @ v = v * w. LAPACK's geev on the host, as jax; other
    platforms raise an error that names them. Not differentiable."""
    x = _float_matrix(a, "eig", True)
    w, v = bind(la.eig, (x,), Attrs({"compute_left_eigenvectors": False,
                                     "compute_right_eigenvectors": True}))
    return EigResult(w, v)


def eigvals(a) -> Tensor:
    """The (complex) eigenvalues of general square matrices, as eig's, without the
    eigenvectors."""
    x = _float_matrix(a, "eigvals", True)
    (w,) = bind(la.eig, (x,), Attrs({"compute_left_eigenvectors": False,
                                     "compute_right_eigenvectors": False}))
    return w


def _empty_svd(x: Tensor, full_matrices: bool) -> SVDResult:
    """The SVD of matrices with a zero-length axis (LAPACK is not called): no singular
    values; U and Vh are identities (full_matrices) or empty, as in NumPy."""
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    s = zeros(batch + (0,), dtype=dt.real_dtype(x.dtype))
    if full_matrices:
        u = broadcast_to(eye(m, dtype=x.dtype), batch + (m, m))
        vh = broadcast_to(eye(n, dtype=x.dtype), batch + (n, n))
    else:
        u, vh = zeros(batch + (m, 0), dtype=x.dtype), zeros(batch + (0, n), dtype=x.dtype)
    return SVDResult(u, s, vh)


def svd(x, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False):
    """The singular value decomposition x = u @ diag(s) @ vh.

    full_matrices: u and vh square (True) or reduced to k = min(m, n) columns / rows.
    compute_uv=False returns s alone. hermitian is accepted for NumPy's signature.
    Returns SVDResult(U, S, Vh); the singular values are in descending order. Works on the
    last two axes; leading axes are a batch. On TPU it raises UnsupportedPlatformError.

    Example:
        >>> snp.linalg.svd(snp.asarray([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False)
        Tensor<f32[2] xla:host:0>
        [4., 3.]
    """
    x = _float_matrix(x, "svd")
    if not compute_uv:
        return svdvals(x)
    if min(x.shape[-2:]) == 0:
        return _empty_svd(x, full_matrices)
    s, u, vh = bind(la.svd, (x,), Attrs({"full_matrices": full_matrices,
                                            "compute_uv": True}))
    return SVDResult(u, s, vh)


def svdvals(x) -> Tensor:
    """The singular values of matrices, in descending order (the array API's
    svdvals; NumPy has svd(x, compute_uv=False)).
    """
    x = _float_matrix(x, "svdvals")
    if min(x.shape[-2:]) == 0:
        return _empty_svd(x, False).S
    return bind(la.svd, (x,), Attrs({"full_matrices": False, "compute_uv": False}))[0]


def lu_factor(x):
    """(lu, pivots, permutation) of a = P L U with partial pivoting (0-based pivots)."""
    x = _float_matrix(x, "lu_factor")
    if min(x.shape[-2:]) == 0:
        # nothing to factor, and the LAPACK lowering cannot slice an empty pivot vector
        batch = x.shape[:-2]
        return (x, zeros(batch + (0,), dtype=dt.int32),
                broadcast_to(arange(x.shape[-2], dtype=dt.int32), batch + x.shape[-2:-1]))
    return bind(la.lu, (x,), Attrs({}))


def _permute_rows(perm: Tensor, b: Tensor) -> Tensor:
    """b[..., perm, :] as a one-hot matmul (perm [..., n], b [..., n, k])."""
    n = perm.shape[-1]
    onehot = E.equal(perm[..., :, None], arange(n, dtype=dt.int32))
    return matmul(onehot.astype(b.dtype), b)


def solve(a, b) -> Tensor:
    """The solution of a @ x = b for square matrices a.

    b is a vector (..., n) or matrices (..., n, k) as in the array API (NumPy 2's rule);
    batch axes broadcast. A singular a gives infs or NaNs, as jax (NumPy raises
    LinAlgError).

    Raises:
        ValueError: if a is not square or the sizes do not match.

    Example:
        >>> a = snp.asarray([[3.0, 1.0], [1.0, 2.0]])
        >>> snp.linalg.solve(a, snp.asarray([9.0, 8.0]))
        Tensor<f32[2] xla:host:0>
        [2., 3.]
    """
    (a, b), _ = promote_operands(a, b)  # solve(complex64, complex128) is complex128
    a = _float_matrix(a, "solve", True)
    b = b.astype(a.dtype) if b.dtype is not a.dtype else b
    vec = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    if vec:
        b = b[..., None]
    if b.shape[-2] != a.shape[-1]:
        raise ValueError(at_user_line(f"linalg.solve: a {a.shape} and b {b.shape} do not "
                                      f"match (b needs {a.shape[-1]} rows)"))
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = broadcast_to(a, batch + a.shape[-2:])
    b = broadcast_to(b, batch + b.shape[-2:])
    lu, _, perm = lu_factor(a)
    y = bind1(la.triangular_solve, lu, _permute_rows(perm, b), left_side=True, lower=True,
              transpose_a="N", unit_diagonal=True)
    x = bind1(la.triangular_solve, lu, y, left_side=True, lower=False, transpose_a="N",
              unit_diagonal=False)
    return x[..., 0] if vec else x


def inv(x) -> Tensor:
    """The inverse of square matrices (of the last two axes). A singular matrix gives
    infs or NaNs, as jax (NumPy raises LinAlgError).

    Raises:
        ValueError: if x is not a (batch of) square matrix.

    Example:
        >>> snp.linalg.inv(snp.asarray([[2.0, 0.0], [0.0, 4.0]]))
        Tensor<f32[2,2] xla:host:0>
        [[0.5 , 0.  ],
         [0.  , 0.25]]
    """
    x = _float_matrix(x, "inv", True)
    return solve(x, broadcast_to(_eye_like(x), x.shape))


def tensorinv(a, ind: int = 2) -> Tensor:
    """The inverse of a under tensordot over `ind` axes: a's first `ind` axes against the
    rest, as one square matrix; the result has shape a.shape[ind:] + a.shape[:ind]."""
    a = as_tensor(a)
    if not isinstance(ind, int) or ind <= 0:
        raise ValueError(at_user_line(f"linalg.tensorinv: ind must be a positive integer, "
                                      f"got {ind!r}"))
    rows, cols = a.shape[:ind], a.shape[ind:]
    n, m = math.prod(rows), math.prod(cols)
    if n != m:
        raise ValueError(at_user_line(
            f"linalg.tensorinv: a's first {ind} axes {rows} hold {n} elements and the rest "
            f"{cols} hold {m}; they must be equal (a square matrix), or pass another ind"))
    return reshape(inv(reshape(a, (n, m))), cols + rows)


def tensorsolve(a, b, axes=None) -> Tensor:
    """x with tensordot(a, x, x.ndim) == b: a's leading axes match b's shape, its other
    axes are x's (`axes`: axes of a moved to the end first)."""
    a, b = as_tensor(a), as_tensor(b)
    if axes is not None:
        axes = (axes,) if isinstance(axes, int) else tuple(axes)
        a = moveaxis(a, axes, tuple(range(a.ndim - len(axes), a.ndim)))
    k = b.ndim
    if a.shape[:k] != b.shape:
        raise ValueError(at_user_line(f"linalg.tensorsolve: a's leading axes {a.shape[:k]} "
                                      f"must be b's shape {b.shape}"))
    xs = a.shape[k:]
    n, m = math.prod(b.shape), math.prod(xs)
    if n != m:
        raise ValueError(at_user_line(
            f"linalg.tensorsolve: b has {n} elements and x's shape {xs} has {m}; the "
            f"system must be square"))
    return reshape(solve(reshape(a, (n, m)), reshape(b, (n,))), xs)


def diagonal(x, offset: int = 0, axis1: int = -2, axis2: int = -1) -> Tensor:
    """The offset-th diagonal of the matrices on the last two axes (the array
    API's diagonal; stablejit.numpy.diagonal uses the first two, as NumPy). A read-only
    view.
    """
    x = as_tensor(x)
    if (axis1 % x.ndim, axis2 % x.ndim) != (x.ndim - 2, x.ndim - 1):
        x = moveaxis(x, (axis1, axis2), (-2, -1))
    m, n = x.shape[-2:]
    if offset >= 0:
        x = x[..., :, offset:]
    else:
        x = x[..., -offset:, :]
    m, n = x.shape[-2:]
    k = builtins.max(builtins.min(m, n), 0)
    if k == 0:
        return reshape(x, x.shape[:-2] + (0,))
    flat = reshape(x, x.shape[:-2] + (m * n,))
    return flat[..., : (k - 1) * (n + 1) + 1: n + 1]


def trace(x, offset: int = 0, dtype=None) -> Tensor:
    """The sum of the offset-th diagonal of the matrices on the last two axes (the
    array API's trace; NumPy's stablejit.numpy.trace uses the first two). dtype: the
    accumulation dtype.
    """
    return R.sum(diagonal(x, offset), axis=-1, dtype=dtype)


def slogdet(x):
    """The sign and the log of the absolute value of the determinant of square
    matrices: SlogdetResult(sign, logabsdet), with det = sign * exp(logabsdet) without
    overflow. A singular matrix gives sign 0 and logabsdet -inf.

    Example:
        >>> stablejit.numpy.linalg.slogdet(snp.asarray([[0.0, 2.0], [3.0, 0.0]]))
        SlogdetResult(sign=Tensor<f32[] xla:host:0>
        -1., logabsdet=Tensor<f32[] xla:host:0>
        1.7917595)
    """
    x = _float_matrix(x, "slogdet", True)
    lu, piv, _ = lu_factor(x)
    d = diagonal(lu)
    swaps = R.sum(E.not_equal(piv, arange(piv.shape[-1], dtype=dt.int32)).astype(dt.int32),
                  axis=-1)
    parity = 1 - 2 * (swaps % 2)
    ad = E.abs(d)
    logabs = R.sum(E.log(ad), axis=-1)
    if x.dtype.is_complex:
        unit = R.prod(d / ad.astype(x.dtype), axis=-1)
        sign = unit * parity.astype(x.dtype)
    else:
        sign = R.prod(E.sign(d), axis=-1) * parity.astype(x.dtype)
    zero = R.any(E.equal(ad, 0), axis=-1)
    sign = E.select(zero, 0, sign)
    return SlogdetResult(sign, E.select(zero, -math.inf, logabs))


def det(x) -> Tensor:
    """The determinant of square matrices (of the last two axes), from an LU
    factorisation.

    Raises:
        ValueError: if x is not a (batch of) square matrix.

    Example:
        >>> snp.linalg.det(snp.asarray([[1.0, 2.0], [3.0, 4.0]]))
        Tensor<f32[] xla:host:0>
        -1.9999999
    """
    x = _float_matrix(x, "det", True)
    lu, piv, _ = lu_factor(x)
    swaps = R.sum(E.not_equal(piv, arange(piv.shape[-1], dtype=dt.int32)).astype(dt.int32),
                  axis=-1)
    parity = (1 - 2 * (swaps % 2)).astype(x.dtype)
    return R.prod(diagonal(lu), axis=-1) * parity


def matrix_power(x, n: int) -> Tensor:
    """A square matrix raised to the integer power n, by repeated squaring;
    n = 0 gives the identity and n < 0 the power of the inverse.

    Raises:
        TypeError: if n is not an integer.
    """
    x = _float_matrix(x, "matrix_power", True) if n < 0 else as_tensor(x)
    if not isinstance(n, int):
        raise TypeError(at_user_line("linalg.matrix_power: the exponent must be a Python int"))
    if n < 0:
        x, n = inv(x), -n
    result = None
    base = x
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result if result is not None else broadcast_to(_eye_like(x), x.shape)


def vector_norm(x, axis=None, keepdims: bool = False, ord=2) -> Tensor:
    """The vector norm of x along `axis` (None: every element): ord 2
    (default), any real p, inf, -inf or 0 (the count of nonzeros), as the array API's.

    Returns a real tensor (of a complex x, its real dtype).
    """
    x = as_tensor(x)
    if not x.dtype.is_inexact:
        x = x.astype(default_float())
    a = E.abs(x)
    if ord == 2:
        return E.sqrt(R.sum(a * a, axis=axis, keepdims=keepdims))
    if ord == 1:
        return R.sum(a, axis=axis, keepdims=keepdims)
    if ord == math.inf:
        return R.max(a, axis=axis, keepdims=keepdims)
    if ord == -math.inf:
        return R.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return R.sum(E.not_equal(a, 0).astype(a.dtype), axis=axis, keepdims=keepdims)
    return R.sum(a ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def matrix_norm(x, keepdims: bool = False, ord="fro") -> Tensor:
    """The norm of matrices (the last two axes): ord 'fro' (default), 'nuc',
    1, -1, 2, -2, inf or -inf, as NumPy's. keepdims keeps the two axes with length 1.

    Raises:
        ValueError: for an unknown ord.
    """
    x = _float_matrix(x, "matrix_norm")
    a = E.abs(x)
    if ord == "fro":
        out = E.sqrt(R.sum(a * a, axis=(-2, -1)))
    elif ord == "nuc":
        out = R.sum(svdvals(x), axis=-1)
    elif ord in (2, -2):
        s = svdvals(x)
        out = R.max(s, axis=-1) if ord == 2 else R.min(s, axis=-1)
    elif ord in (1, -1):
        cols = R.sum(a, axis=-2)
        out = R.max(cols, axis=-1) if ord == 1 else R.min(cols, axis=-1)
    elif ord in (math.inf, -math.inf):
        rows = R.sum(a, axis=-1)
        out = R.max(rows, axis=-1) if ord == math.inf else R.min(rows, axis=-1)
    else:
        raise ValueError(at_user_line(f"linalg.matrix_norm: unsupported ord {ord!r}; use "
                                      f"'fro', 'nuc', 1, -1, 2, -2, inf or -inf"))
    return out[..., None, None] if keepdims else out


def norm(x, ord=None, axis=None, keepdims: bool = False) -> Tensor:
    """numpy.linalg.norm: vector norms for 1-D input or one axis, matrix norms for 2-D.

    Example:
        >>> snp.linalg.norm(snp.asarray([3.0, 4.0]))
        Tensor<f32[] xla:host:0>
        5.
        >>> snp.linalg.norm(snp.asarray([[1.0, 2.0], [3.0, 4.0]]), ord=1)
        Tensor<f32[] xla:host:0>
        6.
    """
    x = as_tensor(x)
    if axis is None:
        if ord is None:
            return vector_norm(reshape(x, (-1,)) if not keepdims else x,
                               axis=None, keepdims=keepdims)
        axis = tuple(range(x.ndim))
    if isinstance(axis, int):
        axis = (axis,)
    if len(axis) == 1:
        return vector_norm(x, axis=axis, keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axis) == 2:
        y = moveaxis(x, axis, (-2, -1))
        out = matrix_norm(y, keepdims=False, ord="fro" if ord is None else ord)
        if keepdims:
            for a in sorted(a % x.ndim for a in axis):
                out = expand_dims(out, a)
        return out
    raise ValueError(at_user_line(f"linalg.norm: axis must name 1 or 2 axes, got {axis}"))


def matrix_rank(x, tol=None, rtol=None) -> Tensor:
    """How many singular values exceed `tol` (absolute) or `rtol` times the largest one;
    a tolerance per matrix of a stack has the stack's shape, x.shape[:-2].

    Example:
        >>> snp.linalg.matrix_rank(snp.asarray([[1.0, 2.0], [2.0, 4.0]]))
        Tensor<i64[] xla:host:0>
        1
    """
    x = _float_matrix(x, "matrix_rank")
    if 0 in x.shape[-2:]:  # an empty matrix has rank 0 (and no singular values)
        return zeros(x.shape[:-2], dt.int64)
    s = svdvals(x)
    if tol is None:
        eps = dt.finfo(dt.real_dtype(x.dtype)).eps
        r = rtol if rtol is not None else builtins.max(x.shape[-2:]) * eps
        tol = R.max(s, axis=-1, keepdims=True) * _per_matrix(r)
    else:
        tol = _per_matrix(tol)
    return R.sum(E.greater(s, tol).astype(dt.int64), axis=-1)


def _per_matrix(t):
    """A tolerance for each matrix of a stack (shape x.shape[:-2], or a number) made
    to broadcast against the singular values, which have one more axis."""
    if isinstance(t, Tensor) or getattr(t, "ndim", 0) > 0 or isinstance(t, (list, tuple)):
        t = as_tensor(t)
        return expand_dims(t, -1) if t.ndim else t
    return t


def pinv(x, rtol=None) -> Tensor:
    """The Moore-Penrose pseudo-inverse of matrices, from the SVD; singular values
    below rtol * the largest are treated as zero (default rtol: max(m, n) * eps).

    Example:
        >>> snp.linalg.pinv(snp.asarray([[2.0, 0.0], [0.0, 0.0]]))
        Tensor<f32[2,2] xla:host:0>
        [[0.5, 0. ],
         [0. , 0. ]]
    """
    x = _float_matrix(x, "pinv")
    u, s, vh = svd(x, full_matrices=False)
    eps = dt.finfo(dt.real_dtype(x.dtype)).eps
    r = rtol if rtol is not None else builtins.max(x.shape[-2:]) * eps
    if isinstance(r, Tensor):
        r = r[..., None]  # one rtol per matrix of the stack
    cutoff = (R.max(s, axis=-1, keepdims=True) if s.shape[-1] else s) * r
    sinv = E.select(E.greater(s, cutoff), 1.0 / E.select(E.greater(s, cutoff), s, 1.0), 0.0)
    return matmul(_h(vh) * sinv.astype(x.dtype)[..., None, :], _h(u))


def cross(x, y, axis: int = -1) -> Tensor:
    """The cross product of 3-element vectors along `axis` (the array API's:
    both operands need size 3 there; NumPy also takes 2-element vectors).

    Raises:
        ValueError: if the axis does not have size 3 in both operands.
    """
    x, y = as_tensor(x), as_tensor(y)
    if x.shape[axis] != 3 or y.shape[axis] != 3:
        raise ValueError(at_user_line(f"linalg.cross: both operands need size 3 along axis "
                                      f"{axis}, got {x.shape} and {y.shape}"))
    a = moveaxis(x, axis, -1)
    b = moveaxis(y, axis, -1)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return moveaxis(out, -1, axis)


class LstsqResult(NamedTuple):
    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor


def lstsq(a, b, rcond=None, *, numpy_resid: bool = False) -> LstsqResult:
    """The x minimising ||b - a x||_2, through the SVD of a (singular values below
    rcond * the largest count as zero). As in JAX, the residuals are always computed
    (NumPy gives an empty tensor when a is rank-deficient or not tall: numpy_resid=True,
    outside jit).

    Example:
        >>> a = snp.asarray([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        >>> x = snp.linalg.lstsq(a, snp.asarray([1.0, 1.0, 2.0]))[0]
        >>> snp.round(x, 4)  # (the last bit of an SVD's float32 result varies by CPU)
        Tensor<f32[2] xla:host:0>
        [1., 1.]
    """
    a = _float_matrix(a, "lstsq")
    (a, b), _ = promote_operands(a, b)
    if a.ndim != 2 or b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise ValueError(at_user_line(f"linalg.lstsq: a must be 2-D and b 1-D or 2-D with as "
                                      f"many rows; got shapes {a.shape} and {b.shape}"))
    vec = b.ndim == 1
    b2 = b[:, None] if vec else b
    m, n = a.shape
    u, s, vh = svd(a, full_matrices=False)
    eps = dt.finfo(dt.real_dtype(a.dtype)).eps
    cutoff = (builtins.max(m, n) * eps if rcond is None else rcond) * (
        s[0] if s.shape[0] else 0.0)
    keep = E.greater_equal(s, cutoff) if s.shape[0] else s > 0
    rank = R.sum(keep.astype(dt.int32), dtype=dt.int32)  # LAPACK's (and NumPy's) int32
    s_inv = E.select(keep, 1.0 / E.select(keep, s, 1.0), 0.0).astype(a.dtype)
    x = matmul(_h(vh), s_inv[:, None] * matmul(_h(u), b2))
    if numpy_resid and (not rank._backend.concrete or int(rank.item()) < n or m <= n):
        resid = zeros((0,), dt.real_dtype(a.dtype))
    else:
        r = E.abs(b2 - matmul(a, x))
        resid = R.sum(r * r, axis=0)
    return LstsqResult(x[:, 0] if vec else x, resid, rank, s)


def multi_dot(arrays) -> Tensor:
    """The product of a chain of matrices (the first may be a row vector and the last a
    column vector), multiplied in the order that needs the fewest scalar products."""
    ts = [as_tensor(t) for t in arrays]
    if len(ts) < 2:
        raise ValueError(at_user_line("linalg.multi_dot needs at least two tensors"))
    first_vec, last_vec = ts[0].ndim == 1, ts[-1].ndim == 1
    if first_vec:
        ts[0] = ts[0][None, :]
    if last_vec:
        ts[-1] = ts[-1][:, None]
    for i, t in enumerate(ts):
        if t.ndim != 2:
            raise ValueError(at_user_line(f"linalg.multi_dot: tensor {i} has shape {t.shape}; "
                                          f"inner ones must be 2-D (the ends may be 1-D)"))
    dims = [ts[0].shape[0]] + [t.shape[1] for t in ts]
    k = len(ts)
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):  # the classic matrix-chain order
        for i in range(k - length):
            j = i + length
            cost[i][j], split[i][j] = builtins.min(
                (cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1], s)
                for s in range(i, j))

    def product(i, j):
        return ts[i] if i == j else matmul(product(i, split[i][j]), product(split[i][j] + 1, j))

    out = product(0, k - 1)
    if first_vec:
        out = out[0]
    if last_vec:
        out = out[..., 0]
    return out


def cond(x, p=None) -> Tensor:
    """The condition number of x in the norm `p` (None and 2: the ratio of the extreme
    singular values); inf for singular matrices, as NumPy and JAX."""
    x = _float_matrix(x, "cond")
    if p is None or p in (2, -2):
        s = svdvals(x)
        r = s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    else:
        r = norm(x, p, axis=(-2, -1)) * norm(inv(x), p, axis=(-2, -1))
    finite_input = E.logical_not(R.any(E.isnan(x), axis=(-2, -1)))
    return E.select(E.logical_and(E.isnan(r), finite_input), math.inf, r)


def __dir__() -> list[str]:  # dir(), help() and tab completion show the public names only
    return sorted(__all__)
