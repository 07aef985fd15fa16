"""The C operators for basic indexing (recorder.c's fastop_getitem), matmul's common case
(fastop_matmul) and one_program's functions (CompositeFn) against the Python functions
they stand for: the same tapes entry for entry with the user's lines in lazy(), the same
values bit for bit eagerly, in lazy() and on a grad tape, the same views (their base,
their writes in both directions, NumPy's memory answers) and the same errors; and that
the native path takes them without entering Python."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import stablejit as sj
import stablejit.numpy as snp
from stablejit.numpy import _products, _views

from tests.host.test_native_recorder import _both, _same, needs_native, path

A = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)

# basic indices of None, Ellipsis and slices (the C path's), and their neighbours that
# stay Python's (an int, an int tensor, a list, a boolean mask)
INDEXES = [
    (slice(None), None), (None,), (Ellipsis, None), (None, Ellipsis, None),
    (slice(1, None), slice(None, None, 2)), (slice(None, None, -1),),
    (slice(None, None, -2), None), (slice(1, 3),), (Ellipsis,), (slice(-2, None), None),
    slice(0, 2), (slice(None), slice(1, 2), None), (1,), (1, slice(None)), ([0, 2],),
    (slice(None), 2), (np.array([True, False, True]),),
]
IDS = [repr(i).replace(" ", "") for i in INDEXES]


def _index(i):
    return lambda x: (x[i] * 2.0, x[i])  # (the second call: a plan made by the first)


@needs_native
@pytest.mark.parametrize("index", INDEXES, ids=IDS)
def test_basic_indexing_records_the_same_tape(index):
    _both(_index(index), lambda: snp.asarray(A))


@needs_native
@pytest.mark.parametrize("index", INDEXES, ids=IDS)
@pytest.mark.parametrize("where", ["eager", "lazy", "grad"])
def test_index_views_behave_as_numpy_views(index, where):
    """x[index] on both paths: its value, whether it is a view of x, and NumPy's answers
    after a write into the view and a write into x, each seen through the other."""
    runs = []
    for native in (True, False):
        with path(native):
            for _ in range(2):  # (the first call makes the plan C replays)
                x, ref = snp.asarray(A), A.copy()
                if where == "grad":
                    g = sj.grad(lambda t: snp.sum(t[index] * t[index]))(x)
                    runs.append(np.asarray(g))
                    continue
                if where == "lazy":
                    with sj.lazy():
                        v = x[index]
                else:
                    v = x[index]
                r = ref[index]
                assert (v.base is x) == (r.base is ref)
                assert snp.shares_memory(v, x) == np.shares_memory(r, ref)
                v[...] = -1.0
                r[...] = -1.0
                x[0] = 7.0
                ref[0] = 7.0
                np.testing.assert_array_equal(np.asarray(x), ref, strict=True)
                np.testing.assert_array_equal(np.asarray(v), r, strict=True)
                runs.append((np.asarray(x), np.asarray(v)))
    for a in runs[1:]:
        for u, w in zip(np.atleast_1d(*a) if isinstance(a, tuple) else [a],
                        np.atleast_1d(*runs[0]) if isinstance(a, tuple) else [runs[0]],
                        strict=True):
            np.testing.assert_array_equal(u, w, strict=True)


# x.T and reshape (recorder.c's fastop_view) and their neighbours that stay Python's:
# (name, the view taken of a tensor, the same of a NumPy array)
VIEWS = [
    ("x.T", lambda x: x.T, lambda r: r.T),
    ("transpose(x)", lambda x: snp.transpose(x), lambda r: np.transpose(r)),
    ("transpose(x, None)", lambda x: snp.transpose(x, None), lambda r: np.transpose(r)),
    ("transpose(x, (1, 0))", lambda x: snp.transpose(x, (1, 0)), lambda r: r.transpose(1, 0)),
    ("reshape(x, (4, 3))", lambda x: snp.reshape(x, (4, 3)), lambda r: r.reshape(4, 3)),
    ("reshape(x, (12,))", lambda x: snp.reshape(x, (12,)), lambda r: r.reshape(12)),
    ("reshape(x, (2, 2, 3))", lambda x: snp.reshape(x, (2, 2, 3)),
     lambda r: r.reshape(2, 2, 3)),
    ("reshape(x, (-1, 2))", lambda x: snp.reshape(x, (-1, 2)), lambda r: r.reshape(-1, 2)),
    ("reshape(x, x.shape)", lambda x: snp.reshape(x, (3, 4)), lambda r: r.reshape(3, 4)),
    ("reshape(x, [6, 2])", lambda x: snp.reshape(x, [6, 2]), lambda r: r.reshape([6, 2])),
    ("reshape copy=True", lambda x: snp.reshape(x, (4, 3), copy=True),
     lambda r: r.reshape(4, 3).copy()),
    ("x.reshape(6, 2)", lambda x: x.reshape(6, 2), lambda r: r.reshape(6, 2)),
    ("x.T of a view", lambda x: x[1:].T, lambda r: r[1:].T),
    ("reshape of a transpose", lambda x: snp.reshape(x.T, (12,)),
     lambda r: np.reshape(r.T, (12,))),
]


@needs_native
@pytest.mark.parametrize("name, view, ref", VIEWS, ids=[v[0] for v in VIEWS])
@pytest.mark.parametrize("where", ["eager", "lazy", "grad"])
def test_transposes_and_reshapes_behave_as_numpy_views(name, view, ref, where):
    """x.T, transpose and reshape on both paths: the same tape, and the same value, view
    of x or copy, and NumPy's answers after writes through either alias."""
    _both(lambda x: (view(x) * 2.0, view(x)), lambda: snp.asarray(A))
    runs = []
    for native in (True, False):
        with path(native):
            for _ in range(2):
                x, r = snp.asarray(A), A.copy()
                if where == "grad":
                    g = sj.grad(lambda t: snp.sum(view(t) * view(t)))(x)
                    runs.append((np.asarray(g),))
                    continue
                if where == "lazy":
                    with sj.lazy():
                        v = view(x)
                else:
                    v = view(x)
                w = ref(r)
                assert (v.base is x) == (w.base is r or w.base is r.base and r.base is not None)
                assert snp.shares_memory(v, x) == np.shares_memory(w, r)
                v[0] = -1.0
                w[0] = -1.0
                x[1] = 7.0
                r[1] = 7.0
                runs.append((np.asarray(x), np.asarray(v)))
                np.testing.assert_array_equal(runs[-1][0], r, strict=True)
                np.testing.assert_array_equal(runs[-1][1], w, strict=True)
    for a in runs[1:]:
        for u, w in zip(a, runs[0], strict=True):
            np.testing.assert_array_equal(u, w, strict=True)


