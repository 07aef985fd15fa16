"""stablejit.numpy functions whose results are Python values or dtypes, not tensors
(shape, ndim, size, promote_types, issubdtype, the float_/int_/complex_ aliases), and the
errors that tell a user which argument to pass where a shape would depend on the data —
each compared with jax.numpy and NumPy over a table of cases."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit as sj
import stablejit.numpy as snp
from stablejit.errors import MustCompileError

X = np.zeros((2, 3, 4), np.float32)

# calls of a namespace `m`: stablejit.numpy, jax.numpy and NumPy must agree
PYTHON_VALUES = [
    lambda m: m.shape(X),
    lambda m: m.ndim(X),
    lambda m: m.ndim(5.0),
    lambda m: m.size(X),
    lambda m: m.size(X, -1),
    lambda m: m.issubdtype(m.float32, np.floating),
    lambda m: m.issubdtype(m.int8, np.signedinteger),
    lambda m: m.issubdtype(m.uint8, np.signedinteger),
    lambda m: m.issubdtype(m.complex64, np.inexact),
    lambda m: m.issubdtype(m.bool_, np.number),
    lambda m: m.issubdtype(m.int32, m.int32),
    lambda m: m.issubdtype(m.int32, m.int64),
]


@pytest.mark.parametrize("i", range(len(PYTHON_VALUES)))
def test_python_values_match_jax_and_numpy(i):
    call = PYTHON_VALUES[i]
    ours = call(snp)
    assert ours == call(jnp) == call(np), (ours, call(jnp), call(np))


def test_issubdtype_counts_bfloat16_as_floating_like_jax():
    assert snp.issubdtype(snp.bfloat16, np.floating) == jnp.issubdtype(jnp.bfloat16,
                                                                         np.floating)


# promote_types follows stablejit's own promotion table (the one a + b uses); it agrees
# with NumPy on these pairs, and with jax wherever jax promotes by the same rule
@pytest.mark.parametrize("a,b", [("int8", "uint8"), ("int32", "int64"), ("float16", "float32"),
                                 ("bool", "int16"), ("float32", "complex64"),
                                 ("uint32", "int32"), ("float64", "complex64"),
                                 ("int16", "float32")])
def test_promote_types_matches_numpy_and_the_operators(a, b):
    got = snp.promote_types(a, b)
    assert got.np == np.promote_types(a, b)
    x, y = snp.ones(2, dtype=a), snp.ones(2, dtype=b)
    assert (x + y).dtype is got


def test_promote_types_bfloat16_like_jax():
    with jax.enable_x64(True):
        want = jnp.promote_types(jnp.bfloat16, jnp.float16)
    assert snp.promote_types(snp.bfloat16, snp.float16).np == want


@pytest.mark.parametrize("name,want", [("float_", "float64"), ("int_", "int64"),
                                       ("complex_", "complex128")])
def test_64_bit_aliases_match_jax(name, want):
    assert getattr(snp, name).np == np.dtype(want) == np.dtype(getattr(jnp, name))


# data-dependent shapes inside jit: each error names what to pass instead (as jax does)
_I = np.array([3, 0, 1, 1])
JIT_ERRORS = [
    ("bincount", lambda x: snp.bincount(x), _I, MustCompileError, "length="),
    ("unique(axis=)", lambda x: snp.unique(x.reshape(2, 2), axis=0), _I, MustCompileError,
     "size="),
    ("roots", lambda x: snp.roots(x), _I.astype(np.float32), MustCompileError,
     "strip_zeros=False"),
    ("ravel_multi_index", lambda x: snp.ravel_multi_index((x, x), (4, 4)), _I,
     MustCompileError, "mode='wrap'"),
    ("delete", lambda x: snp.delete(x, x[:1]), _I, MustCompileError,
     "assume_unique_indices=True"),
    ("insert", lambda x: snp.insert(x, x[:1], 0), _I, MustCompileError, "Python int"),
    ("ix_(mask)", lambda x: snp.ix_(x > 0), _I, MustCompileError, "nonzero"),
]


@pytest.mark.parametrize("name,fn,arg,exc,hint", JIT_ERRORS, ids=[e[0] for e in JIT_ERRORS])
def test_data_dependent_shapes_name_the_static_argument(name, fn, arg, exc, hint):
    with pytest.raises(exc, match=hint.replace("(", r"\(")):
        sj.jit(fn)(snp.asarray(arg))


USER_ERRORS = [
    # data that is no numbers names itself (SciPy's ndimage checks for the value)
    ("asarray of a string", lambda: snp.asarray("a duck"), TypeError,
     r"Value 'a duck' \(str, NumPy dtype <U6\).*convert it to numbers"),
    ("add to a string array", lambda: snp.add(np.array(["a", "b"]), 1.0), TypeError,
     r"Value array\(\['a', 'b'\].*numbers and booleans"),
    ("asarray of objects", lambda: snp.asarray([None, 1]), TypeError,
     r"Value \[None, 1\] \(list, NumPy dtype object\)"),
    ("fill_diagonal(inplace=True) into a NumPy array",
     lambda: snp.fill_diagonal(np.zeros((2, 2)), 1.0), TypeError, "inplace=False"),
    ("max(where=) without initial", lambda: snp.max(snp.ones(3), where=snp.ones(3) > 0),
     ValueError, "initial="),
    ("quantile(method=)", lambda: snp.quantile(snp.ones(3), 0.5, method="weibull"),
     ValueError, "method must be one of"),
    ("gradient(edge_order=2)", lambda: snp.gradient(snp.ones(3), edge_order=2),
     NotImplementedError, "edge_order=2"),
    ("histogram(bins='auto')", lambda: snp.histogram(snp.ones(3), "auto"),
     NotImplementedError, "number of bins"),
]


@pytest.mark.parametrize("name,fn,exc,hint", USER_ERRORS, ids=[e[0] for e in USER_ERRORS])
def test_user_errors_say_what_to_do(name, fn, exc, hint):
    with pytest.raises(exc, match=hint):
        fn()
