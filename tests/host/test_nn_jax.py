"""stablejit.nn and stablejit.nn.initializers against jax.nn: one table of (name, arrays,
call), each call made with jax.nn and with stablejit.nn (jit, eager XLA and reference)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import nn, random

from tests.support.compare import assert_close
from tests.support.runners import run_three_ways

rng = np.random.default_rng(0)
X = np.concatenate([np.linspace(-6, 6, 23), [-1.0, 0.0, 1.0, 40.0, -40.0, 0.5, -0.5, 3.0,
                                              -3.0]]).astype(np.float32).reshape(4, 8)
BIG = np.array([[1000.0, 0.0, -1.0, 2.0], [1.0, 2.0, 3.0, -50.0], [-1e4, -1e4, 0.5, 0.25]],
               np.float32)
MASK = np.array([[True, False, True, True], [False, False, True, True],
                 [True, True, True, False]])
W = np.array([[1.0, 0.0, 2.0, 1.0], [1.0, -3.0, 0.5, 1.0], [0.0, 0.0, 0.0, 0.0]], np.float32)
LABELS = np.array([[0, 3, 1], [2, -1, 5]], np.int32)
Q = rng.standard_normal((2, 5, 4, 8)).astype(np.float32)
K = rng.standard_normal((2, 6, 2, 8)).astype(np.float32)
V = rng.standard_normal((2, 6, 2, 8)).astype(np.float32)
KQ = rng.standard_normal((2, 5, 4, 8)).astype(np.float32)
VQ = rng.standard_normal((2, 5, 4, 8)).astype(np.float32)
BIAS = rng.standard_normal((2, 4, 5, 6)).astype(np.float32)
AMASK = rng.random((2, 1, 5, 6)) > 0.3

CASES = [
    ("relu", (X,), lambda m, x: m.relu(x)),
    ("relu6", (X,), lambda m, x: m.relu6(x)),
    ("sigmoid", (X,), lambda m, x: m.sigmoid(x)),
    ("silu", (X,), lambda m, x: m.silu(x)),
    ("swish", (X,), lambda m, x: m.swish(x)),
    ("log_sigmoid", (X,), lambda m, x: m.log_sigmoid(x)),
    ("softplus", (X,), lambda m, x: m.softplus(x)),
    ("soft_sign", (X,), lambda m, x: m.soft_sign(x)),
    ("squareplus", (X,), lambda m, x: m.squareplus(x)),
    ("squareplus b", (X,), lambda m, x: m.squareplus(x, 1.5)),
    ("mish", (X,), lambda m, x: m.mish(x)),
    ("elu", (X,), lambda m, x: m.elu(x)),
    ("elu alpha", (X,), lambda m, x: m.elu(x, 0.5)),
    ("selu", (X,), lambda m, x: m.selu(x)),
    ("celu", (X,), lambda m, x: m.celu(x)),
    ("celu alpha", (X,), lambda m, x: m.celu(x, 2.0)),
    ("leaky_relu", (X,), lambda m, x: m.leaky_relu(x)),
    ("leaky_relu slope", (X,), lambda m, x: m.leaky_relu(x, 0.2)),
    ("hard_tanh", (X,), lambda m, x: m.hard_tanh(x)),
    ("hard_sigmoid", (X,), lambda m, x: m.hard_sigmoid(x)),
    ("hard_silu", (X,), lambda m, x: m.hard_silu(x)),
    ("hard_swish", (X,), lambda m, x: m.hard_swish(x)),
    ("sparse_plus", (X,), lambda m, x: m.sparse_plus(x)),
    ("sparse_sigmoid", (X,), lambda m, x: m.sparse_sigmoid(x)),
    ("log1mexp", (np.abs(X) + 0.01,), lambda m, x: m.log1mexp(x)),
    ("tanh", (X,), lambda m, x: m.tanh(x)),
    ("identity", (X,), lambda m, x: m.identity(x)),
    ("gelu", (X,), lambda m, x: m.gelu(x)),
    ("gelu exact", (X,), lambda m, x: m.gelu(x, approximate=False)),
    ("glu", (X,), lambda m, x: m.glu(x)),
    ("glu axis 0", (X,), lambda m, x: m.glu(x, axis=0)),
    ("logsumexp default axis (all)", (BIG,), lambda m, x: m.logsumexp(x)),
    ("logsumexp axis", (BIG,), lambda m, x: m.logsumexp(x, axis=1)),
    ("logsumexp axes keepdims", (X,), lambda m, x: m.logsumexp(x, axis=(0, 1),
                                                               keepdims=True)),
    ("logsumexp b", (BIG, W), lambda m, x, w: m.logsumexp(x, axis=1, b=w)),
    ("logsumexp return_sign", (BIG, W),
     lambda m, x, w: m.logsumexp(x, axis=0, b=w, return_sign=True)),
    ("logsumexp where", (BIG, MASK), lambda m, x, w: m.logsumexp(x, axis=1, where=w)),
    ("softmax", (BIG,), lambda m, x: m.softmax(x)),
    ("softmax axis 0", (BIG,), lambda m, x: m.softmax(x, axis=0)),
    ("softmax axis None", (X,), lambda m, x: m.softmax(x, axis=None)),
    ("softmax where", (BIG, MASK), lambda m, x, w: m.softmax(x, where=w)),
    ("log_softmax", (BIG,), lambda m, x: m.log_softmax(x)),
    ("log_softmax axis 0", (BIG,), lambda m, x: m.log_softmax(x, axis=0)),
    ("log_softmax where", (BIG, MASK), lambda m, x, w: m.log_softmax(x, where=w)),
    ("one_hot", (LABELS,), lambda m, x: m.one_hot(x, 4)),
    ("one_hot axis 0", (LABELS,), lambda m, x: m.one_hot(x, 4, axis=0)),
    ("one_hot dtype", (LABELS,), lambda m, x: m.one_hot(x, 6, dtype=jnp.int32, axis=1)),
    ("standardize", (X,), lambda m, x: m.standardize(x)),
    ("standardize axis 0 eps", (X,), lambda m, x: m.standardize(x, axis=0, epsilon=0.1)),
    ("standardize where", (BIG / 100, MASK), lambda m, x, w: m.standardize(x, where=w)),
    ("standardize given", (X,), lambda m, x: m.standardize(x, mean=0.5, variance=2.0)),
    ("attention", (Q, KQ, VQ), lambda m, q, k, v: m.dot_product_attention(q, k, v)),
    ("attention grouped", (Q, K, V), lambda m, q, k, v: m.dot_product_attention(q, k, v)),
    ("attention causal scale", (Q, K, V),
     lambda m, q, k, v: m.dot_product_attention(q, k, v, is_causal=True, scale=0.3)),
    ("attention bias mask", (Q, K, V, BIAS, AMASK),
     lambda m, q, k, v, b, a: m.dot_product_attention(q, k, v, bias=b, mask=a)),
    ("attention 3-d", (Q[0], KQ[0], VQ[0]),
     lambda m, q, k, v: m.dot_product_attention(q, k, v, is_causal=True)),
    ("attention seq lengths", (Q, K, V),
     lambda m, q, k, v: m.dot_product_attention(
         q, k, v, query_seq_lengths=jnp.array([3, 5], jnp.int32),
         key_value_seq_lengths=jnp.array([6, 2], jnp.int32))),
    ("attention local window", (Q, K, V),
     lambda m, q, k, v: m.dot_product_attention(q, k, v, local_window_size=(1, 2))),
]


def _flat(out):
    return [np.asarray(o) for o in out] if isinstance(out, tuple) else [np.asarray(out)]


@pytest.mark.parametrize("name,arrays,call", CASES, ids=[c[0] for c in CASES])
def test_matches_jax_nn(name, arrays, call):
    want = _flat(call(jax.nn, *[jnp.asarray(a) for a in arrays]))
    for path, out in run_three_ways(lambda *xs: call(nn, *xs), *arrays).items():
        out = _flat(out)
        assert len(out) == len(want)
        for a, e in zip(out, want, strict=True):
            assert_close(a, e, rtol=2e-5, atol=2e-6, msg=f"{name} via {path}")


def test_logsumexp_default_reduces_all_axes():
    assert nn.logsumexp(snp.asarray(BIG)).shape == ()


INITS = [
    ("glorot_uniform", (), (5, 7)),
    ("glorot_normal", (), (3, 3, 4, 8)),
    ("xavier_uniform", (), (6, 4)),
    ("xavier_normal", (), (6, 4)),
    ("he_uniform", (), (3, 3, 2, 5)),
    ("he_normal", (), (10, 3)),
    ("kaiming_uniform", (), (4, 4)),
    ("kaiming_normal", (), (4, 4)),
    ("lecun_uniform", (), (8, 3)),
    ("lecun_normal", (), (2, 3, 4)),
    ("variance_scaling", (0.5, "fan_out", "normal"), (4, 6)),
    ("variance_scaling", (2.0, "fan_geo_avg", "uniform", 0, 1), (4, 6, 3)),
    ("variance_scaling", (1.0, "fan_in", "truncated_normal", -2, -1, 0), (5, 4, 6)),
    ("normal", (), (3, 4)),
    ("normal", (0.5,), (3, 4)),
    ("uniform", (2.0,), (3, 4)),
    ("truncated_normal", (1.0,), (50,)),
    ("truncated_normal", (0.1, None, -1.0, 0.5), (50,)),
    ("constant", (-7.0,), (2, 3)),
    ("orthogonal", (), (4, 6)),
    ("orthogonal", (2.0, 0), (6, 2, 3)),
    ("orthogonal", (), (7, 3)),
]


@pytest.mark.parametrize("name,args,shape", INITS,
                         ids=[f"{n}{a}{s}" for n, a, s in INITS])
def test_initializers_give_jax_bits(name, args, shape):
    """The same key gives the same values as jax.nn.initializers (random.* agree)."""
    want = getattr(jax.nn.initializers, name)(*args)(jax.random.PRNGKey(3), shape)
    got = getattr(nn.initializers, name)(*args)(random.key(3), shape)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-6, atol=1e-7)
    jitted = stablejit.jit(lambda k: getattr(nn.initializers, name)(*args)(k, shape))
    np.testing.assert_allclose(np.asarray(jitted(random.key(3))), np.asarray(want),
                               rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["zeros", "ones"])
def test_constant_initializers(name):
    want = getattr(jax.nn.initializers, name)(jax.random.PRNGKey(0), (2, 3), jnp.float16)
    got = getattr(nn.initializers, name)(random.key(0), (2, 3), snp.float16)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_orthogonal_columns_are_orthonormal():
    w = np.asarray(nn.initializers.orthogonal()(random.key(1), (3, 3, 16, 8)))
    flat = w.reshape(-1, 8)
    np.testing.assert_allclose(flat.T @ flat, np.eye(8), atol=1e-5)


def test_variance_scaling_rejects_bad_mode_and_1d_shapes():
    with pytest.raises(ValueError, match="invalid mode"):
        nn.initializers.variance_scaling(1.0, "fan", "normal")
    with pytest.raises(ValueError, match="1-dimensional"):
        nn.initializers.glorot_uniform()(random.key(0), (5,))


@pytest.mark.parametrize("name", ["elu", "selu", "celu", "log_sigmoid", "softplus", "mish",
                                  "squareplus", "relu6", "hard_swish", "glu", "gelu"])
def test_gradients_of_activations_match_jax(name):
    """Kinks included (X / 2 holds -3, 0 and 3): the same subgradient as JAX."""
    x = X / 2
    f_sj, f_jx = getattr(nn, name), getattr(jax.nn, name)
    got = stablejit.grad(lambda v: snp.sum(f_sj(v) ** 2))(snp.asarray(x))
    want = jax.grad(lambda v: jnp.sum(f_jx(v) ** 2))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-5, atol=1e-6)


def test_attention_gradient_matches_jax():
    got = stablejit.grad(lambda q: snp.sum(nn.dot_product_attention(
        q, snp.asarray(K), snp.asarray(V), is_causal=True)))(snp.asarray(Q))
    want = jax.grad(lambda q: jnp.sum(jax.nn.dot_product_attention(q, K, V, is_causal=True)))(Q)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5)
