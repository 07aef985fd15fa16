"""Writable tensors: x[index] = value and x op= y, against NumPy, on the eager XLA
backend, the reference backend and inside jit (where the traced tensor is rebound)."""

from __future__ import annotations

import operator

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

from tests.support.runners import check_three_ways, to_backend

A = np.arange(24, dtype=np.float32).reshape(4, 6) - 7.5


def _np_set(index, value):
    def f(a):
        a = a.copy()
        a[index] = value
        return a
    return f


def _sj_set(index, value):
    def f(x):
        x[index] = value
        return x
    return f


# (index, value): every indexing form the array API lists for setitem, with broadcasting
CASES = [
    ((1, 2), 5.0),
    ((-1, -1), 5.0),
    (2, 9.0),
    ((slice(1, 3), slice(None, None, 2)), -1.0),
    ((slice(None, None, -2), 0), np.asarray([1.0, 2.0], np.float32)),
    ((slice(3, 0, -1), slice(5, None, -2)), np.arange(9, dtype=np.float32).reshape(3, 3)),
    ((Ellipsis, 1), np.arange(4, dtype=np.float32)),
    ((1, Ellipsis), np.arange(6, dtype=np.float32)),
    ((None, 2), np.arange(6, dtype=np.float32)),
    ((slice(None), None, 3), np.asarray([[1.0], [2.0], [3.0], [4.0]], np.float32)),
    ((), 1.5),
    (Ellipsis, np.arange(6, dtype=np.float32)),  # a row broadcast to every row
    (np.asarray([0, 2]), 3.0),
    ((np.asarray([0, 3, 1]), np.asarray([5, 0, 2])), np.asarray([1.0, 2.0, 3.0], np.float32)),
    ((slice(None), np.asarray([4, 0])), np.asarray([7.0, 8.0], np.float32)),
    ((np.asarray([[0], [2]]), np.asarray([1, 4])), 6.0),
    (np.asarray([-1, -4]), np.arange(6, dtype=np.float32)),
    (True, 2.0),
    (False, 2.0),
    ((0, False), 2.0),
]


@pytest.mark.parametrize("index, value", CASES, ids=[repr(c[0]) for c in CASES])
def test_setitem_matches_numpy(index, value):
    check_three_ways(_sj_set(index, value), _np_set(index, value), A)


@pytest.mark.parametrize("value, dtype", [(2.7, np.int32), (-2.7, np.int64), (3, np.float32),
                                          (1.0, np.bool_), (0, np.bool_), (255, np.uint8),
                                          # a complex into a bool tensor: value != 0, as
                                          # NumPy (it raised, as it must for numbers)
                                          (2j, np.bool_), (0j, np.bool_), (1 + 1j, np.bool_)])
def test_value_is_cast_to_the_tensor_dtype_as_numpy_does(value, dtype):
    a = np.arange(6).astype(dtype)
    check_three_ways(_sj_set(slice(1, 3), value), _np_set(slice(1, 3), value), a)


def test_a_tensor_value_of_another_dtype_is_cast():
    a = np.arange(6, dtype=np.int32)
    v = np.asarray([1.9, -1.9], np.float64)
    check_three_ways(lambda x, v: _sj_set(slice(0, 2), v)(x), lambda a, v: _np_set(
        slice(0, 2), v)(a), a, v)


def test_boolean_mask_eagerly():
    for path in ("eager", "reference"):
        x = to_backend(A.copy(), path)
        m = A > 3
        x[m] = -1.0
        want = A.copy()
        want[m] = -1.0
        np.testing.assert_array_equal(x.numpy(), want)
        # a mask over the leading axis with a row of values
        x = to_backend(A.copy(), path)
        rows = np.asarray([True, False, True, False])
        x[snp.asarray(rows)] = np.arange(6, dtype=np.float32)
        want = A.copy()
        want[rows] = np.arange(6, dtype=np.float32)
        np.testing.assert_array_equal(x.numpy(), want)


def test_boolean_mask_with_a_scalar_compiles():
    """x[mask] = scalar has no data-dependent shape (it is where(mask, scalar, x))."""
    def f(x):
        x[x > 3] = 0.0
        x[x[:, 0] < -5] = 1.0  # a mask over the leading axis
        return x
    def g(a):
        a = a.copy()
        a[a > 3] = 0.0
        a[a[:, 0] < -5] = 1.0
        return a
    check_three_ways(f, g, A)


def test_later_uses_inside_jit_see_the_update():
    def f(x):
        y = x * 2
        x[0] = 100.0
        return x + 1, y
    check_three_ways(f, lambda a: (_np_set(0, 100.0)(a) + 1, a * 2), A)


def test_every_reference_sees_the_update():
    x = snp.asarray(A)
    alias = x
    x[1, 1] = 42.0
    assert float(alias[1, 1]) == 42.0


