"""stablejit.vmap against jax.vmap: in_axes/out_axes pytrees and negative axes, keyword
arguments, nesting, composition with jit and grad (both orders), collectives over named
axes, random keys, Jacobians built on vmap, and the errors a user sees."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit as sj
import stablejit.numpy as snp
from hypothesis import given, settings
from hypothesis import strategies as st
from stablejit import collectives as coll

from tests.support.compare import assert_close

rng = np.random.default_rng(0)
X = rng.standard_normal((4, 3)).astype(np.float32)
Y = rng.standard_normal((4, 3)).astype(np.float32)
W = rng.standard_normal((3, 5)).astype(np.float32)
V = rng.standard_normal((3,)).astype(np.float32)


def _np(out):
    return jax.tree_util.tree_map(np.asarray, out)


def _close(got, want, rtol=2e-5, atol=2e-6):
    g_leaves, g_tree = jax.tree_util.tree_flatten(_np(got))
    w_leaves, w_tree = jax.tree_util.tree_flatten(_np(want))
    assert g_tree == w_tree, (g_tree, w_tree)
    for g, w in zip(g_leaves, w_leaves, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        assert_close(g, w, rtol=rtol, atol=atol)


# (label, fn(np_module) -> function, args, vmap kwargs): the same program with both
# libraries' numpy namespaces, mapped by each library's vmap
PROGRAMS = [
    ("matvec", lambda m: lambda x, w: m.tanh(x @ w), (X, W), {"in_axes": (0, None)}),
    ("axis1", lambda m: lambda x: m.sum(x ** 2), (X,), {"in_axes": 1}),
    ("neg_axis", lambda m: lambda x, y: x * y, (X, Y), {"in_axes": (-1, 1)}),
    ("out_axes1", lambda m: lambda x: m.outer(x, x), (X,), {"out_axes": 1}),
    ("out_axes_neg", lambda m: lambda x: m.outer(x, x), (X,), {"out_axes": -1}),
    ("out_none", lambda m: lambda x, w: (x.sum(), w * 2.0), (X, W),
     {"in_axes": (0, None), "out_axes": (0, None)}),
    ("pytree_in", lambda m: lambda p, x: m.dot(x, p["w"]) + p["b"],
     ({"w": W, "b": np.float32(1.5)}, X), {"in_axes": ({"w": None, "b": None}, 0)}),
    ("pytree_prefix", lambda m: lambda p: p[0] * p[1], ((X, Y),), {"in_axes": (0,)}),
    ("pytree_out", lambda m: lambda x: {"a": x * 2, "b": (x.sum(), m.outer(x, x))}, (X,),
     {"out_axes": {"a": 0, "b": (0, 1)}}),
    ("scalar_unmapped", lambda m: lambda x, s: x * s, (X, np.float32(3.0)),
     {"in_axes": (0, None)}),
    ("reduce_keepdims", lambda m: lambda x: m.max(x, axis=0, keepdims=True), (X,), {}),
    ("indexing", lambda m: lambda x: x[1:] - x[:-1], (X,), {}),
    ("matmul_both", lambda m: lambda x, w: x @ w, (X, np.stack([W] * 4)), {}),
    ("where", lambda m: lambda x, y: m.where(x > 0, x, y), (X, Y), {}),
    ("concat", lambda m: lambda x, v: m.concatenate([x, v]), (X, V), {"in_axes": (0, None)}),
    ("softmax", lambda m: lambda x: m.exp(x) / m.exp(x).sum(), (X,), {}),
]


@pytest.mark.parametrize("label,make,args,kw", PROGRAMS, ids=[p[0] for p in PROGRAMS])
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_vmap_matches_jax(label, make, args, kw, jit):
    ours = sj.vmap(make(snp), **kw)
    theirs = jax.vmap(make(jnp), **kw)
    if jit:
        ours = sj.jit(ours)
    _close(ours(*args), theirs(*args))


def test_keyword_arguments_are_mapped_over_axis_0():
    def f(x, *, y):
        return x * y
    got = sj.vmap(f, in_axes=(None,))(V, y=X)
    want = jax.vmap(f, in_axes=(None,))(V, y=X)
    _close(got, want)


def test_nested_vmap_is_an_outer_product():
    f = lambda a, b: a * b
    got = sj.vmap(sj.vmap(f, (None, 0)), (0, None))(V, X[:, 0])
    want = jax.vmap(jax.vmap(f, (None, 0)), (0, None))(V, X[:, 0])
    _close(got, want)


def test_axis_size_with_nothing_mapped():
    got = sj.vmap(lambda x: x + 1.0, in_axes=None, axis_size=3)(V)
    want = jax.vmap(lambda x: x + 1.0, in_axes=None, axis_size=3)(V)
    _close(got, want)


def _loss(m):
    def loss(w, x, y):
        return m.mean((m.tanh(x @ w) - y) ** 2)
    return loss


def test_per_example_gradients_vmap_of_grad():
    ys = rng.standard_normal((4, 5)).astype(np.float32)
    got = sj.vmap(sj.grad(_loss(snp)), in_axes=(None, 0, 0))(W, X, ys)
    want = jax.vmap(jax.grad(_loss(jnp)), in_axes=(None, 0, 0))(W, X, ys)
    _close(got, want)
    got_jit = sj.jit(sj.vmap(sj.grad(_loss(snp)), in_axes=(None, 0, 0)))(W, X, ys)
    _close(got_jit, want)


def test_grad_of_vmap():
    def total(m, vm):
        return lambda w: vm(lambda x: m.sin(x @ w).sum())(X).sum()
    _close(sj.grad(total(snp, sj.vmap))(W), jax.grad(total(jnp, jax.vmap))(W))


def test_vmap_inside_jit_closing_over_a_traced_value():
    @sj.jit
    def f(w, xs):
        return sj.vmap(lambda x: snp.tanh(x @ w))(xs)

    _close(f(W, X), jax.jit(lambda w, xs: jax.vmap(lambda x: jnp.tanh(x @ w))(xs))(W, X))


# ---- collectives over named axes -------------------------------------------------------

COLLECTIVES = [
    ("psum", lambda lax: lambda x: x / lax.psum(x, "i")),
    ("pmean", lambda lax: lambda x: x - lax.pmean(x, "i")),
    ("pmax", lambda lax: lambda x: lax.pmax(x, "i") - x),
    ("pmin", lambda lax: lambda x: lax.pmin(x, "i") * x),
    ("all_gather", lambda lax: lambda x: lax.all_gather(x, "i")),
    ("all_gather_tiled", lambda lax: lambda x: lax.all_gather(x, "i", tiled=True)),
    ("all_gather_axis1", lambda lax: lambda x: lax.all_gather(x, "i", axis=1)),
    ("axis_index", lambda lax: lambda x: x * lax.axis_index("i")),
    ("psum_unbatched", lambda lax: lambda x: lax.psum(1.0, "i") * x),
]


@pytest.mark.parametrize("label,make", COLLECTIVES, ids=[c[0] for c in COLLECTIVES])
def test_collectives_match_jax(label, make):
    _close(sj.vmap(make(coll), axis_name="i")(X), jax.vmap(make(jax.lax), axis_name="i")(X))


def test_collective_over_the_outer_of_two_named_axes():
    def f(lax):
        return lambda x: x / lax.psum(x, "rows") + lax.axis_index("cols")
    got = sj.vmap(sj.vmap(f(coll), axis_name="cols"), axis_name="rows")(X)
    want = jax.vmap(jax.vmap(f(jax.lax), axis_name="cols"), axis_name="rows")(X)
    _close(got, want)


def _extreme_for_jax(kind):
    """JAX does not differentiate pmax / pmin: the same value, whose gradient reaches the
    examples holding the extreme (shared evenly), as stablejit's rule defines it."""
    def extreme(x, name):
        e = (jax.lax.pmax if kind == "max" else jax.lax.pmin)(jax.lax.stop_gradient(x), name)
        hit = (x == e).astype(x.dtype)
        moving = jax.lax.psum(hit * (x - jax.lax.stop_gradient(x)), name)
        return e + moving / jax.lax.psum(hit, name)
    return extreme


