"""Eager grad, on a device and in a lazy() block, records the function on a GradTape
(frontend/grad_tape.py) instead of tracing it. Every case runs on the traced path (the
tape turned off: the reference), eagerly and in a lazy() block, and must give the same
values, types and errors; `path` says which way the tape calls went (the tape, or the
traced fallback for what a tape cannot do). Every test runs on both paths: recorder.c's
tape_one and the Python one (STABLEJIT_NATIVE=0)."""

from __future__ import annotations

import contextlib
import os

import numpy as np
import pytest
import stablejit as sj
import stablejit.numpy as snp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stablejit import autodiff, grad_tape, lazy_backend, nn, recorder_native
from stablejit.errors import EscapedTracerError

from tests.support.threads import errors_while_evicting
from tests.support.trees import path_weight, structures


@pytest.fixture(autouse=True, params=["native", "python"])
def grad_path(request):
    """grad's tape call (and the recorder) in C, or in Python."""
    if request.param == "native" and not recorder_native.available():
        pytest.skip(f"stablejit._recorder is not usable: {recorder_native.unavailable}")
    was = recorder_native.installed()
    recorder_native.install(request.param == "native")
    yield
    recorder_native.install(was)


RNG = np.random.default_rng(0)
W = RNG.standard_normal((4, 3)).astype(np.float32)
X = RNG.standard_normal((5, 4)).astype(np.float32)
LABELS = np.array([0, 2, 1, 1, 0], np.int32)


def _loss(w, x):
    return snp.sum(snp.tanh(x @ w) ** 2)


@sj.custom_vjp
def _clip_grad(x):
    return x


_clip_grad.defvjp(lambda x: (x, None), lambda _, g: (snp.clip(g, -0.01, 0.01),))


@sj.jit
def _jitted_layer(w, x):
    return snp.tanh(x @ w)


def _cases():
    w, x = snp.asarray(W), snp.asarray(X)
    return [
        # (name, call, path the lazy call takes)
        ("plain", lambda: sj.value_and_grad(_loss)(w, x), "tape"),
        ("argnums tuple", lambda: sj.grad(_loss, argnums=(0, 1))(w, x), "tape"),
        ("numpy and python arguments",
         lambda: sj.grad(lambda w, x, k: _loss(w, x) * k)(w, X, 3), "tape"),
        ("pytree and aux", lambda: sj.value_and_grad(
            lambda p, x: (_loss(p["w"], x) + snp.sum(p["b"]), {"n": snp.mean(p["b"]),
                                                                "k": 2.0}),
            has_aux=True)({"w": w, "b": snp.ones(3)}, x), "tape"),
        # a closed-over use of the differentiated tensor is a constant, as in a trace
        ("closure over the leaf", lambda: sj.grad(lambda v: snp.sum(v * w))(w), "tape"),
        ("one tensor as two leaves",
         lambda: sj.grad(lambda a, b: snp.sum(a * b * b), argnums=(0, 1))(w, w), "tape"),
        ("python flag", lambda: sj.grad(
            lambda w, flag: _loss(w, x) if flag else snp.sum(w))(w, True), "tape"),
        ("composites and nn", lambda: sj.grad(
            lambda w: nn.cross_entropy(x @ w, snp.asarray(LABELS))
            + snp.mean(nn.relu(w)) + snp.var(w, axis=0).sum())(w), "tape"),
        ("a jitted function inside", lambda: sj.grad(
            lambda w: snp.sum(_jitted_layer(w, x)))(w), "tape"),
        ("stop_gradient", lambda: sj.grad(
            lambda w: snp.sum(w * sj.stop_gradient(w)))(w), "tape"),
        ("scalar constants keep their bits", lambda: [sj.grad(
            lambda w, c=c: snp.sum(snp.abs(w * c)))(w) for c in (0.0, -0.0, 2.5)], "tape"),
        ("control flow", lambda: sj.grad(lambda w: sj.fori_loop(
            0, 3, lambda i, v: snp.sin(v) * 1.5, w).sum())(w), "tape"),
        ("cond on a traced predicate", lambda: sj.grad(lambda w: sj.cond(
            snp.sum(w) > 0, lambda v: snp.sum(v ** 2), lambda v: snp.sum(v), w))(w), "tape"),
        ("vmap inside", lambda: sj.grad(lambda w: snp.sum(sj.vmap(
            lambda r: snp.dot(r, w[:, 0]))(x)))(w), "tape"),
        ("nested grad", lambda: sj.grad(lambda v: snp.sum(sj.grad(
            lambda u: snp.sum(snp.sin(u) * u))(v) ** 2))(w), "tape"),
        ("complex holomorphic", lambda: sj.grad(
            lambda z: snp.sum(z * z), holomorphic=True)(snp.asarray(W[0] + 1j * W[1])),
         "tape"),
        # what a tape cannot record: grad runs the function again on the traced path
        ("python branch on a value", lambda: sj.grad(
            lambda w: snp.sum(w) if float(snp.sum(w)) > 0 else -snp.sum(w * w))(w),
         "fallback"),
        ("custom_vjp rule", lambda: sj.grad(lambda w: snp.sum(_clip_grad(w) * 5.0))(w),
         "fallback"),
        ("checkpoint", lambda: sj.grad(lambda w: snp.sum(sj.checkpoint(
            lambda v: snp.sin(v) * v)(w)))(w), "fallback"),
    ]


