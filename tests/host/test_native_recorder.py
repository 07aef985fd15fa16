"""The native lazy recorder (stablejit._recorder) against the Python one.

Recorder.apply and Recorder.apply_scalar in C must write the same tape as the Python
methods: the same entries, the same user lines, the same result types; give the same
values bit for bit and the same errors with the user's line; count ops and flush at the
same points; and leave to Python what only Python does (grad's tape, ops with regions,
operands of other graphs). Every op record runs under lazy() on both paths here.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import sysconfig
import threading
import weakref

import numpy as np
import pytest
import stablejit as sj
import stablejit.numpy as snp
from hypothesis import given, settings
from hypothesis import strategies as st
from stablejit import recorder_native
from stablejit.errors import location_at
from stablejit.recorder import _structural

from tests.host.test_op_records import RECORDS

needs_native = pytest.mark.skipif(
    not recorder_native.available(),
    reason=f"stablejit._recorder is not usable: {recorder_native.unavailable}")


@contextlib.contextmanager
def path(native: bool):
    """Recorders take the C methods (native) or the Python ones in the block."""
    was = recorder_native.installed()
    recorder_native.install(native)
    try:
        yield
    finally:
        recorder_native.install(was)


def _record(fn, *args):
    """Run fn under lazy(), keeping the tape it recorded: (results, [(entry, site)])."""
    tapes = []
    with sj.lazy() as b:
        flush = b.flush

        def keep():  # the graph as it is when it runs (or at the block's end)
            tapes.append(list(zip(b._tape, b._locs, strict=True)))
            flush()
        b.flush = keep
        try:
            out = fn(*args)
        finally:
            keep()
            del b.flush
    return out, tapes


def _site(s):
    # what the user sees: the file, line and column. (The raw offsets may differ: from
    # Python 3.12 a specialised instruction that calls a Python function, such as
    # BINARY_SUBSCR_GETITEM, leaves the caller's offset on its inline cache entry, which
    # the native path reads and the Python path does not; both name the same position.)
    if s is None:
        return None
    loc = location_at(s)
    return loc.file, loc.line, loc.col


def _tapes_equal(a, b):
    assert len(a) == len(b)
    for ga, gb in zip(a, b, strict=True):
        # (entries holding Functions compare by structure: grad and control flow make new
        # ones per call)
        assert [_structural(e) for e, _ in ga] == [_structural(e) for e, _ in gb]
        assert [_site(s) for _, s in ga] == [_site(s) for _, s in gb]


def _same(a, b):
    la, lb = sj.tree.leaves(a), sj.tree.leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb, strict=True):
        if isinstance(x, sj.Array):
            assert x.dtype == y.dtype and x.shape == y.shape and x.weak == y.weak
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y), strict=True)
        else:
            assert x == y or (x != x and y != y)


def _both(fn, *make_args):
    runs = []
    for native in (True, False):
        args = [m() if callable(m) else m for m in make_args]
        with path(native):
            runs.append(_record(fn, *args))
    (out_n, tape_n), (out_p, tape_p) = runs
    _same(out_n, out_p)
    _tapes_equal(tape_n, tape_p)
    return out_n, tape_n


X = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)


def _x():
    return snp.asarray(X)


# (name, function of the tensor x): every way an op reaches the recorder's hot path and
# the ways it leaves it (several results, attributes, parameters, other dtypes)
CASES = [
    ("float scalar", lambda x: x * 1.001 + 0.5),
    ("scalar first", lambda x: 2.0 - x / 3.0),
    ("int scalar", lambda x: x * 3 - 1),
    ("negative zero and nan scalars", lambda x: (x * -0.0, x + float("nan"))),
    # one number's constant as two dtypes, and numbers of equal value but other bits, in
    # one graph (the C side keeps one key per (bits, dtype) for plain floats)
    ("a number as two dtypes", lambda x: (x * 0.5, snp.astype(x, "float16") * 0.5,
                                          x * 0.0, x * -0.0, x * 0.0)),
    ("huge int scalar on an int tensor", lambda x: snp.astype(x, "int64") + 2**62),
    ("numpy scalar (not a Python number)", lambda x: x * np.float32(1.5)),
    ("bool scalar", lambda x: (x > 0) & True),
    ("unary", lambda x: snp.tanh(snp.exp(x))),
    ("negation (the unary operator)", lambda x: (-x, -(x * 2.0), -snp.astype(x, "int32"),
                                                 -snp.astype(x, "uint8"), -(x + 1j * x),
                                                 -snp.asarray(2.0), -snp.negative(x))),
    ("binary same type", lambda x: (x + x) * x),
    ("chain", lambda x: [snp.tanh(x * 1.001 + 0.01 * i) - 0.5 for i in range(5)][-1]),
    ("reduction with attributes", lambda x: snp.sum(x, axis=1) + snp.max(x)),
    ("keepdims and broadcasting", lambda x: x - snp.mean(x, axis=0, keepdims=True)),
    ("integer tensor", lambda x: snp.astype(x, "int32") // 2 + 7),
    ("complex tensor", lambda x: (x + 1j * x) * 2.0),
    ("several results", lambda x: snp.frexp(x)),
    ("sort and argsort", lambda x: (snp.sort(x, axis=1), snp.argsort(x, axis=0))),
    ("matmul", lambda x: x @ x.T),
    ("indexing", lambda x: x[1:, ::2] * 2.0),
    ("a device tensor read twice", lambda x: x * 2.0 + x),
    ("device tensor minus graph value", lambda x: x - x * 0.1),
    ("graph value times device tensor", lambda x: snp.tanh(x) * x),
    ("bias add (broadcasting)", lambda x: snp.tanh(x) + snp.sum(x, axis=0)),
    ("broadcast both ways", lambda x: snp.tanh(x)[:, :1] - snp.exp(x)[:1, :]),
    ("device bias on a graph value", lambda x: snp.tanh(x) * x[0]),
    ("broadcast of a broadcast reused", lambda x: (x[0] + x * 2.0) * (x[0] + 1.0)),
    ("weak scalar chain", lambda x: snp.asarray(2.0) * 3.0 + x),
    ("nothing recorded", lambda x: x),
    ("where", lambda x: snp.where(x > 0, x, 0.0)),
    ("cumsum", lambda x: snp.cumsum(x, axis=1)),
    ("control flow inside lazy", lambda x: sj.lax.fori_loop(0, 3, lambda i, c: c * 2.0, x)),
    ("grad inside lazy", lambda x: sj.grad(lambda v: snp.sum(snp.tanh(v) * 2.0))(x)),
    ("jit inside lazy", lambda x: sj.jit(lambda v: v * 2.0 + 1.0)(x) - 1.0),
    # more constants, types and (type, attrs) pairs than the C memos hold, so that their
    # sets fill and evict (frontend/_native/memo.h)
    ("more keys than the memos hold", lambda x: [
        snp.sum(snp.broadcast_to(x[0, 0], (k,)) * (1.0 + k / 1024), axis=0, keepdims=True)
        for k in range(1, 700)]),
]


@needs_native
@pytest.mark.parametrize("name, fn", CASES, ids=[c[0] for c in CASES])
def test_native_and_python_recorders_write_the_same_tape(name, fn):
    _both(fn, _x)


@needs_native
def test_hot_ops_never_enter_the_python_methods(monkeypatch):
    """On the native path an op of the graph's values and a Python number is recorded in
    C: the Python step that finds the user's line is not called for it."""
    from stablejit import recorder
    calls = []
    real = recorder.user_site

    def counted(skip=1):
        calls.append(skip)
        return real(skip + 1)
    monkeypatch.setattr(recorder, "user_site", counted)
    for native in (True, False):
        calls.clear()
        with path(native):
            assert recorder_native.installed() == native
            # operators, unary functions, reductions, a number: dispatch's C binds
            _record(lambda x: snp.sum(snp.maximum(snp.tanh(x * 2.0 + 1.0) * 3.0, 0.5),
                                      axis=0) + snp.exp(snp.sum(x, axis=0)), _x())
        assert (len(calls) == 0) == native


