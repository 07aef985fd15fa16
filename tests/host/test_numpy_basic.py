"""stablejit.numpy basics on jit, eager XLA and reference, against NumPy: creation,
broadcasting, type promotion, reductions, linear algebra, manipulation, indexing and the
Tensor conveniences (repr, item, tolist, __array__, astype)."""

import ml_dtypes
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit.compiler import dtypes as dt

from tests.support.runners import check_three_ways, run_three_ways

rng = np.random.default_rng(0)
A = rng.normal(size=(2, 3, 4)).astype(np.float32)
M = rng.normal(size=(3, 4)).astype(np.float32)
N = rng.normal(size=(4, 5)).astype(np.float32)
V = rng.normal(size=(4,)).astype(np.float32)
B3 = rng.normal(size=(3, 4, 2)).astype(np.float32)


# ---- creation -------------------------------------------------------------------------

@pytest.mark.parametrize("fn,np_fn,dtype", [
    (lambda: snp.zeros((2, 3)), lambda: np.zeros((2, 3), np.float32), None),
    (lambda: snp.ones(4, dtype=snp.int8), lambda: np.ones(4, np.int8), None),
    (lambda: snp.full((2,), 7), lambda: np.full((2,), 7, np.int64), None),
    (lambda: snp.full((2,), 1.5, dtype="bfloat16"),
     lambda: np.full((2,), 1.5, ml_dtypes.bfloat16), None),
    (lambda: snp.arange(5), lambda: np.arange(5, dtype=np.int64), None),
    (lambda: snp.arange(1, 10, 3), lambda: np.arange(1, 10, 3, dtype=np.int64), None),
    (lambda: snp.arange(0.0, 1.0, 0.25), lambda: np.arange(0, 1, 0.25, dtype=np.float32), None),
    (lambda: snp.linspace(0, 1, 5), lambda: np.linspace(0, 1, 5, dtype=np.float32), None),
    (lambda: snp.eye(3, 4, k=1), lambda: np.eye(3, 4, k=1, dtype=np.float32), None),
    (lambda: snp.identity(2, dtype=snp.int32), lambda: np.identity(2, np.int32), None),
])
def test_creation(fn, np_fn, dtype):
    check_three_ways(fn, np_fn)


def test_like_functions_and_asarray():
    check_three_ways(lambda x: snp.zeros_like(x), np.zeros_like, M)
    check_three_ways(lambda x: snp.full_like(x, 3), lambda x: np.full_like(x, 3), M)
    check_three_ways(lambda x: snp.ones_like(x, dtype=snp.int16),
                     lambda x: np.ones_like(x, np.int16), M)
    t = snp.asarray([[1, 2], [3, 4]])
    assert t.dtype is dt.int64 and t.shape == (2, 2)
    assert snp.asarray([1.5]).dtype is dt.float32  # Python floats default to float32
    assert snp.asarray(np.float64(2.0)).dtype is dt.float64  # NumPy data keeps its dtype
    assert snp.asarray(3).weak and not snp.asarray(np.int32(3)).weak


# ---- broadcasting and promotion ---------------------------------------------------------

@pytest.mark.parametrize("sx,sy", [((3,), ()), ((2, 1), (1, 3)), ((4, 1, 5), (3, 1)),
                                   ((1,), (2, 3)), ((0, 3), (1, 3))])
def test_broadcasting_binary_ops(sx, sy):
    x = rng.normal(size=sx).astype(np.float32)
    y = rng.normal(size=sy).astype(np.float32)
    check_three_ways(lambda a, b: a * b + a, lambda a, b: a * b + a, x, y)


def test_broadcast_to_and_broadcast_arrays():
    check_three_ways(lambda x: snp.broadcast_to(x, (2, 3, 4)),
                     lambda x: np.broadcast_to(x, (2, 3, 4)), V)
    check_three_ways(lambda x, y: snp.broadcast_arrays(x, y),
                     lambda x, y: list(np.broadcast_arrays(x, y)), V[:3, None], V)
    assert snp.broadcast_shapes((2, 1), (3,)) == (2, 3)


