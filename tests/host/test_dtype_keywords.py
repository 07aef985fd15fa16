"""Porting by import swap: the `dtype=` keyword of the reductions and statistics as NumPy
has it (the dtype a result is computed and returned in), and `stablejit.numpy.dtype(x)`
as np.dtype / jnp.dtype: a dtype from any spelling. Tables against NumPy and jax."""

from __future__ import annotations

import warnings

import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
import stablejit.numpy as snp

X = np.array([[1, 2, 3], [4, 5, 7]], np.int32)
XN = np.array([[1.5, np.nan, 3.0], [4.0, 5.0, np.nan]], np.float32)

# function -> (its arguments, the dtypes NumPy takes for it)
FLOATS = ("float64", "float32", "complex128")
FUNCTIONS = {
    "sum": ((X,), FLOATS + ("int64", "int8")), "prod": ((X,), FLOATS + ("int64",)),
    "mean": ((X,), FLOATS + ("int64",)), "var": ((X,), FLOATS), "std": ((X,), FLOATS),
    "nansum": ((XN,), FLOATS), "nanprod": ((XN,), FLOATS), "nanmean": ((XN,), FLOATS),
    "nanvar": ((XN,), FLOATS), "nanstd": ((XN,), FLOATS),
    "cumsum": ((X,), FLOATS + ("int64",)), "cumprod": ((X,), FLOATS + ("int64",)),
    "nancumsum": ((XN,), FLOATS), "nancumprod": ((XN,), FLOATS),
    "trace": ((X,), FLOATS + ("int64",)),
    "einsum": (("ij->i", X), FLOATS + ("int64",)),
    "einsum(two operands)": (("ij,kj->ik", X, X), FLOATS + ("int64",)),
}
CASES = [(f, d, ax) for f, (_, ds) in FUNCTIONS.items() for d in ds
         for ax in ((None, 1) if not f.startswith(("einsum", "trace")) else (None,))]


@pytest.mark.parametrize("name,dtype,axis", CASES)
def test_dtype_keyword_as_numpy(name, dtype, axis):
    args, _ = FUNCTIONS[name]
    fn = name.split("(")[0]
    kw = {"dtype": dtype} | ({"axis": axis} if axis is not None else {})
    ours = [snp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's ComplexWarning, all-NaN slices
        try:
            want = getattr(np, fn)(*args, **kw)
        except TypeError:  # einsum's casting='safe': int32 to float32 is refused
            with pytest.raises(TypeError, match="cannot be cast"):
                getattr(snp, fn)(*ours, **kw)
            return
    got = getattr(snp, fn)(*ours, **kw)
    assert np.asarray(got).dtype == want.dtype, (name, dtype, np.asarray(got).dtype)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd"])
def test_an_integer_dtype_for_a_variance_is_refused_with_advice(name):
    # NumPy computes it in integer arithmetic, jax.numpy.std refuses, var returns floats
    with pytest.raises(TypeError, match=r"dtype=int64 is an integer dtype.*astype"):
        getattr(snp, name)(snp.asarray(X), dtype="int64")


@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd"])
def test_variance_parameters_in_numpy_s_positional_order(name):
    # np.var(a, axis, dtype, out, ddof, keepdims): a port passes them positionally
    want = getattr(np, name)(X, 0, np.float64, None, 1, True)
    got = getattr(snp, name)(snp.asarray(X), 0, snp.float64, None, 1, True)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    method = getattr(snp.asarray(X), name[-3:])(0, "float64", None, 1)
    np.testing.assert_allclose(np.asarray(method), getattr(X, name[-3:])(0, "float64", None,
                                                                          1), rtol=1e-12)
    with pytest.raises(ValueError, match="same parameter"):
        getattr(snp, name)(snp.asarray(X), ddof=1, correction=1)


def test_einsum_dtype_follows_numpy_s_casting_rule():
    x = np.ones((2, 2))
    with pytest.raises(TypeError):
        np.einsum("ij->i", x, dtype=np.float32)
    with pytest.raises(TypeError, match=r"operand 0 \(float64\) cannot be cast to "
                                        r"dtype=float32 under casting='safe'"):
        snp.einsum("ij->i", snp.asarray(x), dtype=snp.float32)
    got = snp.einsum("ij->i", snp.asarray(x), dtype="float32", casting="same_kind")
    assert got.dtype == snp.float32
    assert snp.einsum("ij,jk", snp.asarray(x), snp.asarray(x), optimize=True).shape == (2, 2)


SPELLINGS = ["float32", "f4", "float64", "<f8", "int8", "uint16", "int64", "bool", "complex64",
             "complex128", "float16", np.float32, np.int32, np.dtype("int64"),
             np.dtype(">f4"), np.bool_, bool, np.complex64]


@pytest.mark.parametrize("spelling", SPELLINGS, ids=repr)
def test_dtype_of_a_spelling_as_numpy_and_jax(spelling):
    d = snp.dtype(spelling)
    assert isinstance(d, snp.dtype)
    assert d == np.dtype(spelling).newbyteorder("=") == jnp.dtype(spelling).newbyteorder("=")
    assert snp.asarray([1], dtype=d).dtype == d


def test_dtype_of_the_other_spellings():
    assert snp.dtype("bfloat16") == snp.bfloat16 == jnp.dtype("bfloat16") \
        == np.dtype(ml_dtypes.bfloat16)
    assert snp.dtype(snp.int8) is snp.int8
    assert snp.dtype(snp.ones(2)) == snp.float32  # a tensor's dtype, as np.asarray(...).dtype
    # Python's float names the default float here, as in `dtype=float` everywhere in
    # stablejit (NumPy: float64; jax without x64 makes float32 arrays of it too)
    assert snp.dtype(float) == snp.asarray([1.0], dtype=float).dtype == snp.float32
    assert isinstance(snp.float32, snp.dtype) and not isinstance("float32", snp.dtype)
    with pytest.raises(TypeError, match="'float128' is not a dtype stablejit has"):
        snp.dtype("float128")
