"""The namespace as a whole, per the Python array API standard (2024.12): version and
inspection API, data type functions, the promotion table (JAX's lattice for mixed
kinds, see frontend/promotion.py and test_weak_types.py), Python scalar weak typing, the Tensor's
array-API attributes, and the errors users get (AxisError, ValueError, TypeError that
name the operand and the user's line)."""

import itertools
import os
import subprocess
import sys

import numpy as np
import pytest
import stablejit as sj
import stablejit.numpy as snp
from stablejit.compiler import dtypes as dt

from tests.support import jax_promotion
from tests.support.compare import tolerance

STANDARD = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float32", "float64", "complex64", "complex128"]
HERE = os.path.basename(__file__)


# ---- version, inspection ---------------------------------------------------------------

def test_version_and_namespace():
    assert snp.__array_api_version__ == "2025.12"
    x = snp.asarray([1.0, 2.0])
    assert x.__array_namespace__() is snp
    assert x.__array_namespace__(api_version="2023.12") is snp
    with pytest.raises(ValueError, match="2030.12"):
        x.__array_namespace__(api_version="2030.12")
    # 2025.12 returns tuples where 2024.12 returned lists (NumPy 2 does too)
    assert type(snp.meshgrid(x, x)) is tuple and type(snp.broadcast_arrays(x, x)) is tuple
    devices = snp.__array_namespace_info__().devices()
    assert isinstance(devices, tuple) and devices + [None] == (*devices, None)


def test_namespace_info():
    info = snp.__array_namespace_info__()
    caps = info.capabilities()
    assert set(caps) == {"boolean indexing", "data-dependent shapes", "max dimensions"}
    limit = caps["max dimensions"]
    assert snp.ones((1,) * limit).ndim == limit  # the limit holds, the host reads it back
    assert (snp.ones((1,) * limit) + 1).numpy().ndim == limit
    devices = info.devices()
    assert info.default_device() in devices
    assert "reference" in devices
    assert info.default_dtypes() == {"real floating": snp.float32,
                                     "complex floating": snp.complex64,
                                     "integral": snp.int64, "indexing": snp.int64}
    assert list(info.dtypes()) == STANDARD
    assert list(info.dtypes(kind="signed integer")) == ["int8", "int16", "int32", "int64"]
    assert list(info.dtypes(kind=("bool", "complex floating"))) == ["bool", "complex64",
                                                                      "complex128"]
    assert list(info.dtypes(kind="real floating", device="reference")) == ["float32", "float64"]
    with pytest.raises(ValueError, match="unknown dtype kind"):
        info.dtypes(kind="floats")
    for d in devices:  # every listed device can hold data, and says so
        x = snp.asarray([1, 2, 3], device=d)
        assert x.tolist() == [1, 2, 3]
        y = x.to_device(d)
        assert y is x
    with sj.default_backend("reference"):
        assert info.default_device() == "reference"


def test_capabilities_tell_the_truth():
    x = snp.asarray(np.array([3.0, -1.0, 2.0], np.float32))
    np.testing.assert_array_equal(np.asarray(x[x > 0]), [3.0, 2.0])  # boolean indexing
    assert snp.nonzero(x > 0)[0].tolist() == [0, 2]  # data-dependent shape
    with pytest.raises(sj.MustCompileError):  # ... but not inside jit, as documented
        sj.jit(lambda x: x[x > 0])(x)


# ---- data type functions ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64", "complex64",
                                  "complex128"])
def test_finfo(name):
    d = dt.dtype(name)
    f = snp.finfo(d)
    ref = dt.finfo(dt.real_dtype(d))
    assert f.bits == dt.real_dtype(d).bits
    assert f.eps == float(ref.eps) and f.max == float(ref.max) and f.min == float(ref.min)
    assert f.smallest_normal == float(ref.smallest_normal)
    assert f.dtype is dt.real_dtype(d)
    assert snp.finfo(snp.zeros(2, dtype=d)).eps == f.eps  # a tensor works too


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64", "uint8", "uint16",
                                  "uint32", "uint64"])
def test_iinfo(name):
    i = snp.iinfo(name)
    ref = np.iinfo(name)
    assert (i.bits, i.min, i.max) == (ref.bits, int(ref.min), int(ref.max))
    assert i.dtype is dt.dtype(name)


