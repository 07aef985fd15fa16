"""Dense linear algebra on batches of matrices (the last two axes): cholesky,
triangular_solve, lu, qr, eigh, eig, svd.

Where the computation runs decides how it is emitted (the emitter knows its platform),
with the custom calls JAX emits there, so XLA's own handlers run them:
    host        LAPACK through the typed-FFI custom calls that jaxlib registers with XLA
                (lapack_<t>potrf_ffi, _trsm_ffi, _getrf_ffi, _geqrf_ffi/_orgqr_ffi,
                _syevd_ffi/_heevd_ffi, _geev_ffi, _gesdd_ffi; column-major layouts,
                api_version 4);
                the runtime loads LAPACK before compiling such a program
                (runtime/custom_calls.py), so emitting one has no side effect;
    cuda, rocm  cuSOLVER / hipSOLVER typed-FFI calls (<cu|hip>solver_potrf_ffi, _getrf_ffi,
                _geqrf_ffi/_orgqr_ffi, _syevd_ffi, _gesvdj_ffi up to 1024x1024 else
                _gesvd_ffi; <cu|hip>_lu_pivots_to_permutation), same layouts as the host's;
                jax registers their handlers with the GPU client when it is imported;
                triangular_solve is stablehlo.triangular_solve (XLA calls cuBLAS trsm);
    tpu         XLA's TPU decompositions (LuDecomposition, Qr with
                ProductOfElementaryHouseholderReflectors, Eigh: Jacobi at every size,
                where jax switches to QDWH above 256x256), stablehlo.cholesky and
                stablehlo.triangular_solve; svd raises a clear error there (jax's TPU SVD
                is a QDWH polar decomposition written in jax, not a custom call).
eig (a general matrix): LAPACK's geev on the host; on GPUs, as jax, the GPU plugin's
"hybrid" kernels (<cu|hip>hybrid_eig_<real|comp>: the host's LAPACK behind device
copies; runtime/custom_calls.py loads their LAPACK); TPUs have none (nor has jax), and
there we raise UnsupportedPlatformError.
A factorisation that fails (a matrix that is not positive definite, an iteration that
does not converge) gives NaNs, as in JAX.
tests/host/test_lowering_platforms.py compares every rule's custom calls with jax's
lowering for each platform.
"""

from __future__ import annotations

import numpy as np

from .. import batch_rules as br
from .. import dtypes as dt
from ..errors import ShapeError
from ..ir import TensorType
from ..primitive import Primitive
from ._matrix import (  # noqa: F401 - UnsupportedPlatformError is raised from here
    _GPU_PREFIX,
    LAPACK_TYPES,
    UnsupportedPlatformError,
    _bcast,
    _char,
    _check_matrix,
    _cmp,
    _diag_embed,
    _eye_v,
    _ffi,
    _flag,
    _mm,
    _nan_unless_ok,
    _pivots_to_permutation,
    _solver,
    _t,
    _tpu_call,
    _tri_ref,
    _triangle,
    _tril_v,
    _unsupported,
)

# ---- cholesky ------------------------------------------------------------------------------


def _chol_rule(a):
    _check_matrix("cholesky", a, square=True)
    return a


def _chol_emit(ctx, a):
    t = ctx.in_types[0]
    if ctx.emitter.platform == "tpu":
        out = ctx.op("stablehlo.cholesky", [a], [t], "lower = true")[0]
        return _triangle(ctx, out, t, lower=True)
    info_t = TensorType(t.shape[:-2], dt.int32)
    lower = {"uplo": _char("L")} if ctx.emitter.platform == "host" else {"lower": "true"}
    out, info = _ffi(ctx, _solver(ctx, "potrf", t.dtype), [a], [t], [t, info_t], lower,
                     alias=(0, 0))
    return _nan_unless_ok(ctx, info, info_t, _triangle(ctx, out, t, lower=True), t)


def _chol_ref(a):
    out = np.empty_like(a)
    for idx in np.ndindex(*a.shape[:-2]):
        try:
            out[idx] = np.linalg.cholesky(_tri_ref(a[idx], True) + np.conj(
                _tri_ref(a[idx], True, -1)).swapaxes(-1, -2))
        except np.linalg.LinAlgError:
            out[idx] = np.nan
    return out