@pytest.mark.parametrize("a,b,want", [  # JAX's lattice (all pairs: test_weak_types.py)
    ("int8", "int16", "int16"), ("int8", "uint8", "int16"), ("uint32", "int32", "int64"),
    ("int64", "uint64", "float32"), ("int32", "float32", "float32"),
    ("int8", "float16", "float16"), ("uint8", "bfloat16", "bfloat16"),
    ("float16", "bfloat16", "float32"), ("float32", "float64", "float64"),
    ("float64", "complex64", "complex128"), ("bool", "int8", "int8"),
    ("bool", "float16", "float16"), ("float32", "complex64", "complex64"),
])
def test_promotion_table(a, b, want):
    x = np.ones(2, dt.dtype(a).np)
    y = np.ones(2, dt.dtype(b).np)
    out = run_three_ways(lambda p, q: p + q, x, y)
    for path, r in out.items():
        assert r.dtype == dt.dtype(want).np, (path, a, b, r.dtype)
    assert snp.result_type(dt.dtype(a), dt.dtype(b)) is dt.dtype(want)


@pytest.mark.parametrize("d,scalar,want", [
    ("float16", 1.5, "float16"), ("int8", 3, "int8"), ("uint8", 3, "uint8"),
    ("int32", 1.5, "float32"), ("bfloat16", 2, "bfloat16"), ("float32", 1j, "complex64"),
    ("float64", 1j, "complex128"), ("bool", 1, "int64"), ("bool", True, "bool"),
])
def test_python_scalars_are_weak(d, scalar, want):
    x = np.ones(3, dt.dtype(d).np)
    out = run_three_ways(lambda t: t * scalar, x)
    for path, r in out.items():
        assert r.dtype == dt.dtype(want).np, (path, d, scalar, r.dtype)
        np.testing.assert_allclose(r.astype(np.complex128), (x * scalar).astype(np.complex128),
                                   rtol=1e-2)


def test_weak_scalar_as_jit_argument_keeps_tensor_dtype():
    f = stablejit.jit(lambda x, s: x * s)
    x = snp.asarray(np.ones(3, np.float16))
    assert f(x, 2.0).dtype is dt.float16
    assert f(x, 3.0).dtype is dt.float16 and f.traces == 1  # same signature: no retrace


# ---- reductions -----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "var", "std"])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (1, True), ((0, 2), False),
                                           (-1, True)])
def test_reductions(name, axis, keepdims):
    check_three_ways(lambda x: getattr(snp, name)(x, axis=axis, keepdims=keepdims),
                     lambda x: getattr(np, name)(x, axis=axis, keepdims=keepdims), A)


def test_integer_and_boolean_reductions():
    x = rng.integers(-3, 4, (3, 4)).astype(np.int8)
    b = x > 0
    check_three_ways(lambda t: snp.sum(t, axis=1), lambda t: np.sum(t, axis=1), x, dtype="int64")
    check_three_ways(lambda t: snp.all(t, axis=0), lambda t: np.all(t, axis=0), b)
    check_three_ways(lambda t: snp.any(t), lambda t: np.any(t), b)
    check_three_ways(lambda t: snp.argmax(t, axis=1), lambda t: np.argmax(t, axis=1), x,
                     check_dtype=False)
    check_three_ways(lambda t: snp.argmin(t), lambda t: np.argmin(t), M, check_dtype=False)


# ---- linear algebra -------------------------------------------------------------------

@pytest.mark.parametrize("fn,np_fn,args", [
    (snp.matmul, np.matmul, (M, N)),
    (snp.matmul, np.matmul, (M, V)),
    (snp.matmul, np.matmul, (V, N)),
    (snp.matmul, np.matmul, (A, N)),
    (lambda a, b: a @ b, lambda a, b: a @ b, (A, A.transpose(0, 2, 1))),
    (snp.dot, np.dot, (V, V)),
    (snp.dot, np.dot, (M, N)),
    (lambda a, b: snp.tensordot(a, b, axes=1), lambda a, b: np.tensordot(a, b, axes=1), (M, N)),
    (lambda a, b: snp.tensordot(a, b, axes=([1, 2], [0, 1])),
     lambda a, b: np.tensordot(a, b, axes=([1, 2], [0, 1])), (A, B3)),
    (lambda a, b: snp.einsum("ij,jk->ik", a, b), lambda a, b: np.einsum("ij,jk->ik", a, b),
     (M, N)),
    (lambda a: snp.einsum("bij->bji", a), lambda a: np.einsum("bij->bji", a), (A,)),
    (lambda a: snp.einsum("ij->j", a), lambda a: np.einsum("ij->j", a), (M,)),
    (lambda a, b: snp.einsum("bij,bjk->bik", a, b),
     lambda a, b: np.einsum("bij,bjk->bik", a, b), (A, A.transpose(0, 2, 1))),
    (lambda a, b: snp.einsum("i,j->ij", a, b), lambda a, b: np.einsum("i,j->ij", a, b), (V, V)),
    (snp.outer, np.outer, (V, V)),
    (snp.inner, np.inner, (M, M)),
])
def test_linear_algebra(fn, np_fn, args):
    check_three_ways(fn, np_fn, *args, rtol=1e-4, atol=1e-5)


