"""A dtype may be spelled as a stablejit dtype, a NumPy dtype, a NumPy scalar type, a name
("float32", "f4") or a Python type (bool, int, float, complex), and every function that
takes a dtype gives the same answer for every spelling: the answer JAX gives (64-bit types
on) for the dtype the spelling means. Python's types mean stablejit's defaults (int64,
float32, complex64), as in JAX they are weak types that take the default dtype of their
kind (tests/support/jax_promotion.py)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit.numpy as snp
from stablejit.compiler import dtypes as dt

from tests.support import jax_promotion

TARGETS = ["bool", "int8", "int32", "int64", "uint8", "float16", "float32", "float64",
           "complex64", "complex128"]
PY_TYPES = {"bool": bool, "int64": int, "float32": float, "complex64": complex}


def spellings(name: str):
    npd = np.dtype(name)
    out = {"stablejit": dt.dtype(name), "np.dtype": npd, "scalar type": npd.type,
           "name": name, "char": npd.str[1:]}
    if name in PY_TYPES:
        out["python type"] = PY_TYPES[name]
    return out


CASES = [(name, how, d) for name in TARGETS for how, d in spellings(name).items()]
IDS = [f"{name}-{how}" for name, how, _ in CASES]

X = np.asarray([1, 2, 3], np.int64)
KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
         "complex floating", "numeric"]

# name -> (stablejit call, JAX call): each takes (namespace, dtype) and gives plain values
QUERIES = {
    "isdtype": lambda xp, d: tuple(xp.isdtype(d, k) for k in KINDS)
    + (xp.isdtype(d, ("bool", "real floating")),),
    "issubdtype": lambda xp, d: tuple(xp.issubdtype(d, t) for t in (
        np.generic, np.number, np.integer, np.signedinteger, np.unsignedinteger,
        np.inexact, np.floating, np.complexfloating, np.bool_)),
    "can_cast": lambda xp, d: (xp.can_cast(d, np.float64), xp.can_cast(np.int8, d),
                               xp.can_cast(np.int64, d)),
    "finfo/iinfo": lambda xp, d: (
        lambda i: (i.bits, float(i.eps), float(i.max), str(np.dtype(i.dtype))))(xp.finfo(d))
    if np.dtype(_np(d)).kind in "fc" else (lambda i: (i.bits, int(i.max), int(i.min)))(
        xp.iinfo(d)) if np.dtype(_np(d)).kind in "iu" else None,
}

# name -> f(xp, d): a tensor whose dtype and values are compared with JAX's
MAKERS = {
    "asarray": lambda xp, d: xp.asarray([1, 0, 2], dtype=d),
    "array": lambda xp, d: xp.array([1, 0, 2], dtype=d),
    "astype": lambda xp, d: xp.astype(xp.asarray(X), d),
    "x.astype": lambda xp, d: xp.asarray(X).astype(d),
    "zeros": lambda xp, d: xp.zeros((2, 3), dtype=d),
    "ones": lambda xp, d: xp.ones(3, dtype=d),
    "full": lambda xp, d: xp.full(3, 1, dtype=d),
    "empty": lambda xp, d: xp.zeros_like(xp.empty(3, dtype=d)),
    "zeros_like": lambda xp, d: xp.zeros_like(xp.asarray(X), dtype=d),
    "ones_like": lambda xp, d: xp.ones_like(xp.asarray(X), dtype=d),
    "full_like": lambda xp, d: xp.full_like(xp.asarray(X), 1, dtype=d),
    "arange": lambda xp, d: xp.arange(3, dtype=d),
    "linspace": lambda xp, d: xp.linspace(0, 4, 5, dtype=d),
    "eye": lambda xp, d: xp.eye(2, 3, dtype=d),
    "identity": lambda xp, d: xp.identity(2, dtype=d),
    "tri": lambda xp, d: xp.tri(2, dtype=d),
    "sum": lambda xp, d: xp.sum(xp.asarray(X), dtype=d),
    "prod": lambda xp, d: xp.prod(xp.asarray(X), dtype=d),
    "cumsum": lambda xp, d: xp.cumsum(xp.asarray(X), dtype=d),
    "cumprod": lambda xp, d: xp.cumprod(xp.asarray(X), dtype=d),
    "mean": lambda xp, d: xp.mean(xp.asarray(X), dtype=d),
}
# JAX refuses these with a bool dtype (or gives no bool answer): not compared
NOT_FOR_BOOL = {"arange", "linspace", "cumsum", "cumprod", "prod", "sum", "mean"}


def _np(d):
    """The NumPy dtype a spelling means in stablejit."""
    return dt.dtype(d).np if not isinstance(d, type) or d not in PY_TYPES.values() else {
        bool: np.bool_, int: np.int64, float: np.float32, complex: np.complex64}[d]


def _jax(f, name):
    with jax.enable_x64(True):
        return f(jnp, np.dtype(name))


@pytest.mark.parametrize("query", list(QUERIES))
@pytest.mark.parametrize("name,how,d", CASES, ids=IDS)
def test_dtype_queries_take_every_spelling(query, name, how, d):
    f = QUERIES[query]
    assert f(snp, d) == _jax(f, name)
    if query == "can_cast":  # a tensor stands for its dtype
        assert snp.can_cast(snp.asarray(X), d) == f(snp, d)[2]


@pytest.mark.parametrize("name,how,d", CASES, ids=IDS)
def test_result_type_takes_every_spelling(name, how, d):
    # a Python type is weak, as in JAX: result_type(float, float16) is float16
    oracle = d if how == "python type" else dt.dtype(name)
    for ops in [(), (dt.int8,), (dt.float16,), (dt.int64,)]:
        got = snp.result_type(*ops, d) if ops != (dt.int64,) else \
            snp.result_type(snp.asarray(X), d)
        assert got == jax_promotion.result_type(*ops, oracle)[0], ops


@pytest.mark.parametrize("maker,name,how,d", [
    (m, *c) for m in MAKERS for c in CASES if not (c[0] == "bool" and m in NOT_FOR_BOOL)],
    ids=[f"{m}-{i}" for m in MAKERS for c, i in zip(CASES, IDS, strict=True)
         if not (c[0] == "bool" and m in NOT_FOR_BOOL)])
def test_creation_and_reductions_take_every_spelling(maker, name, how, d):
    f = MAKERS[maker]
    got, want = f(snp, d), _jax(f, name)
    assert got.dtype == dt.dtype(name)
    assert np.dtype(want.dtype) == np.dtype(name)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("value", [snp.asarray(X), X, np.float32(1.0)],
                         ids=["tensor", "ndarray", "numpy scalar"])
def test_isdtype_refuses_a_value_and_says_to_use_its_dtype(value):
    with pytest.raises(TypeError, match="isdtype takes a dtype, not a .* value: use x.dtype"):
        snp.isdtype(value, "integral")
