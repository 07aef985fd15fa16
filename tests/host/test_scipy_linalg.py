"""stablejit.scipy.linalg against jax.scipy.linalg (SciPy's names and defaults): one
table run under jit, eagerly on XLA and on the reference backend."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jla
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
import stablejit.scipy.linalg as sla

from tests.support.runners import check_three_ways

rng = np.random.default_rng(0)
A = rng.standard_normal((4, 4)).astype(np.float32)
SPD = (A @ A.T + 4 * np.eye(4)).astype(np.float32)
B = rng.standard_normal((4, 2)).astype(np.float32)
STACK = rng.standard_normal((2, 3, 3)).astype(np.float32)


def _jax(fn):
    def run(*args):
        x64 = any(np.asarray(a).dtype == np.float64 for a in args)
        with jax.enable_x64(x64):
            return jax.tree.map(np.asarray, fn(*(jnp.asarray(a) for a in args)))
    return run


def _row(name, fn, jfn, *args, rtol=2e-5, atol=2e-5):
    return pytest.param(fn, jfn, args, rtol, atol, id=name)


CASES = [
    *[_row(f"solve_triangular(trans={t}, lower={lo})",
           lambda a, b, t=t, lo=lo: sla.solve_triangular(a, b, trans=t, lower=lo),
           lambda a, b, t=t, lo=lo: jla.solve_triangular(a, b, trans=t, lower=lo),
           A + 4 * np.eye(4, dtype=np.float32), B)
      for t in (0, 1, "C") for lo in (False, True)],
    _row("solve_triangular(default upper, vector)", sla.solve_triangular,
         jla.solve_triangular, A + 4 * np.eye(4, dtype=np.float32), B[:, 0]),
    _row("solve_triangular(unit_diagonal)",
         lambda a, b: sla.solve_triangular(a, b, unit_diagonal=True, lower=True),
         lambda a, b: jla.solve_triangular(a, b, unit_diagonal=True, lower=True), A, B),
    _row("cholesky(default upper)", sla.cholesky, jla.cholesky, SPD),
    _row("cholesky(lower)", lambda a: sla.cholesky(a, lower=True),
         lambda a: jla.cholesky(a, lower=True), SPD),
    *[_row(f"cho_solve(lower={lo})",
           lambda a, b, lo=lo: sla.cho_solve(sla.cho_factor(a, lower=lo), b),
           lambda a, b, lo=lo: jla.cho_solve(jla.cho_factor(a, lower=lo), b), SPD, B)
      for lo in (False, True)],
    _row("cho_factor", lambda a: sla.cho_factor(a)[0], lambda a: jla.cho_factor(a)[0], SPD),
    _row("lu_factor", sla.lu_factor, jla.lu_factor, A),
    *[_row(f"lu_solve(trans={t})", lambda a, b, t=t: sla.lu_solve(sla.lu_factor(a), b, t),
           lambda a, b, t=t: jla.lu_solve(jla.lu_factor(a), b, t), A, B)
      for t in (0, 1, 2)],
    _row("lu_solve(vector)", lambda a, b: sla.lu_solve(sla.lu_factor(a), b),
         lambda a, b: jla.lu_solve(jla.lu_factor(a), b), A, B[:, 1]),
    _row("lu", sla.lu, jla.lu, A),
    _row("lu(wide)", sla.lu, jla.lu, A[:3]),
    _row("lu(tall, permute_l)", lambda a: sla.lu(a, permute_l=True),
         lambda a: jla.lu(a, permute_l=True), A[:, :3]),
    _row("qr(full)", sla.qr, jla.qr, A[:, :3]),
    _row("qr(economic)", lambda a: sla.qr(a, mode="economic"),
         lambda a: jla.qr(a, mode="economic"), A[:, :3]),
    _row("qr(r)", lambda a: sla.qr(a, mode="r"), lambda a: jla.qr(a, mode="r"), A),
    _row("svd", sla.svd, jla.svd, A[:3]),
    _row("svd(compute_uv=False)", lambda a: sla.svd(a, compute_uv=False),
         lambda a: jla.svd(a, compute_uv=False), A),
    _row("eigh", sla.eigh, jla.eigh, SPD, atol=1e-4),
    _row("eigh(eigvals_only, upper)", lambda a: sla.eigh(a, lower=False, eigvals_only=True),
         lambda a: jla.eigh(a, lower=False, eigvals_only=True), SPD),
    _row("inv", sla.inv, jla.inv, SPD),
    _row("det", sla.det, jla.det, A),
    _row("solve", sla.solve, jla.solve, A, B),
    _row("solve(assume_a=pos)", lambda a, b: sla.solve(a, b, assume_a="pos"),
         lambda a, b: jla.solve(a, b, assume_a="pos"), SPD, B),
    _row("block_diag", lambda a, s, v: sla.block_diag(a, s, v),
         lambda a, s, v: jla.block_diag(a, s, v), A[:2, :3], np.float32(3), B[:, 0]),
    *[_row(f"expm(x{s})", sla.expm, jla.expm, A * np.float32(s), rtol=2e-4, atol=1e-5)
      for s in (0.01, 0.3, 1, 3, 10)],
    _row("expm(float64)", sla.expm, jla.expm, A.astype(np.float64) * 3, rtol=1e-10,
         atol=1e-12),
    _row("expm(stack)", sla.expm, jla.expm, STACK, rtol=1e-4),
    _row("expm(upper_triangular)", lambda a: sla.expm(a, upper_triangular=True),
         lambda a: jla.expm(a, upper_triangular=True), np.triu(A)),
]


@pytest.mark.parametrize("fn, jfn, args, rtol, atol", CASES)
def test_matches_jax_three_ways(fn, jfn, args, rtol, atol):
    check_three_ways(fn, _jax(jfn), *args, rtol=rtol, atol=atol)


def test_expm_beyond_max_squarings_is_nan_as_in_jax():
    big = A * np.float32(1e4)
    assert np.isnan(sla.expm(big, max_squarings=2).numpy()).all()
    assert np.isnan(np.asarray(jla.expm(big, max_squarings=2))).all()


def test_numpy_linalg_triangular_solve_defaults_to_upper_as_jax_lax():
    a = A + 4 * np.eye(4, dtype=np.float32)
    ours = snp.linalg.triangular_solve(a, B).numpy()
    np.testing.assert_allclose(ours, np.asarray(jax.lax.linalg.triangular_solve(
        a, B, left_side=True)), rtol=2e-5, atol=2e-5)


def test_solve_triangular_gradient_matches_jax():
    a = A + 4 * np.eye(4, dtype=np.float32)
    ours = stablejit.grad(lambda a, b: snp.sum(sla.solve_triangular(a, b, trans=1) ** 2),
                          argnums=(0, 1))(a, B)
    theirs = jax.grad(lambda a, b: jnp.sum(jla.solve_triangular(a, b, trans=1) ** 2),
                      argnums=(0, 1))(a, B)
    for o, t in zip(ours, theirs, strict=True):
        # only the upper triangle of a is read, so only it has a gradient
        np.testing.assert_allclose(np.triu(o.numpy()), np.triu(np.asarray(t)), rtol=1e-4,
                                   atol=1e-5)


@pytest.mark.parametrize("call, match", [
    (lambda: sla.solve_triangular(A, B, trans=3), "trans must be"),
    (lambda: sla.qr(A, mode="raw"), "mode must be"),
    (lambda: sla.lu_solve(sla.lu_factor(A), B, trans="X"), "trans must be"),
    (lambda: sla.block_diag(np.ones((2, 2, 2), np.float32)), "at most 2"),
    (lambda: sla.cholesky(np.ones((2, 3), np.float32)), "square"),
])
def test_bad_arguments_say_what_is_wrong(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_unsupported_options_raise_not_implemented():
    with pytest.raises(NotImplementedError, match="pivoting"):
        sla.qr(A, pivoting=True)
    with pytest.raises(NotImplementedError, match="standard problem"):
        sla.eigh(SPD, SPD)