def test_integer_matmul_is_exact():
    x = rng.integers(-5, 5, (3, 4)).astype(np.int32)
    check_three_ways(snp.matmul, np.matmul, x, x.T.copy())


# ---- manipulation ---------------------------------------------------------------------

@pytest.mark.parametrize("fn,np_fn", [
    (lambda x: snp.reshape(x, (4, 6)), lambda x: np.reshape(x, (4, 6))),
    (lambda x: snp.reshape(x, (-1, 2)), lambda x: np.reshape(x, (-1, 2))),
    (lambda x: x.reshape(6, 4), lambda x: x.reshape(6, 4)),
    (lambda x: snp.transpose(x), lambda x: np.transpose(x)),
    (lambda x: snp.transpose(x, (1, 0, 2)), lambda x: np.transpose(x, (1, 0, 2))),
    (lambda x: x.T, lambda x: x.T),
    (lambda x: snp.concatenate([x, x * 2], axis=1), lambda x: np.concatenate([x, x * 2], 1)),
    (lambda x: snp.concatenate([x, x], axis=-1), lambda x: np.concatenate([x, x], -1)),
    (lambda x: snp.stack([x, x + 1], axis=0), lambda x: np.stack([x, x + 1], 0)),
    (lambda x: snp.stack([x, x + 1], axis=-1), lambda x: np.stack([x, x + 1], -1)),
    (lambda x: snp.expand_dims(x, 1), lambda x: np.expand_dims(x, 1)),
    (lambda x: snp.expand_dims(x, -1), lambda x: np.expand_dims(x, -1)),
    (lambda x: snp.squeeze(x[:1]), lambda x: np.squeeze(x[:1])),
    (lambda x: snp.squeeze(x[:, :1], axis=1), lambda x: np.squeeze(x[:, :1], axis=1)),
    (lambda x: snp.broadcast_to(x[:1], (3, 3, 4)), lambda x: np.broadcast_to(x[:1], (3, 3, 4))),
    (lambda x: snp.flip(x, 1), lambda x: np.flip(x, 1)),
    (lambda x: snp.swapaxes(x, 0, 2), lambda x: np.swapaxes(x, 0, 2)),
    (lambda x: snp.moveaxis(x, 0, -1), lambda x: np.moveaxis(x, 0, -1)),
    (lambda x: snp.ravel(x), lambda x: np.ravel(x)),
])
def test_manipulation(fn, np_fn):
    check_three_ways(fn, np_fn, A)


# ---- indexing -------------------------------------------------------------------------

X = np.arange(60, dtype=np.float32).reshape(3, 4, 5)


@pytest.mark.parametrize("index", [
    1, -1, (0, 2), (-1, -2, -3), slice(1, None), slice(None, None, 2), slice(None, None, -1),
    (slice(None), slice(3, 0, -2)), (Ellipsis, 1), (None, 0), (0, None, Ellipsis, None),
    (slice(-2, None), Ellipsis, slice(None, None, -3)), (1, slice(1, 3), -1),
    (Ellipsis,), (slice(5, 10),),
])
def test_basic_indexing(index):
    check_three_ways(lambda x: x[index], lambda x: x[index], X)


def test_scalar_tensor_index_under_jit():
    for i in (0, 2, -1):
        check_three_ways(lambda x, j: x[j], lambda x, j: x[j], X, np.asarray(i, np.int32))
        check_three_ways(lambda x, j: x[1, j], lambda x, j: x[1, j], X, np.asarray(i, np.int64))
    f = stablejit.jit(lambda x, j: x[j])
    x = snp.asarray(X)
    f(x, snp.asarray(np.int32(0)))
    np.testing.assert_array_equal(f(x, snp.asarray(np.int32(2))).numpy(), X[2])
    assert f.traces == 1


def test_boolean_and_integer_array_indexing_outside_jit():
    x = snp.asarray(X)
    np.testing.assert_array_equal(x[snp.asarray(X > 30)].numpy(), X[X > 30])
    np.testing.assert_array_equal(x[np.array([2, 0])].numpy(), X[[2, 0]])


def test_index_out_of_bounds_is_an_index_error():
    with pytest.raises(IndexError, match="out of bounds"):
        snp.asarray(X)[3]
    with pytest.raises(IndexError, match="too many indices"):
        snp.asarray(X)[0, 0, 0, 0]


