"""Window reductions and pooling three ways against jax.lax.reduce_window, and their
gradients (sum: pad + reduce_window; max/min: select_and_scatter) against jax.grad."""

import jax
import numpy as np
import pytest
import stablejit
from jax import lax
from stablejit import conv

from tests.compare import assert_close
from tests.runners import run_three_ways

KINDS = {"sum": (0.0, lax.add), "max": (-np.inf, lax.max), "min": (np.inf, lax.min),
         "product": (1.0, lax.mul)}
ARGS = [((1, 3, 2), (1, 2, 1), "VALID", None, None),
        ((1, 3, 2), (1, 2, 1), ((0, 0), (1, 1), (0, 1)), (1, 1, 2), (1, 2, 1)),
        ((2, 2, 2), (1, 1, 1), "SAME", None, None)]


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("i", range(len(ARGS)))
def test_window_reductions_three_ways(kind, i):
    win, st, pad, bd, wd = ARGS[i]
    x = np.random.default_rng(i).standard_normal((3, 7, 6)).astype(np.float32)
    fn = getattr(conv, f"window_{kind}")
    init, op = KINDS[kind]
    dilated = [(n - 1) * d + 1 for n, d in zip(x.shape, bd or (1,) * 3, strict=True)]
    pads = conv.padding_pairs(pad, dilated, win, st, wd)
    want = np.asarray(lax.reduce_window(x, init, op, win, st, pads, bd, wd))
    for path, out in run_three_ways(lambda x: fn(x, win, st, pad, bd, wd), x).items():
        assert_close(out, want, atol=1e-5, rtol=1e-5, msg=path)


def test_pools_and_integer_windows():
    x = np.random.default_rng(3).standard_normal((2, 3, 8, 8)).astype(np.float32)
    ones = np.ones_like(x)
    want_max = lax.reduce_window(x, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
    pads = ((0, 0), (0, 0), (1, 1), (1, 1))
    s = lax.reduce_window(x, 0.0, lax.add, (1, 1, 3, 3), (1, 1, 1, 1), pads)
    c = lax.reduce_window(ones, 0.0, lax.add, (1, 1, 3, 3), (1, 1, 1, 1), pads)
    for path, (m, a) in run_three_ways(
            lambda x: (conv.max_pool(x, 2), conv.avg_pool(x, 3, 1, "SAME",
                                                          count_include_pad=False)), x).items():
        assert_close(m, np.asarray(want_max), msg=path)
        assert_close(a, np.asarray(s / c), atol=1e-5, rtol=1e-5, msg=path)
    xi = np.arange(24, dtype=np.int32).reshape(4, 6)
    for path, out in run_three_ways(lambda x: conv.window_max(x, (2, 3), (2, 3)), xi).items():
        np.testing.assert_array_equal(out, xi.reshape(2, 2, 2, 3).max(axis=(1, 3)), path)


def test_window_errors():
    with pytest.raises(stablejit.ShapeError, match="larger than the padded"):
        conv.window_sum(np.ones((2, 2), np.float32), (3, 1))
    with pytest.raises(ValueError, match="window_shape"):
        conv.window_sum(np.ones((2, 2), np.float32), (3,))


def test_window_gradients_match_jax():
    x = np.random.default_rng(5).standard_normal((2, 3, 8, 7)).astype(np.float32)
    cases = [
        (lambda x: (conv.max_pool(x, 2) ** 2).sum(),
         lambda x: (lax.reduce_window(x, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2),
                                      "VALID") ** 2).sum()),
        (lambda x: (conv.window_min(x, (1, 1, 3, 2), (1, 1, 2, 1), "SAME") ** 2).sum(),
         lambda x: (lax.reduce_window(x, np.inf, lax.min, (1, 1, 3, 2), (1, 1, 2, 1),
                                      "SAME") ** 2).sum()),
        (lambda x: (conv.window_sum(x, (1, 2, 3, 2), (1, 1, 2, 2), "SAME", None,
                                    (1, 1, 2, 1)) ** 2).sum(),
         lambda x: (lax.reduce_window(x, 0.0, lax.add, (1, 2, 3, 2), (1, 1, 2, 2),
                                      conv.padding_pairs("SAME", x.shape, (1, 2, 3, 2),
                                                         (1, 1, 2, 2), (1, 1, 2, 1)),
                                      None, (1, 1, 2, 1)) ** 2).sum()),
        (lambda x: (conv.avg_pool(x, 2, 1) ** 3).sum(),
         lambda x: ((lax.reduce_window(x, 0.0, lax.add, (1, 1, 2, 2), (1, 1, 1, 1),
                                       "VALID") / 4) ** 3).sum()),
    ]
    for f, jf in cases:
        assert_close(stablejit.grad(f)(x), np.asarray(jax.grad(jf)(x)), atol=1e-4, rtol=1e-4)
