"""Bad arguments give clear errors instead of raw PJRT text, crashes or silent acceptance
(sizes, shapes, repetitions, donation, streams, deep pytrees).

Found as regressions (issue 9): each test failed before its fix."""


import sys

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

# ---- clear errors instead of raw PJRT text, crashes or silent acceptance ---------------

@pytest.mark.filterwarnings("ignore:.*matches no output:UserWarning")
@pytest.mark.parametrize("donate", [(0,), (0, 1)])
def test_same_tensor_passed_twice_to_a_donating_function(donate):
    f = stablejit.jit(lambda a, b: a + b, donate_argnums=donate)
    x = snp.ones(3)
    with pytest.raises(ValueError, match="donated.*also passed"):
        f(x, x)
    assert np.array_equal(np.asarray(x), np.ones(3, np.float32))  # x was not consumed
    y = snp.ones(3)
    assert np.array_equal(np.asarray(f(y, snp.ones(3))), np.full(3, 2, np.float32))


@pytest.mark.parametrize("reps", [-2, (2, -1), (-1, 2)])
def test_tile_with_negative_repetitions_raises_like_numpy(reps):
    with pytest.raises(ValueError):
        np.tile(np.ones(3), reps)
    with pytest.raises(ValueError, match="negative"):
        snp.tile(snp.ones(3), reps)
    with pytest.raises(ValueError, match="negative"):
        stablejit.jit(lambda x: snp.tile(x, reps))(snp.ones(3))


def test_tile_with_zero_repetitions_is_empty_like_numpy():
    got = snp.tile(snp.ones(3), (2, 0))
    assert got.shape == np.tile(np.ones(3), (2, 0)).shape


def test_negative_dimension_never_reaches_the_emitter():
    x = snp.ones(3)
    with pytest.raises(ValueError, match="negative"):
        snp.broadcast_to(x, (-1, 3))
    with pytest.raises(ValueError, match="negative"):
        stablejit.jit(lambda x: snp.broadcast_to(x, (-2, 3)))(x)


@pytest.mark.parametrize("shape", ["abc", (3.5,), 3.5, (2, "3"), (None,), [2.0, 3]])
def test_zeros_with_a_non_integer_shape_raises_type_error_as_numpy(shape):
    with pytest.raises(TypeError):
        np.zeros(shape)
    for make in (snp.zeros, snp.ones, snp.empty, lambda s: snp.full(s, 1.0)):
        with pytest.raises(TypeError, match="shape"):
            make(shape)
    with pytest.raises(TypeError, match="shape"):
        stablejit.random.normal(stablejit.random.key(0), shape)


def test_zeros_with_integer_like_shapes():
    assert snp.zeros(np.int32(2)).shape == (2,)
    assert snp.zeros((np.int64(2), 3)).shape == (2, 3)
    assert snp.zeros(np.array([2, 3])).shape == (2, 3)
    with pytest.raises(ValueError, match="negative"):
        snp.zeros((2, -1))


@pytest.mark.parametrize("n,err", [(-3, ValueError), (2.5, TypeError), ("3", TypeError)])
def test_one_hot_with_a_bad_number_of_classes(n, err):
    with pytest.raises(err, match="num_classes"):
        stablejit.nn.one_hot(snp.asarray([0, 1]), n)


def test_one_hot_with_zero_classes_is_empty():
    assert stablejit.nn.one_hot(snp.asarray([0, 1]), 0).shape == (2, 0)


def test_stream_with_max_inflight_zero_or_max_pending_zero():
    for kw in ({"max_inflight": 0}, {"max_pending": 0}, {"max_inflight": -1},
               {"max_inflight": 1.5}):
        name = next(iter(kw))
        with pytest.raises(ValueError, match=name):
            stablejit.stream(lambda x, s: (s, x + s), "i64[]", 0, **kw)


def test_stream_marks_its_donated_initial_state_deleted():
    init = snp.zeros(3)
    s = stablejit.stream(lambda x, acc: (acc, acc + x), "f32[3]", init)
    s.send(np.ones(3, np.float32))
    s.recv()
    s.send(np.ones(3, np.float32))
    s.recv()
    assert np.array_equal(np.asarray(s.done()), np.full(3, 2, np.float32))
    with pytest.raises(stablejit.DeletedTensorError, match="deleted"):
        np.asarray(init)
    with pytest.raises(stablejit.DeletedTensorError, match="deleted"):
        init + 1


def _nested(depth):
    t = snp.ones(2)
    for _ in range(depth):
        t = [t]
    return t


# (at the recursion limit itself: Python 3.12 inlines comprehensions, so a pytree 900
# deep, which overflowed 3.11's frames, flattens there)
@pytest.mark.parametrize("depth", [sys.getrecursionlimit(), 5000])
def test_deep_pytree_raises_a_clear_error(depth):
    deep = _nested(depth)
    with pytest.raises(ValueError, match="nested too deeply"):
        stablejit.tree.tree_leaves(deep)
    with pytest.raises(ValueError, match="nested too deeply"):
        stablejit.jit(lambda t: t)(deep)


def test_moderately_deep_pytree_works():
    leaves = stablejit.tree.tree_leaves(_nested(200))
    assert len(leaves) == 1
    out = stablejit.jit(lambda t: t)(_nested(100))
    assert len(stablejit.tree.tree_leaves(out)) == 1
