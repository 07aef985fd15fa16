"""stablejit.conv convolutions three ways against jax.lax (the oracle), and gradients
against jax.grad."""

import jax
import numpy as np
import pytest
import stablejit
from jax import lax
from stablejit import conv

from tests.support.compare import assert_close
from tests.support.runners import run_three_ways

CASES = [  # (x shape, w shape, kwargs)
    ((2, 3, 9, 8), (4, 3, 3, 3), dict(strides=(2, 1), padding="SAME")),
    ((2, 3, 9, 8), (6, 1, 3, 2), dict(padding=((1, 2), (0, 1)), lhs_dilation=(1, 2),
                                      rhs_dilation=(2, 1), feature_group_count=3)),
    ((4, 3, 7, 7), (4, 3, 3, 3), dict(padding="VALID", batch_group_count=2)),
    ((2, 5, 11), (3, 5, 4), dict(strides=3, padding="SAME")),
]


def _lax(x, w, kw):
    kw = dict(kw)
    strides = kw.pop("strides", 1)
    strides = (strides,) * (x.ndim - 2) if isinstance(strides, int) else strides
    return lax.conv_general_dilated(x, w, strides, kw.pop("padding"), **kw)


@pytest.mark.parametrize("i", range(len(CASES)))
def test_conv_general_three_ways(i):
    xs, ws, kw = CASES[i]
    rng = np.random.default_rng(i)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    expected = np.asarray(_lax(x, w, kw))
    for path, out in run_three_ways(lambda x, w: conv.conv_general(x, w, **kw), x, w).items():
        assert_close(out, expected, atol=1e-4, rtol=1e-4, msg=path)


def test_layouts_and_complex():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 6, 5, 3)).astype(np.float32)  # NHWC
    w = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)  # HWIO
    dn = ("NHWC", "HWIO", "NHWC")
    out = conv.conv_general(x, w, 1, "SAME", dimension_numbers=dn)
    want = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn)
    assert_close(out, np.asarray(want), atol=1e-4, rtol=1e-4)
    xc = (rng.standard_normal((1, 2, 5, 5)) + 1j * rng.standard_normal((1, 2, 5, 5)))
    wc = (rng.standard_normal((2, 2, 2, 2)) + 1j * rng.standard_normal((2, 2, 2, 2)))
    xc, wc = xc.astype(np.complex64), wc.astype(np.complex64)
    for path, out in run_three_ways(lambda x, w: conv.conv2d(x, w), xc, wc).items():
        assert_close(out, np.asarray(lax.conv_general_dilated(xc, wc, (1, 1), "SAME")),
                     atol=1e-4, rtol=1e-4, msg=path)


def test_bad_shapes_raise_clear_errors():
    with pytest.raises(stablejit.ShapeError, match="features"):
        conv.conv2d(np.ones((1, 3, 4, 4), np.float32), np.ones((2, 2, 3, 3), np.float32))
    with pytest.raises(ValueError, match="padding"):
        conv.conv2d(np.ones((1, 3, 4, 4), np.float32), np.ones((2, 3, 3, 3), np.float32),
                    padding="FULL")


@pytest.mark.parametrize("i", range(len(CASES)))
def test_conv_gradients_match_jax(i):
    xs, ws, kw = CASES[i]
    rng = np.random.default_rng(10 + i)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    g = stablejit.grad(lambda x, w: (conv.conv_general(x, w, **kw) ** 2).sum(),
                       argnums=(0, 1))(x, w)
    jg = jax.grad(lambda x, w: (_lax(x, w, kw) ** 2).sum(), argnums=(0, 1))(x, w)
    for a, b in zip(g, jg, strict=True):
        assert_close(a, np.asarray(b), atol=1e-3, rtol=1e-4)