@needs_native
def test_a_view_of_a_view_and_a_weak_tensor_stay_python():
    """The C path takes bases only: x[1:][:, None] (a view of a view) and a weak 0-d
    tensor's x[None] give Python's answers on both paths."""
    for fn in (lambda x: x[1:][:, None] * 2.0, lambda x: snp.asarray(2.0)[None] + x,
               lambda x: x.T[:, None]):
        _both(lambda x, fn=fn: (fn(x), fn(x)), lambda: snp.asarray(A))
    x = snp.asarray(A)
    v = x[1:][:, None]
    v[0] = 5.0
    assert v.base is x and float(x[1, 0]) == 5.0


@needs_native
@pytest.mark.parametrize("where", ["eager", "lazy"])
def test_plain_indexing_never_enters_python(where, monkeypatch):
    """On the native path x[:, None] and x[1:, ::2] of a base whose plan exists are bound
    and made views in C: the Python steps (_views._basic) are never called for them,
    while x[1] (an int: a program input) still is."""
    x = snp.asarray(A)
    x[:, None], x[1:, ::2], x[1]  # (the plans)

    def python(*_):
        raise AssertionError("the Python indexing path ran")

    monkeypatch.setattr(_views, "_basic", python)

    def run(fn):
        if where == "eager":
            return fn()
        with sj.lazy():
            return fn()

    with path(True):
        run(lambda: (x[:, None], x[1:, ::2], (x * 2.0)[:, None]))
        with pytest.raises(AssertionError, match="Python indexing path"):
            run(lambda: x[1])


@needs_native
@pytest.mark.parametrize("where", ["eager", "lazy"])
def test_transposes_and_reshapes_never_enter_python(where, monkeypatch):
    """On the native path x.T, transpose(x) and reshape(x, shape) of a base, with a
    shape seen before, are bound and made views in C: views.make_view is not called."""
    x = snp.asarray(A)
    x.T, snp.reshape(x, (4, 3)), snp.reshape(x, (2, 6))  # (their attributes kept)

    def python(*_):
        raise AssertionError("the Python view path ran")

    from stablejit import views
    from stablejit.numpy import _manipulation
    monkeypatch.setattr(views, "make_view", python)
    monkeypatch.delitem(_manipulation._RESHAPES, (3, 2, 2), raising=False)
    with path(True):
        if where == "eager":
            x.T, snp.transpose(x), snp.reshape(x, (4, 3)), x.reshape(2, 6)
        else:
            with sj.lazy():
                y = x * 2.0
                y.T, snp.reshape(y, (4, 3)), y.reshape((2, 6))
        with pytest.raises(AssertionError, match="Python view path"):
            snp.reshape(x, (3, 2, 2))  # (a shape not seen before: Python's)


MATMULS = [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
           ((2, 3, 4), (4, 5)), ((3, 4), (3, 4)), ((3,), (4,)), ((), (4,))]
DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "complex64", "bool"]


def _operand(shape, dtype, seed):
    v = np.random.default_rng(seed).standard_normal(shape) * 3
    return snp.asarray(v.astype(np.float32)).astype(dtype)