def _signs(t):
    a = np.asarray(t)
    return np.signbit(np.stack([a.real, a.imag]) if np.iscomplexobj(a) else a)


def _traces(monkeypatch) -> list:
    """A list that gets a 1 each time grad takes the traced path (autodiff.trace_function):
    a grad call that leaves it empty was recorded on a tape, on either path."""
    traced, real = [], autodiff.trace_function
    monkeypatch.setattr(autodiff, "trace_function",
                        lambda *a, **k: traced.append(1) or real(*a, **k))
    return traced


def _traced(call):
    """call() with grad on the traced path only."""
    real = autodiff.tape_backend
    autodiff.tape_backend = lambda leaves: None
    try:
        return call()
    finally:
        autodiff.tape_backend = real


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize("index", range(len(_cases())), ids=[c[0] for c in _cases()])
def test_grad_on_a_tape_equals_the_traced_path(index, lazy, monkeypatch):
    name, call, path = _cases()[index]
    want = _traced(call)
    traced = _traces(monkeypatch)
    if lazy:
        with sj.lazy():
            got = call()
    else:
        got = call()
    assert bool(traced) == (path == "fallback"), f"{name}: expected the {path} path"
    w_leaves, g_leaves = sj.tree.leaves(want), sj.tree.leaves(got)
    assert len(w_leaves) == len(g_leaves)
    for a, b in zip(w_leaves, g_leaves, strict=True):
        if isinstance(a, sj.Tensor):
            assert a.type == b.type and a.weak == b.weak, name
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-6, atol=1e-7,
                                   err_msg=name)
        # bit for bit where the same ops ran: signed zeros too
        assert (_signs(b) == _signs(a)).all() or path == "fallback", name


def test_a_repeated_step_builds_no_ir_and_is_one_graph_entry(monkeypatch):
    w, x = snp.asarray(W), snp.asarray(X)
    with sj.lazy():
        first = sj.grad(_loss)(w, x)  # builds the derivative; kept, so the graph runs
    built = []
    real = lazy_backend.function_of
    for module in (lazy_backend, grad_tape):  # the graph's replay and the tape's
        monkeypatch.setattr(module, "function_of", lambda *a: built.append(1) or real(*a))
    with sj.lazy() as backend:
        g = sj.grad(_loss)(w, x)
        entries = [e[0] for e in backend._tape]
    assert built == []  # neither the tape's forward nor the graph were replayed
    assert entries.count("inline") == 1 and "param" in entries
    np.testing.assert_array_equal(np.asarray(g), np.asarray(first))
    np.testing.assert_allclose(np.asarray(g), np.asarray(sj.grad(_loss)(w, x)), rtol=1e-6)


