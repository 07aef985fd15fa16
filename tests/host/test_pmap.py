"""stablejit.pmap against jax.pmap on 4 host devices (jax shares the host client, so
both see the same devices): in_axes / out_axes variants, pytrees, collectives over the
axis name, static arguments, grad through pmap and pmap of grad, and the errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import lax

pytestmark = pytest.mark.host_devices(4)

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3)).astype(np.float32)
Y = RNG.standard_normal((3, 4)).astype(np.float32)
W = RNG.standard_normal(3).astype(np.float32)


def _leaves(t):
    return [np.asarray(v) for v in jax.tree_util.tree_leaves(t)]


# name, f(m, lax) -> (function, pmap kwargs), args
CASES = [
    ("elementwise", lambda m, l: (lambda x: m.sin(x) * 2, {}), (X,)),
    ("psum normalise", lambda m, l: (lambda x: x / l.psum(m.sum(x), "i"),
                                     {"axis_name": "i"}), (X,)),
    ("pmean pmax pmin", lambda m, l: (lambda x: (l.pmean(x, "i"), l.pmax(x, "i"),
                                                 l.pmin(x, "i")), {"axis_name": "i"}),
     (X,)),
    ("axis_index", lambda m, l: (lambda x: x * l.axis_index("i"), {"axis_name": "i"}),
     (X,)),
    ("all_gather", lambda m, l: (lambda x: l.all_gather(x, "i"), {"axis_name": "i"}),
     (X,)),
    ("in_axes 1 and None", lambda m, l: (lambda y, w: y * w[0], {"in_axes": (1, None)}),
     (Y, W)),
    ("out_axes 1", lambda m, l: (lambda x: m.stack([x, -x]), {"out_axes": 1}), (X,)),
    ("out_axes None", lambda m, l: (lambda x: (x + 1, l.psum(x, "i")),
                                    {"axis_name": "i", "out_axes": (0, None)}), (X,)),
    ("pytree in and out", lambda m, l: (lambda d: {"s": d["a"] + d["b"][0]},
                                        {"in_axes": ({"a": 0, "b": [0]},)}),
     ({"a": X, "b": [X * 2]},)),
]


@pytest.mark.parametrize("name,make,args", CASES, ids=[c[0] for c in CASES])
def test_pmap_matches_jax(name, make, args):
    f, kw = make(snp, lax)
    jf, _ = make(jnp, jax.lax)
    got = stablejit.pmap(f, **kw)(*jax.tree_util.tree_map(snp.asarray, args))
    want = jax.pmap(jf, **kw)(*jax.tree_util.tree_map(jnp.asarray, args))
    g, w = _leaves(got), _leaves(want)
    assert len(g) == len(w)
    for a, b in zip(g, w, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype, name
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, err_msg=name)


def test_pmap_results_live_on_the_devices():
    out = stablejit.pmap(lambda x: x * 2)(snp.asarray(X))
    assert out.shape == X.shape
    assert len({s.device for s in out.addressable_shards}) == 4


def test_static_arguments_and_compiling_once():
    calls = []

    def f(x, k):
        calls.append(k)
        return x * k

    p = stablejit.pmap(f, static_broadcasted_argnums=1)
    for k in (2, 3, 2):
        np.testing.assert_allclose(np.asarray(p(snp.asarray(X), k)), X * k)
    assert calls == [2, 3]  # (the third call reuses k=2's program)
    with pytest.raises(ValueError, match="hashable"):
        p(snp.asarray(X), [1])


def test_grad_through_pmap_and_pmap_of_grad_match_jax():
    def loss(m, l, pm):
        def per_device(w, x):
            return l.psum(m.sum(m.tanh(x * w) ** 2), "i")
        mapped = pm(per_device, axis_name="i", in_axes=(None, 0))
        return lambda w, x: m.sum(mapped(w, x))

    got = stablejit.grad(loss(snp, lax, stablejit.pmap))(snp.asarray(W), snp.asarray(X))
    want = jax.grad(loss(jnp, jax.lax, jax.pmap))(jnp.asarray(W), jnp.asarray(X))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5)
    per = stablejit.pmap(stablejit.grad(lambda x: snp.sum(x ** 3)))(snp.asarray(X))
    np.testing.assert_allclose(np.asarray(per), 3 * X ** 2, rtol=1e-6)


def test_pmap_errors_say_what_to_do():
    with pytest.raises(ValueError, match="only 4 device"):
        stablejit.pmap(lambda x: x)(snp.ones((5, 2)))
    with pytest.raises(ValueError, match="different lengths"):
        stablejit.pmap(lambda x, y: x + y)(snp.ones((2, 3)), snp.ones((3, 3)))
    with pytest.raises(ValueError, match="axis_size"):
        stablejit.pmap(lambda x: x, in_axes=None)(snp.ones(3))