@needs_native
@pytest.mark.parametrize("where", ["LazyBackend", "Recorder"])
def test_a_recorder_class_changed_later_takes_its_own_steps(where, monkeypatch):
    """C keeps, per class, that a recorder's steps are Recorder's (by the class's version
    tag). A step replaced afterwards, on the class or a base, is called from then on,
    and C records again once it is put back."""
    from stablejit import lazy_backend, recorder
    cls = {"LazyBackend": lazy_backend.LazyBackend, "Recorder": recorder.Recorder}[where]
    seen = []
    real = recorder.Recorder._add

    def own_add(self, *args):
        seen.append(args[0])
        return real(self, *args)

    def record():
        with sj.lazy():
            y = _x() * 2.0 + snp.tanh(_x())
        return np.asarray(y)

    with path(True):
        want = record()  # (C has kept its answer for LazyBackend)
        monkeypatch.setattr(cls, "_add", own_add)
        np.testing.assert_array_equal(record(), want)
        on_native = list(seen)
        monkeypatch.undo()
        seen.clear()
        np.testing.assert_array_equal(record(), want)
        assert seen == []
    with path(False):  # what the Python methods call: the same steps
        monkeypatch.setattr(cls, "_add", own_add)
        record()
    assert on_native == seen and [p.name for p in seen] == ["tanh", "add"]


def _codes_run(program, native: bool) -> set:
    """The code objects of the Python functions that run while program(x) records on a
    lazy graph (x a value of it), on the native path or the fallback; a first call
    before it traces, compiles and meets the shape rules."""
    calls = []
    with path(native):
        _record(program, _x())
        with sj.lazy():
            x = _x() + 0.0
            sys.setprofile(lambda frame, event, arg: calls.append(
                frame.f_code) if event == "call" else None)
            try:
                program(x)
            finally:
                sys.setprofile(None)
    return set(calls)


@needs_native
@pytest.mark.parametrize("tape", [False, True], ids=["lazy", "grad tape"])
def test_broadcasts_are_recorded_in_c(tape):
    """A bias add's broadcast_in_dim, its shape rule seen before, is appended in C: neither
    Recorder._broadcast nor _add runs on the native path (both do on the fallback)."""
    from stablejit.recorder import Recorder
    python = {Recorder._broadcast.__code__, Recorder._add.__code__}

    def bias(x):
        out = snp.tanh(x) + snp.sum(x, axis=0), snp.exp(x)[:1, :] * x[:, :1]
        return out[0] - out[1]

    def program(x):
        return sj.grad(lambda v: snp.sum(bias(v)))(x) if tape else bias(x)
    for native in (True, False):
        calls = _codes_run(program, native)
        assert (not python & calls) == native, sorted(c.co_name for c in calls)


@needs_native
def test_whole_functions_are_recorded_in_c():
    """A composite (mean), a jitted call and grad's derivative each join the graph as one
    entry holding a Function: on the native path Recorder.execute is C, so neither it nor
    the Python step that makes the result tensors runs."""
    from stablejit.recorder import Recorder
    python = {recorder_native._PYTHON["execute"].__code__, Recorder._tensors.__code__}

    def program(x):
        return (snp.mean(x, axis=0, keepdims=True), jit_double(x),
                sj.grad(lambda v: snp.sum(v * v))(x))

    jit_double = sj.jit(lambda v: v * 2.0)
    for native in (True, False):
        calls = _codes_run(program, native)
        assert (not python & calls) == native, sorted(c.co_name for c in calls)


