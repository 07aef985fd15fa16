"""Limits named clearly: every creation function's size-like argument (shape entries,
num, N/M, arange's length) against hostile values raises NumPy's exception type with a
message naming the function and the argument; arrays too large for the device raise a
MemoryError naming the shape, dtype and bytes before anything is allocated; Python ints
beyond a dtype's range raise OverflowError naming the value and the range (jax's type)."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

HOSTILE = [-1, 2.5, float("inf"), float("nan"), "3", None, 10**30, 2**63, 2**62]

# (label, call on a namespace with the hostile value v, the argument's name in messages)
SIZE_ARGS = [
    ("zeros(v)", lambda xp, v: xp.zeros(v), "shape"),
    ("zeros((2, v))", lambda xp, v: xp.zeros((2, v)), "shape"),
    ("ones(v)", lambda xp, v: xp.ones(v), "shape"),
    ("empty((v, 2))", lambda xp, v: xp.empty((v, 2)), "shape"),
    ("full(v, 1.0)", lambda xp, v: xp.full(v, 1.0), "shape"),
    ("linspace(num=v)", lambda xp, v: xp.linspace(0, 1, num=v), "num"),
    ("logspace(num=v)", lambda xp, v: xp.logspace(0, 1, num=v), "num"),
    ("geomspace(num=v)", lambda xp, v: xp.geomspace(1, 2, num=v), "num"),
    ("eye(v)", lambda xp, v: xp.eye(v), "N"),
    ("eye(2, v)", lambda xp, v: xp.eye(2, v), "M"),
    ("identity(v)", lambda xp, v: xp.identity(v), "n"),
]
# where stablejit deliberately differs from NumPy's exception type, and why
DIFFERS = {
    ("linspace(num=v)", 2**63): ValueError,  # NumPy: an IndexError from inside linspace
    ("logspace(num=v)", 2**63): ValueError,
    ("geomspace(num=v)", 2**63): ValueError,
    ("eye(2, v)", None): None,  # M=None means M=N, as in NumPy: no error
}


def _numpy_outcome(f, v):
    try:
        f(np, v)
    except Exception as e:  # noqa: BLE001 - the oracle's exception type
        return type(e)
    return None


@pytest.mark.parametrize("v", HOSTILE, ids=repr)
@pytest.mark.parametrize("label,f,arg", SIZE_ARGS, ids=[c[0] for c in SIZE_ARGS])
def test_a_hostile_size_raises_numpys_exception_type_and_names_it(label, f, arg, v):
    want = DIFFERS[label, v] if (label, v) in DIFFERS else _numpy_outcome(f, v)
    if want is None:
        f(snp, v)
        return
    assert want in (TypeError, ValueError), want  # what NumPy raises for these values
    with pytest.raises(want) as e:
        f(snp, v)
    name = label.split("(")[0]
    message = str(e.value)
    assert message.startswith(name + ":") or message.startswith("a shape must be") \
        or message.startswith("negative dimensions"), message
    assert arg in message or "shape" in message, message
    assert "test_creation_limits.py" in message  # the user's line


def test_linspace_num_names_num_and_what_it_must_be():
    with pytest.raises(TypeError, match=r"linspace: num must be a non-negative integer, got "
                                        r"inf \(a float\)"):
        snp.linspace(0, 1, num=float("inf"))
    with pytest.raises(ValueError, match="linspace: num must be a non-negative integer, got -3"):
        snp.linspace(0, 1, num=-3)


@pytest.mark.parametrize("args", [(0, float("inf")), (0, float("nan")), (0, 10, 0),
                                  (0, 10, float("nan")), (10**30,), (float("inf"),),
                                  (0, 10**19, 1)], ids=repr)
def test_arange_of_an_impossible_length_raises_numpys_type(args):
    want = _numpy_outcome(lambda xp, v: xp.arange(*v), args)
    assert want in (ValueError, ZeroDivisionError)
    with pytest.raises(want, match="arange"):
        snp.arange(*args)


def test_arange_step_zero_is_still_a_value_error():
    with pytest.raises(ValueError, match="step must not be zero"):
        snp.arange(0, 3, 0)


# ---- too large for the device: before allocating -------------------------------------

BIG = 2**25  # 2**25 x 2**25 float32 is 4 PiB: more than any machine's memory

TOO_BIG = [
    ("zeros", lambda: snp.zeros((BIG, BIG)), (BIG, BIG), "float32"),
    ("ones", lambda: snp.ones((BIG, BIG), dtype="int8"), (BIG, BIG), "int8"),
    ("full", lambda: snp.full((BIG, BIG), 2.0), (BIG, BIG), "float32"),
    ("empty", lambda: snp.empty((BIG, BIG)), (BIG, BIG), "float32"),
    ("eye", lambda: snp.eye(BIG), (BIG, BIG), "float32"),
    ("identity", lambda: snp.identity(BIG, dtype="float64"), (BIG, BIG), "float64"),
    ("tri", lambda: snp.tri(BIG), (BIG, BIG), "float32"),
    ("linspace", lambda: snp.linspace(0, 1, num=BIG * BIG), (BIG * BIG,), "float32"),
    ("arange", lambda: snp.arange(0, 1, 2.0**-50), (2**50,), "float32"),
]


@pytest.mark.parametrize("name,f,shape,dtype", TOO_BIG, ids=[c[0] for c in TOO_BIG])
def test_an_array_larger_than_the_device_is_a_memory_error_naming_it(name, f, shape, dtype):
    nbytes = int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize
    with pytest.raises(MemoryError) as e:
        f()
    message = str(e.value)
    assert f"snp.{name}: an array of shape {shape} and dtype {dtype}" in message
    assert f"({nbytes} bytes)" in message and "RESOURCE_EXHAUSTED" not in message
    assert "test_creation_limits.py" in message


# ---- Python ints beyond the dtype --------------------------------------------------------

X64 = np.asarray([1, 2], np.int64)
INTS = [
    ("asarray(2**63)", lambda xp: xp.asarray(2**63), 2**63, "int64"),
    ("asarray(-2**63-1)", lambda xp: xp.asarray(-(2**63) - 1), -(2**63) - 1, "int64"),
    ("asarray(2**64, int64)", lambda xp: xp.asarray(2**64, dtype=np.int64), 2**64, "int64"),
    ("asarray(2**64, uint64)", lambda xp: xp.asarray(2**64, dtype=np.uint64), 2**64,
     "uint64"),
    ("asarray(300, int8)", lambda xp: xp.asarray(300, dtype=np.int8), 300, "int8"),
    ("asarray(-1, uint8)", lambda xp: xp.asarray(-1, dtype=np.uint8), -1, "uint8"),
    ("x + 2**63", lambda xp: xp.asarray(X64) + 2**63, 2**63, "int64"),
    # (in a list, NumPy's raw "Python int too large to convert to C long")
    ("asarray([2**63])", lambda xp: xp.asarray([2**63]), 2**63, "int64"),
    ("asarray([[0], [-2**63-1]])", lambda xp: xp.asarray([[0], [-(2**63) - 1]]),
     -(2**63) - 1, "int64"),
    ("asarray([1, 300], int8)", lambda xp: xp.asarray([1, 300], dtype=np.int8), 300, "int8"),
    ("jit(f)(2**63)", lambda xp: (jax.jit if xp is jnp else stablejit.jit)(
        lambda x: x + 1)(2**63), 2**63, "int64"),
]


@pytest.mark.parametrize("label,f,value,dtype", INTS, ids=[c[0] for c in INTS])
def test_a_python_int_out_of_range_names_value_and_range(label, f, value, dtype):
    with jax.enable_x64(True), pytest.raises(OverflowError):
        f(jnp)  # the oracle's type
    info = np.iinfo(dtype)
    with pytest.raises(OverflowError) as e:
        f(snp)
    message = str(e.value)
    assert re.search(rf"Python int {value} is too (large|small) to convert to {dtype}, "
                     rf"which holds {info.min} to {info.max}", message), message
    assert "test_creation_limits.py" in message


def test_full_of_a_python_int_beyond_int64_names_it():
    with pytest.raises(OverflowError, match=r"Python int 9223372036854775808 is too large to "
                                            r"convert to int64"):
        snp.full(3, 2**63)


def test_ints_in_range_still_convert():
    assert int(snp.asarray(2**63 - 1)) == 2**63 - 1
    assert int(snp.asarray(-(2**63))) == -(2**63)
    assert int(snp.asarray(2**64 - 1, dtype="uint64")) == 2**64 - 1
    assert float(snp.asarray(2**63, dtype="float32")) == 2.0**63