GRAD_COLLECTIVES = [
    ("psum", lambda lax, m: lambda x: m.sum(x * lax.psum(x, "i"))),
    ("pmax", lambda lax, m: lambda x: m.sum(m.sin(x) * (
        lax.pmax if lax is coll else _extreme_for_jax("max"))(x, "i"))),
    ("pmin", lambda lax, m: lambda x: m.sum(m.sin(x) * (
        lax.pmin if lax is coll else _extreme_for_jax("min"))(x, "i"))),
    ("all_gather", lambda lax, m: lambda x: m.sum(m.cos(lax.all_gather(x, "i")) * x[0])),
    ("all_gather_tiled", lambda lax, m: lambda x: m.sum(lax.all_gather(x, "i", tiled=True)
                                                        ** 2)),
]


@pytest.mark.parametrize("label,make", GRAD_COLLECTIVES, ids=[g[0] for g in GRAD_COLLECTIVES])
def test_grad_through_collectives_inside_vmap(label, make):
    got = sj.vmap(sj.grad(make(coll, snp)), axis_name="i")(X)
    want = jax.vmap(jax.grad(make(jax.lax, jnp)), axis_name="i")(X)
    _close(got, want)


def test_unbound_axis_name_is_a_clear_error():
    with pytest.raises(NameError, match="unbound axis name 'j'.*axis_name='j'"):
        sj.vmap(lambda x: coll.psum(x, "j"), axis_name="i")(X)


# ---- random keys -----------------------------------------------------------------------