def test_the_tape_reads_pending_values_of_the_graph_without_running_it():
    w, x = snp.asarray(W), snp.asarray(X)
    with sj.lazy() as backend:
        before = backend.flushes
        h = snp.tanh(x) * 2.0  # pending in the block's graph
        g = sj.grad(lambda v: snp.sum((h @ v) ** 2))(w * 1.0)
        assert backend.flushes == before
    want = sj.grad(lambda v: snp.sum((snp.tanh(x) * 2.0 @ v) ** 2))(w)
    np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-6)


def _writes_into(i: int, aux: bool = False):
    """f(v, x) that writes into its argument i before returning a scalar (and an aux)."""
    def f(*args):
        args[i][0] = 1.0
        loss = snp.sum(args[0] * 2.0)
        return (loss, args[1]) if aux else loss
    return f


def test_errors_are_the_traced_paths():
    w, x = snp.asarray(W), snp.asarray(X)
    for bad, error, match in [
            (lambda: sj.grad(lambda v: v * 2.0)(w), TypeError, "scalar output"),
            (lambda: sj.grad(lambda v: snp.sum(v))(snp.asarray(LABELS)), TypeError,
             "floating-point inputs"),
            (lambda: sj.grad(lambda v: (snp.sum(v), 1.0))(w), TypeError, "has_aux"),
            (lambda: sj.grad(lambda v: snp.sum(v @ x))(w), ValueError, "matmul: the last axis"),
            # a write into an argument (differentiated, or not), the output one tensor or
            # a pair (recorder.c checks the first itself, _tape_results the second)
            (lambda: sj.grad(_writes_into(0))(w, x), TypeError, "argument leaf 0"),
            (lambda: sj.grad(_writes_into(1))(w, x), TypeError, "argument leaf 1"),
            (lambda: sj.grad(_writes_into(1, aux=True), has_aux=True)(w, x), TypeError,
             "argument leaf 1"),
            (lambda: sj.grad(lambda v: snp.sum(v[:, 0].__iadd__(1.0)))(w), TypeError,
             "argument leaf 0")]:
        with pytest.raises(error, match=match) as traced:
            _traced(bad)
        with pytest.raises(error, match=match) as eager:
            bad()
        with pytest.raises(error, match=match) as lazy, sj.lazy():
            bad()
        for e in (eager, lazy):
            assert type(e.value) is type(traced.value)
            assert str(e.value).split("\n")[0] == str(traced.value).split("\n")[0]


def test_a_write_into_an_outer_tensor_is_the_traced_paths_error():
    w = snp.asarray(W)
    outer = snp.zeros(3)

    def f(v):
        outer[0] = snp.sum(v)
        return snp.sum(v * v)

    with pytest.raises(TypeError, match="would write a traced value") as traced:
        _traced(lambda: sj.grad(f)(w))
    with pytest.raises(TypeError, match="would write a traced value") as eager:
        sj.grad(f)(w)
    with pytest.raises(TypeError, match="would write a traced value") as lazy, sj.lazy():
        sj.grad(f)(w)
    assert str(eager.value) == str(lazy.value) == str(traced.value)
    np.testing.assert_array_equal(np.asarray(outer), np.zeros(3))  # left as it was


def test_a_tensor_escaping_the_function_is_an_escaped_tracer():
    kept = []
    w = snp.asarray(W)

    def f(v):
        kept.append(v * 2.0)
        return snp.sum(v)

    with sj.lazy():
        sj.grad(f)(w)
        with pytest.raises(EscapedTracerError):
            np.asarray(kept[-1] + 1.0)
    sj.grad(f)(w)
    with pytest.raises(EscapedTracerError):
        np.asarray(kept[-1] + 1.0)


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize("route", ["tensors", "numpy argument", "argnums tuple",
                                   "keyword", "second argument"])
