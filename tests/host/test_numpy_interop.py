"""NumPy functions called on stablejit tensors, and ndarray methods tensors provide."""

import numpy as np
import pytest
import stablejit.numpy as snp

A = np.arange(12.0, dtype=np.float32).reshape(3, 4) - 4.5


@pytest.mark.parametrize("fn", [np.mean, np.sum, np.std, np.var, np.max, np.min, np.argmax,
                                np.argmin, np.prod, np.ptp, np.all, np.any, np.cumsum])
def test_numpy_reductions_accept_tensors(fn):
    np.testing.assert_allclose(fn(snp.asarray(A)), fn(A), rtol=1e-6)


def test_numpy_reduction_keywords():
    x = snp.asarray(A)
    np.testing.assert_allclose(np.std(x, ddof=1), np.std(A, ddof=1), rtol=1e-6)
    np.testing.assert_allclose(np.sum(x, axis=0, keepdims=True), np.sum(A, axis=0,
                                                                       keepdims=True))
    with pytest.raises(TypeError, match="out= is not supported"):
        np.sum(x, out=np.zeros(()))


@pytest.mark.parametrize("offset", [-1, 0, 2])
def test_diagonal_and_trace_methods(offset):
    x = snp.asarray(A)
    np.testing.assert_array_equal(x.diagonal(offset), A.diagonal(offset))
    np.testing.assert_array_equal(x.trace(offset), A.trace(offset))
    np.testing.assert_array_equal(x.T.diagonal(offset, 1, 0), A.T.diagonal(offset, 1, 0))


def test_copy_repeat_and_sizes():
    x = snp.asarray(A)
    c = x.copy()
    assert c is not x
    np.testing.assert_array_equal(c, A)
    np.testing.assert_array_equal(x.repeat(2, axis=1), A.repeat(2, axis=1))
    assert (x.nbytes, x.itemsize, x.tobytes()) == (A.nbytes, A.itemsize, A.tobytes())


# ---- found by the array API conformance suite ------------------------------------------------

def test_remainder_zero_takes_the_divisors_sign():
    from tests.support.runners import run_three_ways

    a = np.array([-0.0, 0.0, 0.0, -0.0, 3.0, -3.0, 4.0], np.float64)
    b = np.array([1.0, -1.0, 2.0, -2.0, 3.0, 2.0, -2.0], np.float64)
    expected = np.remainder(a, b)
    for path, got in run_three_ways(lambda x, y: x % y, a, b).items():
        assert np.array_equal(got, expected) and np.array_equal(
            np.signbit(got), np.signbit(expected)), path


@pytest.mark.parametrize("shape, index", [((0,), slice(None)), ((0, 3), (slice(None), 1)),
                                          ((0, 3), np.array([], np.int32))])
def test_writes_into_empty_tensors(shape, index):
    x = snp.zeros(shape)
    if isinstance(index, np.ndarray):
        index = snp.asarray(index)
    x[index] = 1.0
    assert x.shape == shape
    assert snp.zeros(shape).at[index].set(2.0).shape == shape


@pytest.mark.parametrize("name", ["arccosh", "arccos"])
def test_acos_acosh_of_a_large_finite_real_part_and_nan_imaginary_part(name):
    from tests.support.runners import run_three_ways

    z = np.array([8.976879890218818e153 + np.nan * 1j, complex(1e300, np.nan),
                  complex(-3, np.nan), complex(0, np.nan)])
    expected = getattr(np, name)(z)
    for path, got in run_three_ways(getattr(snp, name.replace("arc", "a")), z).items():
        np.testing.assert_array_equal(got, expected, err_msg=path)


@pytest.mark.parametrize("dtype", [">f4", ">f8", ">i8", ">i2", ">c8"])
def test_big_endian_arrays_are_converted_not_refused(dtype):
    from tests.support.runners import run_three_ways

    a = (np.arange(6) - 2).astype(dtype)
    assert not a.dtype.isnative
    for path, got in run_three_ways(lambda x: x * 2, a).items():
        np.testing.assert_array_equal(got, a * 2, err_msg=path)
        assert got.dtype == a.dtype.newbyteorder("="), path


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_integer_division_at_int_min_on_every_path(dtype):
    """The reference rule took |INT_MIN|, which overflows: -128 // -127 gave -2 there."""
    from tests.support.runners import run_three_ways

    info = np.iinfo(dtype)
    x = np.array([info.min, info.min, info.min + 1, -7, 7], dtype)
    y = np.array([-127, 3, info.min, 2, -2], dtype)
    for path, got in run_three_ways(lambda a, b: (a // b, a % b), x, y).items():
        np.testing.assert_array_equal(got[0], x // y, err_msg=path)
        np.testing.assert_array_equal(got[1], x % y, err_msg=path)


def test_jax_takes_tensors():
    """jnp.asarray(t) (the __jax_array__ protocol): jax's dtype detection rejects an
    object whose .dtype is not a NumPy dtype, so before this a tensor could not be
    handed to jax at all. The result is a copy: moving the tensor afterwards keeps it."""
    import jax.numpy as jnp
    import stablejit

    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    x = snp.asarray(a)
    with stablejit.lazy():
        y = x * 2
    for t, want in ((x, a), (y, a * 2), (stablejit.backend_copy(x, "reference"), a)):
        j = jnp.asarray(t)
        assert j.dtype == np.int32
        np.testing.assert_array_equal(np.asarray(j), want)
    j = jnp.asarray(x)
    stablejit.backend_transfer(x, "reference")  # frees x's device buffer
    np.testing.assert_array_equal(np.asarray(j + 1), a + 1)