@needs_native
def test_graph_keys_are_the_same_on_both_paths():
    """The graph key of a tape holding Functions (a composite, a jitted call, grad's
    derivative, a loop's and a branch's regions) in C (structural_entries) is the Python
    one, and a graph seen before is a hit on either path."""
    from stablejit import recorder

    jit_double = sj.jit(lambda v: v * 2.0)

    def program(x):
        y = sj.lax.fori_loop(0, 3, lambda i, c: c * 1.5, x)
        z = sj.lax.cond(True, lambda v: v + 1.0, lambda v: v - 1.0, x)
        return (snp.mean(x, axis=0, keepdims=True), jit_double(x), y, z,
                sj.grad(lambda v: snp.sum(v * v))(x), x + 1.0)

    with sj.lazy() as b:
        assert b._start_at >= 1 << 62  # (one graph: the derivative does not start it)
        program(_x() + 0.0)
        tape = list(b._tape)
    assert any(len(e) == 4 for e in tape) and any(e[0] == "inline" for e in tape)
    native = recorder_native._recorder.structural_entries(tape)
    assert native == recorder._python_structural_entries(tape)
    assert hash(native) == hash(recorder._python_structural_entries(tape))
    with pytest.raises(TypeError):
        recorder_native._recorder.structural_entries([("op",)])
    misses = []
    for native in (True, False):
        with path(native):
            for _ in range(2):
                with sj.lazy() as b:
                    program(_x() + 0.0)
                misses.append(b._programs.misses)
    assert misses[1:] == misses[:1] * 3  # (the first graph compiled; the rest are hits)
    assert recorder.structural_entries is recorder_native._recorder.structural_entries \
        or not recorder_native.installed()



def _pending_steps(cls):
    """What code does with a Pending, and what each gives: ("ok", value) or the error's
    type."""
    import weakref

    def attempt(fn):
        try:
            return ("ok", fn())
        except Exception as e:  # (the kind of error is what is compared)
            return type(e).__name__

    box = [cls(3, 7)]  # (the one Pending the steps act on; emptied to drop it)
    ref = weakref.ref(box[0])
    steps = [attempt(lambda: (box[0].slot, box[0].graph, box[0].buffer)),
             attempt(lambda: (lambda q: (q.slot, q.graph, q.buffer))(cls(slot=1, graph=2))),
             attempt(lambda: cls(1)), attempt(lambda: cls(1, 2, 3)),
             attempt(lambda: cls(1, graph=2, slot=3)),
             attempt(lambda: setattr(box[0], "other", 1)),
             attempt(lambda: cls.__name__)]
    buf = object()
    box[0].buffer = buf
    steps.append(attempt(lambda: box[0].buffer is buf))
    del box[0].buffer
    steps.append(attempt(lambda: box[0].buffer))
    box[0].slot = 9
    steps.append(attempt(lambda: box[0].slot))
    steps.append(attempt(lambda: ref() is box[0]))
    box.clear()
    steps.append(attempt(lambda: ref()))
    return steps


@needs_native
def test_the_native_pending_behaves_as_the_python_one():
    """recorder.Pending is the extension's type on the native install: what code does
    with one (construct, read, write, delete, refer to it weakly) gives what the Python
    class gives."""
    from stablejit import config, recorder
    assert recorder.Pending is (recorder_native._recorder.Pending if config.native()
                                else recorder._PythonPending)
    assert _pending_steps(recorder_native._recorder.Pending) == \
        _pending_steps(recorder._PythonPending)
    assert _pending_steps(recorder.Pending) == _pending_steps(recorder._PythonPending)


@needs_native
@pytest.mark.parametrize("cls", ["native", "python"])
def test_a_flush_finds_the_same_live_values_on_both_paths(cls):
    """recorder.live_pending in C is the Python one: the Pendings of the graph's list
    that something besides the list still holds (a tensor, a name), not computed and of
    the graph asked for, in recording order; the graph's number compares by value (an
    equal int that is another object counts). Either Pending class is read."""
    from stablejit import recorder
    make = recorder_native._recorder.Pending if cls == "native" else recorder._PythonPending
    graph = int("1000")  # (not a cached small int)
    kept = [make(0, graph), make(1, graph), make(2, graph + 1), make(3, 1000)]
    kept[1].buffer = object()  # computed by an earlier run
    held_twice = make(5, graph)
    pending = list(kept)
    pending.insert(1, make(4, graph))  # only the list holds it: its tensors are gone
    pending += [held_twice, held_twice]  # (a name and the list twice: held elsewhere)
    want = [kept[0], kept[3], held_twice, held_twice]
    native = recorder_native._recorder.live_pending(pending, graph)
    assert native == recorder._python_live_pending(pending, graph) == want
    assert all(a is b for a, b in zip(native, want, strict=True))
    assert recorder_native._recorder.live_pending([], graph) == []
    only_listed = [make(6, graph)]
    assert recorder_native._recorder.live_pending(only_listed, graph) == [] == \
        recorder._python_live_pending(only_listed, graph)
    with pytest.raises(TypeError):  # not a list
        recorder_native._recorder.live_pending(tuple(pending), graph)
    assert recorder.live_pending is recorder_native._recorder.live_pending \
        or not recorder_native.installed()



@pytest.mark.parametrize("holds", [True, False], ids=["the list holds", "weak references"])
def test_the_python_path_finds_live_values_either_way(holds, monkeypatch):
    """The Python recorder lists a graph's Pendings themselves under the GIL and weak
    references to them on a free-threaded interpreter (recorder._HOLDS): a flush
    computes the values still held, and drops the rest, both ways."""
    from stablejit import recorder
    monkeypatch.setattr(recorder, "_HOLDS", holds)
    with path(False), sj.lazy() as b:
        x = _x()
        kept = [x * 2.0, snp.tanh(x)]
        for i in range(3):
            snp.exp(x * float(i))  # dropped at once: no program output
        assert all((type(r) is weakref.ref) is not holds for r in b._pending)
        live = recorder.live_pending(b._pending, b._graph)
        assert [p.slot for p in live] == [t._data.slot for t in kept]
        got = [np.asarray(t) for t in kept]
    want = [np.asarray(_x() * 2.0), np.asarray(snp.tanh(_x()))]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w, strict=True)

class _Eq:
    """An item that compares by value through Python, counting its comparisons."""
    calls = 0

    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        _Eq.calls += 1
        return isinstance(other, _Eq) and self.v == other.v

    __hash__ = None


