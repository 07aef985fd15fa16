"""where= on the reductions (and initial= where NumPy takes it): NumPy's values (only the
selected elements take part; the mean of none is NaN), the dtype of the unmasked
reduction, eagerly and under jit; the gradient and vmap as jax's. A masked loss ported
from JAX, mean(l, where=m), was refused with 'unexpected keyword argument'."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

jax.config.update("jax_enable_x64", False)

# (name, f(namespace, x, where), dtypes it takes, differentiable)
F32, I32, B = np.float32, np.int32, np.bool_
FUNCS = [
    ("sum", lambda m, x, w, a: m.sum(x, axis=a, where=w), (F32, I32, B), True),
    ("sum initial", lambda m, x, w, a: m.sum(x, axis=a, where=w, initial=2), (F32, I32), True),
    ("prod", lambda m, x, w, a: m.prod(x, axis=a, where=w), (F32, I32), True),
    ("max initial", lambda m, x, w, a: m.max(x, axis=a, where=w, initial=-3), (F32, I32), True),
    ("min initial", lambda m, x, w, a: m.min(x, axis=a, where=w, initial=7), (F32, I32), True),
    ("any", lambda m, x, w, a: m.any(x, axis=a, where=w), (F32, I32, B), False),
    ("all", lambda m, x, w, a: m.all(x, axis=a, where=w), (F32, I32, B), False),
    ("mean", lambda m, x, w, a: m.mean(x, axis=a, where=w), (F32, I32, B), True),
    ("mean keepdims", lambda m, x, w, a: m.mean(x, axis=a, where=w, keepdims=True), (F32,),
     True),
    ("var", lambda m, x, w, a: m.var(x, axis=a, where=w), (F32, I32), True),
    ("var ddof=1", lambda m, x, w, a: m.var(x, axis=a, where=w, ddof=1), (F32,), True),
    ("std", lambda m, x, w, a: m.std(x, axis=a, where=w), (F32, I32), True),
    ("nansum", lambda m, x, w, a: m.nansum(x, axis=a, where=w), (F32, I32), True),
    ("nansum initial", lambda m, x, w, a: m.nansum(x, axis=a, where=w, initial=1.5), (F32,),
     True),
    ("nanprod", lambda m, x, w, a: m.nanprod(x, axis=a, where=w), (F32,), True),
    ("nanmean", lambda m, x, w, a: m.nanmean(x, axis=a, where=w), (F32, I32), True),
    ("nanvar", lambda m, x, w, a: m.nanvar(x, axis=a, where=w), (F32,), True),
    ("nanstd ddof=1", lambda m, x, w, a: m.nanstd(x, axis=a, where=w, ddof=1), (F32,), True),
    ("nanmax initial", lambda m, x, w, a: m.nanmax(x, axis=a, where=w, initial=-3), (F32, I32),
     True),
    ("nanmin initial", lambda m, x, w, a: m.nanmin(x, axis=a, where=w, initial=7), (F32,),
     True),
]

# (shape, axis, the mask: "rand" (x's shape), "row" (broadcast from the last axis), "none"
# (all False), "all" (a Python True))
LAYOUTS = [((6,), None, "rand"), ((6,), 0, "none"), ((3, 4), 1, "rand"), ((3, 4), 0, "row"),
           ((3, 4), None, "row"), ((3, 4), (0, 1), "all"), ((2, 0, 3), 1, "rand"),
           ((2, 3, 4), -1, "rand"), ((2, 3, 4), (0, 2), "none")]


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape) * 3
    if dtype is B:
        return x > 0
    if dtype is I32:
        return (np.abs(x).astype(np.int64) % 3 + 1).astype(I32)
    x = x.astype(F32)
    if x.size > 2:
        x.flat[1] = np.nan  # NaNs: propagated, or ignored by the nan* functions
    return x


def _mask(shape, kind, seed=1):
    if kind == "all":
        return True
    if kind == "none":
        return np.zeros(shape, bool)
    if kind == "row":
        return np.random.default_rng(seed).random(shape[-1:]) > 0.4
    return np.random.default_rng(seed).random(shape) > 0.4


def _numpy(f, x, w, axis):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        xx = x.astype(np.float64) if x.dtype == F32 else x
        return np.asarray(f(np, xx, w, axis))


CASES = [(name, f, dt, shape, axis, mask) for name, f, dts, _ in FUNCS for dt in dts
         for shape, axis, mask in LAYOUTS]


@pytest.mark.parametrize("name, f, dtype, shape, axis, mask", CASES,
                         ids=[f"{c[0]}-{c[2].__name__}-{c[3]}-{c[4]}-{c[5]}" for c in CASES])
def test_where_selects_the_elements_as_numpy(name, f, dtype, shape, axis, mask):
    x, w = _data(shape, dtype), _mask(shape, mask)
    want = _numpy(f, x, w, axis)
    # the dtype: the one the same reduction gives without a mask
    want_dtype = np.dtype(f(snp, snp.asarray(x), None, axis).dtype)
    sw = w if isinstance(w, bool) else snp.asarray(w)
    eager = f(snp, snp.asarray(x), sw, axis)
    jitted = stablejit.jit(lambda t, m: f(snp, t, m, axis))(snp.asarray(x), sw)
    for got in (eager, jitted):
        assert got.shape == want.shape and np.dtype(got.dtype) == want_dtype
        np.testing.assert_allclose(np.asarray(got).astype(want.dtype), want, rtol=2e-5,
                                   atol=1e-5)


GRADS = [(name, f) for name, f, dts, diff in FUNCS if diff]


@pytest.mark.parametrize("name, f", GRADS, ids=[g[0] for g in GRADS])
@pytest.mark.parametrize("nan", [None, "masked out", "selected"])
def test_grad_and_vmap_of_a_masked_reduction_are_jaxs(name, f, nan):
    """The gradient is jax's; where the mask discards an element (a NaN there, a row that
    selects nothing) it is 0, where jax's leaks NaN through the discarded 0/0 or NaN."""
    if nan == "selected" and not name.startswith("nan"):
        pytest.skip("a selected NaN makes the value NaN: nothing to compare")
    x = np.random.default_rng(2).normal(size=(3, 5)).astype(F32)
    w = np.random.default_rng(3).random((3, 5)) > 0.3
    w[2] = False  # a row that selects nothing
    clean = x.copy()
    if nan is not None:
        w[1, 2] = nan == "selected"
        x[1, 2] = np.nan

    def loss(m):
        return lambda t, k: m.sum(m.where(k.any(axis=1), f(m, t, k, 1), 0.0))
    want = np.array(jax.grad(loss(jnp))(jnp.asarray(x if nan == "selected" else clean),
                                        jnp.asarray(w)))
    want[2] = 0
    for g in (stablejit.grad(loss(snp)), stablejit.jit(stablejit.grad(loss(snp)))):
        np.testing.assert_allclose(np.asarray(g(snp.asarray(x), snp.asarray(w))), want,
                                   rtol=1e-5, atol=1e-6)
    want = jax.vmap(lambda t, k: f(jnp, t, k, 0))(jnp.asarray(x), jnp.asarray(w))
    got = stablejit.vmap(lambda t, k: f(snp, t, k, 0))(snp.asarray(x), snp.asarray(w))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call, match", [
    (lambda: snp.mean(snp.ones((3, 4)), where=snp.ones(3) > 0), "where= of shape"),
    (lambda: snp.var(snp.ones((3, 4)), where=snp.ones((2, 3, 4)) > 0), "where= of shape"),
    (lambda: snp.nanmax(snp.ones(3), where=snp.ones(3) > 0), "needs initial="),
    (lambda: snp.var(snp.ones((3, 4)), axis=1, mean=snp.ones(3)), "mean= has shape"),
])
def test_a_mask_or_mean_that_does_not_fit_names_itself(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_var_takes_a_mean_already_computed():
    x = np.arange(12, dtype=F32).reshape(3, 4)
    m = np.mean(x, axis=1, keepdims=True)
    np.testing.assert_allclose(np.asarray(snp.std(snp.asarray(x), axis=1, mean=m)),
                               np.std(x, axis=1, mean=m), rtol=1e-6)


NAN_STATS = [("nanvar", np.nanvar), ("nanstd", np.nanstd)]


@pytest.mark.parametrize("name, np_f", NAN_STATS, ids=[n for n, _ in NAN_STATS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("path", ["eager", "jit", "reference"])
def test_nanvar_of_infinities_is_nan_as_numpy(name, np_f, dtype, path):
    """Only NaN elements are left out: an infinity makes the deviations inf - inf, NaN,
    and the variance NaN (it was inf, or 0 for [inf, -inf]: the NaN deviations were
    dropped as if the elements were NaN)."""
    rows = [[1.0, np.inf, 2.0, 3.0], [np.inf, -np.inf, 1.0, 1.0], [np.inf, np.nan, 1.0, 2.0],
            [1.0, np.nan, 3.0, np.nan], [np.nan] * 4, [-np.inf, -np.inf, 0.0, 1.0]]
    x = np.array(rows, dtype)
    if dtype == np.complex64:
        x = x + np.complex64(0.5j)
    f = getattr(snp, name)
    for kw in ({"axis": 1}, {"axis": 1, "ddof": 1}, {"axis": None}):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = np_f(x, **kw)
        if path == "jit":
            got = stablejit.jit(lambda t, kw=kw: f(t, **kw))(snp.asarray(x))
        elif path == "reference":
            with stablejit.default_backend("reference"):
                got = f(snp.asarray(x), **kw)
        else:
            got = f(snp.asarray(x), **kw)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