def test_a_tape_that_stops_runs_the_python_twice_in_all(route, lazy):
    """A value read stops the tape, and grad runs f once more on the traced path: f's
    Python runs twice in all, whichever way grad split the arguments (all tensors take
    _tape_one, the rest _Args), with the traced path's values."""
    ran = []

    def f(w, x, scale=1.0):
        ran.append(1)
        s = snp.sum(x @ w)
        return s * scale if float(s) > 0 else -s * scale

    w, x = snp.asarray(W), snp.asarray(X)
    call = {"tensors": lambda: sj.grad(f)(w, x),
            "numpy argument": lambda: sj.grad(f)(w, X),
            "argnums tuple": lambda: sj.grad(f, argnums=(0,))(w, x),
            "keyword": lambda: sj.grad(f)(w, x, scale=2.0),
            "second argument": lambda: sj.grad(f, argnums=1)(w, x)}[route]
    with sj.lazy() if lazy else contextlib.nullcontext():
        got = call()
        assert len(ran) == 2, f"{route}: f ran {len(ran)} times"
    want = _traced(call)
    for a, b in zip(sj.tree.leaves(want), sj.tree.leaves(got), strict=True):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-6)


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize("route, splits", [
    ("tensors", 0), ("pytree of tensors", 0), ("second argument", 0),
    ("numpy argument", 1), ("argnums tuple", 1), ("keyword", 1), ("python leaf", 1)])
def test_a_call_on_tensors_takes_no_argument_split(route, splits, lazy, monkeypatch):
    """grad(loss)(params, x, y) on Tensors alone is recorded without _Args (_tape_one);
    any other call splits its arguments with _Args first. Both give the traced path's
    values, and the weak flag of a weak leaf reaches its gradient."""
    def f(p, x, scale=1.0):
        w = p["w"] if isinstance(p, dict) else p
        return snp.sum(snp.tanh(x @ w)) * scale

    w, x = snp.asarray(W), snp.asarray(X)
    call = {"tensors": lambda: sj.grad(f)(w, x),
            "pytree of tensors": lambda: sj.grad(f)({"w": w}, x),
            "second argument": lambda: sj.grad(f, argnums=1)(w, x),
            "numpy argument": lambda: sj.grad(f)(w, X),
            "argnums tuple": lambda: sj.grad(f, argnums=(0,))(w, x),
            "keyword": lambda: sj.grad(f)(w, x, scale=2.0),
            "python leaf": lambda: sj.grad(f)({"w": w, "k": 2.0}, x)}[route]
    want = _traced(call)
    made = []
    real = autodiff._Args
    monkeypatch.setattr(autodiff, "_Args", lambda *a, **k: made.append(1) or real(*a, **k))
    with sj.lazy() if lazy else contextlib.nullcontext():
        got = call()
    assert len(made) == splits, route
    for a, b in zip(sj.tree.leaves(want), sj.tree.leaves(got), strict=True):
        assert a.type == b.type and a.weak == b.weak, route
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-6)


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_a_call_on_tensors_is_taped_from_c_on_the_native_path(lazy, monkeypatch):
    """grad(loss)(params, x, y) on Tensors: the native path records it without
    autodiff._python_tape_one (recorder.c's tape_one), the Python path with it; both
    record it (no traced run) with the same values, for one output and for an output with
    aux; repeated in a lazy() block, the native path also finishes it in C (the last
    tape's derivative recorded without _tape_finish)."""
    w, x = snp.asarray(W), snp.asarray(X)
    params = [{"w": w}, {"b": snp.ones(3)}]

    def loss(p, x):
        return _loss(p[0]["w"], x) + snp.sum(p[1]["b"] ** 2)

    def with_aux(p, x):
        return loss(p, x), {"n": snp.mean(p[1]["b"])}

    python, finished, traced = [], [], _traces(monkeypatch)
    for name, log in [("_python_tape_one", python), ("_tape_finish", finished)]:
        real = getattr(autodiff, name)
        monkeypatch.setattr(autodiff, name, lambda *a, real=real, log=log:
                            log.append(1) or real(*a))
    native = recorder_native.installed()
    for f, has_aux in [(loss, False), (with_aux, True)]:
        want = _traced(lambda f=f, has_aux=has_aux: sj.value_and_grad(f, has_aux=has_aux)(
            params, x))
        for repeat in range(2):
            for log in (python, finished, traced):
                log.clear()
            with sj.lazy() if lazy else contextlib.nullcontext():
                got = sj.value_and_grad(f, has_aux=has_aux)(params, x)
            assert traced == []
            assert len(python) == (0 if native else 1)
            in_c = native and lazy and repeat == 1 and not has_aux
            assert len(finished) == (0 if in_c else 1), (has_aux, repeat)
            assert sj.tree.structure(got) == sj.tree.structure(want)
            for a, b in zip(sj.tree.leaves(want), sj.tree.leaves(got), strict=True):
                assert a.type == b.type and a.weak == b.weak
                np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-6)