_NAN = float("nan")
# (a, b) pairs of tapes: same_tape must say what == says
_TAPE_PAIRS = [
    ("empty", [], []),
    ("shared entries", [("p", 1)], None),
    ("equal entries, other objects", [("scalar", "mul", 0, (1, 2.0), False)],
     [("scalar", "mul", 0, (1, 2.0), False)]),
    ("a slot past the small ints", [("add", None, (int("1000"), 1))],
     [("add", None, (int("1000"), 1))]),
    ("another slot", [("add", None, (3, 1))], [("add", None, (3, 2))]),
    ("another length", [("p", 1)], [("p", 1), ("p", 2)]),
    ("a tuple entry of other length", [("p", 1)], [("p", 1, 2)]),
    ("a constant's sign", [("s", 0.0)], [("s", -0.0)]),
    ("the same NaN object", [("s", _NAN)], [("s", _NAN)]),
    ("two NaN objects", [("s", float("nan"))], [("s", float("nan"))]),
    ("a number type", [("s", 1)], [("s", 1.0)]),
    ("an item compared in Python", [("f", _Eq(1))], [("f", _Eq(1))]),
    ("an item unequal in Python", [("f", _Eq(1))], [("f", _Eq(2))]),
    ("an entry that is no tuple", [["p", 1]], [["p", 1]]),
    ("a tuple and a list", [("p", 1)], [["p", 1]]),
]


@needs_native
@pytest.mark.parametrize("name, a, b", _TAPE_PAIRS, ids=[p[0] for p in _TAPE_PAIRS])
def test_same_tape_is_list_equality(name, a, b):
    """The C comparison of a graph with the last one run (LazyBackend._program) answers
    as Python's == over the tapes, identity first, Python's __eq__ where items differ;
    the last tape keeps the new one's equal entries, so a loop compares by identity."""
    from stablejit import recorder
    if b is None:
        b = list(a)
    kept = list(a)
    native = recorder_native._recorder.same_tape(a, b)
    assert native is (a == b) is recorder._python_same_tape(a, b)
    # a (the last graph's tape) may take b's entry for one equal to its own, nothing else
    assert all(x is k or (x is y and x == k) for x, k, y in zip(a, kept, b, strict=False))
    assert len(a) == len(kept)
    if native:  # every entry is now b's: the next comparison is by identity alone
        assert all(x is y for x, y in zip(a, b, strict=True))
        _Eq.calls = 0
        assert recorder_native._recorder.same_tape(a, b) and _Eq.calls == 0
    assert recorder_native._recorder.same_tape(b, a) is (b == a)
    with pytest.raises(TypeError):
        recorder_native._recorder.same_tape(tuple(a), b)
    assert recorder.same_tape is recorder_native._recorder.same_tape \
        or not recorder_native.installed()

def _leaf_kinds():
    """(name, the tensors grad differentiates) for tape_leaves: every kind of leaf."""
    dev = snp.asarray(X)
    weak = snp.asarray(2.0) * 1  # (a Python number's weak type, as a grad of f(2.0) has)
    with sj.lazy():  # a computed lazy value, whose backend is not the device
        done = snp.asarray(X) + 1.0
    return [("a device tensor", [dev]), ("the same tensor twice", [dev, dev]),
            ("weak and strong", [weak, dev]), ("complex", [snp.asarray(X) * 1j]),
            ("int8", [snp.asarray(X).astype(snp.int8)]), ("a lazy value", [done]),
            ("none", [])]


@needs_native
@pytest.mark.parametrize("index", range(len(_leaf_kinds())),
                         ids=[k[0] for k in _leaf_kinds()])
def test_grad_tape_leaves_are_the_same_on_both_paths(index):
    """GradTape.leaves in C (recorder.tape_leaves) writes what the Python one writes: a
    parameter per leaf bound to the tensor itself, and a pending tensor of it with the
    leaf's type and weak flag; it leaves what is not a list of Tensors to Python."""
    from stablejit import recorder
    from stablejit.grad_tape import GradTape
    _, ts = _leaf_kinds()[index]
    device = snp.asarray(X)._backend
    made = []
    for fn in (recorder_native._recorder.tape_leaves, recorder._python_tape_leaves):
        tape = GradTape(device)
        out = fn(tape, list(ts))
        made.append((tape, out))
    (tn, on), (tp, op) = made
    assert tn._tape == tp._tape and tn._locs == tp._locs and tn._types == tp._types
    assert all(a is b for a, b in zip(tn._inputs, tp._inputs, strict=True))
    assert len(tn._inputs) == len(ts) and all(a is b for a, b in zip(tn._inputs, ts,
                                                                        strict=True))
    assert len(tn._pending) == len(tp._pending) == len(ts)
    for a, b, t in zip(on, op, ts, strict=True):
        assert type(a) is type(b) is sj.Tensor and a._backend is tn and b._backend is tp
        assert (a._data.slot, a._data.graph, a._data.buffer) == \
            (b._data.slot, b._data.graph, b._data.buffer)
        assert a.type == b.type == t.type and a.weak is b.weak is t.weak
        assert a._view is a._aliases is None
    # what C leaves to Python: no list, or something in it that is no Tensor
    tape = GradTape(device)
    assert recorder_native._recorder.tape_leaves(tape, tuple(ts)) is None
    assert recorder_native._recorder.tape_leaves(tape, [*ts, X]) is None
    assert tape._tape == []


_DEVICE_OPERANDS = [
    ("scalar", lambda w, x: w * 2.0), ("number first", lambda w, x: 1.0 - w),
    ("two device tensors", lambda w, x: w + w), ("device and graph value", lambda w, x: w - x),
    ("graph value and device", lambda w, x: x * w), ("unary", lambda w, x: snp.tanh(w)),
    ("binary function", lambda w, x: snp.maximum(w, x)),
    ("number function", lambda w, x: snp.maximum(w, 0.5)),
]


def _weights(made):
    """A tensor as a step reads its weights: made on the device; computed by an earlier
    lazy graph (the previous step of a lazy loop); or pending in the current one."""
    if made == "device":
        return _x()
    if made == "previous graph":
        with sj.lazy():
            w = _x() * 1.0
        return w
    return _x() * 1.0  # (called inside the block: pending)


# (under grad, an op on a lazy tensor alone records on the lazy graph, not the tape,
# and takes Python's bind: only ops that also read the tape's value are listed there)
_MIXED = ("device and graph value", "graph value and device", "binary function")
_JOINS = [(name, op, where, made) for name, op in _DEVICE_OPERANDS
          for where in ("lazy", "grad tape")
          for made in ("device", "previous graph", "this graph")
          if where == "lazy" or made == "device" or name in _MIXED]


