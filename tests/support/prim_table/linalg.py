"""Example cases of the linear algebra primitives. Expectations are independent NumPy /
SciPy; decompositions get inputs with a unique answer: diagonal (eigh, svd) or
triangular (qr) matrices, a SPD matrix (cholesky)."""

from __future__ import annotations

import numpy as np
import scipy.linalg
from stablejit.compiler import dtypes as dt

from tests.support.prim_table.spec import (
    PrimSpec,
    values,
)

LINALG = (dt.float32, dt.float64, dt.complex64, dt.complex128)


def _spd(d, rng, n=3, batch=(2,)):
    b = values(d, rng, (*batch, n, n)).astype(np.complex128 if d.is_complex else np.float64)
    return (b @ np.conj(np.swapaxes(b, -1, -2)) + n * np.eye(n)).astype(d.np)


def _ts_make(d, rng):
    a = values(d, rng, (2, 3, 3)) * 0.3 + 2.5 * np.eye(3, dtype=d.np)  # upper part ignored
    return [a.astype(d.np), values(d, rng, (2, 3, 2))], {
        "left_side": True, "lower": True, "transpose_a": "N", "unit_diagonal": False}


def _ts_expected(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    a = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        a = a - a * np.eye(a.shape[-1]) + np.eye(a.shape[-1])
    if transpose_a != "N":
        a = np.swapaxes(a, -1, -2)
        a = np.conj(a) if transpose_a == "C" else a
    if left_side:
        return np.linalg.solve(a, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


def _lu_expected(a):
    m = a.shape[-1]
    lu, piv = np.empty_like(a), np.empty(a.shape[:-1], np.int32)
    perm = np.empty(a.shape[:-1], np.int32)
    for idx in np.ndindex(*a.shape[:-2]):
        lu[idx], piv[idx] = scipy.linalg.lu_factor(a[idx])
        p = list(range(m))
        for i, j in enumerate(piv[idx]):
            p[i], p[j] = p[j], p[i]
        perm[idx] = p
    return lu, piv, perm


def _qr_make(shape, full):
    def make(d, rng):
        # a real positive diagonal: Householder leaves such a column alone (tau = 0)
        a = np.triu(values(d, rng, shape), 1) + np.eye(*shape[-2:]) * rng.uniform(1, 3, shape)
        return [a.astype(d.np)], {"full_matrices": full}
    return make


def _qr_expected(a, *, full_matrices):
    m, n = a.shape[-2:]
    k = m if full_matrices else min(m, n)
    q = np.broadcast_to(np.eye(m, k, dtype=a.dtype), (*a.shape[:-2], m, k))
    return q, np.triu(a)[..., :k, :]  # upper triangular, positive diagonal: Q = I


_EIG_DIAG = np.array([2.0, -1.0, 0.5, 3.0])


def _eigh_make(lower):
    def make(d, rng):
        out = []
        for diag in (_EIG_DIAG, _EIG_DIAG[::-1] * 2):
            noise = values(d, rng, (len(diag), len(diag)))  # the ignored triangle
            out.append(np.diag(diag) + (np.triu(noise, 1) if lower else np.tril(noise, -1)))
        return [np.stack(out).astype(d.np)], {"lower": lower}
    return make


def _eigh_expected(a, *, lower):
    ws, vs = [], []
    for m in a:
        diag = np.real(np.diagonal(m))
        order = np.argsort(diag)
        ws.append(diag[order])
        vs.append(np.eye(len(diag))[:, order])
    return np.stack(ws), np.stack(vs)


def _eig_make(left, right):
    def make(d, rng):
        # a block with eigenvalues +-i (eigenvectors with components of unequal size, so
        # their phase is unique) beside real ones, and a diagonal matrix
        a = np.diag(_EIG_DIAG)
        a[1:3, 1:3] = [[0.0, -2.0], [0.5, 0.0]]
        return [np.stack([a, np.diag(_EIG_DIAG[::-1] * 2)]).astype(d.np)], {
            "compute_left_eigenvectors": left, "compute_right_eigenvectors": right}
    return make


def _eig_expected(a, *, compute_left_eigenvectors, compute_right_eigenvectors):
    c = np.result_type(a.dtype, np.complex64)
    ws, vls, vrs = [], [], []
    for m in a:
        w, vl, vr = scipy.linalg.eig(m, left=True, right=True)
        ws.append(w)
        vls.append(vl)
        vrs.append(vr)
    out = [np.stack(ws).astype(c)]
    if compute_left_eigenvectors:
        out.append(np.stack(vls).astype(c))
    if compute_right_eigenvectors:
        out.append(np.stack(vrs).astype(c))
    return tuple(out)


def _svd_make(shape, full, uv=True):
    def make(d, rng):
        a = np.zeros(shape, d.np)
        k = min(shape[-2:])
        a[..., range(k), range(k)] = rng.permutation(np.arange(1, k + 1)) * 1.5
        return [a], {"full_matrices": full, "compute_uv": uv}
    return make


def _svd_expected(a, *, full_matrices, compute_uv):
    m, n = a.shape[-2:]
    k = min(m, n)
    ss, us, vts = [], [], []
    for x in a.reshape(-1, m, n):
        d = np.real(np.diagonal(x))
        order = np.argsort(-d)
        ss.append(d[order])
        us.append(np.eye(m)[:, order] if not full_matrices else
                  np.eye(m)[:, list(order) + list(range(k, m))])
        vts.append(np.eye(n)[order] if not full_matrices else
                   np.eye(n)[list(order) + list(range(k, n))])
    batch = a.shape[:-2]
    s = np.stack(ss).reshape(*batch, k)
    if not compute_uv:
        return (s,)
    return (s, np.stack(us).reshape(*batch, m, -1), np.stack(vts).reshape(*batch, -1, n))


TABLE = {
    "cholesky": PrimSpec(LINALG, lambda d, rng: ([_spd(d, rng)], {}), np.linalg.cholesky),
    "triangular_solve": PrimSpec(LINALG, _ts_make, _ts_expected, extra=[
        ("f64-right-upper-T-unit", [np.triu(np.arange(1.0, 10.0).reshape(3, 3)) + np.eye(3),
                                    np.arange(6.0).reshape(2, 3) - 2],
         {"left_side": False, "lower": False, "transpose_a": "T", "unit_diagonal": True}),
        ("c64-conj", [(np.tril(np.arange(1.0, 10.0).reshape(3, 3)) * (1 + 0.5j)).astype(
            np.complex64), (np.arange(6.0).reshape(3, 2) + 1j).astype(np.complex64)],
         {"left_side": True, "lower": True, "transpose_a": "C", "unit_diagonal": False})]),
    "lu": PrimSpec(LINALG, lambda d, rng: ([values(d, rng, (2, 4, 4))], {}), _lu_expected),
    "qr": PrimSpec(LINALG, _qr_make((2, 4, 3), False), _qr_expected, extra=[
        ("f32-full", _qr_make((4, 3), True)(dt.float32, np.random.default_rng(0))[0],
         {"full_matrices": True}),
        ("c128-wide", _qr_make((2, 4), False)(dt.complex128, np.random.default_rng(0))[0],
         {"full_matrices": False})]),
    "eigh": PrimSpec(LINALG, _eigh_make(True), _eigh_expected, extra=[
        ("f64-upper", *_eigh_make(False)(dt.float64, np.random.default_rng(0)))]),
    "eig": PrimSpec(LINALG, _eig_make(False, True), _eig_expected, extra=[
        ("f64-left-right", *_eig_make(True, True)(dt.float64, np.random.default_rng(0))),
        ("c64-values-only", *_eig_make(False, False)(dt.complex64, np.random.default_rng(0)))]),
    "svd": PrimSpec(LINALG, _svd_make((2, 3, 3), True), _svd_expected, extra=[
        ("f32-tall-reduced", *_svd_make((4, 2), False)(dt.float32, np.random.default_rng(0))),
        ("c64-wide-reduced", *_svd_make((2, 3), False)(dt.complex64, np.random.default_rng(0))),
        ("f64-values-only", *_svd_make((3, 3), False, False)(dt.float64,
                                                            np.random.default_rng(0)))]),
}