def test_info_of_the_wrong_kind_is_a_type_error():
    with pytest.raises(TypeError, match="iinfo"):
        snp.finfo(snp.int32)
    with pytest.raises(TypeError, match="finfo"):
        snp.iinfo(snp.float32)


KINDS = {"bool": {"bool"}, "signed integer": {"int8", "int16", "int32", "int64"},
         "unsigned integer": {"uint8", "uint16", "uint32", "uint64"},
         "real floating": {"float32", "float64"},
         "complex floating": {"complex64", "complex128"}}
KINDS["integral"] = KINDS["signed integer"] | KINDS["unsigned integer"]
KINDS["numeric"] = KINDS["integral"] | KINDS["real floating"] | KINDS["complex floating"]


def test_isdtype():
    for name in STANDARD:
        d = getattr(snp, name)
        for kind, members in KINDS.items():
            assert snp.isdtype(d, kind) == (name in members), (name, kind)
        assert snp.isdtype(d, d)
    assert snp.isdtype(snp.float32, ("bool", "real floating"))
    assert not snp.isdtype(snp.int8, ("bool", snp.float32))
    assert snp.isdtype(snp.bfloat16, "real floating")
    assert snp.isdtype(dtype=snp.int8, kind="integral")  # the standard names both parameters
    with pytest.raises(ValueError, match="unknown kind"):
        snp.isdtype(snp.int8, "integer")
    with pytest.raises(TypeError, match="x.dtype"):
        snp.isdtype(snp.zeros(2), "numeric")


def test_can_cast_matches_numpy_safe_casting():
    for a, b in itertools.product(STANDARD, STANDARD):
        assert snp.can_cast(getattr(snp, a), getattr(snp, b)) == np.can_cast(a, b, "safe"), (a, b)
    assert snp.can_cast(snp.zeros(2, dtype=snp.int8), snp.int16)


# ---- promotion --------------------------------------------------------------------------

# The standard's table within each kind (and int/uint mixing), written out; pairs the
# standard leaves open (int64 with uint64, integers with floats) follow JAX's lattice.
STANDARD_TABLE = {
    ("int8", "int16"): "int16", ("int8", "int32"): "int32", ("int8", "int64"): "int64",
    ("int16", "int32"): "int32", ("int16", "int64"): "int64", ("int32", "int64"): "int64",
    ("uint8", "uint16"): "uint16", ("uint8", "uint32"): "uint32", ("uint8", "uint64"): "uint64",
    ("uint16", "uint32"): "uint32", ("uint16", "uint64"): "uint64",
    ("uint32", "uint64"): "uint64",
    ("int8", "uint8"): "int16", ("int8", "uint16"): "int32", ("int8", "uint32"): "int64",
    ("int16", "uint8"): "int16", ("int16", "uint16"): "int32", ("int16", "uint32"): "int64",
    ("int32", "uint8"): "int32", ("int32", "uint16"): "int32", ("int32", "uint32"): "int64",
    ("int64", "uint8"): "int64", ("int64", "uint16"): "int64", ("int64", "uint32"): "int64",
    ("float32", "float64"): "float64", ("complex64", "complex128"): "complex128",
    ("float32", "complex64"): "complex64", ("float32", "complex128"): "complex128",
    ("float64", "complex64"): "complex128", ("float64", "complex128"): "complex128",
}


def test_promotion_table_of_the_standard():
    for (a, b), want in STANDARD_TABLE.items():
        for x, y in ((a, b), (b, a)):
            assert snp.result_type(getattr(snp, x), getattr(snp, y)).name == want, (x, y)
    for name in STANDARD:
        assert snp.result_type(getattr(snp, name), getattr(snp, name)).name == name


def test_mixed_kinds_follow_jax():
    for a, b in itertools.product(STANDARD, STANDARD):
        x, y = getattr(snp, a), getattr(snp, b)
        assert snp.result_type(x, y) is jax_promotion.result_type(x, y)[0], (a, b)
    assert snp.result_type(snp.int32, snp.float32) is snp.float32
    assert snp.result_type(snp.uint64, snp.int64) is snp.float32  # the weak float default