@needs_native
@pytest.mark.parametrize("name, op, where, made", _JOINS,
                         ids=["-".join(c[::2] + c[3:]) for c in _JOINS])
def test_device_tensors_join_the_graph_in_c(name, op, where, made):
    """A tensor of the graph's device (a step's weights, its data), or one an earlier
    lazy graph computed, read by an op in lazy() or under grad becomes the graph's
    parameter in C, as does a value of the lazy graph around a grad tape: none of
    dispatch's Python binds nor the recorder's Python _slot, _input or _param runs (the
    tape tables show that both paths record the same)."""
    from stablejit import dispatch
    from stablejit.grad_tape import GradTape
    from stablejit.recorder import Recorder
    steps = [Recorder._input, dispatch.bind, dispatch.bind_unary, dispatch.bind_binary,
             dispatch.bind_scalar]
    if where == "lazy":  # (grad itself calls these: its leaves, its results' slots)
        steps += [Recorder._slot, Recorder._param, GradTape._slot]
    python = {getattr(f, "python", f).__code__ for f in steps}  # (a bind: its Python)

    def run(w, x):
        if where == "lazy":
            return op(w, x)
        return sj.grad(lambda v: snp.sum(op(w, v)))(x)

    for native in (True, False):
        calls = []
        with path(native):
            w = None if made == "this graph" else _weights(made)
        with path(native), sj.lazy():
            w = _weights(made) if w is None else w
            x = _x() + 0.0
            expected = np.asarray(run(_x(), _x()))  # (a first call may trace or compile)
            x = _x() + 0.0
            sys.setprofile(lambda frame, event, arg, calls=calls: calls.append(
                frame.f_code) if event == "call" else None)
            try:
                out = run(w, x)
            finally:
                sys.setprofile(None)
        np.testing.assert_array_equal(np.asarray(out), expected, strict=True)
        assert (not python & set(calls)) == native, sorted(c.co_name for c in python & set(calls))


@needs_native
def test_a_lazy_loop_carrying_its_weights_records_the_same():
    """A training loop in lazy(): each step reads the weights the previous graph computed
    (and a device tensor of data); both paths record the same tapes and compute the same
    weights, bit for bit."""
    def step(w, data):
        g = sj.grad(lambda v: snp.sum(snp.tanh(v * data) * v))(w)
        return w - 0.1 * g

    runs = []
    for native in (True, False):
        w, data, tapes = _x(), _x() * 0.5, []
        with path(native):
            for _ in range(3):
                w, tape = _record(step, w, data)
                tapes.extend(tape)
        runs.append((np.asarray(w), tapes))
    np.testing.assert_array_equal(runs[0][0], runs[1][0], strict=True)
    _tapes_equal(runs[0][1], runs[1][1])


_RECORDS = [r for r in RECORDS if r.jit == "ok"]


@needs_native
@pytest.mark.parametrize("rec", _RECORDS, ids=[r.name for r in _RECORDS])
def test_every_op_record_records_the_same_under_lazy(rec):
    arrays = rec.inputs(rec.dtypes[0])
    _both(rec.fn, *[(lambda a=a: snp.asarray(a)) for a in arrays])


@needs_native
@pytest.mark.parametrize("bad", [
    ("shapes that do not broadcast", lambda x: x + snp.ones((5,))),
    ("matmul of mismatched shapes", lambda x: x @ x),
    ("a string operand", lambda x: x * "s"),  # (refused before it reaches a recorder)
    ("bitwise op of floats", lambda x: snp.bitwise_and(x, x)),
    ("negating booleans", lambda x: -(x > 0)),
    ("a tensor of an ended graph", None),
])
def test_errors_are_the_same_with_the_users_line(bad):
    name, fn = bad
    errors = []
    for native in (True, False):
        with path(native):
            if fn is None:
                with sj.lazy():
                    kept = _x() * 2.0
                with sj.lazy():
                    out = kept * 3.0 + 1.0  # a materialised value of an earlier graph
                errors.append(np.asarray(out))
                continue
            with pytest.raises(Exception) as e, sj.lazy():
                fn(_x())
            errors.append((type(e.value), str(e.value)))
    if fn is None:
        np.testing.assert_array_equal(errors[0], errors[1], strict=True)
        return
    assert errors[0] == errors[1]
    if name != "a string operand":
        assert "test_native_recorder.py" in errors[0][1]


@needs_native
@pytest.mark.parametrize("max_ops", [1, 2, 7])
def test_the_graph_flushes_at_the_same_op(max_ops, monkeypatch):
    monkeypatch.setenv("STABLEJIT_LAZY_MAX_OPS", str(max_ops))
    flushes = []
    for native in (True, False):
        with path(native), sj.lazy() as b:
            before = b.flushes
            x = _x()
            for i in range(9):
                x = snp.tanh(x * 1.001 + 0.01 * i)
            out = np.asarray(x)
            flushes.append((b.flushes - before, out))
    assert flushes[0][0] == flushes[1][0] > 1
    np.testing.assert_array_equal(flushes[0][1], flushes[1][1], strict=True)


def test_the_op_bound_follows_its_variable_and_overrides(monkeypatch):
    """C keeps the bound a graph reads at its first op while STABLEJIT_LAZY_MAX_OPS is
    unset: setting, unsetting and setting it again between graphs, and a backend class
    with its own _op_bound, flush where the Python path flushes."""
    from stablejit.lazy_backend import LazyBackend

    def flushes_of_a_graph():
        with sj.lazy() as b:
            before = b.flushes
            x = _x()
            for i in range(6):
                x = x * 1.5 + float(i)  # 12 ops
            np.asarray(x)
            return b.flushes - before

    seen = {}
    for native in (True, False):
        with path(native):
            counts = []
            for value in [None, "5", None, "3", None]:
                if value is None:
                    monkeypatch.delenv("STABLEJIT_LAZY_MAX_OPS", raising=False)
                else:
                    monkeypatch.setenv("STABLEJIT_LAZY_MAX_OPS", value)
                counts.append(flushes_of_a_graph())
            monkeypatch.setattr(LazyBackend, "_op_bound", lambda self: 4)
            counts.append(flushes_of_a_graph())
            monkeypatch.undo()
            seen[native] = counts
    assert seen[True] == seen[False], seen
    assert seen[True][0] == seen[True][2] == seen[True][4] == 1
    assert seen[True][1] > 1 and seen[True][3] > seen[True][1] and seen[True][5] > 1