def test_a_copy_is_not_updated():
    x = snp.asarray(A)
    for copy in (snp.asarray(x, copy=True), snp.astype(x, snp.float32), x.astype("float32")):
        copy[0, 0] = 42.0
        assert float(x[0, 0]) == A[0, 0]

    @stablejit.jit
    def f(x):
        y = snp.asarray(x, copy=True)
        y[0, 0] = 42.0
        return x, y
    x, y = f(snp.asarray(A))
    assert float(x[0, 0]) == A[0, 0] and float(y[0, 0]) == 42.0


def test_values_that_do_not_broadcast_raise():
    x = snp.asarray(A)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        x[0] = np.ones(5, np.float32)
    np.testing.assert_array_equal(x.numpy(), A)  # unchanged


def test_writing_a_traced_value_into_an_outer_tensor_reaches_it_as_eagerly():
    outer = snp.asarray(A)

    @stablejit.jit
    def f(v):
        outer[0, 0] = v
        return v
    f(snp.asarray(1.0))
    want = A.copy()
    want[0, 0] = 1.0
    np.testing.assert_array_equal(outer.numpy(), want)


# a body of control flow that writes into a tensor from outside it: every construct, the
# tensor closed over, an argument of the jitted function around it or a view of one; the
# error says to carry the tensor in the construct's state (it said "pass x to the jitted
# function as an argument", which it already was)
CONSTRUCTS = {
    "cond": lambda body, v: stablejit.cond(v > 0, body, lambda v: v, v),
    "fori_loop": lambda body, v: stablejit.fori_loop(0, 2, lambda i, v: body(v), v),
    "while_loop": lambda body, v: stablejit.while_loop(lambda v: v < 3, body, v),
    "scan": lambda body, v: stablejit.scan(lambda c, _: (body(c), c), v, None, length=2)[0],
}


@pytest.mark.parametrize("target", ["closure", "argument", "view of an argument"])
@pytest.mark.parametrize("construct", CONSTRUCTS)
def test_writing_into_an_outer_tensor_from_a_control_flow_body_raises(construct, target):
    outer = snp.asarray(A)

    def f(v, arg):
        dest = {"closure": outer, "argument": arg, "view of an argument": arg[1]}[target]

        def body(v):
            dest[0, ...] = v
            return v + 1.0
        return CONSTRUCTS[construct](body, v)
    for run in (f, stablejit.jit(f)):
        arg = snp.asarray(A)
        with pytest.raises(TypeError, match=r"control-flow body.*carry the tensor in the "
                                            r"construct's state.*\.at\[index\]\.set"):
            run(snp.asarray(1.0), arg)
        np.testing.assert_array_equal(arg.numpy(), A)
    np.testing.assert_array_equal(outer.numpy(), A)


# ---- in-place operators -----------------------------------------------------------------

def _inplace(op):
    """(stablejit fn, NumPy fn) for x op= y; NumPy's gets a copy (it writes in place)."""
    f = getattr(operator, op)
    return (lambda x, y: f(x, y)), (lambda a, b: f(a.copy(), b))


@pytest.mark.parametrize("op", ["iadd", "isub", "imul", "itruediv", "ifloordiv", "imod",
                                "ipow"])
def test_inplace_float_operators_match_numpy(op):
    base = np.abs(A) if op == "ipow" else A  # real powers of negative numbers are NaN
    check_three_ways(*_inplace(op), base, np.full(6, 1.5, np.float32), rtol=1e-6)


@pytest.mark.parametrize("op", ["iand", "ior", "ixor", "ilshift", "irshift", "iadd", "imul",
                                "ifloordiv"])
def test_inplace_integer_operators_match_numpy(op):
    check_three_ways(*_inplace(op), np.arange(12, dtype=np.int32).reshape(3, 4),
                     np.asarray([1, 2, 3, 1], np.int32))


def test_inplace_matmul_keeps_the_shape():
    m = np.eye(6, dtype=np.float32) * 2
    check_three_ways(*_inplace("imatmul"), A, m)


def test_inplace_operator_rebinds_the_name_and_keeps_the_dtype():
    """As JAX's immutable arrays, on a tensor that is no view: `old = x; x += y` leaves
    old as it was (numpy/_inplace.py; a view is written through, test_views.py)."""
    x = snp.asarray(np.ones(3, np.float32))
    old = x
    x += np.ones(3, np.float64)  # NumPy: same_kind, stays float32
    assert old is not x and x.dtype == snp.float32
    np.testing.assert_array_equal(x.numpy(), [2, 2, 2])
    np.testing.assert_array_equal(old.numpy(), [1, 1, 1])
    i = snp.asarray(np.ones(3, np.int8))
    i += snp.asarray(np.ones(3, np.int32))
    assert i.dtype == snp.int8


