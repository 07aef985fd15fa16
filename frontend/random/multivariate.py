"""Draws of vectors: dirichlet, ball, multivariate_normal, orthogonal."""

from __future__ import annotations

import numpy as np

from .. import numpy as snp
from ..errors import at_user_line
from ..promotion import default_float
from ..tensor import Tensor
from ._core import (
    _c,
    _check_key,
    _float_dtype,
    _param_shape,
    _real_param,
    _shape,
    _split_impl,
    sampler,
)
from .continuous import _exponential_impl, _gamma_impl, _generalized_normal_impl, _normal_impl


def dirichlet(key, alpha, shape=None, dtype=None) -> Tensor:
    """Dirichlet(alpha) floats: points of the simplex along the last axis (normalized
    gamma draws, from their logs); the result shape is shape + alpha.shape[-1:]."""
    k = _check_key("dirichlet", key)
    d = _float_dtype("dirichlet", dtype)
    al = _real_param("dirichlet", "alpha", alpha)
    if al.ndim < 1:
        raise ValueError(at_user_line("random.dirichlet: alpha must have at least one axis "
                                      "(the concentrations of the categories), got a "
                                      "scalar"))
    shape = _param_shape("dirichlet", shape, **{"alpha.shape[:-1]": al.shape[:-1]})
    return _dirichlet(k, al, shape, d)


def _dirichlet_impl(k, alpha, shape, d):
    lg = _gamma_impl(k, alpha, (*shape, alpha.shape[-1]), d, True)
    e = snp.exp(lg - snp.max(lg, axis=-1, keepdims=True))
    return e / snp.sum(e, axis=-1, keepdims=True)


_dirichlet = sampler(_dirichlet_impl, (2, 3))


def ball(key, d, p=2, shape=(), dtype=None) -> Tensor:
    """Points drawn uniformly from the unit p-norm ball in d dimensions: a (*shape, d)
    tensor (Barthe, Guedon, Mendelson and Naor's construction)."""
    k = _check_key("ball", key)
    fd = _float_dtype("ball", dtype)
    if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or d < 0:
        raise ValueError(at_user_line(f"random.ball: d must be a non-negative Python int "
                                      f"(the dimension), got {d!r}"))
    pt = _real_param("ball", "p", p)
    if pt.ndim:
        raise ValueError(at_user_line(f"random.ball: p must be a scalar, got shape "
                                      f"{pt.shape}"))
    return _ball(k, pt, int(d), _shape(shape), fd)


def _ball_impl(k, p, d, shape, fd):
    ks = _split_impl(k, (2,))
    g = _generalized_normal_impl(ks[0], p, (*shape, d), fd)
    e = _exponential_impl(ks[1], shape, fd)
    p = snp.astype(p, fd)
    r = snp.power(snp.sum(snp.power(snp.abs(g), p), axis=-1) + e, _c(1.0, fd) / p)
    return g / r[..., None]


_ball = sampler(_ball_impl, (2, 3, 4))


def multivariate_normal(key, mean, cov, shape=None, dtype=None,
                        method: str = "cholesky") -> Tensor:
    """Multivariate normal vectors: mean + F z for a factor F F^T = cov (Cholesky, or
    'svd' / 'eigh' for singular covariances); the result is shape + mean.shape[-1:],
    shape defaulting to the broadcast batch shape of mean and cov."""
    k = _check_key("multivariate_normal", key)
    mt = _real_param("multivariate_normal", "mean", mean)
    ct = _real_param("multivariate_normal", "cov", cov)
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError(at_user_line(f"random.multivariate_normal: method must be "
                                      f"'cholesky', 'svd' or 'eigh', got {method!r}"))
    if mt.ndim < 1:
        raise ValueError(at_user_line("random.multivariate_normal: mean must have at least "
                                      "one axis, got a scalar"))
    nvar = mt.shape[-1]
    if ct.ndim < 2 or ct.shape[-2:] != (nvar, nvar):
        raise ValueError(at_user_line(
            f"random.multivariate_normal: cov must have shape (..., {nvar}, {nvar}) for a "
            f"mean of {nvar} entries, got shape {ct.shape}"))
    mdt = mt.dtype if mt.dtype.kind == "f" else default_float()
    d = _float_dtype("multivariate_normal", mdt if dtype is None else dtype)
    shape = _param_shape("multivariate_normal", shape, **{
        "mean.shape[:-1]": mt.shape[:-1], "cov.shape[:-2]": ct.shape[:-2]})
    return _multivariate_normal(k, snp.astype(mt, d), snp.astype(ct, d), shape, d, method)


def _multivariate_normal_impl(k, mean, cov, shape, d, method):
    if method == "svd":
        u, s, _ = snp.linalg.svd(cov)
        factor = u * snp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = snp.linalg.eigh(cov)
        factor = v * snp.sqrt(w[..., None, :])
    else:
        factor = snp.linalg.cholesky(cov)
    z = _normal_impl(k, (*shape, mean.shape[-1]), d)
    return mean + snp.matmul(factor, z[..., None])[..., 0]


_multivariate_normal = sampler(_multivariate_normal_impl, (3, 4, 5))


def orthogonal(key, n, shape=(), dtype=None, m=None) -> Tensor:
    """Matrices drawn uniformly (Haar measure) from the n x n orthogonal group, or n x m
    with orthonormal columns (n >= m) or rows (n < m): the Q of a normal matrix's QR,
    its columns' signs fixed by R's diagonal (Mezzadri's method)."""
    k = _check_key("orthogonal", key)
    d = _float_dtype("orthogonal", dtype)
    for name, v in (("n", n), ("m", n if m is None else m)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 0:
            raise ValueError(at_user_line(f"random.orthogonal: {name} must be a non-negative "
                                          f"Python int (a matrix size), got {v!r}"))
    return _orthogonal(k, int(n), int(n if m is None else m), _shape(shape), d)


def _orthogonal_impl(k, n, m, shape, d):
    z = _normal_impl(k, (*shape, max(n, m), min(n, m)), d)
    q, r = snp.linalg.qr(z)
    signs = snp.sign(snp.diagonal(r, axis1=-2, axis2=-1))
    x = q * signs[..., None, :]
    return snp.swapaxes(x, -1, -2) if n < m else x


_orthogonal = sampler(_orthogonal_impl, (1, 2, 3, 4))