def test_half_precision_promotion():
    assert snp.result_type(snp.bfloat16, snp.float16) is snp.float32
    assert snp.result_type(snp.bfloat16, snp.int8) is snp.bfloat16
    assert snp.result_type(snp.bfloat16, snp.float32) is snp.float32
    assert snp.result_type(snp.float16, snp.uint8) is snp.float16


def test_operations_use_the_promotion_table():
    # the dtype operations actually produce (reference backend: no compiles)
    with sj.default_backend("reference"):
        for a, b in itertools.product(STANDARD, STANDARD):
            x, y = snp.ones(2, dtype=a), snp.ones(2, dtype=b)
            want = snp.result_type(x, y)
            assert snp.multiply(x, y).dtype is want, (a, b)
            assert snp.equal(x, y).dtype is snp.bool
            if "bool" not in (a, b):
                assert (x - y).dtype is want, (a, b)
    x, y = snp.ones(3, dtype="int8"), snp.ones(3, dtype="uint8")  # and eagerly on XLA
    assert (x + y).dtype is snp.int16
    assert sj.jit(lambda a, b: a * b)(x, y).dtype is snp.int16


def test_python_scalars_are_weak():
    cases = [("float16", 1.5, "float16"), ("bfloat16", 2, "bfloat16"), ("int8", 3, "int8"),
             ("uint8", 3, "uint8"), ("int32", 1.5, "float32"), ("float32", 1j, "complex64"),
             ("float64", 1j, "complex128"), ("bool", 1, "int64"), ("bool", True, "bool"),
             ("float64", 2, "float64"), ("complex64", 0.5, "complex64")]
    for name, scalar, want in cases:
        x = snp.ones(2, dtype=name)
        assert (x + scalar).dtype.name == want, (name, scalar)
        assert (scalar * x).dtype.name == want, (name, scalar)
        assert snp.result_type(x, scalar).name == want, (name, scalar)


# ---- astype, asarray copy semantics ---------------------------------------------------

def test_astype_and_copy():
    x = snp.asarray(np.array([1.5, -2.5, 0.0], np.float32))
    assert snp.astype(x, snp.float32, copy=False) is x
    y = snp.astype(x, snp.float32)  # copy=True: a new tensor with the same values
    assert y is not x and y.tolist() == x.tolist()
    assert snp.astype(x, snp.int32).tolist() == [1, -2, 0]
    assert snp.astype(x, snp.bool).tolist() == [True, True, False]
    r = snp.astype(x, snp.float64, device="reference")
    assert r.dtype is snp.float64 and r.backend is sj.REFERENCE


def test_asarray_copy_semantics():
    a = np.arange(4, dtype=np.int32)
    with pytest.raises(ValueError, match="copy=False"):
        snp.asarray(a, copy=False)
    x = snp.asarray(a)
    assert snp.asarray(x) is x and snp.asarray(x, copy=False) is x
    y = snp.asarray(x, copy=True)
    assert y is not x and y.tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="dtype or device"):
        snp.asarray(x, dtype=snp.float32, copy=False)
    a[0] = 99  # the tensor never aliases host memory it was made from
    assert x.tolist() == [0, 1, 2, 3]


def test_dlpack_round_trip():
    x = snp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert x.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(x), np.asarray(x))
    y = snp.from_dlpack(np.arange(3, dtype=np.int16))
    assert y.dtype is snp.int16 and y.tolist() == [0, 1, 2]
    z = snp.from_dlpack(x)
    assert z.tolist() == x.tolist()
    with pytest.raises(BufferError, match="copy=False"):
        snp.from_dlpack(np.arange(3), copy=False)
    assert snp.from_dlpack(x, copy=False) is x  # already here: nothing to copy


@pytest.mark.parametrize("kw", [{}, {"copy": False}, {"copy": True}, {"max_version": (0, 0)},
                                {"max_version": (1, 0), "copy": False}, {"dl_device": (1, 0)}])
@pytest.mark.host_default
def test_dlpack_export_of_a_host_buffer(kw):
    # bool and read-only host buffers export too; copy=False shares the host buffer
    for a in (np.array([True, False]), np.arange(4, dtype=np.float32).reshape(2, 2)):
        x = snp.asarray(a)
        assert type(x.__dlpack__(**kw)).__name__ == "PyCapsule"
        np.testing.assert_array_equal(np.from_dlpack(x), a)
    with pytest.raises(BufferError, match="dl_device"):
        x.__dlpack__(dl_device=(2, 0))


