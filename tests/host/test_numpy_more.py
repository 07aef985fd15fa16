"""The jax.numpy names added with windows, polynomials, set operations, selection,
vectorize / apply_along_axis, bits and histogramdd: what op records cannot express.
Errors name the argument and the fix; data-dependent shapes need size= inside jit;
vectorize and apply_along_axis follow jax's semantics; issubdtype with NumPy's abstract
types and the isscalar/iscomplexobj/isrealobj predicates answer as jax does."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit as sj
import stablejit.numpy as snp
from stablejit.errors import MustCompileError

X = np.arange(12.0).reshape(3, 4)
A = np.array([3, 1, 2, 2, 5, 7, 1, 0], np.int32)
B = np.array([2, 7, 7, 9, 1, 3], np.int32)


def _x64(fn):
    with jax.enable_x64(True):
        out = fn()
        return [np.asarray(o) for o in out] if isinstance(out, tuple) else np.asarray(out)


# ---- errors: each names the argument and the fix ------------------------------------

@pytest.mark.parametrize("call,match", [
    (lambda: snp.put(snp.asarray(X), [0], [1.0], mode="bogus", inplace=False), r"mode must be"),
    (lambda: snp.place(snp.asarray(X), np.ones(5, bool), [1.0], inplace=False),
     r"same number of elements"),
    (lambda: snp.choose(snp.asarray([0, 3]), [X[0, :2], X[1, :2]]), r"out of range.*'wrap'"),
    (lambda: snp.choose(snp.asarray([0, 1]), [X[0, :2]], mode="nope"), r"mode='nope'"),
    (lambda: snp.compress([True, False, False, True], X, axis=0),
     r"condition has true entries beyond.*shorten"),
    (lambda: snp.compress([True], X, size=20), r"size must be between 0"),
    (lambda: snp.polyder([1.0, 2.0], -1), r"polyder: the order m must be non-negative"),
    (lambda: snp.polyint([1.0, 2.0], 2, k=[1.0, 2.0, 3.0]), r"k must hold m=2"),
    (lambda: snp.polyfit(np.ones((2, 2)), np.ones(2), 1), r"polyfit: x must be"),
    (lambda: snp.polyfit(np.arange(3.0), np.arange(3.0), 2, cov=True), r"cov='unscaled'"),
    (lambda: snp.unwrap(np.array([1j, 2j])), r"unwrap: p must be real"),
    (lambda: snp.hamming(2.5), r"M must be a static integer"),
    (lambda: snp.vectorize(lambda a: a, signature="(n)->")(X), r"signature"),
    (lambda: snp.vectorize(lambda a, b: a, signature="(n),(n)->()")(X, X[:, :2]),
     r"core dimension 'n'"),
    (lambda: snp.vectorize(lambda a: a.sum(), signature="(n)->(n)")(X), r"output 0"),
    (lambda: snp.vectorize(lambda a, b: a + b)(X, b=1.0), r"excluded="),
    (lambda: snp.apply_over_axes(lambda a, ax: snp.sum(a), X, [0]), r"apply_over_axes"),
    (lambda: snp.block([[X], X]), r"different depths"),
    (lambda: snp.block((X, X)), r"tuple"),
    (lambda: snp.unpackbits(snp.asarray([1, 2])), r"uint8.*astype"),
    (lambda: snp.packbits(X), r"integers or booleans"),
    (lambda: snp.packbits([1, 0], bitorder="middle"), r"bitorder"),
    (lambda: snp.bitwise_count(X), r"integers or booleans"),
    (lambda: snp.rollaxis(X, 0, 5), r"start=5"),
    (lambda: snp.r_["0,1", X[0], "r"], r"string directive must come first"),
    (lambda: snp.r_["r", X[0]], r"matrix directives"),
    (lambda: snp.histogramdd(X[0]), r"sample must be 2-D"),
    (lambda: snp.intersect1d(A, B, size=-1), r"size must be a non-negative integer"),
])
def test_errors_name_the_argument_and_the_fix(call, match):
    with pytest.raises((ValueError, TypeError, NotImplementedError), match=match):
        call()


# ---- data-dependent shapes: MustCompileError inside jit, size= compiles -----------------

@pytest.mark.parametrize("name", ["intersect1d", "setdiff1d", "union1d", "setxor1d"])
def test_set_operations_need_size_inside_jit(name):
    f = getattr(snp, name)
    with pytest.raises(MustCompileError, match="size=N"):
        sj.jit(f)(snp.asarray(A), snp.asarray(B))
    for size in (2, 6, 12):
        got = sj.jit(lambda a, b, s=size: f(a, b, size=s))(snp.asarray(A), snp.asarray(B))
        want = _x64(lambda s=size: getattr(jnp, name)(A, B, size=s))
        np.testing.assert_array_equal(np.asarray(got), want)
        got = sj.jit(lambda a, b, s=size: f(a, b, size=s, fill_value=-5))(
            snp.asarray(A), snp.asarray(B))
        want = _x64(lambda s=size: getattr(jnp, name)(A, B, size=s, fill_value=-5))
        np.testing.assert_array_equal(np.asarray(got), want)


def test_set_operations_of_floats_with_nan_match_numpy():
    a = np.array([3.0, 1, 2, 2, 5, 7, np.nan, 1, np.nan])
    b = np.array([2.0, 7, 7, 9, np.nan, 1.5, 3])
    for name in ("intersect1d", "setdiff1d", "union1d", "setxor1d"):
        got = getattr(snp, name)(snp.asarray(a), snp.asarray(b))
        np.testing.assert_array_equal(np.asarray(got), getattr(np, name)(a, b), err_msg=name)


def test_set_operations_of_complex_numbers_match_numpy():
    a = np.array([1 + 1j, 2, 3j, 2, np.nan, 1 - 1j], np.complex64)
    b = np.array([2, 3j, 5, np.nan, 1 + 1j, 1 + 1j, 2], np.complex64)
    for name in ("intersect1d", "setdiff1d", "union1d", "setxor1d"):
        got = getattr(snp, name)(a, b)
        np.testing.assert_array_equal(np.asarray(got), getattr(np, name)(a, b), err_msg=name)
    got = snp.intersect1d(a, b, return_indices=True)
    for g, w in zip(got, np.intersect1d(a, b, return_indices=True), strict=True):
        np.testing.assert_array_equal(np.asarray(g), w)
    got = sj.jit(lambda x, y: snp.intersect1d(x, y, return_indices=True, size=5))(
        snp.asarray(a), snp.asarray(b))
    assert [np.asarray(g).tolist()[3:] for g in got[1:]] == [[6, 6], [7, 7]]


def test_empty_sets():
    e = np.zeros(0, np.int32)
    for name in ("intersect1d", "setdiff1d", "union1d", "setxor1d"):
        for a, b in ((e, B), (A, e), (e, e)):
            got = getattr(snp, name)(a, b)
            np.testing.assert_array_equal(np.asarray(got), getattr(np, name)(a, b))
            got = sj.jit(lambda x, y, n=name: getattr(snp, n)(x, y, size=3, fill_value=4))(
                snp.asarray(a), snp.asarray(b))
            assert np.asarray(got).shape == (3,)


def test_compress_extract_and_trim_zeros_inside_jit():
    c = snp.asarray(np.array([True, False, True]))
    with pytest.raises(MustCompileError, match="size=N"):
        sj.jit(lambda c, x: snp.compress(c, x, axis=0))(c, snp.asarray(X))
    with pytest.raises(MustCompileError, match="size=N"):
        sj.jit(lambda x: snp.extract(x > 4, x))(snp.asarray(X))
    with pytest.raises(MustCompileError, match="outside jit"):
        sj.jit(snp.trim_zeros)(snp.asarray(np.array([0, 1, 0])))
    with pytest.raises(MustCompileError, match="strip|trim_leading_zeros=False"):
        sj.jit(lambda u, v: snp.polydiv(u, v, trim_leading_zeros=True))(
            snp.asarray(X[0]), snp.asarray(X[1, :2] + 1))
    with pytest.raises(MustCompileError, match="mode='wrap'"):
        sj.jit(lambda i: snp.choose(i, [X[0], X[1]]))(snp.asarray([0, 1, 1, 0]))
    # a condition given as host data is static, so no size is needed
    got = sj.jit(lambda x: snp.compress([True, False, True], x, axis=0))(snp.asarray(X))
    np.testing.assert_array_equal(np.asarray(got), np.compress([True, False, True], X, 0))
    got = sj.jit(lambda x: snp.extract(x > 4, x, size=10, fill_value=-1))(snp.asarray(X))
    want = _x64(lambda: jnp.extract(X > 4, X, size=10, fill_value=-1))
    np.testing.assert_array_equal(np.asarray(got), want)


def test_place_and_put_inside_jit_match_jax():
    x = snp.asarray(X)
    got = sj.jit(lambda x: snp.place(x, x > 4, snp.asarray([1.0, 2.0, 3.0]), inplace=False))(x)
    want = _x64(lambda: jnp.place(X, X > 4, jnp.asarray([1.0, 2.0, 3.0]), inplace=False))
    np.testing.assert_array_equal(np.asarray(got), want)
    ind = np.array([0, 5, -1, -13, 20])
    for mode in (None, "clip", "wrap"):
        got = sj.jit(lambda x, i, m=mode: snp.put(x, i, snp.asarray([7.0, 8.0]), mode=m,
                                                  inplace=False))(x, snp.asarray(ind))
        want = _x64(lambda m=mode: jnp.put(X, ind, jnp.asarray([7.0, 8.0]), mode=m,
                                           inplace=False))
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=str(mode))


# ---- vectorize, apply_along_axis, apply_over_axes, fromfunction against jax --------------

def _same(got, want):
    gs = got if isinstance(got, tuple) else (got,)
    ws = want if isinstance(want, tuple) else (want,)
    assert len(gs) == len(ws)
    for g, w in zip(gs, ws, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("signature,fn,args", [
    (None, lambda a, b: a * b + 1, (X, X[0])),
    (None, lambda a, b: a - b, (np.ones((3, 1)), np.arange(4.0))),
    ("(n),(n)->()", lambda a, b: (a * b).sum(), (np.ones((2, 1, 4)), X)),
    ("(m,n)->(n,m)", lambda a: a.T, (np.arange(24.0).reshape(2, 3, 4),)),
    ("(n)->(),(n)", lambda a: (a.sum(), a * 2), (X,)),
    ("(n),()->(n)", lambda a, s: a * s, (X, np.array([1.0, 2.0, 3.0])[:, None])),
])
def test_vectorize_matches_jax(signature, fn, args):
    want = jnp.vectorize(fn, signature=signature)(*map(jnp.asarray, args))
    f = snp.vectorize(fn, signature=signature)
    _same(f(*args), want)
    _same(sj.jit(f)(*map(snp.asarray, args)), want)


def test_vectorize_excluded_and_none():
    def f(a, p, *, scale):
        return a ** p * scale
    got = snp.vectorize(f, excluded={1, "scale"})(X, 2, scale=0.5)
    _same(got, jnp.vectorize(f, excluded={1, "scale"})(X, 2, scale=0.5))


def test_vectorize_signature_names_the_arguments_not_excluded():
    def f(a, p, b):
        return (a ** p * b).sum() if b is not None else (a ** p).sum()
    s = np.array([1.0, 2.0, 3.0])[:, None]
    want = jnp.vectorize(f, excluded={1}, signature="(n),()->()")(X, 2, s)
    _same(snp.vectorize(f, excluded={1}, signature="(n),()->()")(X, 2, s), want)
    want = jnp.vectorize(f, excluded={1}, signature="(n),()->()")(X, 2, None)
    _same(snp.vectorize(f, excluded={1}, signature="(n),()->()")(X, 2, None), want)


def test_vectorize_keeps_a_size_one_axis():
    f = snp.vectorize(lambda a, b: a + b, signature="(),()->()")
    assert f(np.ones((1, 1, 3)), np.ones((1, 3))).shape == (1, 1, 3)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_apply_along_axis_matches_jax(axis):
    x = np.arange(24.0).reshape(2, 3, 4)

    def func(v):
        return snp.stack([snp.sum(v), snp.max(v)]) if isinstance(v, sj.Tensor) else \
            jnp.stack([jnp.sum(v), jnp.max(v)])
    want = jnp.apply_along_axis(func, axis, x)
    _same(snp.apply_along_axis(func, axis, x), want)
    _same(sj.jit(lambda x: snp.apply_along_axis(func, axis, x))(snp.asarray(x)), want)
    _same(snp.apply_along_axis(lambda v: v[0], axis, x), np.apply_along_axis(
        lambda v: v[0], axis, x))


def test_apply_over_axes_and_fromfunction_match_jax():
    x = np.arange(24.0).reshape(2, 3, 4)
    _same(snp.apply_over_axes(snp.sum, x, [0, 2]), jnp.apply_over_axes(jnp.sum, x, [0, 2]))
    _same(snp.apply_over_axes(lambda a, ax: snp.cumsum(a, axis=ax), x, [1]),
          jnp.apply_over_axes(lambda a, ax: jnp.cumsum(a, axis=ax), x, [1]))
    got = snp.fromfunction(lambda i, j, k: i * 100 + j * 10 + k, (2, 3, 4))
    want = jnp.fromfunction(lambda i, j, k: i * 100 + j * 10 + k, (2, 3, 4))
    assert np.asarray(got).dtype == np.float32
    _same(got, want)
    # keyword arguments reach the function as they are (jax would map them)
    got = snp.fromfunction(lambda i, j, *, c: i - j * c, (2, 3), c=0.5)
    _same(got, np.fromfunction(lambda i, j, *, c: i - j * c, (2, 3), c=0.5))
    got = snp.fromfunction(lambda i, j: i == j, (3, 3), dtype=snp.int32)
    np.testing.assert_array_equal(np.asarray(got), np.eye(3, dtype=bool))


# ---- dtypes: abstract types with issubdtype, predicates, aliases ------------------------

ABSTRACT = ["generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact",
            "floating", "complexfloating", "character", "flexible"]
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("kind", ABSTRACT)
def test_issubdtype_with_abstract_types_matches_jax(kind):
    assert getattr(snp, kind) is getattr(jnp, kind)
    for d in DTYPES:
        x = snp.zeros(2, getattr(snp, "bool_" if d == "bool" else d))
        want = jnp.issubdtype(getattr(jnp, "bool_" if d == "bool" else d), getattr(jnp, kind))
        assert snp.issubdtype(x.dtype, getattr(snp, kind)) is want, (d, kind)


@pytest.mark.parametrize("a,b", [
    ("float32", float), ("float64", float), ("int32", int), ("int64", int), ("bool_", bool),
    ("complex64", complex), ("complex128", complex), ("float32", "floating"),
])
def test_issubdtype_with_python_types_matches_jax(a, b):
    b_s, b_j = (getattr(snp, b), getattr(jnp, b)) if isinstance(b, str) else (b, b)
    with jax.enable_x64(True):  # jax's answer for the 64-bit dtypes
        want = jnp.issubdtype(getattr(jnp, a), b_j)
    assert snp.issubdtype(getattr(snp, a), b_s) is want
    assert snp.issubdtype(float, snp.floating) and snp.issubdtype(int, snp.signedinteger)


def test_dtype_aliases_and_constants():
    assert snp.single is snp.float32 and snp.double is snp.float64
    assert snp.csingle is snp.complex64 and snp.cdouble is snp.complex128
    assert snp.euler_gamma == jnp.euler_gamma
    assert snp.issubdtype(snp.single, snp.floating) and not snp.issubdtype(snp.single, float)
    assert snp.s_[1:3, ::2] == np.s_[1:3, ::2] and snp.index_exp[2] == (2,)
    np.testing.assert_array_equal(np.asarray(snp.asarray(X)[snp.s_[1:, ::2]]), X[1:, ::2])


@pytest.mark.parametrize("value", [
    1, 1.5, 1j, True, "a", np.float32(1), np.array(1.0), np.array([1.0]), [1, 2], None,
])
def test_predicates_match_jax(value):
    assert snp.isscalar(value) == jnp.isscalar(value)
    if value is not None and not isinstance(value, str):
        assert snp.iscomplexobj(value) == jnp.iscomplexobj(value)
        assert snp.isrealobj(value) == jnp.isrealobj(value)


def test_predicates_of_tensors():
    assert snp.isscalar(snp.asarray(2.0)) and not snp.isscalar(snp.asarray([2.0]))
    assert snp.iscomplexobj(snp.asarray([1j])) and snp.isrealobj(snp.asarray([1.0]))
    assert not snp.iscomplexobj(None) and snp.isrealobj(None)
