"""Window reductions and pooling three ways against jax.lax.reduce_window, and their
gradients (sum: pad + reduce_window; max/min: select_and_scatter) against jax.grad; forward
mode and second derivatives of max/min pooling (select_and_gather_add) against jax."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from jax import lax
from stablejit import conv
from stablejit.compiler.registry import ALL as P
from stablejit.dispatch import bind1

from tests.support.compare import assert_close
from tests.support.runners import run_three_ways

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


def _jax_pool(kind, window, strides, padding):
    init, op = KINDS[kind]
    return lambda x: lax.reduce_window(x, init, op, window, strides, padding)


# (kind, window, strides, padding) of pools over an NCHW operand
POOLS = [("max", (1, 1, 2, 2), (1, 1, 2, 2), "VALID"),
         ("max", (1, 1, 3, 2), (1, 1, 1, 2), "SAME"),
         ("min", (1, 2, 2, 3), (1, 1, 2, 1), "SAME")]


def _tied(shape, seed):
    """Integers in [-2, 2]: many equal elements inside every window."""
    return np.random.default_rng(seed).integers(-2, 3, shape).astype(np.float32)


@pytest.mark.parametrize("i", range(len(POOLS)))
def test_pool_forward_mode_matches_jax(i):
    kind, win, st, pad = POOLS[i]
    f = lambda x: getattr(conv, f"window_{kind}")(x, win, st, pad)  # noqa: E731
    jf = _jax_pool(kind, win, st, pad)
    rng = np.random.default_rng(i)
    spread = rng.standard_normal((2, 3, 6, 5)).astype(np.float32)
    tied = _tied(spread.shape, i)
    t = rng.standard_normal(spread.shape).astype(np.float32)
    # On ties jax's forward mode keeps the last equal element on the host, its reverse mode
    # (select_and_scatter) the first; both of ours follow reverse mode, so J t comes from
    # jax's Jacobian there.
    for x, want in ((spread, jax.jvp(jf, (spread,), (t,))[1]),
                    (tied, np.tensordot(jax.jacrev(jf)(tied), t, axes=t.ndim))):
        for path, out in run_three_ways(lambda x, t: stablejit.jvp(f, (x,), (t,))[1],
                                        x, t).items():
            assert_close(out, np.asarray(want), atol=1e-5, rtol=1e-5, msg=path)
    small = rng.standard_normal((1, 2, 4, 3)).astype(np.float32)
    assert_close(stablejit.jacfwd(f)(small), np.asarray(jax.jacfwd(jf)(small)))


@pytest.mark.parametrize("i", range(len(POOLS)))
def test_pool_second_derivatives_match_jax(i):
    kind, win, st, pad = POOLS[i]
    f = lambda x: snp.sum(getattr(conv, f"window_{kind}")(x, win, st, pad) ** 3)  # noqa: E731
    jf = lambda x: jnp.sum(_jax_pool(kind, win, st, pad)(x) ** 3)  # noqa: E731
    x = np.random.default_rng(10 + i).standard_normal((1, 2, 4, 5)).astype(np.float32)
    want = np.asarray(jax.hessian(jf)(x))
    assert_close(stablejit.hessian(f)(x), want, atol=1e-4, rtol=1e-4)
    assert_close(stablejit.jit(stablejit.hessian(f))(x), want, atol=1e-4, rtol=1e-4)
    gg = stablejit.grad(lambda x: snp.sum(stablejit.grad(f)(x) ** 2))
    jgg = jax.grad(lambda x: jnp.sum(jax.grad(jf)(x) ** 2))
    assert_close(gg(x), np.asarray(jgg(x)), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("select", ["ge", "le"])
def test_gather_and_scatter_are_transposes_with_ties_and_padding(select):
    """<gather(t), c> == <t, scatter(c)>: both pick the first extremum and never padding."""
    x = _tied((5, 7), 0)
    rng = np.random.default_rng(1)
    t = rng.standard_normal(x.shape).astype(np.float32)
    c = rng.standard_normal((3, 7)).astype(np.float32)
    win = {"select": select, "window_dimensions": (2, 3), "window_strides": (2, 1),
           "padding": ((1, 0), (1, 1))}

    def both(t, x, c):
        return (bind1(P["select_and_gather_add"], t, x, base_dilations=(1, 1),
                      window_dilations=(1, 1), **win),
                bind1(P["select_and_scatter_add"], c, x, snp.asarray(np.float32(0)), **win))

    for path, (g, s) in run_three_ways(both, t, x, c).items():
        assert_close(np.sum(c * g), np.sum(t * s), atol=1e-5, rtol=1e-5, msg=path)


def test_select_and_gather_add_errors_name_the_operand():
    x = snp.asarray(np.ones((4, 4), np.float32))
    win = {"window_dimensions": (2, 2), "window_strides": (2, 2), "padding": ((0, 0),) * 2,
           "base_dilations": (1, 1), "window_dilations": (1, 1)}
    gather = P["select_and_gather_add"]
    with pytest.raises(stablejit.ShapeError, match="tangent f64.* and operand f32"):
        bind1(gather, snp.asarray(np.ones((4, 4))), x, select="ge", **win)
    with pytest.raises(stablejit.ShapeError, match="select must be 'ge' .* got 'max'"):
        bind1(gather, x, x, select="max", **win)
    with pytest.raises(stablejit.ShapeError, match="window_strides has 1 entries"):
        bind1(gather, x, x, select="ge", **{**win, "window_strides": (2,)})