def _chol_vjp(ops, cts, primals, outs):
    # forward: L' = L phi(L^-1 A' L^-H), phi = lower triangle with half diagonal
    # (arXiv:1602.07527). Its transpose: A_bar = L^-T phi(L^T L_bar) conj(L)^-1.
    (lb,), (l,) = cts, outs
    if lb is None:
        return (None,)
    p = _mm(ops, _t(ops, l), lb)
    p = ops.sub(_tril_v(ops, p), ops.scale(ops.mul(p, _eye_v(ops, p.type)), 0.5))
    cl = ops.conj(l) if l.type.dtype.is_complex else l
    y = _tsolve(ops, cl, p, left_side=False, lower=True, transpose_a="N")
    return (_tsolve(ops, l, y, left_side=True, lower=True, transpose_a="T"),)


cholesky = Primitive("cholesky", _chol_rule, _chol_emit, _chol_ref, vjp=_chol_vjp,
                     family="linalg")

# ---- triangular_solve ---------------------------------------------------------------------


def _ts_rule(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    _check_matrix("triangular_solve", a, "a (the triangular matrix)", square=True)
    _check_matrix("triangular_solve", b, "b (the right-hand side)")
    if a.dtype is not b.dtype:
        raise ShapeError(f"triangular_solve: a has dtype {a.dtype.name} but b has "
                         f"{b.dtype.name}; convert one first")
    if transpose_a not in ("N", "T", "C"):
        raise ShapeError(f"triangular_solve: transpose_a must be 'N', 'T' or 'C', got "
                         f"{transpose_a!r}")
    if a.shape[:-2] != b.shape[:-2]:
        raise ShapeError(f"triangular_solve: batch shapes of a {a.shape} and b {b.shape} "
                         f"differ; broadcast them first")
    n = a.shape[-1]
    k = b.shape[-2] if left_side else b.shape[-1]
    if k != n:
        side = "rows" if left_side else "columns"
        raise ShapeError(f"triangular_solve: a is {n}x{n} but b {b.shape} has {k} {side}")
    return b


def _ts_emit(ctx, a, b):
    at, bt = ctx.in_types
    x = ctx.attrs
    if ctx.emitter.platform == "host":
        return _ffi(ctx, _solver(ctx, "trsm", at.dtype), [a, b], [at, bt], [bt],
                    {"side": _char("L" if x["left_side"] else "R"),
                     "uplo": _char("L" if x["lower"] else "U"),
                     "trans_x": _char(x["transpose_a"]),
                     "diag": _char("U" if x["unit_diagonal"] else "N")}, alias=(0, 1))
    # elsewhere XLA expands it (cuBLAS trsm on GPUs), as for jax
    tr = {"N": "NO_TRANSPOSE", "T": "TRANSPOSE", "C": "ADJOINT"}[x["transpose_a"]]
    return ctx.op("stablehlo.triangular_solve", [a, b], [bt],
                  f"left_side = {_flag(x['left_side'])}, lower = {_flag(x['lower'])}, "
                  f"unit_diagonal = {_flag(x['unit_diagonal'])}, "
                  f"transpose_a = #stablehlo<transpose {tr}>")


def _ts_ref(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    a = _tri_ref(a, lower)
    if unit_diagonal:
        n = a.shape[-1]
        a = a * (1 - np.eye(n, dtype=a.dtype)) + np.eye(n, dtype=a.dtype)
    if transpose_a in ("T", "C"):
        a = np.swapaxes(a, -1, -2)
        a = np.conj(a) if transpose_a == "C" else a
    if left_side:
        return np.linalg.solve(a, b).astype(b.dtype)
    # x a = b  <=>  a^T x^T = b^T
    return np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)),
                       -1, -2).astype(b.dtype)


