"""stablejit.example_libraries (stax and optimizers) against jax.example_libraries: the
same keys give the same parameters and output shapes, the same parameters the same
outputs, the same gradients the same optimizer steps; and a JAX program written against
them (a small mnist_classifier.py) runs with its imports swapped."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from jax.example_libraries import optimizers as joptimizers
from jax.example_libraries import stax as jstax
from stablejit.example_libraries import optimizers, stax


def _np(tree):
    return jax.tree_util.tree_map(np.asarray, tree)


def _close(got, want, rtol=2e-5, atol=2e-6, what=""):
    g, w = jax.tree_util.tree_leaves(_np(got)), jax.tree_util.tree_leaves(_np(want))
    assert len(g) == len(w), what
    for a, b in zip(g, w, strict=True):
        assert a.shape == b.shape, what
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what)


# (name, a function of the stax module making the layer, input shape, apply kwargs)
LAYERS = [
    ("Dense", lambda m: m.Dense(7), (4, 5), {}),
    ("Dense inits", lambda m: m.Dense(3, m.glorot(), m.randn(0.5)), (2, 6), {}),
    ("Conv", lambda m: m.Conv(4, (3, 3)), (2, 8, 8, 3), {}),
    ("Conv strides SAME", lambda m: m.Conv(2, (3, 2), (2, 1), "SAME"), (1, 7, 6, 2), {}),
    ("GeneralConv NCHW", lambda m: m.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (2, 2)),
     (2, 2, 5, 5), {}),
    ("BatchNorm", lambda m: m.BatchNorm(), (4, 3, 3, 2), {}),
    ("BatchNorm axis 0", lambda m: m.BatchNorm(axis=(0,), center=False), (6, 5), {}),
    ("MaxPool", lambda m: m.MaxPool((2, 2)), (2, 6, 6, 3), {}),
    ("AvgPool SAME", lambda m: m.AvgPool((3, 3), (2, 2), "SAME"), (2, 7, 7, 3), {}),
    ("SumPool spec", lambda m: m.SumPool((2,), spec="NCW"), (2, 3, 8), {}),
    ("Flatten", lambda m: m.Flatten, (3, 2, 4), {}),
    ("Relu Tanh Gelu ...", lambda m: m.serial(m.Relu, m.Tanh, m.Gelu, m.Elu, m.Selu,
                                              m.LeakyRelu, m.Sigmoid, m.Softplus, m.Exp),
     (3, 4), {}),
    ("LogSoftmax Softmax", lambda m: m.serial(m.Softmax, m.LogSoftmax), (3, 4), {}),
    ("serial MLP", lambda m: m.serial(m.Dense(8), m.Relu, m.Dense(3), m.LogSoftmax),
     (5, 4), {}),
    ("parallel FanOut FanInSum", lambda m: m.serial(
        m.FanOut(2), m.parallel(m.Dense(3), m.Identity), m.FanInSum), (2, 3), {}),
    ("FanInConcat", lambda m: m.serial(m.FanOut(3), m.parallel(m.Dense(2), m.Dense(4),
                                                               m.Identity),
                                       m.FanInConcat()), (2, 5), {}),
    ("shape_dependent", lambda m: m.shape_dependent(lambda s: m.Dense(s[-1] * 2)),
     (3, 2), {}),
    ("Dropout", lambda m: m.Dropout(0.7), (4, 5), {"rng": 5}),
    ("Dropout test mode", lambda m: m.Dropout(0.7, mode="test"), (4, 5), {"rng": 5}),
]


@pytest.mark.parametrize("name,make,shape,kwargs", LAYERS, ids=[c[0] for c in LAYERS])
def test_layers_match_jax_stax(name, make, shape, kwargs):
    init, apply = make(stax)
    jinit, japply = make(jstax)
    out_shape, params = init(stablejit.random.PRNGKey(3), shape)
    jout_shape, jparams = jinit(jax.random.PRNGKey(3), shape)
    assert jax.tree_util.tree_leaves(out_shape) == jax.tree_util.tree_leaves(jout_shape)
    _close(params, jparams, what=f"{name}: params")
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    kw = {k: stablejit.random.PRNGKey(v) for k, v in kwargs.items()}
    jkw = {k: jax.random.PRNGKey(v) for k, v in kwargs.items()}
    want = japply(jparams, jnp.asarray(x), **jkw)
    _close(apply(params, snp.asarray(x), **kw), want, what=f"{name}: eagerly")
    _close(stablejit.jit(lambda p, v: apply(p, v, **kw))(params, snp.asarray(x)), want,
           what=f"{name}: under jit")
    assert np.shape(want) == tuple(jax.tree_util.tree_leaves(jout_shape)) or isinstance(
        want, list)


def test_dropout_needs_a_key():
    _, apply = stax.Dropout(0.5)
    with pytest.raises(ValueError, match="rng=key"):
        apply((), snp.ones(3))


OPTIMIZERS = [
    ("sgd", lambda m: m.sgd(0.1)),
    ("sgd schedule", lambda m: m.sgd(m.exponential_decay(0.1, 2, 0.5))),
    ("momentum", lambda m: m.momentum(0.1, 0.9)),
    ("nesterov", lambda m: m.nesterov(m.inverse_time_decay(0.1, 2, 0.5, True), 0.8)),
    ("adagrad", lambda m: m.adagrad(0.1)),
    ("rmsprop", lambda m: m.rmsprop(m.polynomial_decay(0.1, 3, 0.01))),
    ("rmsprop_momentum", lambda m: m.rmsprop_momentum(0.05)),
    ("adam", lambda m: m.adam(1e-2)),
    ("adam piecewise", lambda m: m.adam(m.piecewise_constant([1, 2], [0.1, 0.05, 0.01]))),
    ("adamax", lambda m: m.adamax(1e-2)),
    ("sm3", lambda m: m.sm3(0.1)),
]


@pytest.mark.parametrize("name,make", OPTIMIZERS, ids=[c[0] for c in OPTIMIZERS])
def test_optimizers_match_jax(name, make):
    rng = np.random.default_rng(1)
    params = {"w": rng.standard_normal((3, 4)).astype(np.float32),
              "b": [rng.standard_normal(4).astype(np.float32), np.float32(0.5)]}
    grads = [jax.tree_util.tree_map(lambda p: rng.standard_normal(np.shape(p)).astype(
        np.float32), params) for _ in range(4)]
    init, update, get = make(optimizers)
    jinit, jupdate, jget = make(joptimizers)
    state = init(jax.tree_util.tree_map(snp.asarray, params))
    jstate = jinit(jax.tree_util.tree_map(jnp.asarray, params))
    step = stablejit.jit(update)
    for i, g in enumerate(grads):
        state = (step if i % 2 else update)(i, jax.tree_util.tree_map(snp.asarray, g), state)
        jstate = jupdate(i, jax.tree_util.tree_map(jnp.asarray, g), jstate)
        _close(get(state), jget(jstate), rtol=1e-5, atol=1e-6, what=f"{name} step {i}")
    back = optimizers.pack_optimizer_state(optimizers.unpack_optimizer_state(state))
    _close(get(back), get(state), what="unpack and pack")


def test_optimizer_errors_say_what_to_pass():
    init, update, _ = optimizers.sgd(0.1)
    state = init({"a": snp.ones(2)})
    with pytest.raises(TypeError, match="tree structure"):
        update(0, [snp.ones(2)], state)
    with pytest.raises(TypeError, match="number or a schedule"):
        optimizers.sgd([0.1, 0.2])
    with pytest.raises(ValueError, match="values"):
        optimizers.piecewise_constant([1, 2], [0.1])


def test_clip_grads_and_l2_norm_match_jax():
    g = {"a": np.array([3.0, 4.0], np.float32), "b": np.array([[12.0]], np.float32)}
    for max_norm in (1.0, 100.0):
        _close(optimizers.clip_grads(jax.tree_util.tree_map(snp.asarray, g), max_norm),
               joptimizers.clip_grads(jax.tree_util.tree_map(jnp.asarray, g), max_norm))
    assert float(optimizers.l2_norm(g)) == pytest.approx(13.0)


MNIST_CLASSIFIER = '''
import itertools
import numpy.random as npr
import jax.numpy as jnp
from jax import jit, grad, random
from jax.example_libraries import optimizers
from jax.example_libraries import stax
from jax.example_libraries.stax import Dense, Relu, LogSoftmax


def loss(params, batch):
    inputs, targets = batch
    preds = predict(params, inputs)
    return -jnp.mean(jnp.sum(preds * targets, axis=1))


def accuracy(params, batch):
    inputs, targets = batch
    target_class = jnp.argmax(targets, axis=1)
    predicted_class = jnp.argmax(predict(params, inputs), axis=1)
    return jnp.mean(predicted_class == target_class)


init_random_params, predict = stax.serial(Dense(32), Relu, Dense(32), Relu, Dense(10),
                                          LogSoftmax)


def run(images, labels):
    rng = random.PRNGKey(0)
    step_size, num_epochs, batch_size, momentum_mass = 0.001, 2, 16, 0.9
    num_batches = len(images) // batch_size
    opt_init, opt_update, get_params = optimizers.momentum(step_size, mass=momentum_mass)

    @jit
    def update(i, opt_state, batch):
        params = get_params(opt_state)
        return opt_update(i, grad(loss)(params, batch), opt_state)

    _, init_params = init_random_params(rng, (-1, 64))
    opt_state = opt_init(init_params)
    itercount = itertools.count()
    for _ in range(num_epochs):
        for b in range(num_batches):
            sl = slice(b * batch_size, (b + 1) * batch_size)
            opt_state = update(next(itercount), opt_state, (images[sl], labels[sl]))
    params = get_params(opt_state)
    return float(loss(params, (images, labels))), float(accuracy(params, (images, labels)))
'''


def test_a_jax_stax_program_runs_with_its_imports_swapped(tmp_path):
    from tests.ported.import_swap import load_program

    path = tmp_path / "mnist_classifier.py"
    path.write_text(MNIST_CLASSIFIER)
    rng = np.random.default_rng(0)
    images = rng.standard_normal((96, 64)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 96)]
    ours = load_program(path, swap=True).run(images, labels)
    theirs = load_program(path, swap=False).run(images, labels)
    np.testing.assert_allclose(ours, theirs, rtol=2e-4)