def test_a_weak_leaf_stays_weak_on_a_tape():
    """A weak-typed leaf (a Python number made a tensor) is a weak parameter of the tape,
    so inside f it defers to a float16 operand as on the traced path: f's value is
    float16 (a strong float32 parameter would make it float32)."""
    v = snp.asarray(2.0)
    assert v.weak

    def f(a):
        return snp.sum(a * snp.ones(2, dtype=snp.float16))

    want = _traced(lambda: sj.value_and_grad(f)(v))
    assert want[0].type.dtype == snp.float16
    for lazy in (False, True):
        with sj.lazy() if lazy else contextlib.nullcontext():
            value, g = sj.value_and_grad(f)(v)
        assert value.type == want[0].type and g.type == want[1].type
        assert float(value) == float(want[0]) == 4.0 and float(g) == float(want[1])


def test_the_tape_is_used_only_for_one_eager_device(monkeypatch):
    """The reference backend and tensors of another backend take the traced path."""
    traced = _traces(monkeypatch)
    with sj.default_backend("reference"):
        g = sj.grad(_loss)(snp.asarray(W), snp.asarray(X))
    assert traced == [1]
    want = sj.grad(_loss)(snp.asarray(W), snp.asarray(X))
    assert traced == [1]
    np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-6)


# ---- random programs: the tape against the traced path --------------------------------

_FUZZ = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "25")),
                 deadline=None, derandomize=True, database=None,
                 suppress_health_check=list(HealthCheck))
_A = RNG.standard_normal((3, 4)).astype(np.float32)
_B = RNG.standard_normal(4).astype(np.float32)
_C = RNG.standard_normal((3, 4)).astype(np.float32)
_UNARY = [snp.sin, snp.tanh, lambda v: snp.exp(v * 0.1), snp.square,
          lambda v: snp.log1p(v * v), snp.abs, lambda v: v * 0.5 - 1.0,
          lambda v: 2.0 / (1.0 + v * v), lambda v: -v, nn.relu]
_BINARY = [snp.add, snp.subtract, snp.multiply, snp.maximum,
           lambda u, v: u / (1.0 + v * v), lambda u, v: snp.where(u > v, u, v * 2.0)]
# reductions keep their axes, so every value broadcasts against a (3, 4) and b (4,)
_REDUCE = [lambda v: snp.sum(v, axis=-1, keepdims=True),
           lambda v: snp.mean(v, axis=0, keepdims=True),
           lambda v: snp.max(v, axis=-1, keepdims=True)]


def _program(steps):
    c = snp.asarray(_C)  # closed over: a constant of the derivative

    def f(a, b):
        v = a
        for kind, i, other in steps:
            if kind == "unary":
                v = _UNARY[i % len(_UNARY)](v)
            elif kind == "binary":
                o = {"a": a, "b": b, "c": c, "number": -1.5, "itself": v}[other]
                v = _BINARY[i % len(_BINARY)](v, o)
            else:
                v = _REDUCE[i % len(_REDUCE)](v)
        return snp.sum(v * v)
    return f