def _ts_vjp(ops, cts, primals, outs, *, left_side, lower, transpose_a, unit_diagonal):
    # X = op(A)^-1 B (left) or B op(A)^-1 (right). Transposes, JAX's convention:
    # B_bar = op(A)^-T X_bar, A_bar = -(B_bar X^T) mapped back through op, masked.
    (xb,), (a, _), (x,) = cts, primals, outs
    if xb is None:
        return (None, None)
    back = {"N": "T", "T": "N", "C": "C"}[transpose_a]
    if transpose_a == "C":
        # transpose of (conj A^T)^-1 is conj(A)^-1: solve with conj(A), no transpose
        ca = ops.conj(a) if a.type.dtype.is_complex else a
        bb = _tsolve(ops, ca, xb, left_side=left_side, lower=lower, transpose_a="N",
                     unit_diagonal=unit_diagonal)
    else:
        bb = _tsolve(ops, a, xb, left_side=left_side, lower=lower, transpose_a=back,
                     unit_diagonal=unit_diagonal)
    # A_bar for op(A) = M: M_bar = -(bb X^T) (left) or -(X^T bb) (right)
    mb = ops.neg(_mm(ops, bb, _t(ops, x)) if left_side else _mm(ops, _t(ops, x), bb))
    if transpose_a == "T":
        ab = _t(ops, mb)
    elif transpose_a == "C":
        ab = _t(ops, mb)
        ab = ops.conj(ab) if ab.type.dtype.is_complex else ab
    else:
        ab = mb
    ab = _tril_v(ops, ab, lower=lower, k=(-1 if lower else 1) if unit_diagonal else 0)
    return (ab, bb)


triangular_solve = Primitive("triangular_solve", _ts_rule, _ts_emit, _ts_ref, vjp=_ts_vjp,
                             family="linalg")


def _tsolve(ops, a, b, *, left_side=True, lower=True, transpose_a="N", unit_diagonal=False):
    return ops.bind(triangular_solve, a, b, left_side=left_side, lower=lower,
                    transpose_a=transpose_a, unit_diagonal=unit_diagonal)


# ---- lu -------------------------------------------------------------------------------------


def _lu_rule(a):
    _check_matrix("lu", a)
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    return a, TensorType((*batch, min(m, n)), dt.int32), TensorType((*batch, m), dt.int32)


def _lu_emit(ctx, a):
    t, piv_t, perm_t = ctx.out_types
    p = ctx.emitter.platform
    if p == "tpu":  # 0-based pivots and the permutation come from XLA's TPU LU
        return _tpu_call(ctx, "LuDecomposition", [a], [t], [t, piv_t, perm_t], api_version=2)
    info_t = TensorType(t.shape[:-2], dt.int32)
    lu, piv, info = _ffi(ctx, _solver(ctx, "getrf", t.dtype), [a], [t], [t, piv_t, info_t],
                         {}, alias=(0, 0))
    piv = ctx.op("stablehlo.subtract", [piv, ctx.constant(1, dt.int32, piv_t.shape)],
                 [piv_t])[0]  # LAPACK's pivots are 1-based
    lu = _nan_unless_ok(ctx, info, info_t, lu, t, "GE")
    if p == "host":
        perm = _pivots_to_permutation(ctx, piv, piv_t, perm_t)
    else:  # the GPU kernel jax uses; its row-major layouts are the default ones
        perm = _ffi(ctx, f"{_GPU_PREFIX[p]}_lu_pivots_to_permutation", [piv], [piv_t],
                    [perm_t], {}, column_major=False)[0]
    return [lu, piv, perm]


def _lu_ref(a):
    m, n = a.shape[-2:]
    k = min(m, n)
    lu = np.array(a, copy=True)
    piv = np.zeros(a.shape[:-2] + (k,), np.int32)
    perm = np.broadcast_to(np.arange(m, dtype=np.int32), a.shape[:-2] + (m,)).copy()
    for idx in np.ndindex(*a.shape[:-2]):
        x = lu[idx]
        for j in range(k):  # partial pivoting, as LAPACK's getrf
            c = x[j:, j]  # LAPACK's i?amax measures complex numbers by |re| + |im|
            p = j + int(np.argmax(np.abs(c.real) + np.abs(c.imag) if np.iscomplexobj(c)
                                  else np.abs(c)))
            piv[idx + (j,)] = p
            if p != j:
                x[[j, p]] = x[[p, j]]
                perm[idx + (j,)], perm[idx + (p,)] = perm[idx + (p,)], perm[idx + (j,)]
            if x[j, j] != 0:
                x[j + 1:, j] /= x[j, j]
            x[j + 1:, j + 1:] -= np.outer(x[j + 1:, j], x[j, j + 1:])
    return lu, piv, perm