def _set_by_assignment(monkeypatch, value):
    if value is None:
        os.environ.pop("STABLEJIT_LOG_COMPILES", None)
    else:
        os.environ["STABLEJIT_LOG_COMPILES"] = value


def _set_by_monkeypatch(monkeypatch, value):
    if value is None:
        monkeypatch.delenv("STABLEJIT_LOG_COMPILES", raising=False)
    else:
        monkeypatch.setenv("STABLEJIT_LOG_COMPILES", value)


def _set_in_a_replaced_environ(monkeypatch, value):
    env = {k: v for k, v in os.environ.items() if k != "STABLEJIT_LOG_COMPILES"}
    if value is not None:
        env["STABLEJIT_LOG_COMPILES"] = value
    monkeypatch.setattr(os, "environ", env)  # (config._getenv reads a plain mapping too)


@pytest.mark.parametrize("setter", [_set_by_assignment, _set_by_monkeypatch,
                                    _set_in_a_replaced_environ])
def test_a_flush_follows_the_settings_as_they_change(setter, monkeypatch, caplog):
    """A flush reads STABLEJIT_LOG_COMPILES (and STABLEJIT_DUMP_TO) each time: C answers
    "unset" without config's Python only where os.environ is the process's own and holds
    no value, so setting, unsetting or replacing the mapping between flushes logs (or
    stops logging) each memory hit on both paths alike."""
    monkeypatch.setitem(os.environ, "STABLEJIT_LOG_COMPILES", "0")  # (restored after)

    def flush():
        with sj.lazy():
            y = _x() * 2.0 + 1.0
        return np.asarray(y)

    for native in (True, False):
        with path(native):
            flush()
            flush()  # (the graph is now the last one run: the C flush's case)
            seen = []
            for value in [None, "1", None, "0", "1"]:
                setter(monkeypatch, value)
                caplog.clear()
                with caplog.at_level("WARNING", logger="stablejit"):
                    flush()
                seen.append(sum("memory hit lazy" in r.getMessage() for r in caplog.records))
            setter(monkeypatch, None)
            assert seen == [0, 1, 0, 0, 1], (native, seen)
    if setter is _set_in_a_replaced_environ or not recorder_native.installed():
        return
    # and on the native path, a flush with both variables unset runs none of config's
    # Python for them (C read the process's environment itself)
    from stablejit import config
    read, original = [], config._read

    def counted(var, *args, **kwargs):
        read.append(var)
        return original(var, *args, **kwargs)
    monkeypatch.setattr(config, "_read", counted)
    monkeypatch.delenv("STABLEJIT_DUMP_TO", raising=False)
    with path(True):
        flush()
    assert not {"STABLEJIT_LOG_COMPILES", "STABLEJIT_DUMP_TO"} & set(read), read


def _nan_checks_on(x):
    sj.config.update("debug_nans", True)
    try:
        return np.asarray(snp.log(x - 2.0))  # NaN: the check names this line
    finally:
        sj.config.update("debug_nans", False)


def _inf_checks_on(x):
    sj.config.update("debug_infs", True)
    try:
        return np.asarray(x / (x - x))  # Inf
    finally:
        sj.config.update("debug_infs", False)


def _a_trace_reads_it(x):
    y = x * 3.0  # (pending in the graph)
    return np.asarray(sj.jit(lambda a: a + y)(x))  # the trace reads a lazy value


# what may change between two recorded ops of one graph: the C recorder's "no trace, no
# checks" answer must follow it at once (it is kept while neither module changes)
_BETWEEN = [("NaN checks turned on", _nan_checks_on), ("Inf checks turned on", _inf_checks_on),
            ("a jit trace", _a_trace_reads_it)]


@pytest.mark.parametrize("name, between", _BETWEEN, ids=[b[0] for b in _BETWEEN])
def test_checks_and_traces_started_mid_graph_are_seen_at_once(name, between):
    """An op recorded in C, then a setting or a trace that makes ops Python's, then more
    ops: both paths give the same values, or the same error with the user's line."""
    outcomes = []
    for native in (True, False):
        with path(native):
            try:
                with sj.lazy():
                    x = _x() + 1.0  # (recorded in C on the native path)
                    got = between(x)
                    after = np.asarray(x * 2.0)
                outcomes.append(("ok", got, after))
            except (FloatingPointError, ValueError, TypeError) as e:
                outcomes.append((type(e).__name__, str(e).split(" at ")[-1][:80]))
    assert outcomes[0][0] == outcomes[1][0], outcomes
    if outcomes[0][0] == "ok":
        for a, b in zip(outcomes[0][1:], outcomes[1][1:], strict=True):
            np.testing.assert_array_equal(a, b, strict=True)
    else:
        assert outcomes[0][1] == outcomes[1][1] and "test_native_recorder.py" in \
            outcomes[0][1], outcomes

@needs_native
def test_threads_record_into_one_graph_safely():
    """Threads recording into the same lazy backend at once (its lock orders them) get
    the values each would get alone."""
    want = np.asarray(snp.tanh(_x() * 1.5 + 0.25))  # eagerly
    errors, results = [], []

    def work():
        try:
            for _ in range(50):
                with sj.lazy():  # one LazyBackend per device: the threads share it
                    results.append(np.asarray(snp.tanh(_x() * 1.5 + 0.25)))
        except Exception as e:  # noqa: BLE001 - the test reports it below
            errors.append(e)

    with path(True):
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors
    assert len(results) == 200
    for r in results:
        np.testing.assert_array_equal(r, want, strict=True)


def test_the_python_path_is_there_without_the_extension():
    """STABLEJIT_NATIVE=0 (or no build) keeps the Python methods and the same answers."""
    with path(False):
        assert not recorder_native.installed()
        out, tapes = _record(lambda x: snp.tanh(x * 2.0), _x())
    np.testing.assert_array_equal(np.asarray(out), np.asarray(snp.tanh(_x() * 2.0)))
    assert len(tapes[0]) == 3  # the parameter, the scalar op, tanh


