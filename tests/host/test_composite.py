"""Namespace functions made of several primitives run eagerly as one cached program
(frontend/composite.py): same values, dtypes, weakness and errors as op by op, one
dispatch, and the cases that must run op by op do."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import compilation, composite
from stablejit.errors import DeletedTensorError

from tests.host.test_native_recorder import path

RNG = np.random.default_rng(0)
X = RNG.standard_normal((6, 5)).astype(np.float32)
I = RNG.integers(-3, 4, (6, 5)).astype(np.int32)
IDX = RNG.integers(0, 5, (6, 1)).astype(np.int32)

# (name, call): every decorated function, with settings that change its program
CASES = [
    ("mean", lambda m, x, i: m.mean(x)),
    ("mean axis keepdims", lambda m, x, i: m.mean(x, axis=1, keepdims=True)),
    ("mean of ints", lambda m, x, i: m.mean(i, axis=0)),
    ("var ddof", lambda m, x, i: m.var(x, axis=0, ddof=1)),
    ("std", lambda m, x, i: m.std(x, axis=(0, 1))),
    ("sum keepdims", lambda m, x, i: m.sum(x, axis=1, keepdims=True)),
    ("sum of ints", lambda m, x, i: m.sum(i, axis=0)),
    ("sum dtype", lambda m, x, i: m.sum(i, dtype=m.float32)),
    ("prod", lambda m, x, i: m.prod(x, axis=0)),
    ("max", lambda m, x, i: m.max(x, axis=1)),
    ("min keepdims", lambda m, x, i: m.min(i, axis=0, keepdims=True)),
    ("all", lambda m, x, i: m.all(x > 0, axis=1)),
    ("any", lambda m, x, i: m.any(i == 2)),
    ("argmax", lambda m, x, i: m.argmax(x, axis=1)),
    ("argmin keepdims", lambda m, x, i: m.argmin(x, axis=0, keepdims=True)),
    ("count_nonzero", lambda m, x, i: m.count_nonzero(i, axis=1)),
    ("take_along_axis", lambda m, x, i: m.take_along_axis(x, m.asarray(IDX), axis=1)),
]


@pytest.mark.parametrize("name, call", CASES, ids=[c[0] for c in CASES])
def test_one_program_gives_numpys_values_and_dtypes(name, call):
    got = call(snp, snp.asarray(X), snp.asarray(I))
    want = np.asarray(call(np, X, I))
    # NumPy's float64 means of float32 and int data are float32 here, as in JAX
    assert np.dtype(got.dtype.np) == (np.float32 if want.dtype == np.float64 else want.dtype)
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name, call", CASES, ids=[c[0] for c in CASES])
def test_one_program_matches_the_same_function_run_op_by_op(name, call, monkeypatch):
    x, i = snp.asarray(X), snp.asarray(I)
    fast = call(snp, x, i)
    monkeypatch.setattr(composite.config, "debug_checks", lambda: True)  # op by op
    slow = call(snp, x, i)
    assert fast.type == slow.type and fast.weak == slow.weak
    np.testing.assert_allclose(np.asarray(fast), np.asarray(slow), rtol=1e-6, atol=1e-7)


def _count_runs(monkeypatch):
    runs = []
    real = compilation.Program.run
    monkeypatch.setattr(compilation.Program, "run",
                        lambda self, bufs: runs.append(self.name) or real(self, bufs))
    return runs


def test_a_composite_is_one_dispatch(monkeypatch):
    # (counted on the Python path, whose _run calls Program.run; the native cached call
    # runs the same program from C: test_native_composite.py compares the two)
    x = snp.asarray(X)
    with path(False):
        snp.var(x, axis=1, keepdims=True)  # compiles
        runs = _count_runs(monkeypatch)
        out = snp.var(x, axis=1, keepdims=True)
    assert runs == ["var"]
    np.testing.assert_allclose(np.asarray(out), X.var(axis=1, keepdims=True), rtol=1e-6)


def test_settings_are_keys_exactly():
    key = composite._setting_key
    assert key(0.0) != key(-0.0)
    assert len({key(1), key(1.0), key(True)}) == 3
    assert key(float("nan")) == key(float("nan"))
    assert key([1]) is None and key((1, [2])) is None  # unhashable: runs op by op
    x = snp.asarray(X)
    np.testing.assert_allclose(np.asarray(snp.var(x, correction=1)),
                               X.var(ddof=1), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(snp.var(x, correction=0)), X.var(), rtol=1e-6)


def test_weak_inputs_give_weak_results_as_op_by_op():
    w = snp.asarray(2.0)  # a weak float32, as in JAX
    assert w.weak
    for f in (snp.mean, snp.max, snp.prod, snp.var):
        assert f(w).weak == f.eager(w).weak


def test_errors_name_the_users_line():
    x = snp.asarray(X)
    with pytest.raises(Exception) as e:
        snp.mean(x, axis=5)
    assert "test_composite.py" in str(e.value)


def test_a_deleted_tensor_is_reported():
    x = snp.asarray(X)
    snp.mean(x, axis=0)
    stablejit.backend_transfer(x, "reference")
    with pytest.raises(DeletedTensorError):
        snp.mean(x, axis=0)


def test_inside_lazy_and_traces_a_composite_joins_the_graph_at_the_callers_line():
    x = snp.asarray(X)
    with stablejit.lazy() as backend:
        y = snp.var(x, axis=0)  # one tape entry: the cached Function
        entries = [e for e in backend._tape if e[0] != "param"]
        ops = backend.recorded()
    assert len(entries) == 1 and entries[0][1].name == "var", entries
    assert "reduce_sum" in ops and "divide" in ops, ops
    np.testing.assert_allclose(np.asarray(y), X.var(axis=0), rtol=1e-6)
    line = sys._getframe().f_lineno + 1
    text = stablejit.jit(lambda v: snp.var(v, axis=0) + snp.var(v, axis=0)).lower(x).as_text()
    assert "reduce" in text and f"test_composite.py\":{line}" in text
    # a second call site in the same trace names its own line
    g = stablejit.jit(lambda v: (snp.var(v, axis=0),
                                 snp.var(v + 1.0, axis=0)))  # (the same signature)
    text = g.lower(x).as_text()
    first = sys._getframe().f_lineno - 3
    assert f":{first}:" in text and f":{first + 1}:" in text


def test_in_lazy_a_composite_of_pending_and_device_tensors_is_one_entry():
    x = snp.asarray(X)
    with stablejit.lazy() as backend:
        h = x * 2.0  # pending in the graph; x stays a device tensor
        y = snp.where(h > 0, x, h)
        entries = [e[0] for e in backend._tape if e[0] != "param"]
    assert entries.count("inline") == 1 and len(entries) == 3, entries  # *, >, where
    np.testing.assert_array_equal(np.asarray(y), np.where(X * 2 > 0, X, X * np.float32(2)))


def test_grad_through_a_composite_matches_op_by_op(monkeypatch):
    x = snp.asarray(X)
    idx = snp.asarray(IDX)

    def loss(v):
        return -snp.mean(snp.take_along_axis(stablejit.nn.log_softmax(v), idx, axis=1))

    fast = np.asarray(stablejit.grad(loss)(x))
    monkeypatch.setattr(composite.config, "debug_checks", lambda: True)  # op by op
    slow = np.asarray(stablejit.grad(loss)(x))
    np.testing.assert_allclose(fast, slow, rtol=1e-6, atol=1e-7)


def test_a_function_that_needs_a_value_runs_op_by_op():
    seen = []

    @composite.one_program
    def positive_part(x):
        seen.append(1)
        return x if bool(snp.all(x > 0)) else snp.maximum(x, 0.0)

    x = snp.asarray(X)
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(positive_part(x)), np.maximum(X, 0))
    assert len(seen) == 4  # one trace that needed a value, then three eager calls


def test_new_float_settings_stop_compiling_after_a_bound(monkeypatch):
    monkeypatch.setattr(composite, "_FLOAT_KEYS", 2)
    compiled = []
    real = composite._trace

    def counting(f, args, *rest):
        if f.__name__ == "scale":
            compiled.append(args[1])
        return real(f, args, *rest)

    monkeypatch.setattr(composite, "_trace", counting)

    @composite.one_program
    def scale(x, c):
        return snp.sum(x, axis=0) * c

    x = snp.asarray(X)
    for c in (1.5, 2.5, 3.5, 4.5, 1.5, -0.0, 0.0):
        np.testing.assert_allclose(np.asarray(scale(x, c)), X.sum(axis=0) * c, rtol=1e-6)
    assert compiled == [1.5, 2.5]  # then floats run as written; a known one is cached
    assert np.signbit(np.asarray(scale(x, -0.0))).any() == np.signbit(X.sum(0) * -0.0).any()


# nn functions: the one program against the op-by-op run and jax.nn (the oracle)
NN_CASES = [
    ("softmax", lambda nn, x: nn.softmax(x, axis=1)),
    ("log_softmax", lambda nn, x: nn.log_softmax(x)),
    ("logsumexp", lambda nn, x: nn.logsumexp(x, axis=0)),
    ("gelu", lambda nn, x: nn.gelu(x)),
    ("gelu exact", lambda nn, x: nn.gelu(x, approximate=False)),
    ("elu", lambda nn, x: nn.elu(x, alpha=0.5)),
    ("leaky_relu", lambda nn, x: nn.leaky_relu(x, 0.1)),
    ("silu", lambda nn, x: nn.silu(x)),
    ("relu", lambda nn, x: nn.relu(x)),
    ("relu6", lambda nn, x: nn.relu6(x * 8)),
    ("soft_sign", lambda nn, x: nn.soft_sign(x)),
    ("squareplus", lambda nn, x: nn.squareplus(x)),
    ("softplus", lambda nn, x: nn.softplus(x)),
    ("one_hot", lambda nn, x: nn.one_hot((x > 0).astype("int32").sum(axis=1), 6)),
]


@pytest.mark.parametrize("name, call", NN_CASES, ids=[c[0] for c in NN_CASES])
def test_nn_functions_as_one_program(name, call, monkeypatch):
    import jax
    from stablejit import nn
    x = snp.asarray(X)
    fast = call(nn, x)
    want = call(jax.nn, jax.numpy.asarray(X))
    np.testing.assert_allclose(np.asarray(fast), np.asarray(want), rtol=2e-6, atol=2e-6)
    monkeypatch.setattr(composite.config, "debug_checks", lambda: True)  # op by op
    slow = call(nn, x)
    assert fast.type == slow.type and fast.weak == slow.weak
    np.testing.assert_allclose(np.asarray(fast), np.asarray(slow), rtol=1e-6, atol=1e-7)


def test_where_with_a_python_scalar():
    x = snp.asarray(X)
    for fill in (0.0, -0.0, 2):
        got = np.asarray(snp.where(x > 0, x, fill))
        want = np.where(X > 0, X, np.float32(fill))
        np.testing.assert_array_equal(got, want)
        assert (np.signbit(got) == np.signbit(want)).all()
    np.testing.assert_array_equal(np.asarray(snp.where(x > 0)[0]), np.where(X > 0)[0])