def _lu_vjp(ops, cts, primals, outs):
    # forward (JAX's lu_jvp_rule): X = P A', Z = L^-1 X U^-1, LU' = L tril(Z,-1) + triu(Z) U
    (cb, _, _), (a,), (lu, _, perm) = cts, primals, outs
    if cb is None:
        return (None,)
    m, n = a.type.shape[-2:]
    if m != n:
        raise NotImplementedError("the gradient of lu is implemented for square matrices "
                                  "only")
    t = a.type
    l = ops.add(_tril_v(ops, lu, True, -1), _eye_v(ops, t))
    u = _tril_v(ops, lu, False)
    zb = ops.add(_tril_v(ops, _mm(ops, _t(ops, l), cb), True, -1),
                 _tril_v(ops, _mm(ops, cb, _t(ops, u)), False))
    y = _tsolve(ops, u, zb, left_side=False, lower=False, transpose_a="T")
    xb = _tsolve(ops, l, y, left_side=True, lower=True, transpose_a="T", unit_diagonal=True)
    r = t.ndim
    onehot = ops.eq(ops.broadcast(perm, t.shape, (*range(r - 2), r - 2)),
                    ops.iota(t.shape, dt.int32, r - 1))
    pm = ops.convert(onehot, t.dtype)  # pm[i, j] = (perm[i] == j): X = pm A
    return (_mm(ops, _t(ops, pm), xb),)


lu = Primitive("lu", _lu_rule, _lu_emit, _lu_ref, vjp=_lu_vjp, multiple_results=True,
               family="linalg")

# ---- qr -------------------------------------------------------------------------------------


def _qr_rule(a, *, full_matrices):
    _check_matrix("qr", a)
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    k = m if full_matrices else min(m, n)
    return TensorType((*batch, m, k), a.dtype), TensorType((*batch, k, n), a.dtype)


def _slice(ctx, x, t: TensorType, rows: int, cols: int) -> tuple[str, TensorType]:
    out = TensorType((*t.shape[:-2], rows, cols), t.dtype)
    if out == t:
        return x, t
    z = [0] * t.ndim
    return ctx.op("stablehlo.slice", [x], [out],
                  f"start_indices = array<i64: {', '.join(map(str, z))}>, "
                  f"limit_indices = array<i64: {', '.join(map(str, out.shape))}>, "
                  f"strides = array<i64: {', '.join(['1'] * t.ndim)}>")[0], out


def _geqrf(ctx, a, t: TensorType, tau_t: TensorType) -> list[str]:
    """Householder QR: R above the diagonal, the reflectors below it, and their taus."""
    if ctx.emitter.platform == "tpu":
        return _tpu_call(ctx, "Qr", [a], [t], [t, tau_t])
    return _ffi(ctx, _solver(ctx, "geqrf", t.dtype), [a], [t], [t, tau_t], {}, alias=(0, 0))


def _orgqr(ctx, q, tau, qt: TensorType, tau_t: TensorType) -> str:
    """Q from the reflectors (the first columns of q) and their taus."""
    p = ctx.emitter.platform
    if p == "tpu":
        return _tpu_call(ctx, "ProductOfElementaryHouseholderReflectors", [q, tau],
                         [qt, tau_t], [qt])[0]
    routine = "ungqr" if p == "host" and qt.dtype.is_complex else "orgqr"
    return _ffi(ctx, _solver(ctx, routine, qt.dtype), [q, tau], [qt, tau_t], [qt], {},
                alias=(0, 0))[0]


def _qr_emit(ctx, a):
    t = ctx.in_types[0]
    q_t, r_t = ctx.out_types
    m, n = t.shape[-2:]
    k = min(m, n)
    tau_t = TensorType((*t.shape[:-2], k), t.dtype)
    r, tau = _geqrf(ctx, a, t, tau_t)
    if m < n:
        q, qt = _slice(ctx, r, t, m, m)
    elif q_t.shape[-1] > n:  # complete Q of a tall matrix: orgqr on m x m
        pad = TensorType((*t.shape[:-2], m, m), t.dtype)
        lo = ", ".join(["0"] * t.ndim)
        hi = ", ".join(["0"] * (t.ndim - 1) + [str(m - n)])
        q = ctx.op("stablehlo.pad", [r, ctx.constant(0, t.dtype)], [pad],
                   f"edge_padding_low = array<i64: {lo}>, edge_padding_high = array<i64: {hi}>, "
                   f"interior_padding = array<i64: {lo}>")[0]
        qt = pad
    else:
        q, qt = r, t
    q = _orgqr(ctx, q, tau, qt, tau_t)
    r, rt = _slice(ctx, r, t, r_t.shape[-2], n)
    return [q, _triangle(ctx, r, rt, lower=False)]


