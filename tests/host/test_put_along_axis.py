"""put_along_axis writes in place by default, as NumPy's does: SciPy (and any NumPy
caller) ignores its None result, so a copy would be a silent wrong answer (SciPy's
false_discovery_control returned unadjusted p-values). inplace=False is JAX's form.
Compared with NumPy over axes, index shapes and values; eagerly, under jit (the write
reaches the caller) and through a view."""

from __future__ import annotations

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

A = np.arange(24, dtype=np.float32).reshape(4, 6)
CASES = {
    "axis 1, one column": (np.array([[1], [5], [0], [3]]), 9.0, 1),
    "axis 1, two columns": (np.array([[1, 2], [5, 0], [0, 0], [3, 4]]), -1.0, 1),
    "axis 0, a row": (np.array([[3, 2, 1, 0, 1, 2]]), 7.5, 0),
    "axis -1, values per row": (np.array([[0], [1], [2], [3]]),
                                np.array([[10.0], [20.0], [30.0], [40.0]], np.float32), -1),
    "argsort order": (np.argsort(-A, axis=1)[:, :3], 0.0, 1),
}


def _numpy(idx, values, axis):
    want = A.copy()
    assert np.put_along_axis(want, idx, values, axis=axis) is None
    return want


@pytest.mark.parametrize("name", sorted(CASES))
def test_in_place_by_default_as_numpy(name):
    idx, values, axis = CASES[name]
    x = snp.asarray(A)
    assert snp.put_along_axis(x, snp.asarray(idx), values, axis=axis) is None
    np.testing.assert_array_equal(np.asarray(x), _numpy(idx, values, axis))


@pytest.mark.parametrize("name", sorted(CASES))
def test_under_jit_the_write_reaches_the_caller(name):
    idx, values, axis = CASES[name]

    @stablejit.jit
    def f(x, i):
        snp.put_along_axis(x, i, values, axis=axis)
        return x.sum()

    x = snp.asarray(A)
    total = f(x, snp.asarray(idx))
    want = _numpy(idx, values, axis)
    np.testing.assert_array_equal(np.asarray(x), want)
    np.testing.assert_allclose(float(total), want.sum(), rtol=1e-6)


def test_through_a_view_the_base_changes():
    base = snp.asarray(np.zeros((2, 4, 6), np.float32))
    view = base[1]
    snp.put_along_axis(view, snp.asarray(np.array([[1], [2], [3], [4]])), 5.0, axis=1)
    want = np.zeros((2, 4, 6), np.float32)
    np.put_along_axis(want[1], np.array([[1], [2], [3], [4]]), 5.0, axis=1)
    np.testing.assert_array_equal(np.asarray(base), want)


@pytest.mark.parametrize("name", sorted(CASES))
def test_inplace_false_returns_a_new_tensor_and_leaves_arr(name):
    idx, values, axis = CASES[name]
    x = snp.asarray(A)
    out = snp.put_along_axis(x, snp.asarray(idx), values, axis=axis, inplace=False)
    np.testing.assert_array_equal(np.asarray(out), _numpy(idx, values, axis))
    np.testing.assert_array_equal(np.asarray(x), A)


@pytest.mark.parametrize("arr", [A.copy(), A.tolist()], ids=["ndarray", "list"])
def test_in_place_into_what_stablejit_cannot_change_says_what_to_do(arr):
    with pytest.raises(TypeError, match="inplace=False and use the returned tensor"):
        snp.put_along_axis(arr, np.array([[0], [0], [0], [0]]), 1.0, axis=1)
