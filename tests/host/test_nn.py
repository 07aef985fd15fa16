"""stablejit.nn against jax.nn / hand-written NumPy, on jit, eager XLA and reference."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import nn, recorder_native

PATHS = ("jit", "eager", "reference")


def _run(path, f, *args):
    if path == "reference":
        with stablejit.default_backend("reference"):
            return f(*[snp.asarray(a) for a in args])
    if path == "jit":
        return stablejit.jit(f)(*args)
    return f(*[snp.asarray(a) for a in args])


X = np.array([[1000.0, 0.0, -1.0, 2.0], [1.0, 2.0, 3.0, -50.0], [-1e4, -1e4, 0.5, 0.25]],
             np.float32)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name,sj,jx", [
    ("relu", nn.relu, jax.nn.relu),
    ("sigmoid", nn.sigmoid, jax.nn.sigmoid),
    ("silu", nn.silu, jax.nn.silu),
    ("gelu", nn.gelu, lambda x: jax.nn.gelu(x, approximate=True)),
    ("gelu exact", lambda x: nn.gelu(x, approximate=False),
     lambda x: jax.nn.gelu(x, approximate=False)),
    ("softmax", nn.softmax, jax.nn.softmax),
    ("log_softmax", nn.log_softmax, jax.nn.log_softmax),
    ("logsumexp", lambda x: nn.logsumexp(x, axis=-1), lambda x: jax.nn.logsumexp(x, axis=-1)),
    ("logsumexp axis0", lambda x: nn.logsumexp(x, axis=0, keepdims=True),
     lambda x: jax.nn.logsumexp(x, axis=0, keepdims=True)),
    ("logsumexp all", lambda x: nn.logsumexp(x, axis=None),
     lambda x: jax.nn.logsumexp(x)),
    ("standardize", nn.standardize, lambda x: jax.nn.standardize(x, epsilon=1e-5)),
])
def test_activations_match_jax_and_are_stable(path, name, sj, jx):
    x = X if name not in ("standardize", "sigmoid", "silu", "gelu", "gelu exact") else X / 1000
    got = np.asarray(_run(path, sj, x))
    want = np.asarray(jx(x))
    assert np.all(np.isfinite(got)), f"{name} overflowed"
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("path", PATHS)
def test_gradients_of_stable_functions(path):
    x = X / 10
    for sj, jx in ((lambda v: snp.sum(nn.logsumexp(v, axis=-1) * 1.5), lambda v: jnp.sum(
            jax.nn.logsumexp(v, axis=-1) * 1.5)),
                   (lambda v: snp.sum(nn.softmax(v)[:, 0]), lambda v: jnp.sum(
                       jax.nn.softmax(v)[:, 0])),
                   (lambda v: snp.sum(nn.relu(v) * v), lambda v: jnp.sum(jax.nn.relu(v) * v)),
                   (lambda v: snp.sum(nn.gelu(v, approximate=False) * v),
                    lambda v: jnp.sum(jax.nn.gelu(v, approximate=False) * v))):
        got = np.asarray(_run(path, stablejit.grad(sj), x))
        np.testing.assert_allclose(got, jax.grad(jx)(x), rtol=1e-5, atol=1e-6)


def test_one_hot_losses_and_layer_norm():
    labels = np.array([0, 3, 1], np.int32)
    np.testing.assert_array_equal(nn.one_hot(labels, 4), jax.nn.one_hot(labels, 4))
    logits = X / 100
    want_ce = -np.mean(np.asarray(jax.nn.log_softmax(logits))[np.arange(3), labels])
    for path in PATHS:
        ce = _run(path, lambda z, y: nn.cross_entropy(z, y), logits, labels)
        np.testing.assert_allclose(float(ce), want_ce, rtol=1e-5)
    pred, target = X[:, :2] / 100, X[:, 2:] / 100
    np.testing.assert_allclose(float(nn.mse(pred, target)), np.mean((pred - target) ** 2),
                               rtol=1e-6)
    scale, bias = np.float32(2.0), np.arange(4, dtype=np.float32)
    ln = nn.layer_norm(X / 100, scale, bias)
    mu = (X / 100).mean(-1, keepdims=True)
    var = (X / 100).var(-1, keepdims=True)
    np.testing.assert_allclose(ln, (X / 100 - mu) / np.sqrt(var + 1e-5) * 2 + bias, rtol=1e-4,
                               atol=1e-5)
    with pytest.raises(TypeError, match="integer class labels"):
        nn.cross_entropy(logits, labels.astype(np.float32))


@pytest.mark.parametrize("init,bound", [
    (nn.glorot_uniform, lambda i, o: np.sqrt(6 / (i + o))),
    (nn.he_uniform, lambda i, o: np.sqrt(6 / i)),
])
def test_uniform_initialisers(init, bound):
    for key in (np.random.default_rng(0), 0, stablejit.random.key(0)):
        w = np.asarray(init(key, (300, 200)))
        assert w.shape == (300, 200) and w.dtype == np.float32
        b = bound(300, 200)
        assert np.abs(w).max() <= b and np.abs(w).max() > 0.95 * b
        np.testing.assert_allclose(w.var(), b * b / 3, rtol=0.05)


@pytest.mark.parametrize("init,std", [
    (nn.glorot_normal, lambda i, o: np.sqrt(2 / (i + o))),
    (nn.he_normal, lambda i, o: np.sqrt(2 / i)),
])
def test_normal_initialisers(init, std):
    for key in (np.random.default_rng(1), stablejit.random.key(1)):
        w = np.asarray(init(key, (300, 200)))
        np.testing.assert_allclose(w.std(), std(300, 200), rtol=0.05)
        assert abs(w.mean()) < 0.05 * std(300, 200) * 10


def _np_adam(params, grads, steps, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8):
    m = np.zeros_like(params)
    v = np.zeros_like(params)
    p = params.copy()
    for t in range(1, steps + 1):
        g = grads(p)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        mh, vh = m / (1 - b1 ** t), v / (1 - b2 ** t)
        p = p - lr * mh / (np.sqrt(vh) + eps)
    return p


def _np_sgd(params, grads, steps, lr=0.1, momentum=0.9, nesterov=False):
    p, vel = params.copy(), np.zeros_like(params)
    for _ in range(steps):
        g = grads(p)
        vel = momentum * vel + g
        p = p - lr * ((g + momentum * vel) if nesterov else vel)
    return p


@pytest.mark.parametrize("path", PATHS)
def test_optimisers_match_numpy(path):
    target = np.array([1.0, -2.0, 0.5], np.float32)
    p0 = np.zeros(3, np.float32)

    def loss(p):
        return snp.sum((p["w"] - target) ** 2)

    cases = [(nn.adam(1e-2), lambda p: _np_adam(p, lambda q: 2 * (q - target), 5)),
             (nn.sgd(0.1, momentum=0.9), lambda p: _np_sgd(p, lambda q: 2 * (q - target), 5)),
             (nn.sgd(0.1, momentum=0.9, nesterov=True),
              lambda p: _np_sgd(p, lambda q: 2 * (q - target), 5, nesterov=True)),
             (nn.sgd(0.1), lambda p: _np_sgd(p, lambda q: 2 * (q - target), 5, momentum=0.0))]
    for opt, want in cases:
        def step(params, state, opt=opt):
            g = stablejit.grad(loss)(params)
            return opt.update(g, state, params)

        ctx = stablejit.default_backend("reference") if path == "reference" else _Null()
        with ctx:
            params = {"w": snp.asarray(p0)}
            state = opt.init(params)
            run = stablejit.jit(step) if path == "jit" else step
            for _ in range(5):
                params, state = run(params, state)
        np.testing.assert_allclose(params["w"], want(p0), rtol=1e-5, atol=1e-6)
        assert int(state[0]) == 5


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_an_optimizer_update_is_one_program_and_a_python_schedule_still_works(monkeypatch):
    from stablejit.backends import XlaBackend
    params = {"w": snp.asarray(np.zeros(3, np.float32)), "b": snp.asarray(np.ones(2, np.float32))}
    grads = {"w": snp.asarray(np.ones(3, np.float32)), "b": snp.asarray(np.ones(2, np.float32))}
    opt = nn.adam(1e-2)
    state = opt.init(params)
    params, state = opt.update(grads, state, params)  # compiles
    ops = []
    for name in ("apply", "apply_scalar", "apply_broadcast"):
        real = getattr(XlaBackend, name)
        monkeypatch.setattr(XlaBackend, name, lambda self, *a, real=real, name=name:
                            ops.append(name) or real(self, *a))
    was = recorder_native.installed()
    recorder_native.install(False)  # (an eager op in C would not pass the spies)
    try:
        params, state = opt.update(grads, state, params)
    finally:
        recorder_native.install(was)
    assert ops == []  # no op-by-op dispatch: the whole update is one jitted program
    assert int(state[0]) == 2

    # a schedule that branches in Python on the step cannot be traced: it runs as written
    def schedule(step):
        return 0.1 if int(step) < 1 else 0.01

    opt = nn.sgd(schedule)
    p = {"w": snp.asarray(np.zeros(3, np.float32))}
    s = opt.init(p)
    for _ in range(3):
        p, s = opt.update({"w": snp.asarray(np.ones(3, np.float32))}, s, p)
    np.testing.assert_allclose(np.asarray(p["w"]), np.full(3, -0.12, np.float32), rtol=1e-6)