def _qr_ref(a, *, full_matrices):
    q, r = np.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    return q.astype(a.dtype), r.astype(a.dtype)


def _qr_vjp(ops, cts, primals, outs, *, full_matrices):
    # forward (JAX's qr_jvp_rule, real): D = A' R^-1, C = Q^T D, W = tril(C,-1),
    # O = W - W^T, Q' = Q (O - C) + D, R' = (C - O) R. Below: its transpose.
    (qb, rb), (a,), (q, r) = cts, primals, outs
    m, n = a.type.shape[-2:]
    if m < n or (full_matrices and m != n) or a.type.dtype.is_complex:
        raise NotImplementedError(
            "the gradient of qr is implemented for real matrices with m >= n and reduced Q "
            "(full_matrices=False, mode='reduced') only")
    qb = qb if qb is not None else ops.zeros_like(q)
    rb = rb if rb is not None else ops.zeros_like(r)
    g = ops.sub(_mm(ops, rb, _t(ops, r)), _mm(ops, _t(ops, q), qb))
    cb = ops.add(g, _tril_v(ops, ops.sub(_t(ops, g), g), True, -1))
    db = ops.add(qb, _mm(ops, q, cb))
    return (_tsolve(ops, r, db, left_side=False, lower=False, transpose_a="T"),)


qr = Primitive("qr", _qr_rule, _qr_emit, _qr_ref, vjp=_qr_vjp, multiple_results=True,
               family="linalg")

# ---- eigh -----------------------------------------------------------------------------------


def _eigh_rule(a, *, lower):
    _check_matrix("eigh", a, square=True)
    return TensorType(a.shape[:-1], dt.real_dtype(a.dtype)), a


def _eigh_emit(ctx, a):
    t = ctx.in_types[0]
    w_t = ctx.out_types[0]
    lower = ctx.attrs["lower"]
    p = ctx.emitter.platform
    if p == "tpu":  # config: lower, sort the eigenvalues, at most 100 sweeps, tolerance
        v, w = _tpu_call(ctx, "Eigh", [a], [t], [t, w_t], f"{int(lower)},1,100,1e-6")
        return [w, v]
    info_t = TensorType(t.shape[:-2], dt.int32)
    if p == "host":
        routine = "heevd" if t.dtype.is_complex else "syevd"
        config = {"mode": _char("V"), "uplo": _char("L" if lower else "U")}
    else:  # algorithm 0: the handler's default choice, as jax asks
        routine, config = "syevd", {"algorithm": "0 : ui8", "lower": _flag(lower)}
    v, w, info = _ffi(ctx, _solver(ctx, routine, t.dtype), [a], [t], [t, w_t, info_t],
                      config, alias=(0, 0))
    return [_nan_unless_ok(ctx, info, info_t, w, w_t), _nan_unless_ok(ctx, info, info_t, v, t)]


def _eigh_ref(a, *, lower):
    w, v = np.linalg.eigh(a, UPLO="L" if lower else "U")
    return w.astype(dt.real_dtype(dt.dtype(a.dtype)).np), v.astype(a.dtype)


def _eigh_vjp(ops, cts, primals, outs, *, lower):
    # forward (JAX's eigh_jvp_rule): K = V^H A' V, w' = re diag K, V' = V (F o K),
    # F_ij = 1/(w_j - w_i) off the diagonal. Transpose: A_bar = conj(V) K_bar V^T.
    (wb, vb), (a,), (w, v) = cts, primals, outs
    t = a.type
    kb = ops.zeros_like(v)
    if vb is not None:
        n = t.shape[-1]
        r = t.ndim
        wc = ops.convert(w, t.dtype)
        wj = ops.broadcast(wc, t.shape, (*range(r - 2), r - 1))
        wi = ops.broadcast(wc, t.shape, (*range(r - 2), r - 2))
        eye = _eye_v(ops, t)
        f = ops.sub(ops.div(ops.ones_like(v), ops.add(eye, ops.sub(wj, wi))), eye)
        kb = ops.mul(f, _mm(ops, _t(ops, v), vb))
        del n
    if wb is not None:
        kb = ops.add(kb, _diag_embed(ops, wb, t))
    cv = ops.conj(v) if t.dtype.is_complex else v
    return (_mm(ops, _mm(ops, cv, kb), _t(ops, v)),)


