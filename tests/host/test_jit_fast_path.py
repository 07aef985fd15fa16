"""jit's cached-call path: pytrees of tensors flattened in C++ (jaxlib's registry, fed
with stablejit.tree's registrations), outputs rebuilt in C++, and every case the fast
path must decline (weak tensors, other leaves, deleted buffers, re-registered nodes)
answered by the general path. Results are checked against jax."""

from __future__ import annotations

import contextlib
import dataclasses
import types
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import tree
from stablejit.jit import Jitted

from tests.support.trees import path_weight, structures


class Pair(NamedTuple):
    a: object
    b: object


@dataclasses.dataclass
class Layer:
    w: object
    b: object
    name: str = dataclasses.field(default="dense", metadata=dict(static=True))


stablejit.register_dataclass(Layer)
jax.tree_util.register_dataclass(Layer)


@pytest.fixture(autouse=True, params=["native", "python"])
def call_path(request):
    """Every test on the native cached call and on the Python one (STABLEJIT_NATIVE=0)."""
    was = stablejit.fastcall.available() and \
        type(Jitted.__dict__["__call__"]) is not types.FunctionType
    if request.param == "native" and not stablejit.fastcall.available():
        pytest.skip("stablejit._fastcall is not built (no C compiler)")
    stablejit.fastcall.install(Jitted, request.param == "native")
    yield
    stablejit.fastcall.install(Jitted, was)


def step(params, batch):
    out = {"h": [l.w @ batch.a + l.b for l in params["layers"]], "n": batch.b * 2.0}
    return out, (out["n"].sum(), None)


def _data(seed=0):
    rng = np.random.default_rng(seed)
    layers = [Layer(rng.standard_normal((3, 3)).astype(np.float32),
                    rng.standard_normal(3).astype(np.float32)) for _ in range(2)]
    batch = Pair(rng.standard_normal(3).astype(np.float32),
                 rng.standard_normal(4).astype(np.float32))
    return {"layers": layers}, batch


def _as(mod, x):
    return jax.tree.map(mod.asarray, x)


def test_pytree_call_takes_the_fast_path_and_agrees_with_jax():
    params, batch = _data()
    f = stablejit.jit(step)
    want = jax.jit(step)(_as(jnp, params), _as(jnp, batch))
    sp, sb = tree.map(snp.asarray, params), tree.map(snp.asarray, batch)
    for _ in range(3):
        got = f(sp, sb)
    assert len(f._fast) == 1 and f.traces == 1
    assert tree.structure(got) == tree.structure((
        {"h": [0, 0], "n": 0}, (0, None)))
    for g, w in zip(tree.leaves(got), jax.tree.leaves(want), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    # new data of the same structure and types: the same entry
    p2, b2 = _data(1)
    got = f(tree.map(snp.asarray, p2), tree.map(snp.asarray, b2))
    want = jax.jit(step)(_as(jnp, p2), _as(jnp, b2))
    np.testing.assert_allclose(np.asarray(got[0]["n"]), np.asarray(want[0]["n"]), rtol=1e-6)
    assert f.traces == 1


@pytest.mark.parametrize("case", ["weak", "python scalar", "numpy array", "tensor"])
def test_calls_the_fast_path_declines_are_still_right(case):
    f = stablejit.jit(lambda x, y: x * y + 1)
    x = snp.arange(3.0)
    f(x, snp.ones(3))
    y = {"weak": snp.asarray(2.0), "python scalar": 2.0,
         "numpy array": np.full(3, 2.0, np.float32), "tensor": snp.full(3, 2.0)}[case]
    jy = {"weak": 2.0, "python scalar": 2.0}.get(case, jnp.full(3, 2.0, jnp.float32))
    np.testing.assert_allclose(np.asarray(f(x, y)), np.asarray(jnp.arange(3.0) * jy + 1))


def test_deleted_argument_is_reported_by_the_general_path():
    f = stablejit.jit(lambda x: x + 1)
    x = snp.arange(3.0)
    f(x)
    stablejit.deallocate(x)
    with pytest.raises(stablejit.DeletedTensorError):
        f(x)


def test_reregistered_node_is_flattened_the_new_way():
    class Box:
        def __init__(self, a, b):
            self.a, self.b = a, b

    tree.register_pytree_node(Box, lambda o: ((o.a, o.b), None), lambda _, c: Box(*c))
    f = stablejit.jit(lambda box: box.a - box.b)
    box = Box(snp.asarray([5.0]), snp.asarray([2.0]))
    assert float(f(box)[0]) == 3.0
    tree.register_pytree_node(Box, lambda o: ((o.b, o.a), None), lambda _, c: Box(c[1], c[0]))
    g = stablejit.jit(lambda box: box.a - box.b)
    for _ in range(2):
        assert float(g(box)[0]) == 3.0
    assert tree.fast_flatten(box)[0][0] is box.b


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_each_call_is_keyed_and_rebuilt_as_its_own_structure_whatever_came_before(lazy):
    """fastcall.c checks each call's tree against the last structure entered in the cache
    before jaxlib flattens it. Each leaf scaled by a weight of its path: the function
    must see every leaf at its own path and the outputs come back in the argument's
    structure, call after call, with one trace per structure."""
    weight = path_weight
    f = stablejit.jit(lambda t: tree.map_with_path(lambda p, v: v * weight(p), t))
    f.warn_recompiles = False  # (a new structure each call, on purpose)
    a, b, c, d = (snp.asarray(np.arange(3, dtype=np.float32) + k) for k in range(4))
    # (and a leaf that is no tensor: jaxlib's flatten, then the general path)
    cases = [*structures(a, b, c, d), ("a numpy leaf", [[a, b], np.arange(3, dtype=np.float32)])]
    for name, arg in cases + cases[::-1] + cases:
        with stablejit.lazy() if lazy else contextlib.nullcontext():
            got = f(arg)
        assert tree.structure(got) == tree.structure(arg), name
        for (path, g), (path_a, v) in zip(tree.leaves_with_path(got),
                                         tree.leaves_with_path(arg), strict=True):
            assert path == path_a, name
            np.testing.assert_array_equal(np.asarray(g), weight(path) * np.asarray(v),
                                          err_msg=f"{name} at {path}")
    distinct = {tree.structure(arg) for _, arg in cases}
    assert f.traces == len(distinct)  # (a numpy leaf's signature is a tensor's)