@_FUZZ
@given(steps=st.lists(st.tuples(st.sampled_from(["unary", "binary", "reduce"]),
                                st.integers(0, 59),
                                st.sampled_from(["a", "b", "c", "number", "itself"])),
                      min_size=1, max_size=7),
       argnums=st.sampled_from([0, 1, (0, 1)]))
def test_random_programs_differentiate_alike_on_the_tape_and_traced(steps, argnums):
    f = _program(steps)
    a, b = snp.asarray(_A), snp.asarray(_B)
    want = _traced(lambda: sj.value_and_grad(f, argnums)(a, b))
    with pytest.MonkeyPatch.context() as mp:
        traced = _traces(mp)
        eager = sj.value_and_grad(f, argnums)(a, b)
        with sj.lazy():
            lazy = sj.value_and_grad(f, argnums)(a, b)
    assert traced == []
    for got in (eager, lazy):
        for w, g in zip(sj.tree.leaves(want), sj.tree.leaves(got), strict=True):
            assert w.type == g.type
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-6, atol=1e-6,
                                       err_msg=str(steps))


def test_a_tape_is_freed_without_the_cycle_collector():
    """A tape in a reference cycle would keep the values it read alive until a garbage
    collection: a lazy graph's results (its live pending values) would then depend on
    when the collector ran, and a training loop would compile new graphs at random."""
    import gc
    import weakref

    w = snp.asarray(W)
    made = []
    real = grad_tape.GradTape.__init__

    def init(self, home):
        real(self, home)
        made.append(weakref.ref(self))

    gc.disable()
    try:
        grad_tape.GradTape.__init__ = init
        sj.grad(_loss)(w, snp.asarray(X))
        with sj.lazy():
            sj.grad(_loss)(w, snp.asarray(X))
        assert len(made) == 2 and all(r() is None for r in made)
    finally:
        grad_tape.GradTape.__init__ = real
        gc.enable()


def _tape_pairs():
    """(what differs, f, args of f, g, args of g): two tapes that differ in one thing the
    last-tape memo (GradTape.last_derivative) must see, or in nothing."""
    w, x = snp.asarray(W), snp.asarray(X)
    w64 = snp.asarray(W.astype(np.float64))
    c = snp.asarray((W + 1j * W[::-1]).astype(np.complex64))
    return [
        ("nothing", _loss, (w, x), _loss, (w, x)),
        ("a constant", lambda w: snp.sum(w * 2.0), (w,), lambda w: snp.sum(w * 3.0), (w,)),
        ("a constant's sign", lambda w: snp.sum(w * 0.0), (w,),
         lambda w: snp.sum(w * -0.0), (w,)),
        ("the op", lambda w: snp.sum(snp.tanh(w)), (w,), lambda w: snp.sum(snp.sin(w)), (w,)),
        ("the result slot", lambda w: snp.sum(snp.tanh(w) * w), (w,),
         lambda w: (snp.tanh(w) * w, snp.sum(snp.tanh(w)))[1], (w,)),
        ("the argument's dtype", _loss, (w, x), _loss, (w64, snp.asarray(X.astype(np.float64)))),
        ("the argument's shape", lambda w: snp.sum(w ** 2), (w,),
         lambda w: snp.sum(w ** 2), (w[:2],)),
        ("an operand order", lambda w: snp.sum(w[0] - w[1]), (w,),
         lambda w: snp.sum(w[1] - w[0]), (w,)),
        ("a reduction's axis", lambda w: snp.sum(snp.mean(w, axis=0) ** 2), (w,),
         lambda w: snp.sum(snp.mean(w, axis=1) ** 2), (w,)),
        ("the differentiated arguments", _loss, (w, x), "argnums (0, 1)", (w, x)),
        ("a complex argument", lambda c: snp.sum(c * c), (c,),
         lambda c: snp.sum(c * c), (snp.asarray(W),)),
    ]


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize("index", range(len(_tape_pairs())), ids=[p[0] for p in _tape_pairs()])
def test_the_last_tapes_derivative_is_reused_only_for_an_equal_tape(index, lazy, monkeypatch):
    """grad reuses the derivative of the last tape when the new tape equals it entry by
    entry (a training loop: no key built or hashed). Alternating two tapes that differ
    in one thing must give each one's own gradient, equal to the traced path's; the same
    tape twice must reuse the derivative without a key."""
    what, f, f_args, g, g_args = _tape_pairs()[index]
    keys = []
    real = grad_tape.GradTape.key
    monkeypatch.setattr(grad_tape.GradTape, "key", lambda self: keys.append(1) or real(self))

    def call(fn, args):
        if fn == "argnums (0, 1)":
            return sj.grad(f, argnums=(0, 1))(*args)
        return sj.grad(fn, holomorphic=args[0].dtype.is_complex)(*args)

    for fn, args in [(f, f_args), (g, g_args), (f, f_args), (g, g_args), (g, g_args)]:
        keys.clear()
        want = _traced(lambda fn=fn, args=args: call(fn, args))
        if lazy:
            with sj.lazy():
                got = call(fn, args)
        else:
            got = call(fn, args)
        for a, b in zip(sj.tree.leaves(want), sj.tree.leaves(got), strict=True):
            assert a.type == b.type, what
            np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-6, atol=1e-7,
                                       err_msg=what)
            assert (_signs(b) == _signs(a)).all(), what
    assert keys == [], f"{what}: the same tape twice built a key"