eigh = Primitive("eigh", _eigh_rule, _eigh_emit, _eigh_ref, vjp=_eigh_vjp,
                 multiple_results=True, family="linalg")

# ---- eig (general matrices) -------------------------------------------------------------------


def _eig_rule(a, *, compute_left_eigenvectors, compute_right_eigenvectors):
    _check_matrix("eig", a, square=True)
    c = dt.complex_dtype(a.dtype)
    vectors = (a.with_dtype(c),) * (compute_left_eigenvectors + compute_right_eigenvectors)
    return (TensorType(a.shape[:-1], c), *vectors)


def _eig_emit(ctx, a):
    t = ctx.in_types[0]
    x = ctx.attrs
    p = ctx.emitter.platform
    if p == "tpu":
        raise _unsupported(ctx, "eig", "TPUs have no general eigensolver, nor has jax there")
    w_t, v_t = TensorType(t.shape[:-1], dt.complex_dtype(t.dtype)), t.with_dtype(
        dt.complex_dtype(t.dtype))
    info_t = TensorType(t.shape[:-2], dt.int32)
    real = not t.dtype.is_complex
    left, right = x["compute_left_eigenvectors"], x["compute_right_eigenvectors"]
    if p == "host":
        target = _solver(ctx, "geev", t.dtype)
        config = {"compute_left": _char("V" if left else "N"),
                  "compute_right": _char("V" if right else "N")}
    else:  # jax's GPU plugins' hybrid kernels: LAPACK's geev on the host behind copies
        target = f"{_GPU_PREFIX[p]}hybrid_eig_{'real' if real else 'comp'}"
        config = {"left": _flag(left), "magma": '"auto"', "right": _flag(right)}
    # both return the eigenvalues of a real matrix as real and imaginary parts, and the
    # eigenvectors unpacked to complex ones
    ws = [w_t.with_dtype(t.dtype)] * 2 if real else [w_t]
    *w, vl, vr, info = _ffi(ctx, target, [a], [t], [*ws, v_t, v_t, info_t], config)
    w = ctx.op("stablehlo.complex", w, [w_t])[0] if real else w[0]
    out = [_nan_unless_ok(ctx, info, info_t, w, w_t)]
    if x["compute_left_eigenvectors"]:
        out.append(_nan_unless_ok(ctx, info, info_t, vl, v_t))
    if x["compute_right_eigenvectors"]:
        out.append(_nan_unless_ok(ctx, info, info_t, vr, v_t))
    return out


def _unit_columns(v):
    """Each column scaled to unit norm with its largest component real and positive
    (LAPACK geev's normalisation)."""
    v = v / np.linalg.norm(v, axis=-2, keepdims=True)
    big = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
    return v * (np.conj(big) / np.abs(big))


def _eig_ref(a, *, compute_left_eigenvectors, compute_right_eigenvectors):
    c = dt.complex_dtype(dt.dtype(a.dtype)).np
    w, vr = np.linalg.eig(a)
    out = [w.astype(c)]
    if compute_left_eigenvectors:  # the rows of vr^-1 are the left vectors' conjugates
        out.append(_unit_columns(np.conj(np.swapaxes(np.linalg.inv(vr), -1, -2))).astype(c))
    if compute_right_eigenvectors:
        out.append(vr.astype(c))
    return tuple(out)


def _eig_vjp(ops, cts, primals, outs, **_):
    # eigenvalues: w_i' = vl_i^H A' v_i / (vl_i^H v_i) (left and right eigenvectors), so
    # the transpose is A_bar = conj(VL) diag(w_bar / s) V^T (s_i = vl_i^H v_i), its real
    # part for a real A. Eigenvectors' derivatives are not written yet.
    wb, *vbs = cts
    if any(v is not None for v in vbs):
        raise NotImplementedError(
            "the gradient through eig's eigenvectors is not implemented (its eigenvalues' "
            "is); for a symmetric or Hermitian matrix use stablejit.numpy.linalg.eigh, "
            "whose eigenvectors have one")
    (a,) = primals
    t = a.type
    if wb is None:
        return (ops.zeros_like(a),)
    ct = t.with_dtype(dt.complex_dtype(t.dtype))
    _, vl, vr = ops.bind_many(eig, a, compute_left_eigenvectors=True,
                              compute_right_eigenvectors=True)
    s = ops.reduce_sum(ops.mul(ops.conj(vl), vr), (t.ndim - 2,))
    k = _diag_embed(ops, ops.div(ops.convert(wb, ct.dtype), s), ct)
    abar = _mm(ops, _mm(ops, ops.conj(vl), k), _t(ops, vr))
    return (abar if t.dtype.is_complex else ops.real(abar),)