def test_the_extension_is_built_where_a_compiler_is():
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        pytest.skip(f"no C compiler ({cc}): the Python path is the only one")
    if sys.version_info < (3, 11):
        pytest.skip("the native recorder needs CPython 3.11 (PyFrame_GetLasti)")
    assert recorder_native.available(), (
        f"{recorder_native.unavailable}, although a C compiler is present: rebuild it with "
        f"`pip install -e .` (or fix the slot its init names)")


@pytest.mark.parametrize("env,built,native", [
    ("0", True, False), ("1", True, True),
    ("1", False, False),  # an install where the extension could not be built
])
def test_stablejit_native_selects_the_recorder_at_import(env, built, native):
    native = native and recorder_native.available()
    block = "" if built else "import sys; sys.modules['stablejit._recorder'] = None; "
    code = (block + "import stablejit, stablejit.numpy as snp; "
            "from stablejit import recorder_native as r; x = snp.arange(3.0)\n"
            "with stablejit.lazy():\n    y = snp.tanh(x * 2.0)\n"
            "print(r.installed(), snp.asarray(y).tolist() == snp.tanh(x * 2.0).tolist(), "
            "r.unavailable)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "STABLEJIT_NATIVE": env}, check=True)
    installed, same, why = out.stdout.strip().split(" ", 2)
    assert (installed, same) == (str(native), "True")
    if not built:
        assert "stablejit._recorder was not built" in why


@needs_native
@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv", "pow", "mod"])
def test_operators_keep_the_python_operators_face(op):
    """A native operator reads as the function it wraps: name, doc, signature, bound."""
    import inspect

    from stablejit.tensor import Tensor
    with path(True):
        for name in (f"__{op}__", f"__r{op}__"):
            native = Tensor.__dict__[name]
            python = getattr(native, "python", native)
            assert (native.__name__, native.__doc__) == (python.__name__, python.__doc__)
            assert inspect.signature(native) == inspect.signature(python)
            x = _x()
            assert getattr(x, name)(2.0).tolist() == python(x, 2.0).tolist()


@needs_native
def test_the_unary_operator_keeps_its_face():
    import inspect

    from stablejit.tensor import Tensor
    with path(True):
        native = Tensor.__dict__["__neg__"]
        python = native.python
        assert (native.__name__, native.__doc__) == (python.__name__, python.__doc__)
        assert inspect.signature(native) == inspect.signature(python)
        assert (-_x()).tolist() == python(_x()).tolist() == (-X).tolist()
        with pytest.raises(TypeError, match="negative"):
            -(_x() > 0)  # noqa: B018 (the eager error, from the Python operator)


def _namespace_ops() -> list[str]:
    """The names of stablejit.numpy that are FastOps (none where the native path was
    off at import: then the namespace keeps its Python functions)."""
    ops = recorder_native._NAMESPACE_OPS.values()
    return sorted(n for n in snp.__all__ if any(getattr(snp, n) is op for op in ops))


# operands of every kind a namespace function meets: the float tensors its C branch
# takes, and those it hands to Python (weak, integer, bool, complex, a Python number,
# NumPy data, a tensor of another type)
_OPERANDS = [
    ("f32", lambda: _x()),
    ("f64", lambda: snp.asarray(X.astype(np.float64))),
    ("f16", lambda: snp.asarray(X.astype(np.float16))),
    ("weak", lambda: snp.asarray(0.75)),
    ("i32", lambda: snp.asarray((X * 3).astype(np.int32))),
    ("u8", lambda: snp.asarray(np.arange(12, dtype=np.uint8).reshape(3, 4))),
    ("bool", lambda: snp.asarray(X > 0)),
    ("c64", lambda: snp.asarray((X + 1j * X[::-1]).astype(np.complex64))),
    ("python float", lambda: 1.5),
    ("python int", lambda: 3),
    ("numpy", lambda: X),
    ("row", lambda: snp.asarray(X[0])),
]


def _outcome(fn, *args):
    """fn's result, or the type and first line of what it raised."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - the two paths must raise the same
        return type(e), str(e).splitlines()[0]


@needs_native
@pytest.mark.parametrize("name", _namespace_ops())
def test_namespace_functions_in_c_answer_as_the_python_ones(name):
    """stablejit.numpy's elementwise functions are FastOps (recorder_native.namespace_ops):
    they read as the Python function (name, doc, signature, repr), and over every kind of
    operand, eagerly, in lazy() and on a grad tape, both paths give the same values,
    dtypes, weakness and errors as the Python function itself."""
    import inspect
    op = getattr(snp, name)
    python = op.python
    assert (op.__name__, op.__doc__, repr(op)) == (python.__name__, python.__doc__, repr(python))
    assert inspect.signature(op) == inspect.signature(python)
    arity = len(inspect.signature(python).parameters)
    combos = ([(a,) for a in _OPERANDS] if arity == 1 else
              [(a, b) for a in _OPERANDS for b in _OPERANDS
               if "f32" in (a[0], b[0]) or a[0] == b[0]])
    for combo in combos:
        what = [c[0] for c in combo]
        runs = {}
        for native in (True, False):
            with path(native):
                runs["eager", native] = _outcome(op, *[c[1]() for c in combo])
                with sj.lazy():  # (compared within lazy(): XLA may fold a graph's constants)
                    runs["lazy", native] = _outcome(op, *[c[1]() for c in combo])
        runs["python", False] = _outcome(python, *[c[1]() for c in combo])
        for a, b in [(("eager", True), ("eager", False)), (("lazy", True), ("lazy", False)),
                     (("eager", True), ("python", False))]:
            if isinstance(runs[a], tuple) and isinstance(runs[a][0], type):
                assert runs[a] == runs[b], (what, a, b)
            else:
                _same(runs[a], runs[b])
    if arity == 1 and "f" in str(python._native_op[1]):  # (on a grad tape: f32 and f64)
        for dtype in (np.float32, np.float64):
            v = snp.asarray((X / 4 + 0.5).astype(dtype))
            runs = []
            for native in (True, False):
                with path(native):
                    runs.append(_outcome(sj.grad(lambda t: snp.sum(op(t))), v))
            _same(*runs)


@needs_native
def test_lazy_operators_never_enter_python(monkeypatch):
    """x * 2.0, 1.0 - x, x + x, snp.tanh(x), snp.maximum(x, y) on tensors of a lazy
    graph, or on tensors of its device (they join the graph as parameters), are recorded
    in C, never reaching the Python operator's or function's dispatch; a weak operand
    or tensors of two types take the Python operator (and the same answers: the tables
    above). (C takes an op whose shape rule has run before: the block runs once first.)"""
    from stablejit.numpy import _elementwise

    def block(x, check=lambda: None):
        y = x * 2.0  # the device tensor joins the graph as a parameter
        check()
        z = -((1.0 - y * 2.0) + y) - -x
        u = snp.maximum(snp.tanh(y), snp.multiply(y, 0.25))  # (namespace FastOps)
        w = snp.asarray(2.0) * 3.0  # weak: Python's
        v = y + snp.ones((3, 4), "float64")  # two types: Python's
        return z, u, w, v

    with sj.lazy():
        block(_x())
    entered = []
    for name in ("bind_scalar", "bind_binary", "bind_broadcast", "bind1", "bind_unary"):
        real = getattr(_elementwise, name)

        def spy(*args, _real=real, _name=name, **kwargs):
            entered.append(_name)
            return _real(*args, **kwargs)
        monkeypatch.setattr(_elementwise, name, spy)
    for native in (True, False):
        entered.clear()
        x = _x()  # a device tensor (made outside the block)
        with path(native), sj.lazy():
            z, u, w, v = block(x, lambda n=native: _check(entered == ([] if n else
                                                                        ["bind_scalar"])))
        assert (len(entered) == 2) == native, entered
        np.testing.assert_array_equal(np.asarray(z), -((1.0 - X * 4.0) + X * 2.0) + X)
        np.testing.assert_allclose(np.asarray(u), np.maximum(np.tanh(X * 2), X * 0.5),
                                   rtol=1e-6)
        assert w.weak and v.dtype == snp.float64


def _check(ok: bool) -> None:
    assert ok


GRAD_CASES = [
    ("operators", lambda v: snp.sum(v * 2.0 - 1.0 / (v * v + 1.0))),
    ("mlp-like", lambda v: snp.mean(snp.maximum(v @ v.T + 0.5, 0.0) ** 2)),
    ("unary chain", lambda v: snp.sum(snp.tanh(snp.exp(v) * 0.1))),
    ("negation", lambda v: -snp.mean(-(v * v))),
    ("closed-over tensor", lambda v: snp.sum(v * _x() + _x())),
]


@needs_native
@pytest.mark.parametrize("name, fn", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_eager_grad_tapes_are_the_same_on_both_paths(name, fn, monkeypatch):
    """grad's GradTape records in C as well (its own rule for its values): the same
    tape key and the same gradient, bit for bit, eagerly and in lazy()."""
    from stablejit.grad_tape import GradTape
    keys = []
    real = GradTape.slots

    def spy(self, results):  # (the key, also where the last tape's derivative is reused)
        slots = real(self, results)
        keys.append(self.key())
        return slots
    monkeypatch.setattr(GradTape, "slots", spy)
    outs = []
    for native in (True, False):
        with path(native):
            outs.append(np.asarray(sj.grad(fn)(_x())))
            with sj.lazy():
                outs.append(np.asarray(sj.grad(fn)(_x())))
    assert keys[0] == keys[2] and keys[1] == keys[3]
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0], strict=True)


_DTYPES = ["float32", "float64", "int32", "int64", "complex64", "bool"]
_STEPS = [
    ("x + x", lambda x, c: x + x), ("x - c", lambda x, c: x - c), ("c * x", lambda x, c: c * x),
    ("x / c", lambda x, c: x / c), ("c - x", lambda x, c: c - x), ("x ** 2", lambda x, c: x ** 2),
    ("tanh", lambda x, c: snp.tanh(x)), ("sum axis 0", lambda x, c: snp.sum(x, axis=0)),
    ("maximum c", lambda x, c: snp.maximum(x, c)), ("x % c", lambda x, c: x % c),
    ("reshape", lambda x, c: snp.reshape(x, (-1,))), ("x & x", lambda x, c: x & x),
    ("x + x[0]", lambda x, c: x + x[0]), ("x[:1] * x", lambda x, c: x[:1] * x),
    ("abs", lambda x, c: abs(x)), ("device minus x", lambda x, c: snp.zeros(x.shape, x.dtype) - x),
]


@needs_native
@settings(max_examples=60, deadline=None, derandomize=True)
@given(dtype=st.sampled_from(_DTYPES),
       c=st.sampled_from([2, -3, 0.5, -0.0, float("inf"), float("nan"), 1e30, True]),
       steps=st.lists(st.sampled_from(range(len(_STEPS))), min_size=1, max_size=6),
       weak=st.booleans())
def test_random_programs_record_the_same(dtype, c, steps, weak):
    """Random chains of operators and namespace calls, over dtypes, Python numbers and
    weak values: both paths record the same tape, the same values (or the same error)."""
    def program(x):
        if weak:
            x = x + snp.asarray(1.0 if dtype != "bool" else True)
        for i in steps:
            x = _STEPS[i][1](x, c)
        return x

    def make():
        return snp.asarray(np.array([[0.5, -2.0, 3.0], [1.0, 0.0, -1.5]]).astype(dtype))

    outs = []
    for native in (True, False):
        with path(native):
            try:
                outs.append(("ok", _record(program, make())))
            except Exception as e:  # noqa: BLE001 - both paths must raise alike
                outs.append(("error", (type(e), str(e))))
    assert outs[0][0] == outs[1][0]
    if outs[0][0] == "error":
        assert outs[0][1] == outs[1][1]
        return
    (out_n, tape_n), (out_p, tape_p) = outs[0][1], outs[1][1]
    _same(out_n, out_p)
    # the entries (the sites are compared by the tables above: an op that a composite's
    # cached program records may take the line of the next instruction on either path,
    # depending on that cache, so they are not compared here)
    assert [[_structural(e) for e, _ in g] for g in tape_n] == \
        [[_structural(e) for e, _ in g] for g in tape_p]
