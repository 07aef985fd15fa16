"""Indexing that selects nothing: 0-size tensors and masks with a 0-size axis, which the
array API standard allows ("the size of each dimension in B must equal ... or be 0")."""

import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp


@pytest.mark.parametrize("shape,index", [
    ((0,), np.zeros(0, bool)),
    ((0, 3), np.zeros(0, bool)),
    ((0, 3), np.zeros(0, np.int64)),
    ((3, 0), (slice(None), np.zeros(0, np.int64))),
    ((0, 3), (slice(None), np.array([0, 2]))),
], ids=["mask-0", "mask-rows-of-0x3", "ints-0x3", "ints-3x0", "columns-of-0x3"])
def test_indexing_a_zero_size_tensor_matches_numpy(shape, index):
    a = np.zeros(shape, np.float32)
    want = a[index]
    got = snp.asarray(a)[index]
    assert got.shape == want.shape and got.dtype is snp.float32


@pytest.mark.parametrize("mask_shape,want_shape", [((0,), (0, 3)), ((2, 0), (0,)),
                                                   ((0, 3), (0,))])
def test_a_mask_axis_of_size_0_selects_nothing(mask_shape, want_shape):
    x = snp.asarray(np.arange(6).reshape(2, 3))
    assert x[np.zeros(mask_shape, bool)].shape == want_shape
    assert x[snp.zeros(mask_shape, dtype=snp.bool)].shape == want_shape
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[np.zeros((1,), bool)]  # a size that is neither the axis's nor 0


def test_gather_of_nothing_from_a_zero_size_tensor_under_jit():
    out = stablejit.jit(lambda x, i: x[i])(snp.zeros((0, 3)), snp.zeros((0,), dtype=snp.int32))
    assert out.shape == (0, 3)


@pytest.mark.parametrize("arr_shape,idx_shape,axis", [
    ((0, 2), (0, 3), -1), ((0, 2), (0, 2), 1), ((3, 0, 4), (3, 0, 1), 2),
    ((4, 0, 3), (4, 0, 2), -1), ((2, 3), (0, 3), 0), ((2, 3), (2, 0), 1),
], ids=str)
def test_take_along_axis_with_an_empty_result_matches_numpy_and_jax(arr_shape, idx_shape,
                                                                    axis):
    # SciPy's vectorized searchsorted (stats/_quantile.py) takes along the last axis of
    # an empty batch: XLA's gather refused the operand's 0-size axis
    a = np.arange(np.prod(arr_shape), dtype=np.float32).reshape(arr_shape)
    i = np.zeros(idx_shape, np.int64)
    want = np.take_along_axis(a, i, axis=axis)
    assert jnp.take_along_axis(a, i, axis=axis).shape == want.shape
    for run in (lambda f: f(), lambda f: stablejit.jit(f)()):
        got = run(lambda: snp.take_along_axis(snp.asarray(a), snp.asarray(i), axis=axis))
        assert got.shape == want.shape and got.dtype is snp.float32
