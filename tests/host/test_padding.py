"""pad, every NumPy mode and keyword: reflect / symmetric / wrap wider than the axis
(NumPy pads period after period), reflect_type="odd", linear_ramp with end_values,
stat_length for maximum / minimum / mean / median, median and empty. NumPy's values and
dtype, eagerly and under jit; the gradient and vmap as jax's. Widths past one period,
reflect_type, end_values and stat_length were refused."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

F32, I32, B = np.float32, np.int32, np.bool_
# (mode, keywords, dtypes): each is tried on every shape and width below
MODES = [
    ("constant", {}, (F32, I32, B)),
    ("constant", {"constant_values": ((1, 2), (3, 4))}, (F32, I32)),
    ("empty", {}, (F32, I32)),
    ("edge", {}, (F32, I32, B)),
    ("wrap", {}, (F32, I32, B)),
    ("symmetric", {}, (F32, I32, B)),
    ("reflect", {}, (F32, I32, B)),
    ("symmetric", {"reflect_type": "odd"}, (F32, I32)),
    ("reflect", {"reflect_type": "odd"}, (F32, I32)),
    ("linear_ramp", {}, (F32, I32)),
    ("linear_ramp", {"end_values": (5, -4)}, (F32, I32)),
    ("linear_ramp", {"end_values": ((7, -3), (2.5, 1))}, (F32,)),
    ("maximum", {}, (F32, I32)),
    ("minimum", {"stat_length": 2}, (F32, I32)),
    ("mean", {"stat_length": (1, 3)}, (F32, I32)),
    ("mean", {}, (F32, I32)),
    ("median", {}, (F32, I32)),
    ("median", {"stat_length": ((2, 1), (9, 2))}, (F32, I32)),
    ("maximum", {"stat_length": ((1, 2), (3, 1))}, (F32,)),
]
# (shape, pad_width)
WIDTHS = [((5,), (7, 2)), ((5,), (2, 13)), ((5,), 3), ((3,), (0, 0)), ((1,), (2, 3)),
          ((2,), (5, 4)), ((3, 4), ((1, 9), (6, 0))), ((3, 4), 2), ((2, 0), ((1, 2), (0, 0))),
          ((2, 0), ((0, 0), (1, 1)))]
CASES = [(mode, kw, dtype, shape, w) for mode, kw, dts in MODES for dtype in dts
         for shape, w in WIDTHS
         if len(shape) == 2 or all(np.ndim(v) < 2 for v in kw.values())]  # (per-axis: 2-d)


def _data(shape, dtype):
    x = np.random.default_rng(0).normal(size=shape) * 4
    if dtype is B:
        return x > 0
    return x.astype(dtype)


def _numpy_pad(x, w, mode, kw):
    if mode == "empty":  # NumPy leaves it undefined; stablejit (and jax) pad with 0
        return np.pad(x, w, mode="constant")
    return np.pad(x, w, mode=mode, **kw)


@pytest.mark.parametrize("mode, kw, dtype, shape, w", CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[2].__name__}-{c[3]}-{c[4]}" for c in CASES])
def test_pad_is_numpys(mode, kw, dtype, shape, w):
    x = _data(shape, dtype)
    try:
        want = _numpy_pad(x, w, mode, kw)
    except ValueError:  # NumPy's "can't extend empty axis": so does stablejit
        with pytest.raises(ValueError, match="empty axis 1"):
            snp.pad(snp.asarray(x), w, mode=mode, **kw)
        return
    for got in (snp.pad(snp.asarray(x), w, mode=mode, **kw),
                stablejit.jit(lambda t: snp.pad(t, w, mode=mode, **kw))(snp.asarray(x))):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-5)


GRADS = [(mode, kw) for mode, kw, dts in MODES if mode != "empty"]


@pytest.mark.parametrize("mode, kw", GRADS, ids=[f"{m}-{k}" for m, k in GRADS])
def test_grad_and_vmap_of_pad_are_jaxs(mode, kw):
    x = _data((3, 4), F32)
    w = ((4, 1), (2, 7))
    wt = np.random.default_rng(1).normal(size=(8, 13)).astype(F32)

    def loss(m):
        return lambda t: m.sum(m.pad(t, w, mode=mode, **kw) * wt)
    want = jax.grad(loss(jnp))(jnp.asarray(x))
    for g in (stablejit.grad(loss(snp)), stablejit.jit(stablejit.grad(loss(snp)))):
        np.testing.assert_allclose(np.asarray(g(snp.asarray(x))), want, rtol=1e-5, atol=1e-5)
    want = jax.vmap(lambda t: jnp.pad(t, (3, 6), mode=mode, **_one_axis(kw)))(x)
    got = stablejit.vmap(lambda t: snp.pad(t, (3, 6), mode=mode, **_one_axis(kw)))(
        snp.asarray(x))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-5)


def _one_axis(kw):
    """The keywords for a 1-d pad (a per-axis pair of pairs keeps its first pair)."""
    return {k: (v[0] if np.ndim(v) == 2 else v) for k, v in kw.items()}


@pytest.mark.parametrize("kw, error, match", [
    ({"mode": "reflect", "reflect_type": "weird"}, ValueError, "reflect_type"),
    ({"mode": "maximum", "stat_length": 0}, ValueError, "stat_length of 0"),
    ({"mode": "mean", "stat_length": -1}, ValueError, "non-negative"),
    ({"mode": "linear_ramp", "end_values": (1, 2, 3)}, ValueError, "end_values"),
    ({"mode": "sideways"}, ValueError, "not supported"),
])
def test_a_bad_pad_keyword_names_itself(kw, error, match):
    with pytest.raises(error, match=match):
        snp.pad(snp.arange(4.0), 2, **kw)
