"""Calling Python from compiled code: debug.print order, callbacks in loops and under
grad and vmap, pure/io callbacks against NumPy, hooks, and errors raised in callbacks."""

import traceback

import numpy as np
import pytest
import stablejit as sj
import stablejit.numpy as snp

X = np.arange(4.0, dtype=np.float32)


def test_debug_print_under_jit_prints_in_program_order(capsys):
    @sj.jit
    def f(x):
        sj.debug.print("first {x}", x=x)
        y = x * 2
        sj.debug.print("second {} {}", y, "text")
        sj.debug.print("third {s:.1f}", s=y.sum())
        return y

    for _ in range(2):  # and again from the cache
        np.testing.assert_array_equal(np.asarray(f(X)), X * 2)
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["first [0. 1. 2. 3.]", "second [0. 2. 4. 6.] text", "third 12.0"] * 2


def test_debug_print_eagerly_and_on_the_reference_backend(capsys):
    sj.debug.print("eager {}", snp.asarray(X))
    with sj.default_backend("reference"):
        sj.jit(lambda x: sj.debug.print("ref {}", x) or x)(snp.asarray(X))
    assert capsys.readouterr().out.splitlines() == ["eager [0. 1. 2. 3.]",
                                                    "ref [0. 1. 2. 3.]"]


def test_callback_in_a_loop_body_runs_every_iteration():
    seen = []

    def body(i, c):
        sj.debug.callback(lambda i, c: seen.append((int(i), float(c))), i, c)
        return c + 1.0

    out = sj.jit(lambda c: sj.fori_loop(0, 4, body, c))(snp.asarray(np.float32(0)))
    assert float(out) == 4.0
    assert seen == [(0, 0.0), (1, 1.0), (2, 2.0), (3, 3.0)]


def test_debug_print_under_grad_sees_primal_values(capsys):
    def loss(x):
        sj.debug.print("x {}", x)
        return snp.sum(snp.sin(x))
    g = sj.jit(sj.grad(loss))(X)
    np.testing.assert_allclose(np.asarray(g), np.cos(X), rtol=1e-6)
    assert capsys.readouterr().out.splitlines() == ["x [0. 1. 2. 3.]"]


def test_debug_print_under_vmap_sees_the_batch(capsys):
    out = sj.vmap(lambda x: (sj.debug.print("v {}", x), x * 2)[1])(X)
    np.testing.assert_array_equal(np.asarray(out), X * 2)
    assert capsys.readouterr().out.splitlines() == ["v [0. 1. 2. 3.]"]


def test_pure_callback_matches_numpy_and_vmaps():
    spec = sj.ShapeDtypeStruct((4,), "float32")
    f = sj.jit(lambda x: sj.pure_callback(np.sin, spec, x) + 1.0)
    np.testing.assert_allclose(np.asarray(f(X)), np.sin(X) + 1.0, rtol=1e-6)
    calls = []

    def one(v):
        calls.append(v.shape)
        return np.float32(v.sum())
    batched = sj.vmap(lambda r: sj.pure_callback(one, sj.ShapeDtypeStruct((), "float32"), r,
                                                 vmap_method="sequential"))
    np.testing.assert_allclose(np.asarray(batched(np.stack([X, X * 2]))), [6.0, 12.0])
    assert calls == [(4,), (4,)]


def test_pure_callback_under_vmap_needs_a_vmap_method():
    f = sj.vmap(lambda r: sj.pure_callback(np.sin, sj.ShapeDtypeStruct((4,), "float32"), r))
    with pytest.raises(ValueError, match="vmap_method="):
        f(np.stack([X, X]))


def test_io_callback_returns_values_and_is_never_dropped():
    log = []

    def record(x):
        log.append(float(x.sum()))
        return np.int32(len(log))
    f = sj.jit(lambda x: sj.io_callback(record, sj.ShapeDtypeStruct((), "int32"), x) * 0 + x)
    f(X)
    f(X)
    assert log == [6.0, 6.0]


def test_differentiating_through_a_pure_callback_is_a_clear_error():
    f = lambda x: snp.sum(sj.pure_callback(np.sin, sj.ShapeDtypeStruct((4,), "float32"), x))
    with pytest.raises(TypeError, match="cannot differentiate through the pure callback"):
        sj.grad(f)(X)


def test_hook_sends_the_value_and_returns_it_unchanged():
    seen = []
    out = sj.jit(lambda x: sj.hook(x * 3, lambda v: seen.append(v.tolist())) + 1)(X)
    np.testing.assert_array_equal(np.asarray(out), X * 3 + 1)
    assert seen == [[0.0, 3.0, 6.0, 9.0]]


def test_an_exception_in_a_callback_is_raised_at_the_call_with_its_traceback():
    def bad(x):
        raise KeyError(f"bad value {x[0]}")

    f = sj.jit(lambda x: (sj.debug.callback(bad, x), x + 1)[1])
    with pytest.raises(KeyError, match="bad value 0.0") as e:
        f(X)
    frames = [fr.name for fr in traceback.extract_tb(e.value.__traceback__)]
    assert "bad" in frames
    np.testing.assert_array_equal(np.asarray(sj.jit(lambda x: x + 1)(X)), X + 1)  # alive


def test_a_callback_returning_the_wrong_shape_names_it():
    f = sj.jit(lambda x: sj.pure_callback(lambda v: v[:2], sj.ShapeDtypeStruct((4,), "float32"),
                                          x))
    with pytest.raises(TypeError, match=r"returned shape \(2,\) for result 0, declared \(4,\)"):
        f(X)


def test_a_pure_callback_records_in_a_lazy_graph():
    """Its attributes reach the lazy backend as Attrs (a dict crashed its shape memo)."""
    x = snp.asarray(np.linspace(0, 1, 4, dtype=np.float32))
    with sj.lazy():
        y = sj.pure_callback(np.sin, sj.ShapeDtypeStruct((4,), "float32"), x) * 2.0
    np.testing.assert_array_equal(np.asarray(y), np.sin(np.asarray(x)) * np.float32(2.0))
