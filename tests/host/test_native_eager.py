"""Eager ops on a device run in C (recorder.c's eager_run / eager_scalar) against the
Python path.

An operator (`x + y`, `x * 2.0`, `-x`) or a namespace function that reaches dispatch's
bind_unary / bind_binary / bind_scalar, on tensors of one device with no lazy graph or
trace around, runs the device's cached one-op program from C. It must give what the
Python path gives: the same values bit for bit, dtypes, weakness and tensor slots, the
same errors; take only the calls it can (a weak operand, NaN checks, a program not
compiled yet or evicted, a deleted tensor are Python's); and never enter Python's
dispatch on a hit.
"""

from __future__ import annotations

import numpy as np
import pytest
import stablejit as sj
import stablejit.numpy as snp
from stablejit import backends, compilation
from stablejit.errors import DeletedTensorError
from stablejit.tensor import Tensor

from tests.host.test_native import config_setting
from tests.host.test_native_recorder import needs_native, path
from tests.support.threads import errors_while_evicting


def _tensors(dtype, shape):
    rng = np.random.default_rng(abs(hash((dtype, shape))) % 2**32)
    if dtype == "bool":
        a, b = rng.random(shape) < 0.5, rng.random(shape) < 0.5
    elif dtype.startswith("int"):
        a, b = rng.integers(-9, 9, shape), rng.integers(1, 9, shape)
    elif dtype.startswith("complex"):
        a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        b = rng.standard_normal(shape) - 1j
    else:
        a, b = rng.standard_normal(shape), rng.standard_normal(shape)
        a.flat[0] = np.nan if a.size > 1 else a.flat[0]
    return snp.asarray(np.asarray(a, dtype)), snp.asarray(np.asarray(b, dtype))


# (name, fn(x, y)): every form the C path takes, and forms next to them it leaves to
# Python (a promotion, an inexact operator on integers, a weak or reference operand)
OPS = [
    ("x + y", lambda x, y: x + y), ("x - y", lambda x, y: x - y),
    ("x * y", lambda x, y: x * y), ("x / y", lambda x, y: x / y),
    ("x < y", lambda x, y: x < y), ("x == y", lambda x, y: x == y),
    ("x & y", lambda x, y: x & y), ("x ** y", lambda x, y: x ** y),
    ("-x", lambda x, y: -x), ("~x", lambda x, y: ~x),
    ("x + 1.0", lambda x, y: x + 1.0), ("2.0 * x", lambda x, y: 2.0 * x),
    ("1.0 - x", lambda x, y: 1.0 - x), ("x * 2", lambda x, y: x * 2),
    ("x / 3", lambda x, y: x / 3), ("x ** 2", lambda x, y: x ** 2),
    ("tanh(x)", lambda x, y: snp.tanh(x)), ("exp(x)", lambda x, y: snp.exp(x)),
    ("sum(x)", lambda x, y: snp.sum(x)), ("maximum(x, 0.0)", lambda x, y: snp.maximum(x, 0.0)),
    ("maximum(x, y)", lambda x, y: snp.maximum(x, y)), ("abs(x)", lambda x, y: snp.abs(x)),
    ("x + weak", lambda x, y: x + snp.asarray(2)),
    ("x + y64", lambda x, y: x + snp.ones(x.shape, "float64")),
]
DTYPES = ["float32", "float64", "int32", "bool", "complex64"]
SHAPES = [(), (3, 4)]


def _run(fn, x, y):
    try:
        out = fn(x, y)
    except Exception as e:  # the same error on both paths
        return type(e), str(e)
    assert type(out) is Tensor
    return (np.asarray(out), out.type, out.weak, out._backend, out._view, out._aliases)


def _same(a, b):
    if isinstance(a[0], type):
        assert a == b
        return
    np.testing.assert_array_equal(a[0], b[0], strict=True)
    assert a[1:] == b[1:]


@needs_native
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, fn", OPS, ids=[o[0] for o in OPS])
def test_eager_ops_are_the_same_on_both_paths(name, fn, dtype, shape):
    x, y = _tensors(dtype, shape)
    with path(False):
        python = _run(fn, x, y)
    with path(True):
        native = [_run(fn, x, y) for _ in range(2)]  # a miss (Python enters it), a hit
    for got in native:
        _same(got, python)


@needs_native
def test_a_hit_never_enters_python_dispatch(monkeypatch):
    """Once the op table holds the program, the C path runs it: none of the device's
    Python apply methods is called; the Python path calls them every time."""
    x, y = _tensors("float32", (3, 4))
    ops = [lambda: x + y, lambda: x * 2.0, lambda: 1.0 - x, lambda: -x,
           lambda: snp.tanh(x), lambda: snp.maximum(x, 0.0), lambda: snp.sum(x)]
    for op in ops:
        op()  # the programs compiled
    calls = []
    for name in ("apply", "apply_scalar", "apply_broadcast"):
        real = getattr(backends.XlaBackend, name)

        def spy(*args, _real=real, _name=name, **kwargs):
            calls.append(_name)
            return _real(*args, **kwargs)
        monkeypatch.setattr(backends.XlaBackend, name, spy)
    for native in (True, False):
        calls.clear()
        with path(native):
            for op in ops:
                op()
        assert (calls == []) == native, calls


@needs_native
def test_what_the_c_path_leaves_to_python():
    """A weak operand, NaN checks, a lazy graph, a jit trace, an evicted program and a
    deleted tensor are Python's, with Python's answers and errors."""
    x, y = _tensors("float32", (3, 4))
    with path(True):
        x + y, x * 2.0, -x  # noqa: B018 (compiled)
        w = snp.asarray(2.0)
        assert w.weak and (w * 3.0).weak and not (x * w).weak
        ones = snp.ones((3, 4))
        snp.log(ones - 2.0)  # (compiled: NaN, unchecked)
        with config_setting("debug_nans", True):
            with pytest.raises(FloatingPointError, match="test_native_eager.py"):
                snp.log(ones - 2.0)
        with sj.lazy():
            z = x + y
        assert "lazy" in repr(z)
        assert np.asarray(sj.jit(lambda a, b: -(a + b))(x, y)).shape == (3, 4)
        key = next(k for k in x._backend._ops.entries if k[0].name == "add"
                   and k[2:] == (x.type, y.type))
        compilation._EXECUTABLES.clear()  # evicted: Program.run loads it again
        assert x._backend._ops.entries[key].execute is None
        np.testing.assert_array_equal(np.asarray(x + y), np.asarray(x) + np.asarray(y))
        assert x._backend._ops.entries[key].execute is not None
        gone = snp.asarray(np.ones(3, np.float32))
        sj.jit(lambda t: t * 2, donate_argnums=0)(gone)
        for op in (lambda t: t + t, lambda t: t * 2.0, lambda t: -t, snp.tanh):
            with pytest.raises(DeletedTensorError, match="test_native_eager.py"):
                op(gone)


@needs_native
def test_threads_run_eager_ops_safely():
    """Four threads run eager ops in C while another evicts every program."""
    x, y = _tensors("float32", (3, 4))
    want = np.asarray(x) * 2.0 + np.asarray(y)

    def step():
        np.testing.assert_array_equal(np.asarray(x * 2.0 + y), want)
    with path(True):
        assert errors_while_evicting(step, 300) == []