eig = Primitive("eig", _eig_rule, _eig_emit, _eig_ref, vjp=_eig_vjp, multiple_results=True,
                family="linalg")

# ---- svd ------------------------------------------------------------------------------------


def _svd_types(a, full_matrices):
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    return (TensorType((*batch, k), dt.real_dtype(a.dtype)),
            TensorType((*batch, m, m if full_matrices else k), a.dtype),
            TensorType((*batch, n if full_matrices else k, n), a.dtype))


def _svd_rule(a, *, full_matrices, compute_uv):
    _check_matrix("svd", a)
    if min(a.shape[-2:]) == 0:
        raise ShapeError(f"svd: operand {a.shape} has an empty matrix axis")
    types = _svd_types(a, full_matrices)
    return types if compute_uv else types[:1]


def _svd_emit(ctx, a):
    t = ctx.in_types[0]
    x = ctx.attrs
    s_t, u_t, vt_t = _svd_types(t, x["full_matrices"])
    info_t = TensorType(t.shape[:-2], dt.int32)
    p = ctx.emitter.platform
    if p == "tpu":
        raise _unsupported(ctx, "svd", "jax's TPU SVD is a QDWH polar decomposition "
                                       "written in jax operations, not one of XLA's calls")
    if p == "host":
        mode = "N" if not x["compute_uv"] else ("A" if x["full_matrices"] else "S")
        _, s, u, vt, info = _ffi(ctx, _solver(ctx, "gesdd", t.dtype), [a], [t],
                                 [t, s_t, u_t, vt_t, info_t], {"mode": _char(mode)},
                                 alias=(0, 0))
    else:
        s, u, vt, info = _svd_gpu(ctx, a, t, s_t, u_t, vt_t, info_t, **x)
    out = [_nan_unless_ok(ctx, info, info_t, s, s_t)]
    if x["compute_uv"]:
        out += [_nan_unless_ok(ctx, info, info_t, u, u_t),
                _nan_unless_ok(ctx, info, info_t, vt, vt_t)]
    return out


def _svd_gpu(ctx, a, t: TensorType, s_t, u_t, vt_t, info_t, *, full_matrices, compute_uv):
    """cuSOLVER / hipSOLVER SVD, chosen as jax chooses: Jacobi (gesvdj) up to 1024x1024,
    else QR-based gesvd (on the transpose of a wide matrix). Returns s, u, vt, info."""
    m, n = t.shape[-2:]
    k = min(m, n)
    batch, nb = t.shape[:-2], t.ndim - 2
    prefix = _GPU_PREFIX[ctx.emitter.platform]
    if m > 1024 or n > 1024:
        wide = m < n
        if not compute_uv:  # gesvd then writes no U or V^H
            u_t = vt_t = TensorType((), t.dtype)
        # a wide matrix goes in row-major: gesvd sees its transpose, so U and V^H swap
        _, s, u, vt, info = _ffi(
            ctx, f"{prefix}solver_gesvd_ffi", [a], [t],
            [t, s_t, *((vt_t, u_t) if wide else (u_t, vt_t)), info_t],
            {"compute_uv": _flag(compute_uv), "full_matrices": _flag(full_matrices),
             "transposed": _flag(wide)}, alias=(0, 0), column_major=not wide)
        return (s, vt, u, info) if wide else (s, u, vt, info)
    # gesvdj has no economy mode for the small matrices of its batched path
    econ = not full_matrices and m > 32 and n > 32
    uj_t = TensorType((*batch, m, k if econ else m), t.dtype)
    vj_t = TensorType((*batch, n, k if econ else n), t.dtype)
    _, s, u, v, info = _ffi(ctx, f"{prefix}solver_gesvdj_ffi", [a], [t],
                            [t, s_t, uj_t, vj_t, info_t],
                            {"compute_uv": _flag(compute_uv), "full_matrices": _flag(not econ)},
                            alias=(0, 0))
    if not compute_uv:
        return s, u, v, info
    vh_t = TensorType((*batch, vj_t.shape[-1], n), t.dtype)
    vt = ctx.op("stablehlo.transpose", [v], [vh_t],
                f"permutation = array<i64: {', '.join(map(str, (*range(nb), nb + 1, nb)))}>")[0]
    if t.dtype.is_complex:
        rt = vh_t.with_dtype(dt.real_dtype(t.dtype))
        re = ctx.op("stablehlo.real", [vt], [rt])[0]
        im = ctx.op("stablehlo.imag", [vt], [rt])[0]
        im = ctx.op("stablehlo.negate", [im], [rt])[0]
        vt = ctx.op("stablehlo.complex", [re, im], [vh_t])[0]
    if not full_matrices and not econ:
        u, _ = _slice(ctx, u, uj_t, m, k)
        vt, _ = _slice(ctx, vt, vh_t, k, n)
    return s, u, vt, info


