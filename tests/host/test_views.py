"""Views and writes through aliases, against NumPy: every view-producing function x every
kind of write x every alias read back, run eagerly, on the reference backend, lazily and
inside jit (the write inside the jitted function, and a view made outside written
inside). NumPy's answer is the specification."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from hypothesis import given, settings
from hypothesis import strategies as st

BASE = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

# name -> view of a (xp is numpy or stablejit.numpy); each is a view in NumPy
VIEWS = {
    "slice": lambda xp, a: a[1:],
    "step": lambda xp, a: a[:, ::2, 1:],
    "negative step": lambda xp, a: a[::-1, :, ::-2],
    "integer": lambda xp, a: a[1],
    "integers": lambda xp, a: a[1, 2],
    "ellipsis": lambda xp, a: a[..., 1],
    "newaxis": lambda xp, a: a[None, :, 1:, None],
    "whole": lambda xp, a: a[:, :],
    ".T": lambda xp, a: a.T,
    "transpose": lambda xp, a: xp.transpose(a, (1, 0, 2)),
    "permute_dims": lambda xp, a: xp.permute_dims(a, (2, 0, 1)),
    "swapaxes": lambda xp, a: xp.swapaxes(a, 0, 2),
    "moveaxis": lambda xp, a: xp.moveaxis(a, 0, -1),
    ".mT": lambda xp, a: a.mT,
    "reshape": lambda xp, a: xp.reshape(a, (6, 4)),
    "ravel": lambda xp, a: xp.ravel(a),
    "expand_dims": lambda xp, a: xp.expand_dims(a, 1),
    "squeeze": lambda xp, a: xp.squeeze(a[:1]),
    "chain": lambda xp, a: a[1:][0].T[::2],
    "reshape of a slice": lambda xp, a: xp.reshape(a[1], (12,)),
    "method reshape": lambda xp, a: a[:, 1:].reshape(2, 2, 4),
    # functions NumPy answers with views (they gave copies: writes did not reach a)
    "flip": lambda xp, a: xp.flip(a),
    "flip axes": lambda xp, a: xp.flip(a, (0, 2)),
    "fliplr": lambda xp, a: xp.fliplr(a),
    "flipud": lambda xp, a: xp.flipud(a),
    "rot90": lambda xp, a: xp.rot90(a),
    "rot90 twice": lambda xp, a: xp.rot90(a, 2),
    "rot90 back, other axes": lambda xp, a: xp.rot90(a, -1, (2, 1)),
    "split": lambda xp, a: xp.split(a, 2, axis=2)[1],
    "array_split": lambda xp, a: xp.array_split(a, 2, axis=1)[1],
    "array_split at indices": lambda xp, a: xp.array_split(a, [3, 1], axis=2)[2],
    "hsplit": lambda xp, a: xp.hsplit(a, 3)[2],
    "vsplit": lambda xp, a: xp.vsplit(a, 2)[0],
    "dsplit": lambda xp, a: xp.dsplit(a, [1])[1],
    "unstack": lambda xp, a: xp.unstack(a, axis=1)[2],
    "atleast_2d": lambda xp, a: xp.atleast_2d(a[0, 1]),
    "atleast_3d": lambda xp, a: xp.atleast_3d(a[1]),
    "rollaxis": lambda xp, a: xp.rollaxis(a, 2),
    "flip of a transpose": lambda xp, a: xp.flip(a.T, 1)[::2],
}


def _sibling(xp, a):
    return a[:, 1]


def _write_view(xp, a, v, s):
    v[(0,) * v.ndim] = 100.0
    v[..., -1] = -1.0


def _write_base(xp, a, v, s):
    a[...] = a * 2 + 1


def _write_sibling(xp, a, v, s):
    s[...] = -5.0


def _inplace_view(xp, a, v, s):
    v += 1000.0


def _inplace_sibling(xp, a, v, s):
    s *= 3.0


WRITES = {"into view": _write_view, "into base": _write_base,
          "into sibling": _write_sibling, "+= on view": _inplace_view,
          "*= on sibling": _inplace_sibling}


def scenario(view, write):
    def run(xp, a):
        v = VIEWS[view](xp, a)
        s = _sibling(xp, a)
        WRITES[write](xp, a, v, s)
        return a, v, s
    return run


def _numpy(view, write):
    return tuple(np.array(r) for r in scenario(view, write)(np, BASE.copy()))


def _check(got, want):
    for g, w, name in zip(got, want, ("base", "view", "sibling"), strict=True):
        np.testing.assert_array_equal(np.asarray(g), w, err_msg=f"read through the {name}")


CASES = [(v, w) for v in VIEWS for w in WRITES]


@pytest.mark.parametrize("view,write", CASES)
def test_eager_matches_numpy(view, write):
    _check(scenario(view, write)(snp, snp.asarray(BASE)), _numpy(view, write))


@pytest.mark.parametrize("view,write", CASES)
def test_reference_backend_matches_numpy(view, write):
    with stablejit.default_backend("reference"):
        _check(scenario(view, write)(snp, snp.asarray(BASE)), _numpy(view, write))


@pytest.mark.parametrize("view,write", CASES)
def test_lazy_matches_numpy(view, write):
    with stablejit.lazy():
        got = scenario(view, write)(snp, snp.asarray(BASE))
    _check(got, _numpy(view, write))


@pytest.mark.parametrize("view,write", CASES)
def test_inside_jit_matches_numpy_and_reaches_the_caller(view, write):
    a = snp.asarray(BASE)
    got = stablejit.jit(lambda a: scenario(view, write)(snp, a))(a)
    want = _numpy(view, write)
    _check(got, want)
    np.testing.assert_array_equal(np.asarray(a), want[0])


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
def test_view_made_outside_written_inside_a_function(view, jitted):
    """f writes into its argument, a view: the base sees it, with and without jit."""
    def f(v):
        v[(0,) * v.ndim] = 100.0
        v += 1.0
        return v.sum()
    g = stablejit.jit(f) if jitted else f
    a = snp.asarray(BASE)
    v = VIEWS[view](snp, a)
    s = _sibling(snp, a)
    out = g(v)
    want_a = BASE.copy()
    want_v = VIEWS[view](np, want_a)
    want_out = f(want_v)
    np.testing.assert_allclose(float(out), float(want_out))
    _check((a, v, s), (want_a, want_v, _sibling(np, want_a)))


@pytest.mark.parametrize("donate", [False, True])
def test_jit_writes_into_arguments_and_closures_as_eagerly(donate):
    outer = snp.zeros(3)

    def f(x, y):
        x[0] = 7.0
        y[1:] += x[0]
        outer[2] = y[2]
        return x.sum() + y.sum()
    results = []
    for run in (f, stablejit.jit(f, donate_argnums=(0,) if donate else ())):
        outer[...] = 0.0
        x, y = snp.zeros(3), snp.ones(4)
        out = run(x, y)
        results.append((float(out), x.numpy(), y.numpy(), outer.numpy()))
    (o1, *arrays1), (o2, *arrays2) = results
    assert o1 == o2
    for a1, a2 in zip(arrays1, arrays2, strict=True):
        np.testing.assert_array_equal(a1, a2)
    np.testing.assert_array_equal(results[0][2], [1, 8, 8, 8])
    np.testing.assert_array_equal(results[0][3], [0, 0, 8])


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
def test_inplace_operators_write_through_views_and_rebind_other_names(jitted):
    """`x op= y` writes into the memory a view shares (NumPy); on a tensor that is no
    view it binds the name to a new tensor, and other names keep the old value (JAX):
    the same with and without jit, whether the view is made inside or passed in."""
    def f(a, v):
        kept = a
        a += 1.0          # a is no view: a new tensor, `kept` keeps the old value
        v += 10.0         # v is a view of the caller's base: written through
        row = kept[0]
        row *= 2.0        # a view of kept: written through to kept
        return a, kept
    g = stablejit.jit(f) if jitted else f
    base, other = snp.asarray(BASE), snp.asarray(BASE)
    a, kept = g(other, base[1])
    np.testing.assert_array_equal(np.asarray(a), BASE + 1)
    want = BASE.copy()
    want[0] *= 2
    np.testing.assert_array_equal(np.asarray(kept), want)
    np.testing.assert_array_equal(np.asarray(other), want)  # kept is the caller's tensor
    want = BASE.copy()
    want[1] += 10
    np.testing.assert_array_equal(np.asarray(base), want)


def test_the_issue_examples_give_numpys_answers():
    c = snp.zeros(4)
    d = c[1:3]
    d[0] = 5.0
    np.testing.assert_array_equal(np.asarray(c), [0, 5, 0, 0])
    a = snp.zeros((2, 3, 3))
    a[0][0, 0] = 1.0
    assert float(a[0, 0, 0]) == 1.0
    b = snp.zeros((2, 3))
    w = b[:, :]
    assert w is not b and w.base is b

    @stablejit.jit
    def f(x):
        x[0] = 7.0
        return x.sum()
    a = snp.zeros(3)
    assert float(f(a)) == 7.0
    np.testing.assert_array_equal(np.asarray(a), [7, 0, 0])
    a = snp.zeros(3)  # the cached program writes back too
    f(a)
    np.testing.assert_array_equal(np.asarray(a), [7, 0, 0])


# ---- copies, read-only views, memory questions ---------------------------------------

COPIES = {
    "integer array": lambda xp, a: a[xp.asarray([1, 0])],
    "list": lambda xp, a: a[[1, 0]],
    "mask": lambda xp, a: a[a > 5],
    "flatten": lambda xp, a: a.flatten(),
    "reshape of a transpose": lambda xp, a: xp.reshape(a.T, (24,)),
    "copy": lambda xp, a: a.copy(),
    "asarray copy": lambda xp, a: xp.asarray(a, copy=True),
    "arithmetic": lambda xp, a: a + 0,
}


@pytest.mark.parametrize("name", list(COPIES))
def test_copies_do_not_write_through(name):
    a = snp.asarray(BASE)
    c = COPIES[name](snp, a)
    c[...] = -1.0
    np.testing.assert_array_equal(np.asarray(a), BASE)
    assert not snp.shares_memory(a, c) and not snp.may_share_memory(a, c)
    assert c.base is None


@pytest.mark.parametrize("make", [lambda xp, a: xp.diagonal(a[0]),
                                  lambda xp, a: a[0].diagonal(),
                                  lambda xp, a: xp.diag(a[1], 1),
                                  lambda xp, a: xp.broadcast_to(a[0, 0], (5, 4))],
                         ids=["diagonal", "method diagonal", "diag", "broadcast_to"])
def test_read_only_views_refuse_writes_and_follow_the_base(make):
    a = snp.asarray(BASE)
    v = make(snp, a)
    with pytest.raises(ValueError, match="read-only"):
        v[...] = 0.0
    a[...] = a + 1
    np.testing.assert_array_equal(np.asarray(v), make(np, BASE + 1))


def test_real_and_imag_are_views_of_a_complex_tensor():
    z = (BASE + 1j * BASE[::-1]).astype(np.complex64)
    for name in ("real", "imag"):
        want = z.copy()
        getattr(want, name)[0, 0] = 42.0
        t = snp.asarray(z)
        part = getattr(t, name)
        part[0, 0] = 42.0
        np.testing.assert_array_equal(np.asarray(t), want)
        t2 = snp.asarray(z)
        part = getattr(snp, name)(t2)
        t2[...] = t2 * 2
        np.testing.assert_array_equal(np.asarray(part), getattr(z * 2, name))


@pytest.mark.parametrize("a_index,b_index", [
    ((slice(None), 0), (slice(None), 1)), ((0,), (1,)), ((slice(0, 2),), (slice(1, 3),)),
    ((Ellipsis, slice(None, None, 2)), (Ellipsis, slice(1, None, 2))),
    ((slice(None), slice(None), 0), (1, 1)),
])
def test_shares_memory_and_may_share_memory_answer_as_numpy(a_index, b_index):
    n = BASE.copy()
    t = snp.asarray(BASE)
    assert snp.shares_memory(t[a_index], t[b_index]) == np.shares_memory(n[a_index],
                                                                          n[b_index])
    assert snp.may_share_memory(t[a_index], t[b_index]) == np.may_share_memory(
        n[a_index], n[b_index])
    assert snp.shares_memory(t, t[a_index])
    assert not snp.shares_memory(t, snp.asarray(BASE))


# views of views: each one's layout is made from its parent's, not from the base's
# (View.layout), over transposes, strided slices, integer indices and reshapes
NESTED = {
    "slice of a transpose": lambda a: a.T[1:],
    "transpose of a slice": lambda a: a[1:].T,
    "strided slice of a strided slice": lambda a: a[:, ::2][::-1, 1:],
    "row of a transpose": lambda a: a.T[2],
    "reshape of a row, sliced": lambda a: a[1].reshape(2, 3)[:, 1:],
    "three levels": lambda a: a.T[::2][:, 1:][1],
}
GRID = np.arange(24, dtype=np.float32).reshape(4, 6)


@pytest.mark.parametrize("name", NESTED)
def test_a_view_of_a_view_shares_memory_and_reshapes_as_numpy(name):
    n, t = GRID.copy(), snp.asarray(GRID)
    nv, v = NESTED[name](n), NESTED[name](t)
    for region in [(0,), (3,), (slice(None), 0), (slice(None), 5), (slice(1, 3), slice(2, 4))]:
        assert snp.shares_memory(v, t[region]) == np.shares_memory(nv, n[region]), region
    try:
        np.reshape(nv, (-1,), copy=False)
        numpy_copies = False
    except ValueError:
        numpy_copies = True
    if numpy_copies:
        with pytest.raises(ValueError, match="without a copy"):
            snp.reshape(v, (-1,), copy=False)
    else:
        flat = snp.reshape(v, (-1,), copy=False)
        assert snp.shares_memory(flat, t)


def test_reshape_copy_false_raises_where_numpy_would_copy():
    t = snp.asarray(BASE)
    with pytest.raises(ValueError, match="without a copy"):
        snp.reshape(t.T, (24,), copy=False)
    v = snp.reshape(t[1], (12,), copy=False)
    v[0] = -3.0
    assert float(t[1, 0, 0]) == -3.0


def test_aliased_arguments_of_a_writing_jitted_function_raise():
    @stablejit.jit
    def f(x, y):
        x[0] = 1.0
        return y.sum()
    a = snp.zeros((2, 3))
    with pytest.raises(ValueError, match="share memory"):
        f(a[0], a[:, 0])
    with pytest.raises(ValueError, match="share memory"):
        f(a, a)
    np.testing.assert_array_equal(np.asarray(a), np.zeros((2, 3)))
    f(snp.zeros(3), snp.zeros(3))  # separate tensors are fine


# ---- hypothesis: chains of slices with any steps ----------------------------------------

_slices = st.tuples(st.one_of(st.none(), st.integers(-7, 7)),
                    st.one_of(st.none(), st.integers(-7, 7)),
                    st.one_of(st.none(), st.integers(-3, 3).filter(bool))).map(
    lambda t: slice(*t))


# (no subnormal value: the host's XLA code flushes them to zero, as jax's does, where
# NumPy keeps them - docs/numerics.md; this test is about where writes land)
@settings(max_examples=60, deadline=None)
@given(chain=st.lists(st.tuples(_slices, _slices), min_size=1, max_size=3),
       value=st.floats(-10, 10, width=32, allow_subnormal=False))
def test_chains_of_strided_views_write_through_as_numpy(chain, value):
    n = np.arange(42, dtype=np.float32).reshape(6, 7)
    t = snp.asarray(n)
    vn, vt = n, t
    for index in chain:
        if vn.ndim < 2:
            break
        vn, vt = vn[index], vt[index]
    if vn.size == 0:
        return
    vn[...] = vn * 2 + value
    vt[...] = vt * 2 + value
    np.testing.assert_array_equal(np.asarray(t), n)
    np.testing.assert_array_equal(np.asarray(vt), vn)


# ---- a view passed to jit keeps its layout ----------------------------------------------

# a traced argument that is a view in the caller has the view's strides, so reshape is a
# copy where NumPy's would be (a write into it stays out of the caller's base) and memory
# questions answer as eagerly (a transposed view's reshape was a view inside jit: the
# write reached the caller, where eagerly and in NumPy it did not)
PASSED_VIEWS = {
    "transpose": lambda a: a.T,
    "column": lambda a: a[:, 1],
    "strided": lambda a: a[:, ::2],
    "reversed": lambda a: a[::-1],
    "row": lambda a: a[1],
    "whole": lambda a: a[:],
    "block": lambda a: a[1:3, 2:5],
}


def _reshape_and_write(xp, v):
    r = xp.reshape(v, (-1,))
    r[0] = -7.0
    w = v.reshape(v.shape + (1,))  # always a view: writes reach the caller
    w[-1] = 100.0
    return r.sum()


def _memory_questions(xp, v):
    a = v[..., :1]
    b = v[..., 1:] if v.shape[-1] > 1 else v
    return (xp.shares_memory(a, b), xp.may_share_memory(a, b),
            xp.may_share_memory(v[:1], v[1:]))


@pytest.mark.parametrize("name", PASSED_VIEWS)
@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
def test_a_view_passed_to_jit_reshapes_and_answers_as_eagerly(name, jitted):
    n = GRID.copy()
    want_sum = _reshape_and_write(np, PASSED_VIEWS[name](n))
    want_memory = _memory_questions(np, PASSED_VIEWS[name](GRID.copy()))
    t = snp.asarray(GRID)
    f = stablejit.jit if jitted else (lambda g: g)
    got_sum = f(lambda v: _reshape_and_write(snp, v))(PASSED_VIEWS[name](t))
    got_memory = f(lambda v: _memory_questions(snp, v))(PASSED_VIEWS[name](t))
    np.testing.assert_array_equal(np.asarray(t), n)
    assert float(got_sum) == float(want_sum)
    assert tuple(bool(x) for x in got_memory) == want_memory


def test_reshape_copy_false_of_a_strided_view_raises_under_jit_as_eagerly():
    t = snp.asarray(GRID)
    f = stablejit.jit(lambda v: snp.reshape(v, (-1,), copy=False).sum())
    with pytest.raises(ValueError, match="without a copy"):
        f(t.T)
    assert float(f(t[1:3])) == GRID[1:3].sum()  # contiguous rows: a view, as in NumPy


# x[()] of a 0-d array is its value (NumPy's scalar), a copy; x[...] and x[None] are views.
# x[()] returned x itself, so a later write into x changed it
@pytest.mark.parametrize("index", [(), Ellipsis, (Ellipsis,), None, (None, Ellipsis)],
                         ids=["()", "...", "(...,)", "None", "(None, ...)"])
@pytest.mark.parametrize("way", ["eager", "lazy", "jit"])
def test_indexing_a_0d_tensor_copies_or_views_as_numpy(index, way):
    def run(xp, x):
        got = x[index]
        x[...] = 7.0
        return x, got
    n, want = run(np, np.asarray(np.float32(2.0)))
    if way == "jit":
        got = stablejit.jit(lambda x: run(snp, x))(snp.asarray(np.float32(2.0)))
    else:
        with stablejit.lazy() if way == "lazy" else contextlib.nullcontext():
            got = [np.asarray(g) for g in run(snp, snp.asarray(np.float32(2.0)))]
    np.testing.assert_array_equal(np.asarray(got[0]), n)
    np.testing.assert_array_equal(np.asarray(got[1]), want)


# `x += y` on a view argument writes into the caller's memory eagerly; the traced
# transformations refuse it as they refuse every write into an argument (it was dropped:
# the caller's base kept its value where running the function changes it)
TRACED = {
    "jvp": lambda f, x: stablejit.jvp(f, (x,), (snp.ones_like(x),)),
    "vjp": lambda f, x: stablejit.vjp(f, x),
    "jacfwd": lambda f, x: stablejit.jacfwd(f)(x),
    "jacrev": lambda f, x: stablejit.jacrev(f)(x),
}


@pytest.mark.parametrize("name", TRACED)
def test_traced_transformations_refuse_inplace_operators_on_a_view_argument(name):
    def f(x):
        x += 1.0
        return (x * x).sum()
    base = snp.zeros((2, 3))
    with pytest.raises(TypeError, match="writes into its argument"):
        TRACED[name](f, base[1])
    np.testing.assert_array_equal(np.asarray(base), np.zeros((2, 3)))
    np.testing.assert_allclose(np.asarray(TRACED[name](lambda x: (x * x).sum(), base[1])[0]),
                               0.0)