def test_a_batch_of_keys_gives_the_bits_of_a_loop():
    keys = sj.random.split(sj.random.PRNGKey(0), 4)
    batched = sj.vmap(lambda k: sj.random.normal(k, (3,)))(keys)
    looped = np.stack([np.asarray(sj.random.normal(keys[i], (3,))) for i in range(4)])
    np.testing.assert_array_equal(np.asarray(batched), looped)


# ---- Jacobians on vmap -------------------------------------------------------------------

def _f(m):
    return lambda x, w: m.tanh(w @ x) * m.sum(x ** 2)


JACOBIANS = [("jacrev", sj.jacrev, jax.jacrev), ("jacfwd", sj.jacfwd, jax.jacfwd)]


@pytest.mark.parametrize("label,ours,theirs", JACOBIANS, ids=[j[0] for j in JACOBIANS])
@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_jacobians_match_jax(label, ours, theirs, argnums):
    w = W.T.copy()
    _close(ours(_f(snp), argnums)(V, w), theirs(_f(jnp), argnums)(V, w), rtol=1e-4, atol=1e-5)


def test_jacobian_of_pytree_outputs_and_aux():
    def f(m):
        return lambda x: ({"a": x * 2, "b": m.sin(x).sum()}, x.sum())
    _close(sj.jacrev(f(snp), has_aux=True)(V), jax.jacrev(f(jnp), has_aux=True)(V))
    _close(sj.jacfwd(f(snp), has_aux=True)(V), jax.jacfwd(f(jnp), has_aux=True)(V))


def test_hessian_matches_jax():
    f = lambda m: lambda x: m.sum(m.sin(x) * x ** 3)
    _close(sj.hessian(f(snp))(V), jax.hessian(f(jnp))(V), rtol=1e-4, atol=1e-5)


def test_jacrev_is_one_batched_backward_pass():
    """The program holds one backward pass whatever the output size (not one per
    element): its op count does not grow with the output size."""
    def count(n):
        x = np.ones(n, np.float32)
        text = sj.jit(sj.jacrev(lambda v: snp.sin(v) * 2.0)).lower(x).as_text()
        return text.count("stablehlo.sine") + text.count("stablehlo.cosine")
    assert count(3) == count(40)


# ---- errors ----------------------------------------------------------------------------

ERRORS = [
    ("inconsistent sizes", lambda: sj.vmap(lambda a, b: a + b)(X, W),
     r"inconsistent sizes.*argument 0 has shape \(4, 3\).*argument 1 has shape \(3, 5\)"),
    ("axis out of range", lambda: sj.vmap(lambda a: a, in_axes=2)(X),
     r"map argument 0 along axis 2, but it has rank 2.*pass an axis in \[-2, 2\)"),
    ("scalar mapped", lambda: sj.vmap(lambda a, b: a * b)(X, 2.0),
     r"map argument 1 along axis 0, but it has rank 0.*a scalar has no axis to map: pass "
     r"None"),
    ("nothing mapped", lambda: sj.vmap(lambda a: a, in_axes=None)(X),
     r"at least one argument.*axis_size"),
    ("in_axes length", lambda: sj.vmap(lambda a, b: a, in_axes=(0,))(X, Y),
     r"in_axes has 1 entries but.*2 positional"),
    ("in_axes not a prefix", lambda: sj.vmap(lambda p: p, in_axes=({"a": 0},))({"b": X}),
     r"tree prefix"),
    ("out_axes None but mapped", lambda: sj.vmap(lambda a: a, out_axes=None)(X),
     r"out_axes None for output 0.*depends on the mapped axis"),
    ("bad in_axes type", lambda: sj.vmap(lambda a: a, in_axes="x")(X), r"must be an int"),
]


@pytest.mark.parametrize("label,call,words", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_name_the_argument_and_the_fix(label, call, words):
    with pytest.raises((ValueError, TypeError), match=words):
        call()


# ---- property: any in_axes / out_axes placement equals moving the axis by hand ----------

@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
       data=st.data())
def test_in_and_out_axes_move_the_mapped_axis(shape, data):
    nd = len(shape)
    in_ax = data.draw(st.integers(-nd, nd - 1))
    out_ax = data.draw(st.integers(-nd, nd - 1))
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    got = sj.vmap(lambda v: v * 2.0 + 1.0, in_axes=in_ax, out_axes=out_ax)(x)
    want = np.moveaxis(np.moveaxis(x, in_ax, 0) * 2.0 + 1.0, 0, out_ax)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_a_batch_of_zero_examples():
    x = np.zeros((0, 5, 3), np.float32)
    idx = np.zeros((0, 2), np.int32)
    got = sj.vmap(lambda a, i: snp.sum(a[i] * 2.0, axis=0))(x, idx)
    want = jax.vmap(lambda a, i: jnp.sum(a[i] * 2.0, axis=0))(x, idx)
    _close(got, want)