def _svd_ref(a, *, full_matrices, compute_uv):
    rd = dt.real_dtype(dt.dtype(a.dtype)).np
    if not compute_uv:
        return (np.linalg.svd(a, compute_uv=False).astype(rd),)
    u, s, vt = np.linalg.svd(a, full_matrices=full_matrices)
    return s.astype(rd), u.astype(a.dtype), vt.astype(a.dtype)


def _svd_vjp(ops, cts, primals, outs, *, full_matrices, compute_uv):
    if compute_uv and any(c is not None for c in cts[1:]):
        raise NotImplementedError(
            "the gradient through svd's U and V^H is not implemented yet; gradients of the "
            "singular values alone work (stablejit.numpy.linalg.svdvals, or use only S)")
    sb, (a,) = cts[0], primals
    if sb is None:
        return (None,)
    t = a.type
    # forward: s' = re diag(U^H A' V) (reduced factors); transpose: conj(U) diag(s_bar) V^T
    if compute_uv and not full_matrices:
        u, vt = outs[1], outs[2]
    else:
        _, u, vt = ops.bind_many(svd, a, full_matrices=False, compute_uv=True)
    k = min(t.shape[-2:])
    d = _diag_embed(ops, sb, TensorType((*t.shape[:-2], k, k), t.dtype))
    cu = ops.conj(u) if t.dtype.is_complex else u
    cvt = ops.conj(vt) if t.dtype.is_complex else vt
    return (_mm(ops, _mm(ops, cu, d), cvt),)


svd = Primitive("svd", _svd_rule, _svd_emit, _svd_ref, vjp=_svd_vjp, multiple_results=True,
                family="linalg")

# ---- batching rules ---------------------------------------------------------------------
# Every primitive here treats leading axes as a batch of independent matrices (LAPACK's
# FFI calls and the reference loop over them), and triangular_solve's attributes name
# only the last two axes: the vmapped axis is one more leading axis.



def _ts_batch(ops, xs, batched, **attrs):
    """Only b batched: the examples are more right-hand sides of the same system, so fold
    the batch axis into b's columns (left_side) or rows (right side) and solve once, as
    JAX does, instead of broadcasting a."""
    (a, b), a_batched = xs, batched[0]
    if a_batched:
        return (ops.bind(triangular_solve, *br.bring_all(ops, xs, batched), **attrs),)
    r = b.type.ndim  # (N, *batch, rows, cols)
    n = b.type.shape[0]
    *lead, rows, cols = b.type.shape[1:]
    if attrs["left_side"]:  # (*batch, rows, N, cols) -> (*batch, rows, N*cols)
        moved = br.move_axis(ops, b, 0, r - 2)
        folded = (*lead, rows, n * cols)
        unfolded = (*lead, rows, n, cols)
    else:  # (*batch, N, rows, cols) -> (*batch, N*rows, cols)
        moved = br.move_axis(ops, b, 0, r - 3)
        folded = (*lead, n * rows, cols)
        unfolded = (*lead, n, rows, cols)
    x = ops.bind(triangular_solve, a, ops.reshape(moved, folded), **attrs)
    x = ops.reshape(x, unfolded)
    return (br.move_axis(ops, x, r - 2 if attrs["left_side"] else r - 3, 0),)


for _prim in (cholesky, lu, qr, eigh, eig, svd):
    _prim.batch = br.leading(_prim)
triangular_solve.batch = _ts_batch

PRIMITIVES = [cholesky, triangular_solve, lu, qr, eigh, eig, svd]