def test_threads_taking_grads_on_tapes_get_their_own_gradients():
    """Four threads take grads of two different losses, eagerly and in lazy() blocks,
    while programs are evicted: grad_tape._last (the last tape's derivative) flips
    between the losses, and each thread's stack gets its own tape. Every gradient is
    its own loss's (the traced path's values)."""
    w, x = snp.asarray(W), snp.asarray(X)
    losses = [_loss, lambda v, x: snp.sum(snp.sin(x @ v) * 3.0)]
    want = [np.asarray(_traced(lambda f=f: sj.grad(f)(w, x))) for f in losses]
    wrong = []

    def step():
        for k, f in enumerate(losses):
            for lazy in (False, True):
                with sj.lazy() if lazy else contextlib.nullcontext():
                    g = sj.grad(f)(w * 1.0, x)
                if not np.allclose(np.asarray(g), want[k], rtol=1e-5, atol=1e-6):
                    wrong.append((k, lazy))

    assert errors_while_evicting(step, 25) == []
    assert wrong == []


def test_a_broken_invariant_of_the_c_path_says_it_is_a_bug_and_how_to_go_on(monkeypatch):
    """If an internal helper broke its contract, the C path's error names that, blames
    stablejit and gives the way around it (the Python path), rather than a bare
    TypeError from inside the extension."""
    if not recorder_native.installed():
        pytest.skip("the C path's own check")
    monkeypatch.setattr(autodiff, "_tape_results", lambda out, xs, before: [out])
    w = snp.asarray(W)
    with pytest.raises(TypeError, match="_tape_results returned no pair: a bug in "
                       "stablejit.*STABLEJIT_NATIVE=0"):
        sj.grad(lambda v: (snp.sum(v), 1.0))(w)  # (a pair: _tape_results is asked)


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_each_call_flattens_its_own_structure_whatever_came_before(lazy):
    """recorder.c checks each call's differentiated tree against the last one's structure
    before tree.flatten is asked. The loss weights each leaf by its path: the tree it is
    given and the gradients it returns must have every leaf at its own path, call after
    call."""
    weight = path_weight

    def loss(p):
        return sum(weight(k) * snp.sum(v * v) for k, v in sj.tree.leaves_with_path(p))

    cases = structures(*(snp.asarray(RNG.standard_normal(3).astype(np.float32))
                         for _ in range(4)))
    for name, tree in cases + cases[::-1]:
        with sj.lazy() if lazy else contextlib.nullcontext():
            value, grads = sj.value_and_grad(loss)(tree)
        assert sj.tree.structure(grads) == sj.tree.structure(tree), name
        want = 0.0
        for (path, g), (path_t, t) in zip(sj.tree.leaves_with_path(grads),
                                         sj.tree.leaves_with_path(tree), strict=True):
            assert path == path_t, name
            np.testing.assert_allclose(np.asarray(g), 2 * weight(path) * np.asarray(t),
                                       rtol=1e-6, err_msg=f"{name} at {path}")
            want += weight(path) * float(np.sum(np.asarray(t) ** 2))
        np.testing.assert_allclose(float(value), want, rtol=1e-5, err_msg=name)


