"""lax's functions of bit patterns against jax.lax: clz over every integer dtype,
reduce_precision bit for bit over special values and random floats (and its derivative
and vmap), and bitcast_convert_type between types of different widths (jax's shape
rule). Each runs under jit, eagerly on XLA and on the reference backend."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import lax

from tests.support.runners import run_three_ways

rng = np.random.default_rng(7)

INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


def _bits_of(a):
    a = np.asarray(a)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


def _same_bits(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, \
        f"{what}: {got.dtype}{got.shape}, jax {want.dtype}{want.shape}"
    np.testing.assert_array_equal(_bits_of(got), _bits_of(want), err_msg=what)


def _jax(fn, *args):
    with jax.enable_x64(True):
        return np.asarray(fn(*args))


# ---- clz -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
def test_clz_matches_jax(dtype):
    info = np.iinfo(dtype)
    edges = np.array([0, 1, 2, 3, info.max, info.min, info.max // 2, info.max // 2 + 1],
                     dtype)
    x = np.concatenate([edges, rng.integers(info.min, info.max, 24, dtype, endpoint=True)])
    want = _jax(jax.lax.clz, x)
    for path, got in run_three_ways(lax.clz, x).items():
        _same_bits(got, want, f"clz {np.dtype(dtype).name} via {path}")
    _same_bits(stablejit.vmap(lax.clz)(x.reshape(4, 8)),
               _jax(jax.vmap(jax.lax.clz), x.reshape(4, 8)), "vmap(clz)")


def test_clz_refuses_floats():
    with pytest.raises(TypeError, match="clz needs an integer operand, got float32"):
        lax.clz(np.ones(2, np.float32))


# ---- reduce_precision ----------------------------------------------------------------

FORMATS = [(5, 10), (8, 7), (8, 23), (11, 52)]
SPECIAL = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan, 65504.0, 65519.99,
           65520.0, -65520.0, 1e5, 6.1e-5, 6.0e-5, 5.96e-8, 1e-8, 3.39e38, 3.4028235e38,
           1.1754944e-38, 1.1e-38, 1e-45, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -11,
           1 + 3 * 2 ** -11, 1 + 2 ** -24, 1e300, 1e-300, 2.2250738585072014e-308, 5e-324,
           0.1, 1 / 3, -2.5]


def _floats(dtype):
    x = np.array(SPECIAL, np.float64)
    with np.errstate(over="ignore"):
        x = x.astype(dtype)
    spread = rng.standard_normal(64) * 10.0 ** rng.integers(-45, 39, 64)
    random_bits = rng.integers(0, 2 ** 63, 64, np.uint64).astype(
        f"u{np.dtype(dtype).itemsize}").view(dtype)  # NaN payloads, subnormals, anything
    with np.errstate(over="ignore"):
        return np.concatenate([x, spread.astype(dtype), random_bits])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f"e{f[0]}m{f[1]}")
def test_reduce_precision_matches_jax_bit_for_bit(fmt, dtype):
    x = _floats(dtype)
    want = _jax(lambda v: jax.lax.reduce_precision(v, *fmt), x)
    for path, got in run_three_ways(lambda v: lax.reduce_precision(v, *fmt), x).items():
        _same_bits(got, want, f"reduce_precision{fmt} {np.dtype(dtype).name} via {path}")


def test_reduce_precision_derivative_and_vmap_match_jax():
    """jax treats reduce_precision as linear: the cotangent is rounded the same way."""
    x = rng.standard_normal((3, 5)).astype(np.float32)
    w = (rng.standard_normal((3, 5)) * 1.001).astype(np.float32)

    def loss(L, xp):
        return lambda v: xp.sum(L.reduce_precision(v * v, 5, 10) * w)

    want = jax.grad(loss(jax.lax, jnp))(x)
    for name, fn in (("eager", stablejit.grad(loss(lax, snp))),
                     ("jit", stablejit.jit(stablejit.grad(loss(lax, snp))))):
        _same_bits(fn(snp.asarray(x)), want, f"grad via {name}")
    _, want_t = jax.jvp(lambda v: jax.lax.reduce_precision(v, 8, 7), (x,), (w,))
    _, got_t = stablejit.jvp(lambda v: lax.reduce_precision(v, 8, 7), (snp.asarray(x),),
                             (snp.asarray(w),))
    _same_bits(got_t, want_t, "jvp")
    _same_bits(stablejit.vmap(lambda v: lax.reduce_precision(v, 8, 7))(x),
               jax.vmap(lambda v: jax.lax.reduce_precision(v, 8, 7))(x), "vmap")


@pytest.mark.parametrize("call,error,message", [
    (lambda: lax.reduce_precision(np.ones(2, np.int32), 5, 10), TypeError,
     "reduce_precision needs a floating-point operand, got int32"),
    (lambda: lax.reduce_precision(np.ones(2, np.float32), 0, 10), ValueError,
     "exponent_bits must be at least 1"),
    (lambda: lax.reduce_precision(np.ones(2, np.float32), 5, -1), ValueError,
     "mantissa_bits at least 0"),
])
def test_reduce_precision_refuses_bad_arguments(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---- bitcast_convert_type between widths ---------------------------------------------

F32 = np.array([[1.0, -2.5, np.inf], [np.nan, 0.0, -0.0]], np.float32)
F64 = np.array([np.pi, -1e-310, 2.0 ** 60], np.float64)
I64 = np.array([-1, 2 ** 40 + 7, 0], np.int64)
U8 = rng.integers(0, 256, (3, 8), np.uint8)
I16 = rng.integers(-2 ** 15, 2 ** 15, (2, 2), np.int16)
HALF = np.array([[1.0, -0.5], [65504.0, 2.0 ** -24]], np.float16)

BITCASTS = [  # (name, operand, new dtype): wider to narrower adds (ratio,), the reverse drops it
    ("f32->u8", F32, np.uint8),
    ("f32->i16", F32, np.int16),
    ("f64->u8", F64, np.uint8),
    ("f64->f32", F64, np.float32),
    ("i64->i32", I64, np.int32),
    ("i64->f16", I64, np.float16),
    ("0-d f32->u8", np.float32(1.0), np.uint8),
    ("u8->f64", U8, np.float64),
    ("u8->u32", U8[:, :4].copy(), np.uint32),
    ("i16->f32", I16, np.float32),
    ("f16->i32", HALF, np.int32),
    ("u8->i16 to 0-d", U8[0, :2].copy(), np.int16),
    ("f32->u8->f32 round trip", F32, "round trip"),
]


@pytest.mark.parametrize("name,x,dtype", BITCASTS, ids=[b[0] for b in BITCASTS])
def test_bitcast_between_widths_matches_jax(name, x, dtype):
    def call(L, v):
        if dtype == "round trip":
            return L.bitcast_convert_type(L.bitcast_convert_type(v, jnp.uint8), jnp.float32)
        return L.bitcast_convert_type(v, dtype)

    want = _jax(lambda v: call(jax.lax, v), x)
    for path, got in run_three_ways(lambda v: call(lax, v), np.asarray(x)).items():
        _same_bits(got, want, f"bitcast {name} via {path}")


def test_bitcast_between_widths_under_vmap_matches_jax():
    for x, dtype in ((F32, np.uint8), (U8, np.float64), (I16, np.float32)):
        want = _jax(jax.vmap(lambda v, d=dtype: jax.lax.bitcast_convert_type(v, d)), x)
        got = stablejit.vmap(lambda v, d=dtype: lax.bitcast_convert_type(v, d))(x)
        _same_bits(got, want, f"vmap bitcast {x.dtype}->{np.dtype(dtype)}")


@pytest.mark.parametrize("x,dtype,words", [
    (np.zeros((2, 3), np.uint8), np.float32, ["(2, 3)", "4 elements", "reshape"]),
    (np.zeros(3, np.int32), np.float64, ["(3,)", "2 elements"]),
    (np.zeros((), np.float32), np.float64, ["()", "2 elements"]),
])
def test_bitcast_to_a_wider_type_names_the_wrong_shape(x, dtype, words):
    for fn in (lambda v: lax.bitcast_convert_type(v, dtype),
               stablejit.jit(lambda v: lax.bitcast_convert_type(v, dtype))):
        with pytest.raises(Exception) as info:
            fn(x)
        msg = str(info.value)
        assert "bitcast_convert" in msg and all(w in msg for w in words), msg