# ---- Tensor conveniences --------------------------------------------------------------

@pytest.mark.host_default
def test_tensor_repr_names_type_and_backend():
    x = snp.asarray(np.arange(3, dtype=np.float32))
    assert repr(x).startswith("Tensor<f32[3] xla:host:0>")
    assert "[0., 1., 2.]" in repr(x)
    with stablejit.default_backend("reference"):
        r = snp.asarray(np.zeros((2, 2), np.int8))
    assert repr(r).startswith("Tensor<i8[2,2] reference>")
    seen = []
    stablejit.jit(lambda t: seen.append(repr(t)) or t)(x)
    assert seen == ["Tensor<f32[3] traced>"]


def test_item_tolist_array_and_astype():
    x = snp.asarray(np.array([[1.5, -2.0]], np.float32))
    assert x[0, 1].item() == -2.0 and isinstance(x[0, 0].item(), float)
    assert x.tolist() == [[1.5, -2.0]]
    a = np.asarray(x)
    assert a.dtype == np.float32 and a.shape == (1, 2)
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    assert float(x[0, 0]) == 1.5 and int(snp.asarray(7)) == 7 and bool(snp.asarray(True))
    check_three_ways(lambda t: t.astype(snp.int32), lambda t: t.astype(np.int32), M * 3)
    check_three_ways(lambda t: t.astype("bfloat16"), lambda t: t.astype(ml_dtypes.bfloat16), M)
    check_three_ways(lambda t: t.astype(snp.bool), lambda t: t.astype(bool), M)
    check_three_ways(lambda t: snp.astype(t, snp.complex64), lambda t: t.astype(np.complex64),
                     M)
    with pytest.raises(ValueError, match="one element"):
        x.item()


@pytest.mark.parametrize("axis", [(0, 0), (0, -3), (1, -2), (-1, 2)])
def test_expand_dims_refuses_a_repeated_axis_as_numpy(axis):
    with pytest.raises(ValueError):
        np.expand_dims(np.ones(3), axis)
    with pytest.raises(ValueError, match="repeated axis"):
        snp.expand_dims(snp.ones(3), axis)


# matmul's common case (strong tensors of one dtype, one or two axes each) skips the
# general steps: it must record and answer exactly as they do (an explicit precision
# takes the general steps: the configured default's, "default" where none is set, as a
# GPU run of the suite sets "highest", tests/conftest.py)
_MATMUL_SHAPES = [((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)), ((2, 3), (3, 4)),
                  ((2, 3), (4, 4)), ((1, 2, 3), (3, 2))]


@pytest.mark.parametrize("xs, ys", _MATMUL_SHAPES, ids=[f"{a}@{b}" for a, b in _MATMUL_SHAPES])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32", "complex64",
                                   "bool", "float32 @ float16"])
@pytest.mark.parametrize("where", ["eager", "lazy", "jit"])
def test_matmul_common_case_is_the_general_product(xs, ys, dtype, where):
    rng = np.random.default_rng(0)

    def make(shape, d):
        a = rng.standard_normal(shape) * 3
        if d == "bool":
            return snp.asarray(a > 0)
        return snp.asarray(a.astype(ml_dtypes.bfloat16 if d == "bfloat16" else d))
    dx, _, dy = dtype.partition(" @ ")
    x, y = make(xs, dx), make(ys, dy or dx)

    def both(a, b):
        out = []
        configured = stablejit.config.default_matmul_precision or "default"
        for f in (lambda: a @ b, lambda: snp.matmul(a, b, precision=configured)):
            try:
                out.append(f())
            except Exception as e:  # the same error, with the user's line, either way
                out.append((type(e), str(e).split("\n")[0]))
        return out

    if where == "jit" and not isinstance(both(x, y)[0], tuple):
        results = stablejit.jit(both)(x, y)
    elif where == "lazy":
        with stablejit.lazy() as b:
            results = both(x, y)
            ops = [e for e in b._tape if e[0] != "param"]
        # the same entries twice (both products), or none (both raised), where the
        # common case applies (a batched, mixed or boolean product is general either
        # way, and its second broadcast or conversion has other slots)
        assert len(xs) > 2 or dy or dx == "bool" or ops[:len(ops) // 2] == ops[len(ops) // 2:]
    else:
        results = both(x, y)
    a, b = results
    if isinstance(a, tuple):
        assert a == b
        return
    assert a.type == b.type and a.weak == b.weak
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b), strict=True)