def _tape_state(tape):
    """Every attribute of a tape: its slots (Recorder's __slots__) and its dict."""
    slots = {name: getattr(tape, name) for cls in type(tape).__mro__
             for name in getattr(cls, "__slots__", ()) if hasattr(tape, name)}
    return slots, dict(vars(tape))


@pytest.mark.parametrize("where", ["device", "lazy"])
def test_a_tape_made_in_c_is_the_tape_python_makes(where):
    """tape_one makes its GradTape in C (recorder.c's make_tape): every slot and
    attribute equal to GradTape(backend)'s, each container its own."""
    if not recorder_native.installed():
        pytest.skip("the C path's own tape")
    from stablejit import _recorder, context
    with sj.lazy() if where == "lazy" else contextlib.nullcontext():
        backend = context.current_backend()
        ours, theirs = _recorder.make_tape(backend), grad_tape.GradTape(backend)
    assert type(ours) is grad_tape.GradTape
    (slots, attrs), (want_slots, want_attrs) = _tape_state(ours), _tape_state(theirs)
    assert slots.keys() == want_slots.keys() and attrs == want_attrs
    for name, value in slots.items():
        want = want_slots[name]
        assert type(value) is type(want), name
        if isinstance(value, (list, dict)):
            assert value == want and value is not want, name
        elif name != "_lock":
            assert value == want, name


@pytest.mark.parametrize("method", ["__init__", "slots"])
def test_a_replaced_tape_method_is_called_by_the_c_path(method, monkeypatch):
    """A GradTape method the C path does itself (making the tape, reading its result
    slots), replaced after import, is the one that runs, and the gradient stays right."""
    calls = []
    real = getattr(grad_tape.GradTape, method)

    def replaced(self, *args):
        calls.append(method)
        return real(self, *args)

    monkeypatch.setattr(grad_tape.GradTape, method, replaced)
    g = sj.grad(lambda v: snp.sum(v * v))(snp.asarray(W))
    assert calls == [method]
    np.testing.assert_allclose(np.asarray(g), 2 * W, rtol=1e-6)


def test_a_repeated_lazy_tape_asks_runs_on_unless_the_mesh_memo_says_no_mesh(monkeypatch):
    """The C finish of a repeated tape in lazy() takes runs_on's answer from spmd's memo
    only where it says the derivative names no mesh; where the memo names one, runs_on
    itself is asked (it would run the derivative over that mesh)."""
    if not recorder_native.installed():
        pytest.skip("the C finish's own shortcut")
    from stablejit import spmd
    asked = []

    def mesh_of(fn):  # runs_on's lookup, counted; the mesh read from fn, not the memo
        asked.append(fn)
        return spmd.program_mesh(fn)

    w = snp.asarray(W)
    grad = sj.grad(lambda v: snp.sum(snp.tanh(v) ** 2))
    for _ in range(2):  # the derivative built, then found by the C finish
        with sj.lazy():
            want = np.asarray(grad(w))
    fn = grad_tape._last[2]
    monkeypatch.setattr(spmd, "_mesh_of", mesh_of)
    with sj.lazy():
        got = grad(w)
    assert asked == []  # (the memo: no mesh)
    np.testing.assert_array_equal(np.asarray(got), want)
    monkeypatch.setitem(spmd._MESHES, id(fn), (fn, object()))  # the memo names a mesh
    with sj.lazy():
        got = grad(w)
    assert asked == [fn]  # runs_on asked (and found no mesh in fn itself)
    np.testing.assert_array_equal(np.asarray(got), want)
