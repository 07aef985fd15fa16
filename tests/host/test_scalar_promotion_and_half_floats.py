"""Two Python scalars of different kinds promote as in jax; 16-bit floats accumulate
sums and products in float32 as JAX does; integer division and rint against jax.

Found as regressions (issue 9): each test failed before its fix."""


import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

# ---- two Python scalars of different kinds promote as in jax ----------------------------

@pytest.mark.parametrize("make", [
    lambda m: m.arctan2(0.0, -1),
    lambda m: m.asarray(1.0) + 1,
    lambda m: m.asarray(1) + 1j,
    lambda m: m.asarray(1.5) + 1j,
    lambda m: m.asarray(True) + 1.5,
    lambda m: m.add(2, 0.5),
])
def test_weak_scalars_of_different_kinds_promote_as_in_jax(make):
    jnp = pytest.importorskip("jax.numpy")
    got, want = make(snp), make(jnp)
    assert str(got.dtype) == str(want.dtype)
    assert np.asarray(got) == np.asarray(want)


def test_jit_of_two_weak_scalars_promotes_as_in_jax():
    assert stablejit.jit(lambda a, b: a + b)(1.0, 2).dtype is snp.float32


# ---- 16-bit floats: sums and products accumulate in float32, as in JAX ------------------

@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["sum", "sum(axis)", "mean", "nansum", "var", "prod", "norm"])
def test_half_precision_reductions_accumulate_in_float32(name, dtype):
    import jax
    import jax.numpy as jnp
    f = {"sum": lambda m, x: m.sum(x), "sum(axis)": lambda m, x: m.sum(x.reshape(64, 64), 1),
         "mean": lambda m, x: m.mean(x), "nansum": lambda m, x: m.nansum(x),
         "var": lambda m, x: m.var(x * m.arange(4096).astype(x.dtype) / 4096),
         "prod": lambda m, x: m.prod(x[:10] + 1), "norm": lambda m, x: m.linalg.norm(x)}[name]
    a = np.full(4096, 0.1, np.float32)
    xj, xs = jnp.asarray(a, dtype=dtype), snp.asarray(a, dtype=dtype)
    # eager against jax's eager ops, jit against jax.jit: XLA may skip the rounding of a
    # 16-bit intermediate inside one program (x[:10] + 1 before prod), in both
    for got, want in ((f(snp, xs), f(jnp, xj)),
                      (stablejit.jit(lambda v: f(snp, v))(xs), jax.jit(lambda v: f(jnp, v))(xj))):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    if name in ("sum", "mean"):  # and within a rounding of the exact answer
        exact = f(np, a.astype(np.float64))
        assert abs(float(np.asarray(got, np.float64)) - exact) <= abs(exact) * 2.0 ** -7


def test_bfloat16_tensors_read_back_as_bfloat16_arrays():
    """np.asarray of a bfloat16 tensor was an object array holding a jaxlib buffer (the
    buffer protocol has no bfloat16 format), so printing showed no values and NumPy
    comparisons compared objects."""
    import ml_dtypes
    values = np.array([1.5, -2.0, 0.1], np.float32)
    expected = values.astype(ml_dtypes.bfloat16)
    t = snp.asarray(values, dtype=snp.bfloat16)
    with stablejit.lazy():
        lazy = t * 1.0
    for x in (t, lazy, stablejit.jit(lambda v: v * 1.0)(t)):
        a = np.asarray(x)
        assert a.dtype == ml_dtypes.bfloat16 and not a.flags.writeable
        np.testing.assert_array_equal(a.astype(np.float32), expected.astype(np.float32))
    assert np.asarray(t[0]).dtype == ml_dtypes.bfloat16 and float(t[0]) == 1.5
    assert t.tolist() == expected.astype(np.float32).tolist()
    assert "[1.5, -2" in repr(t) and "object" not in repr(t)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_frexp_of_subnormals_matches_numpy(dtype):
    """XLA's CPU flushes subnormals to zero in float arithmetic, so frexp read the
    smallest subnormals as zeros (and returned them unchanged); it now reads the bits."""
    fi = np.finfo(dtype)
    a = np.array([0.0, -0.0, fi.smallest_subnormal, -fi.smallest_subnormal,
                  fi.smallest_normal * 0.75, -fi.smallest_normal / 3, fi.smallest_normal,
                  1.0, -3.0, fi.max, np.inf, -np.inf, np.nan], dtype=dtype)
    want_m, want_e = np.frexp(a)
    for m, e in (snp.frexp(snp.asarray(a)), stablejit.jit(snp.frexp)(snp.asarray(a))):
        assert np.array_equal(np.asarray(m), want_m, equal_nan=True)
        assert np.array_equal(np.signbit(np.asarray(m)), np.signbit(want_m))
        assert np.array_equal(np.asarray(e), want_e)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint32])
@pytest.mark.parametrize("decimals", [-1, -2, -30])
def test_round_of_integers_to_negative_decimals(dtype, decimals):
    """round(ints, -1) returned the input unchanged; it rounds half to even to tens, as
    NumPy does (jax raises NotImplementedError)."""
    a = np.array([15, 25, 14, 5, 0, 35, 45, 99, 50, 115, 125 if dtype is np.int8 else 251],
                 dtype=dtype)
    if np.iinfo(dtype).min < 0:
        a = np.concatenate([a, np.array([-15, -25, -14, -5, -1, -50], dtype)])
    want = np.round(a, decimals)
    for got in (snp.round(snp.asarray(a), decimals),
                stablejit.jit(lambda v: snp.round(v, decimals))(snp.asarray(a))):
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)


def test_round_of_large_int64_is_exact():
    # NumPy goes through float64 here and loses the last digits; the answer is exact
    a = np.array([2**62 + 15, -(2**62) - 25, 9223372036854775805 - 100], np.int64)
    want = [(int(v) + 5) // 10 * 10 if int(v) % 10 != 5 else
            int(v) // 10 * 10 + (10 if (int(v) // 10) % 2 else 0) for v in a]
    assert np.asarray(snp.round(snp.asarray(a), -1)).tolist() == want


@pytest.mark.parametrize("name", ["remainder", "fmod"])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint32])
def test_integer_remainder_by_zero_is_zero_as_in_numpy_and_jax(name, dtype):
    import jax.numpy as jnp
    a = np.array([7, 0, 5, 9, 100], dtype)
    b = np.array([0, 0, 2, 0, 7], dtype)
    if np.iinfo(dtype).min < 0:
        a[0] = -7
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a, b)
    np.testing.assert_array_equal(np.asarray(getattr(jnp, name)(a, b)), want)  # the oracle
    f = getattr(snp, name)
    sa, sb = snp.asarray(a), snp.asarray(b)
    for got in (f(sa, sb), stablejit.jit(f)(sa, sb)):
        np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(f(snp.asarray(a), 0)), np.zeros_like(a))


def test_rint_rounds_half_to_even_as_jax():
    import jax.numpy as jnp
    for a in (np.array([0.5, 1.5, 2.5, -0.5, -2.5, 3.7, -0.0], np.float32), np.array([3, -2])):
        want = jnp.rint(a)
        got = snp.rint(snp.asarray(a))
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        assert np.array_equal(np.signbit(np.asarray(got)), np.signbit(np.asarray(want)))
