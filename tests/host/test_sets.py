"""unique_values/counts/inverse/all and unique(...) three ways against NumPy; with size=
inside jit (padded like JAX); MustCompileError without it."""

import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

from tests.support.runners import check_three_ways, run_three_ways

rng = np.random.default_rng(3)
INTS = rng.integers(0, 6, (4, 5)).astype(np.int32)
FLOATS = np.array([3.0, 1.0, np.nan, -0.0, 1.0, 0.0, np.nan, 2.5], np.float32)


@pytest.mark.parametrize("x", [INTS, FLOATS, np.array([True, False, True])],
                         ids=["int", "float-nan", "bool"])
def test_unique_all_outside_jit_matches_numpy(x):
    # NumPy >= 2.3 may return unique_* values unsorted; np.unique's order is the sorted one
    def np_all(x):
        v, i, inv, c = np.unique(x, return_index=True, return_inverse=True,
                                 return_counts=True, equal_nan=False)
        return [v, i, inv.reshape(x.shape), c]
    paths = ("eager", "reference")
    check_three_ways(lambda x: list(snp.unique_all(x)), np_all, x, paths=paths)
    check_three_ways(lambda x: snp.unique_values(x), lambda x: np_all(x)[0], x, paths=paths)
    check_three_ways(lambda x: list(snp.unique_counts(x)), lambda x: [np_all(x)[k] for k in
                                                                     (0, 3)], x, paths=paths)
    check_three_ways(lambda x: list(snp.unique_inverse(x)), lambda x: np_all(x)[:3:2], x,
                     paths=paths)

def test_unique_with_size_under_jit_pads_like_jax():
    x = INTS
    got = run_three_ways(lambda x: snp.unique(x, return_index=True, return_counts=True,
                                              size=9), x)
    want = jnp.unique(jnp.asarray(x), return_index=True, return_counts=True, size=9)
    for path, outs in got.items():
        for g, w in zip(outs, want, strict=True):
            np.testing.assert_array_equal(g, np.asarray(w), err_msg=path)
    got = run_three_ways(lambda x: snp.unique_values(x, size=10, fill_value=-1), x)
    k = len(np.unique(x))
    for out in got.values():
        np.testing.assert_array_equal(out[:k], np.unique(x))
        assert (out[k:] == -1).all()


def test_unique_inside_jit_without_size_must_compile():
    with pytest.raises(stablejit.MustCompileError, match="size=N"):
        stablejit.jit(snp.unique_values)(snp.asarray(INTS))


def test_unique_of_complex_sorts_by_real_then_imaginary_like_numpy():
    x = np.array([1 + 2j, 1 + 1j, 0j, 1 + 2j, -1j, 2 - 3j, 0j], np.complex64)
    v, i, inv, c = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    got = snp.unique_all(snp.asarray(x))
    for g, w in zip(got, (v, i, inv, c), strict=True):
        np.testing.assert_array_equal(np.asarray(g), w)
    zero_d = snp.unique_inverse(snp.asarray(np.complex64(1j)))  # a 0-d input keeps its shape
    assert zero_d.values.tolist() == [1j] and zero_d.inverse_indices.shape == ()


@pytest.mark.parametrize("values", [
    np.array([np.nan, 1.0, np.nan, -0.0, 0.0, np.inf], np.float32),
    np.array([complex(np.nan, 0), complex(0, np.nan), 1, 1j, complex(0, np.nan), -1],
             np.complex64),
    np.array([np.nan], np.float32),
    np.array([], np.float32),
    np.zeros((0, 2), np.float32),
    np.array([3, 1, 3], np.int32),
])
@pytest.mark.parametrize("kw", [{}, {"equal_nan": False},
                                {"return_index": True, "return_inverse": True,
                                 "return_counts": True}])
def test_unique_nans_and_empty_inputs_match_numpy(values, kw):
    """NumPy's (and JAX's) unique counts all NaNs as one value unless equal_nan=False;
    complex values with a NaN part sort last; empty inputs give empty results (they
    raised). The array API's unique_values keeps NaNs apart."""
    want = np.unique(values, **kw)
    got = snp.unique(snp.asarray(values), **kw)
    want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
    for w, g in zip(want, got, strict=True):
        g = np.asarray(g)
        assert g.shape == w.shape or g.shape == w.ravel().shape, (g.shape, w.shape)
        np.testing.assert_array_equal(g.ravel(), w.ravel())
    if values.dtype.kind == "f" and values.ndim == 1:
        assert np.isnan(np.asarray(snp.unique_values(snp.asarray(values)))).sum() == \
            np.isnan(values).sum()


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint32, np.int64,
                                   np.uint64])
def test_isin_with_a_python_int_takes_the_elements_dtype(dtype):
    """A Python int test value is of the elements' dtype (the array API's rule for scalar
    operands): 2**63 is a uint64, and one outside the dtype's range matches nothing."""
    info = np.iinfo(dtype)
    x = np.array([info.min, info.max, 0, 1], dtype)
    for v in (info.min, info.max, 0, 5, info.max + 1, info.min - 1, 2**63):
        want = np.isin(x, np.array([v], object).astype(dtype)) if info.min <= v <= \
            info.max else np.zeros(x.shape, bool)
        np.testing.assert_array_equal(np.asarray(snp.isin(snp.asarray(x), v)), want,
                                      err_msg=f"{dtype} {v}")
        np.testing.assert_array_equal(np.asarray(snp.isin(snp.asarray(x), v, invert=True)),
                                      ~want)
        # and the Python int as the element, the tensor as the test elements
        assert bool(snp.isin(v, snp.asarray(x))) == bool(want.any()), (dtype, v)
