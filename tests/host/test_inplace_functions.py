"""NumPy's in-place functions put, place, fill_diagonal and put_along_axis write into their
tensor by default and return None, as NumPy's do: a NumPy caller (SciPy, scikit-learn)
ignores the result, so a copy would be a silent wrong answer (SciPy's
false_discovery_control returned unadjusted p-values). inplace=False is JAX's form.

One table of calls, every mode= / wrap= argument NumPy and jax have, each compared with
NumPy in NumPy's form (eagerly, on the reference backend, lazily, under jit with the
operands static and traced, the write reaching the caller, and through a view, where the
base changes) and with NumPy and jax in JAX's form (arr unchanged, a new tensor)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit.errors import MustCompileError

from tests.support.jax_equivalents import jax_on_the_host

A34 = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
I34 = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
ALONG = np.argsort(-A34, axis=1)[:, :2]


class Case:
    """call(xp, a, *operands, **kw) calls xp's function NumPy's way on a; `numpy`: NumPy
    has this call (False: a jax-only mode); `jax`: jax.numpy has it in its inplace=False
    form; `traced`: its result does not depend on knowing the operands' values (jit may
    pass them as arguments)."""

    def __init__(self, call, a, operands=(), numpy=True, jax=True, traced=True):
        self.call, self.a, self.operands = call, a, operands
        self.numpy, self.jax, self.traced = numpy, jax, traced


def _put(mode=None):
    kw = {} if mode is None else {"mode": mode}
    return lambda xp, a, i, v, **k: xp.put(a, i, v, **kw, **k)


IN_RANGE = np.array([0, 5, -1, -12, 7])
OUT_OF_RANGE = np.array([0, 5, -1, -13, 20, 30])
VALS = np.array([7.5, -8.0, 9.0], np.float32)

CASES = {
    # put: NumPy's modes 'raise' (its default), 'clip', 'wrap'; jax's None, 'clip', 'wrap'
    "put, default, in range": Case(_put(), A34, (IN_RANGE, VALS)),
    "put, raise": Case(_put("raise"), A34, (IN_RANGE, VALS), jax=False, traced=False),
    "put, clip": Case(_put("clip"), A34, (OUT_OF_RANGE, VALS)),
    "put, wrap": Case(_put("wrap"), A34, (OUT_OF_RANGE, VALS)),
    "put, jax's None clips": Case(_put(), A34, (OUT_OF_RANGE, VALS), numpy=False),
    "put, int tensor, float values": Case(_put("wrap"), I34, (OUT_OF_RANGE, VALS)),
    "put, scalar value": Case(lambda xp, a, i, **k: xp.put(a, i, -3.0, **k), A34,
                              (IN_RANGE,)),
    "put, more values than indices": Case(_put("clip"), A34,
                                          (np.array([3, 1]), np.arange(5.0, dtype="f4"))),
    "put, 2-d indices": Case(_put("wrap"), A34,
                             (np.array([[1, 2], [14, -3]]), VALS)),
    # place: no mode; vals repeated or cut to the number of true entries
    "place, fewer values": Case(lambda xp, a, v, **k: xp.place(a, a > 0, v, **k), A34,
                                (VALS,)),
    "place, more values": Case(lambda xp, a, v, **k: xp.place(a, a < -2, v, **k), A34,
                               (np.arange(10, dtype=np.float32),)),
    "place, int tensor": Case(lambda xp, a, v, **k: xp.place(a, a % 3 == 0, v, **k), I34,
                              (np.array([40, -50], np.int32),)),
    "place, no true entry": Case(lambda xp, a, v, **k: xp.place(a, a > 100, v, **k), A34,
                                 (VALS,)),
    # fill_diagonal: NumPy's wrap False and True; jax has only False
    **{f"fill_diagonal, {shape}, {what}, wrap={wrap}": Case(
        lambda xp, a, *v, wrap=wrap, val=val, **k: xp.fill_diagonal(
            a, v[0] if v else val, wrap=wrap, **k),
        np.arange(np.prod(shape), dtype=np.float32).reshape(shape),
        (VALS[:2],) if what == "values" else (), jax=not wrap)
       for shape in ((4, 4), (7, 3), (3, 5), (3, 3, 3)) for wrap in (False, True)
       for what, val in (("scalar", -1.0), ("values", None))},
    # put_along_axis: NumPy has no mode (out-of-range indices raise); jax's modes
    "put_along_axis": Case(lambda xp, a, i, **k: xp.put_along_axis(a, i, 9.0, axis=1, **k),
                           A34, (ALONG,)),
    "put_along_axis, axis 0, values": Case(
        lambda xp, a, i, v, **k: xp.put_along_axis(a, i, v, axis=0, **k), A34,
        (np.array([[2, 0, 1, 2]]), VALS[None, :1])),
    "put_along_axis, axis -1, values per row": Case(
        lambda xp, a, i, v, **k: xp.put_along_axis(a, i, v, axis=-1, **k), A34,
        (np.array([[0], [1], [3]]), np.array([[10.0], [20.0], [30.0]], np.float32))),
    **{f"put_along_axis, mode={m}": Case(
        lambda xp, a, i, m=m, **k: xp.put_along_axis(a, i, 9.0, axis=1, mode=m, **k), A34,
        (np.array([[1], [4], [-1]]) if m in ("drop", "fill") else np.array([[1], [4], [0]]),),
        numpy=False) for m in ("clip", "drop", "fill", "promise_in_bounds")},
}
NUMPY = sorted(n for n, c in CASES.items() if c.numpy)


def _numpy(case: Case) -> np.ndarray:
    a = case.a.copy()
    assert case.call(np, a, *case.operands) is None
    return a


def _tensors(case: Case):
    return [snp.asarray(o) for o in case.operands]


@pytest.mark.parametrize("path", ["eager", "reference", "lazy"])
@pytest.mark.parametrize("name", NUMPY)
def test_in_place_by_default_as_numpy(name, path):
    case = CASES[name]
    if path == "reference":
        with stablejit.default_backend("reference"):
            a = snp.asarray(case.a)
            assert case.call(snp, a, *_tensors(case)) is None
    elif path == "lazy":
        with stablejit.lazy():
            a = snp.asarray(case.a)
            assert case.call(snp, a, *_tensors(case)) is None
    else:
        a = snp.asarray(case.a)
        assert case.call(snp, a, *_tensors(case)) is None
    assert a.dtype == case.a.dtype
    np.testing.assert_array_equal(np.asarray(a), _numpy(case))


@pytest.mark.parametrize("operands", ["static", "traced"])
@pytest.mark.parametrize("name", NUMPY)
def test_under_jit_the_write_reaches_the_caller(name, operands):
    case = CASES[name]
    if operands == "traced" and not case.traced:
        with pytest.raises(MustCompileError, match="mode='clip' or mode='wrap'"):
            stablejit.jit(lambda a, *ops: case.call(snp, a, *ops))(
                snp.asarray(case.a), *_tensors(case))
        return

    def f(a, *ops):
        assert case.call(snp, a, *(ops or case.operands)) is None
        return a.sum()

    a = snp.asarray(case.a)
    total = stablejit.jit(f)(a, *(_tensors(case) if operands == "traced" else ()))
    want = _numpy(case)
    np.testing.assert_array_equal(np.asarray(a), want)
    np.testing.assert_allclose(float(total), want.sum(), rtol=1e-6)


@pytest.mark.parametrize("name", NUMPY)
def test_through_a_view_the_base_changes(name):
    case = CASES[name]
    base = np.stack([case.a, case.a + 100])
    want = base.copy()
    assert case.call(np, want[1], *case.operands) is None
    got = snp.asarray(base)
    view = got[1]
    assert case.call(snp, view, *_tensors(case)) is None
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(view), want[1])


@pytest.mark.filterwarnings("ignore:scatter inputs have incompatible types")  # jax's, int
@pytest.mark.parametrize("name", sorted(CASES))
def test_inplace_false_is_jax_form_and_leaves_arr(name):
    """A new tensor, arr unchanged; equal to jax's answer (where jax has the call) and to
    NumPy's (where NumPy has it)."""
    case = CASES[name]
    a = snp.asarray(case.a)
    jitted = stablejit.jit(lambda a, *ops: case.call(snp, a, *ops, inplace=False))
    for fn in (lambda a, *ops: case.call(snp, a, *ops, inplace=False), jitted):
        if fn is jitted and not case.traced:
            continue  # checked above (test_under_jit_the_write_reaches_the_caller)
        got = fn(a, *_tensors(case))
        assert got.dtype == case.a.dtype
        if case.numpy:
            np.testing.assert_array_equal(np.asarray(got), _numpy(case))
        if case.jax:  # (jax on the host: on a GPU its repeated indices write in any order)
            with jax.enable_x64(True), jax_on_the_host():
                want = case.call(jnp, jnp.asarray(case.a),
                                 *[jnp.asarray(o) for o in case.operands], inplace=False)
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(a), case.a)


