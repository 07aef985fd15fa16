"""stablejit dtypes with NumPy: comparison, names, NumPy accepting them, calling one.

Found as regressions (issue 9): each test failed before its fix."""


import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

BIG = 16777217.0  # 2**24 + 1: exact in float64, not in float32


def _bits(a) -> np.ndarray:
    a = np.asarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


# ---- NumPy interoperability of dtypes ---------------------------------------------------

def test_dtype_compares_with_numpy_and_names():
    x = snp.ones(3)
    assert x.dtype == np.float32 and x.dtype == "float32" and x.dtype == np.dtype("float32")
    assert np.float32 == x.dtype and np.dtype("float32") == x.dtype
    assert x.dtype != np.float64 and x.dtype != "int32" and x.dtype != snp.float64
    assert x.dtype != None and x.dtype != "no such dtype" and x.dtype != object()  # noqa: E711
    assert snp.asarray([1], dtype=snp.bfloat16).dtype == snp.bfloat16
    assert len({snp.float32, snp.float32, snp.int8}) == 2
    assert hash(x.dtype) == hash(np.dtype(np.float32))  # equal objects hash alike


def test_numpy_accepts_stablejit_dtypes():
    x = snp.ones(3)
    assert np.zeros(3, dtype=x.dtype).dtype == np.float32
    assert np.dtype(snp.int16) == np.int16
    assert np.issubdtype(x.dtype, np.floating) and not np.issubdtype(x.dtype, np.integer)
    assert np.finfo(x.dtype).bits == 32 and np.iinfo(snp.int8).max == 127
    assert np.asarray([1, 2], dtype=snp.uint8).dtype == np.uint8


def test_dtype_called_makes_a_tensor_as_in_jax():
    t = snp.float32(1.5)
    assert isinstance(t, stablejit.Tensor) and t.shape == () and t.dtype is snp.float32
    assert not t.weak and float(t) == 1.5
    assert _bits(snp.float64(BIG)) == _bits(np.float64(BIG))
    assert np.asarray(snp.int8([1, 2])).tolist() == [1, 2]
    with pytest.raises(OverflowError):
        snp.int8(300)
    g = stablejit.jit(lambda x: x + snp.float32(2.0))
    assert np.asarray(g(snp.ones(2))).tolist() == [3.0, 3.0]


def test_stream_chunks_stay_valid_and_a_repeated_state_tensor_is_refused():
    s = stablejit.stream(lambda x, acc: (acc, acc + x), "f32[3]", snp.zeros(3))
    chunk = snp.ones(3)
    s.send(chunk)
    s.recv()
    assert np.array_equal(np.asarray(chunk), np.ones(3, np.float32))  # not donated
    x = snp.zeros(3)
    with pytest.raises(ValueError, match="twice"):
        stablejit.stream(lambda c, st: (st[0], st), "f32[3]", (x, x))


@pytest.mark.parametrize("name", ["broadcast_to", "reshape", "tile", "linspace"])
def test_float_sizes_are_refused_not_truncated(name):
    x = snp.ones(3)
    call = {"broadcast_to": lambda m: m.broadcast_to(m.ones(3), (2, 3.0)),
            "reshape": lambda m: m.reshape(m.ones(3), (3.0,)),
            "tile": lambda m: m.tile(m.ones(3), 2.5),
            "linspace": lambda m: m.linspace(0, 1, 2.5)}[name]
    with pytest.raises(TypeError):
        call(np)
    with pytest.raises(TypeError):
        call(snp)
    assert x.shape == (3,)


def test_integer_like_sizes_still_work():
    x = snp.ones(3)
    assert snp.broadcast_to(x, (np.int64(2), 3)).shape == (2, 3)
    assert snp.reshape(x, np.int64(3)).shape == (3,)
    assert snp.reshape(x, (-1, 1)).shape == (3, 1)
    assert snp.tile(x, np.int32(2)).shape == (6,)
    assert snp.linspace(0, 1, np.int64(3)).shape == (3,)