@pytest.mark.parametrize("op", ["iadd", "imul", "itruediv"])
def test_inplace_operator_that_would_change_an_int_dtype_raises(op):
    x = snp.arange(3)
    with pytest.raises(TypeError, match=r"cannot be stored in x's dtype int64"):
        getattr(operator, op)(x, 1.5)
    np.testing.assert_array_equal(x.numpy(), [0, 1, 2])
    with pytest.raises(TypeError):  # NumPy refuses too
        getattr(operator, op)(np.arange(3), 1.5)


def test_inplace_operator_that_would_change_the_shape_raises():
    x = snp.ones(3)
    with pytest.raises(ValueError, match=r"cannot change x's shape"):
        x += snp.ones((2, 3))


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
def test_inplace_operator_on_an_outer_tensor_rebinds_the_name_with_and_without_jit(jitted):
    outer = snp.ones(3)

    def f(v):
        y = outer
        y += v
        return y
    g = stablejit.jit(f) if jitted else f
    np.testing.assert_array_equal(np.asarray(g(snp.asarray(2.0))), [3, 3, 3])
    np.testing.assert_array_equal(outer.numpy(), [1, 1, 1])
    view = outer[:]

    def h(v):
        w = view
        w += v  # a view: written through to outer, with and without jit
        return w
    k = stablejit.jit(h) if jitted else h
    np.testing.assert_array_equal(np.asarray(k(snp.asarray(2.0))), [3, 3, 3])
    np.testing.assert_array_equal(outer.numpy(), [3, 3, 3])


# ---- scalar boolean indices (reads) -------------------------------------------------------

@pytest.mark.parametrize("index", [True, False, (0, False), (Ellipsis, True),
                                   (None, False, slice(1, 3)), (1, True, 2)],
                         ids=repr)
def test_scalar_boolean_index_reads_match_numpy(index):
    check_three_ways(lambda x: x[index], lambda a: a[index], A)
    m = index if isinstance(index, bool) else None
    if m is not None:  # a 0-d boolean tensor works like the Python bool
        np.testing.assert_array_equal(snp.asarray(A)[snp.asarray(m)].numpy(), A[np.asarray(m)])


@pytest.mark.parametrize("name", ["abs", "floor", "ceil", "trunc", "round", "clip", "conj",
                                  "nan_to_num", "positive"])
@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.bool_])
def test_functions_numpy_gives_a_new_array_for_never_alias_their_input(name, dtype):
    """Where the function is the identity on the dtype (floor of ints...), writing into
    the result must not write into the input, as in NumPy."""
    x = snp.asarray(np.ones(3, dtype))
    try:
        y = getattr(snp, name)(x)
    except TypeError:  # the function does not take this dtype
        return
    assert y is not x
    y[0] = 0
    assert x.numpy()[0] == 1


def test_jitted_functions_see_writes_into_tensors_they_read():
    """A trace bakes values it reads (embedded constants, ops computed while tracing, host
    reads like int(t)) into its program; a write into such a tensor makes it retrace."""
    small, big, n = snp.ones(3), snp.ones(5000), snp.asarray(2)
    f = stablejit.jit(lambda x: x + small)
    g = stablejit.jit(lambda x: x + big[:3])
    h = stablejit.jit(lambda x: x[: int(n)])
    c = stablejit.jit(lambda x: stablejit.cond(x[0] > 0, lambda v: v + big[:3],
                                               lambda v: v, x))
    z = snp.zeros(3)
    assert [f(z).tolist(), g(z).tolist(), h(z).tolist(), c(z + 1).tolist()] == [
        [1, 1, 1], [1, 1, 1], [0, 0], [2, 2, 2]]
    small[0] = 10.0
    big[0] = 10.0
    n += 1
    assert [f(z).tolist(), g(z).tolist(), h(z).tolist(), c(z + 1).tolist()] == [
        [10, 1, 1], [10, 1, 1], [0, 0, 0], [11, 2, 2]]
    traces = f.traces
    f(z)
    assert f.traces == traces  # no write since: the cached program is used


def test_writes_into_tensors_no_trace_read_keep_jit_caches():
    f = stablejit.jit(lambda x: x * 2)
    x = snp.ones(3)
    f(x)
    traces = f.traces
    x[0] = 5.0  # an argument, not something the trace read
    assert f(x).tolist() == [10, 2, 2] and f.traces == traces


@pytest.mark.parametrize("dtype, value, error", [
    (np.int64, 1 + 2j, TypeError), (np.float32, 1j, TypeError), (np.int32, float("nan"),
                                                                   ValueError),
    (np.int64, float("inf"), OverflowError), (np.uint8, -1, OverflowError),
    (np.int8, 128, OverflowError)])
def test_python_scalars_numpy_refuses_to_store_raise_the_same_error(dtype, value, error):
    a = np.zeros(3, dtype)
    with pytest.raises(error):
        a[0] = value
    x = snp.asarray(a)
    with pytest.raises(error, match="cannot store|out of bounds"):
        x[0] = value
    np.testing.assert_array_equal(x.numpy(), a)
