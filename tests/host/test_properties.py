"""Property tests (hypothesis): random broadcastable shapes and dtypes for elementwise
binary ops, random reduction axes, random reshape/transpose — all three paths against
NumPy. Examples are few and shapes small: every new signature costs XLA compiles."""

import numpy as np
import stablejit.numpy as snp
from hypothesis import given, settings
from hypothesis import strategies as st
from stablejit.compiler import dtypes as dt

from tests.support import jax_promotion
from tests.support.runners import check_three_ways

SETTINGS = settings(max_examples=12, deadline=None)
DTYPES = [np.int8, np.int32, np.uint16, np.float32, np.float64, np.float16]
BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
          "maximum": np.maximum, "minimum": np.minimum}


@st.composite
def broadcastable(draw):
    ndim = draw(st.integers(0, 3))
    shape = draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim))
    other = [1 if draw(st.booleans()) else n for n in shape]
    drop = draw(st.integers(0, len(other)))
    return tuple(shape), tuple(other[drop:])


def _data(seed, shape, dtype):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 20, shape).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


@SETTINGS
@given(broadcastable(), st.sampled_from(DTYPES), st.sampled_from(sorted(BINARY)),
       st.booleans(), st.integers(0, 2**16))
def test_binary_ops_broadcast(shapes, dtype, op, swap, seed):
    sx, sy = shapes[::-1] if swap else shapes
    x, y = _data(seed, sx, dtype), _data(seed + 1, sy, dtype)
    check_three_ways(getattr(snp, op), BINARY[op], x, y)


@SETTINGS
@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES), st.integers(0, 2**16))
def test_mixed_dtype_add_follows_jax_promotion(d1, d2, seed):
    x, y = _data(seed, (3,), d1), _data(seed + 1, (3,), d2)
    want = jax_promotion.result_type(dt.dtype(d1), dt.dtype(d2))[0].np
    check_three_ways(snp.add, lambda a, b: (a.astype(want) + b.astype(want)), x, y,
                     dtype=want)


@st.composite
def shape_and_axes(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    axes = draw(st.lists(st.integers(-len(shape), len(shape) - 1), unique_by=lambda a:
                         a % len(shape), max_size=len(shape)))
    return shape, (tuple(axes) if axes else None)


@SETTINGS
@given(shape_and_axes(), st.sampled_from(["sum", "max", "min", "mean"]), st.booleans(),
       st.integers(0, 2**16))
def test_reductions_over_random_axes(sa, name, keepdims, seed):
    shape, axes = sa
    x = _data(seed, shape, np.float32)
    check_three_ways(lambda t: getattr(snp, name)(t, axis=axes, keepdims=keepdims),
                     lambda t: getattr(np, name)(t, axis=axes, keepdims=keepdims), x,
                     rtol=1e-5, atol=1e-5)


@SETTINGS
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.randoms(use_true_random=False),
       st.integers(0, 2**16))
def test_reshape_and_transpose(shape, rnd, seed):
    x = _data(seed, tuple(shape), np.int32)
    perm = list(range(len(shape)))
    rnd.shuffle(perm)
    new_shape = list(x.shape)
    rnd.shuffle(new_shape)
    new_shape[0] = -1
    check_three_ways(lambda t: snp.reshape(snp.transpose(t, perm), new_shape),
                     lambda t: np.reshape(np.transpose(t, perm), new_shape), x)
