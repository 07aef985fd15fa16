"""sort, argsort, sort_complex, lexsort (and partition, which sorts) of complex numbers:
lexicographic, by real part then imaginary part, with NaNs where NumPy puts them
(R + Rj < R + nanj < nan + Rj < nan + nanj); eagerly and under jit; the gradient and vmap
as jax's (which agrees with NumPy where there is no NaN). They were refused with 'complex
numbers have no order'."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

N, INF = np.nan, np.inf
C = complex
DATA = {
    "ties in the real part": [1 + 2j, 1 - 1j, 0 + 5j, 1 + 2j, -3 + 0j, 1 + 0j],
    "signed zeros": [C(-0.0, 1), C(0.0, -0.0), C(0.0, 0.0), C(-0.0, -1), 0j],
    "infinities": [C(INF, 0), C(-INF, 2), C(1, INF), C(1, -INF), C(INF, -INF), 0j],
    "NaNs": [C(N, 1), C(1, N), C(N, N), 2 + 1j, C(N, -3), C(0, N), C(-1, 0), C(N, 1)],
    "one": [3 - 1j],
    "empty": [],
    "a matrix": [[2 + 1j, 2 - 1j, C(N, 0)], [0j, C(1, N), -1 + 7j]],
}
# (name, f(namespace, x)): NumPy's function, stablejit's the same call
FUNCS = [
    ("sort", lambda m, x: m.sort(x)),
    ("sort axis=0", lambda m, x: m.sort(x, axis=0)),
    ("sort axis=None", lambda m, x: m.sort(x, axis=None)),
    ("argsort", lambda m, x: m.argsort(x, **({"kind": "stable"} if m is np else {}))),
    ("argsort axis=0", lambda m, x: m.argsort(x, axis=0, **({"kind": "stable"} if m is np
                                                             else {}))),
    ("sort_complex", lambda m, x: m.sort_complex(x)),
    # (stablejit's partition sorts fully, one of the orders NumPy's allows)
    ("partition", lambda m, x: m.sort(x) if m is np or not x.size else m.partition(x, 0)),
    ("lexsort by parity, then x", lambda m, x: m.lexsort([x, m.asarray(
        np.arange(x.size).reshape(x.shape) % 2)])),
]
CASES = [(f, name, data, dtype) for f in FUNCS for name, data in DATA.items()
         for dtype in (np.complex64, np.complex128)]


@pytest.mark.parametrize("f, name, data, dtype", CASES,
                         ids=[f"{c[0][0]}-{c[1]}-{c[3].__name__}" for c in CASES])
def test_complex_numbers_sort_as_numpy(f, name, data, dtype):
    _, fn = f
    x = np.asarray(data, dtype)
    want = fn(np, x)
    for got in (fn(snp, snp.asarray(x)), stablejit.jit(lambda t: fn(snp, t))(snp.asarray(x))):
        assert got.shape == want.shape
        if want.dtype.kind == "c":
            assert np.dtype(got.dtype) == want.dtype
        # (assert_array_equal: NaNs in the same places, and -0.0 == 0.0 as NumPy's order)
        np.testing.assert_array_equal(np.asarray(got), want)


def test_descending_is_the_reverse_of_the_ascending_order_as_jax():
    x = np.asarray(DATA["ties in the real part"] + DATA["infinities"], np.complex64)
    want = jnp.sort(jnp.asarray(x), descending=True)
    np.testing.assert_array_equal(np.asarray(snp.sort(snp.asarray(x), descending=True)), want)
    want = jnp.argsort(jnp.asarray(x), descending=True, stable=True)
    got = stablejit.jit(lambda t: snp.argsort(t, descending=True))(snp.asarray(x))
    np.testing.assert_array_equal(np.asarray(got), want)


def test_grad_and_vmap_of_a_complex_sort_are_jaxs():
    rng = np.random.default_rng(0)
    re = rng.integers(-2, 3, (3, 6)).astype(np.float32)  # ties in the real part
    im = rng.normal(size=(3, 6)).astype(np.float32)
    w = np.arange(6, dtype=np.float32) - 2.5

    def loss(m):
        return lambda a, b: m.sum(m.real(m.sort(a + 1j * b) * w * (1 - 2j)))
    want = jax.grad(loss(jnp), argnums=(0, 1))(re, im)
    for g in (stablejit.grad(loss(snp), argnums=(0, 1)),
              stablejit.jit(stablejit.grad(loss(snp), argnums=(0, 1)))):
        for got, w_ in zip(g(snp.asarray(re), snp.asarray(im)), want, strict=True):
            np.testing.assert_allclose(np.asarray(got), w_, rtol=1e-6)
    z = (re + 1j * im).astype(np.complex64)
    for fn in (lambda m, t: m.sort(t), lambda m, t: m.argsort(t)):
        want = jax.vmap(lambda t, fn=fn: fn(jnp, t))(jnp.asarray(z))
        got = stablejit.vmap(lambda t, fn=fn: fn(snp, t))(snp.asarray(z))
        np.testing.assert_array_equal(np.asarray(got), want)