@pytest.mark.host_default
def test_dlpack_shares_a_host_buffer_when_jax_is_not_loaded():
    # jax's Array.__dlpack__ is a method jax adds when it loads; a program that never
    # imports jax got "not in host memory" for copy=False (the array API suite found it)
    code = ("import sys, numpy as np, stablejit, stablejit.numpy as snp\n"
            "x = snp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))\n"
            "assert type(x.__dlpack__(copy=False)).__name__ == 'PyCapsule'\n"
            "with stablejit.lazy():\n"
            "    y = x * 2.0\n"
            "print(np.from_dlpack(y).tolist(), 'jax' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[0] == "[[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]] False"


def test_dlpack_copy_false_names_where_the_data_is():
    r = sj.backend_copy(snp.asarray(np.arange(3.0)), "reference")
    with pytest.raises(BufferError, match="reference.*copy=None or copy=True"):
        r.__dlpack__(copy=False)
    np.testing.assert_array_equal(np.from_dlpack(r), np.arange(3.0))


def test_nonzero_with_no_nonzero_entries():
    for x in ([False], [[0, 0, 0]], [0.0, -0.0]):
        got = snp.nonzero(snp.asarray(x))
        want = np.nonzero(np.asarray(x))
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g.shape == (0,) and g.dtype is snp.int64 and w.size == 0


# ---- the Tensor's array-API attributes and operators ------------------------------------

def test_tensor_attributes_and_operators():
    a = np.arange(1, 7, dtype=np.int32).reshape(2, 3)
    x = snp.asarray(a)
    assert (x.shape, x.ndim, x.size, x.dtype) == ((2, 3), 2, 6, snp.int32)
    assert x.device == snp.__array_namespace_info__().default_device()
    np.testing.assert_array_equal(np.asarray(x.mT), a.T)
    np.testing.assert_array_equal(np.asarray(x.T), a.T)
    np.testing.assert_array_equal(np.asarray(+x), a)
    np.testing.assert_array_equal(np.asarray(-x), -a)
    np.testing.assert_array_equal(np.asarray(abs(-x)), a)
    np.testing.assert_array_equal(np.asarray(~x), ~a)
    np.testing.assert_array_equal(np.asarray(x @ x.mT), a @ a.T)
    np.testing.assert_array_equal(np.asarray(2 ** x), 2 ** a)
    np.testing.assert_array_equal(np.asarray(7 // x), 7 // a)
    np.testing.assert_array_equal(np.asarray(7 % x), 7 % a)
    np.testing.assert_array_equal(np.asarray(1 << x), 1 << a)
    np.testing.assert_array_equal(np.asarray(x >= 3), a >= 3)
    s = snp.asarray(3)
    assert int(s) == 3 and float(s) == 3.0 and complex(s) == 3 and bool(s)
    assert [10, 20, 30, 40][s] == 40  # __index__
    r = x.to_device("reference")
    assert r.backend is sj.REFERENCE and r.device == "reference"
    assert snp.asarray([1, 2], device=r.device).backend is sj.REFERENCE
    assert r.to_device(x.device).device == x.device


# ---- errors name the operand and the user's line ---------------------------------------

def _check_message(excinfo, *words):
    msg = str(excinfo.value)
    for w in words:
        assert w in msg, f"{w!r} not in {msg!r}"
    assert HERE in msg, f"the message does not name the user's line: {msg!r}"


@pytest.mark.parametrize("path", ["eager", "jit", "reference"])
def test_errors_numpy_would_raise(path):
    def run(f, *args):
        if path == "jit":
            return sj.jit(f)(*args)
        if path == "reference":
            with sj.default_backend("reference"):
                return f(*[snp.asarray(np.asarray(a)) for a in args])
        return f(*args)

    x = snp.ones((2, 3))
    with pytest.raises(np.exceptions.AxisError) as e:
        run(lambda x: snp.sum(x, axis=2), x)
    _check_message(e, "axis 2", "dimension 2")
    with pytest.raises(np.exceptions.AxisError) as e:
        run(lambda x: snp.roll(x, 1, axis=-3), x)
    _check_message(e, "axis -3")
    with pytest.raises(ValueError) as e:
        run(lambda x, y: x + y, x, snp.ones((4,)))
    _check_message(e, "(2, 3)", "(4,)")
    with pytest.raises(TypeError) as e:
        run(lambda x: snp.bitwise_and(x, x), x)
    _check_message(e, "bitwise_and", "float32")
    with pytest.raises(TypeError) as e:
        run(lambda x: x << 1, x)
    _check_message(e, "left_shift", "float32")
    with pytest.raises(TypeError) as e:
        run(lambda x: snp.gcd(x, x), x)
    _check_message(e, "gcd", "float32")
    with pytest.raises(TypeError) as e:
        run(lambda x: snp.hypot(x, snp.astype(x, snp.complex64)), x)
    _check_message(e, "hypot", "complex64")
    with pytest.raises(ValueError) as e:
        run(lambda x: snp.reshape(x, (4, 2)), x)
    _check_message(e, "(2, 3)", "(4, 2)")
    with pytest.raises(ValueError) as e:
        run(lambda x: snp.split(x, 2, axis=1), x)
    _check_message(e, "3", "array_split")
    with pytest.raises(ValueError) as e:  # (past one period NumPy reflects again)
        run(lambda x: snp.pad(x[:0], 1, "reflect"), x)
    _check_message(e, "reflect", "empty")
    with pytest.raises(ValueError) as e:
        run(lambda x: snp.stack([x, snp.ones((3, 2))]), x)
    _check_message(e, "(3, 2)", "(2, 3)")


def test_data_dependent_arguments_inside_jit_are_clear_errors():
    x = snp.ones((2, 3))
    with pytest.raises(sj.MustCompileError) as e:
        sj.jit(lambda x, r: snp.repeat(x, r))(x, snp.asarray([1, 2, 3, 1, 1, 1]))
    _check_message(e, "repeat", "static")


# ---- property test: broadcasting and promotion of binary functions ---------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

BINARY = ["add", "multiply", "maximum", "minimum", "equal", "less", "bitwise_or",
          "logaddexp", "hypot", "copysign", "arctan2"]
NUMERIC = [d for d in STANDARD if d != "bool"]


@settings(max_examples=60, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
       a=st.sampled_from(STANDARD), b=st.sampled_from(STANDARD), name=st.sampled_from(BINARY),
       seed=st.integers(0, 2**16))
def test_binary_broadcasting_and_promotion_match_numpy(shapes, a, b, name, seed):
    """Shapes broadcast as in NumPy; dtypes follow the promotion table; values match
    NumPy (reference backend: no compiles, so many examples are cheap)."""
    rng = np.random.default_rng(seed)
    xs = [(rng.uniform(-3, 3, s) * (1 + 1j if np.dtype(d).kind == "c" else 1)).astype(d)
          if np.dtype(d).kind != "b" else rng.random(s) < 0.5
          for s, d in zip(shapes.input_shapes, (a, b), strict=True)]
    kinds = {np.dtype(a).kind, np.dtype(b).kind}
    f = getattr(snp, name)
    try:
        with np.errstate(all="ignore"):
            want = getattr(np, name)(*xs)
    except TypeError:  # NumPy refuses (bitwise on floats, order on complex): so must we
        with sj.default_backend("reference"), pytest.raises(TypeError):
            f(*[snp.asarray(x) for x in xs])
        return
    with sj.default_backend("reference"):
        try:
            got = f(*[snp.asarray(x) for x in xs])
        except TypeError as e:
            # real-only functions on complex, which NumPy answers with a complex result
            assert "c" in kinds or name in ("logaddexp", "hypot", "copysign", "arctan2"), e
            return
    assert got.shape == want.shape == shapes.result_shape
    if want.dtype.kind in "fc" and kinds <= set("biu"):
        assert got.dtype.kind == want.dtype.kind  # integers in float math: float32
    elif want.dtype.kind != "b":  # NumPy's values, JAX's dtypes (int32 * float32: float32)
        promoted = jax_promotion.result_type(dt.dtype(a), dt.dtype(b))[0]
        assert got.dtype is promoted, (name, a, b)
    rtol, atol = tolerance(got.dtype) if got.dtype.kind in "fc" else (1e-5, 1e-6)
    np.testing.assert_allclose(np.asarray(got).astype(want.dtype), want, rtol=max(rtol, 1e-5),
                               atol=max(atol, 1e-6), equal_nan=True)