@needs_native
@pytest.mark.parametrize("shapes", MATMULS, ids=[f"{a}@{b}" for a, b in MATMULS])
@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul_answers_as_the_python_function(shapes, dtype):
    """x @ y, y.__rmatmul__(x) and snp.matmul on both paths: eagerly, in lazy() (the same
    tape) and on a grad tape (inexact dtypes), the same values, or the same error."""
    (sa, sb) = shapes

    def both_ways(x, y):
        return [(x @ y), y.__rmatmul__(x), snp.matmul(x, y)]

    def outcome(fn):
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 - both paths must raise the same
            return type(e), str(e).splitlines()[0]

    runs = {}
    for native in (True, False):
        with path(native):
            x, y = _operand(sa, dtype, 0), _operand(sb, dtype, 1)
            runs[native] = outcome(lambda x=x, y=y: both_ways(x, y))
            if dtype in ("float32", "float64") and not isinstance(
                    runs[native], tuple):
                runs[native, "grad"] = sj.grad(
                    lambda a, b: snp.sum(a @ b), argnums=(0, 1))(x, y)
    if isinstance(runs[True], tuple):
        assert runs[True] == runs[False]
        return
    _same(runs[True], runs[False])
    if (True, "grad") in runs:
        _same(runs[True, "grad"], runs[False, "grad"])
    _both(lambda x, y: both_ways(x, y), lambda: _operand(sa, dtype, 0),
          lambda: _operand(sb, dtype, 1))


@needs_native
def test_matmul_mixed_and_weak_operands_stay_python():
    """Two dtypes (promotion), a weak operand, a NumPy array: Python's answers."""
    for make in ((lambda: _operand((3, 4), "float32", 0), lambda: _operand((4,), "float64", 1)),
                 (lambda: _operand((3, 4), "float32", 0), lambda: snp.asarray(np.ones(4))),
                 (lambda: _operand((4,), "float32", 0), lambda: np.ones((4, 2), np.float32))):
        _both(lambda x, y: (x @ y, y @ x.T if x.ndim == 2 else y.T @ x), *make)


@needs_native
@pytest.mark.parametrize("precision", ["highest", "bfloat16", "tensorfloat32"])
def test_matmul_follows_the_default_precision(precision):
    """The default matrix precision is part of the dot's attributes: the C operator's
    are looked up again when it changes, so both paths record the same ones."""
    was = sj.config._setting("default_matmul_precision")
    try:
        for p in (precision, None):
            sj.config.update("default_matmul_precision", p)
            _, tape = _both(lambda x, y: (x @ y, x @ y),
                            lambda: _operand((3, 4), "float32", 0),
                            lambda: _operand((4, 2), "float32", 1))
            attrs = [e[1] for e, _ in tape[0] if e[0] is not None and
                     getattr(e[0], "name", "") == "dot_general"]
            assert attrs and all(a == attrs[0] for a in attrs)
    finally:
        sj.config.update("default_matmul_precision", was)


@needs_native
@pytest.mark.parametrize("where", ["eager", "lazy"])
def test_common_matmul_never_enters_python(where, monkeypatch):
    x, y = _operand((3, 4), "float32", 0), _operand((4, 5), "float32", 1)
    x @ y, snp.matmul(x[0], y)  # (the attributes, and eagerly the one-op programs, made)

    def python(*_):
        raise AssertionError("the Python matmul ran")

    monkeypatch.setattr(_products, "bind", python)
    with path(True):
        if where == "eager":
            x @ y, snp.matmul(x[0], y)
        else:
            with sj.lazy():
                (x @ y).block_until_ready()


@needs_native
def test_composite_functions_keep_the_python_face():
    """A one_program function (CompositeFn on the native path) reads as its Python
    function: name, docstring, signature, the function as written (.eager), repr; an
    attribute set on it is set there; as a class attribute it binds as a method; and
    keywords in either order give one answer on both paths."""
    for f in (snp.sum, snp.mean, sj.nn.relu, snp.take_along_axis):
        g = f.python
        assert (f.__name__, f.__doc__, repr(f)) == (g.__name__, g.__doc__, repr(g))
        assert inspect.signature(f) == inspect.signature(g) and f.eager is g.eager
    sj.nn.relu.some_note = "kept"
    assert sj.nn.relu.python.some_note == "kept"
    del sj.nn.relu.python.some_note

    class Holder:
        total = snp.sum

    holder = Holder()
    assert Holder.total is snp.sum and holder.total.__self__ is holder
    x = snp.asarray(A)
    for native in (True, False):
        with path(native):
            a = snp.sum(x, axis=1, keepdims=True, dtype="float64")
            b = snp.sum(x, dtype="float64", keepdims=True, axis=1)
            c = snp.sum(x, 1, "float64", True)
            _same(a, b)
            _same(a, c)