FIRST = {"put": (IN_RANGE, VALS), "place": (A34 > 0, VALS), "fill_diagonal": (1.0,),
         "put_along_axis": (ALONG, 1.0, 1)}


@pytest.mark.parametrize("fn", sorted(FIRST))
@pytest.mark.parametrize("arr", [A34.copy(), A34.tolist()], ids=["ndarray", "list"])
def test_in_place_into_what_stablejit_cannot_change_says_what_to_do(fn, arr):
    with pytest.raises(TypeError, match="inplace=False and use the returned tensor"):
        getattr(snp, fn)(arr, *FIRST[fn])
    out = getattr(snp, fn)(arr, *FIRST[fn], inplace=False)
    want = A34.copy()
    getattr(np, fn)(want, *FIRST[fn])
    np.testing.assert_array_equal(np.asarray(out), want)


# name -> (the call, on np or snp, NumPy's exception) : NumPy's errors, with ours naming
# the operand and the fix
ERRORS = {
    "put out of range, NumPy's default": (lambda xp, a: xp.put(a, [1, 12], [1.0]),
                                          IndexError, "index 12 .*mode='clip'"),
    "put out of range, mode='raise'": (lambda xp, a: xp.put(a, [-13], [1.0], mode="raise"),
                                       IndexError, "index -13 .*mode='clip'"),
    "put into an empty tensor": (lambda xp, a: xp.put(a[:0], [0], [1.0]), IndexError,
                                 "out of bounds for a of size 0"),
    "put, float indices": (lambda xp, a: xp.put(a, np.array([1.0]), [1.0]), TypeError,
                           "ind must hold integers"),
    "place, empty vals": (lambda xp, a: xp.place(a, a > 0, []), ValueError,
                          "vals is empty"),
    "place, mask of another size": (lambda xp, a: xp.place(a, np.ones(5, bool), [1.0]),
                                    ValueError, "same number of elements"),
    "fill_diagonal, 1-d": (lambda xp, a: xp.fill_diagonal(a[0], 1.0), ValueError,
                           "at least 2 dimensions"),
    "fill_diagonal, unequal 3-d": (lambda xp, a: xp.fill_diagonal(
        xp.reshape(a, (2, 3, 2)), 1.0), ValueError, "must be equal"),
    "put_along_axis out of range": (lambda xp, a: xp.put_along_axis(
        a, np.array([[4], [0], [0]]), 1.0, axis=1), IndexError, "out of"),
    "fill_diagonal into a read-only view": (lambda xp, a: xp.fill_diagonal(
        xp.broadcast_to(a[0], (4, 4)), 1.0), ValueError, "read-only"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_numpy_errors_name_the_operand_and_fix(name):
    call, error, match = ERRORS[name]
    with pytest.raises(error):
        call(np, A34.copy())
    with pytest.raises(error, match=match):
        call(snp, snp.asarray(A34))


def test_put_out_of_range_under_jit_needs_a_mode():
    """Traced indices cannot be checked: mode='raise' says to pass 'clip' or 'wrap'; the
    default then follows jax (negative from the end, the rest clipped)."""
    with pytest.raises(MustCompileError, match="mode='clip' or mode='wrap'"):
        stablejit.jit(lambda a, i: snp.put(a, i, 1.0, mode="raise"))(
            snp.asarray(A34), snp.asarray(OUT_OF_RANGE))
    a = snp.asarray(A34)
    stablejit.jit(lambda a, i: snp.put(a, i, VALS))(a, snp.asarray(OUT_OF_RANGE))
    want = jnp.put(A34, OUT_OF_RANGE, VALS, inplace=False)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(want))
