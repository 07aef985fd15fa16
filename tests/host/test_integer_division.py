"""Integer division and remainder against NumPy, bit for bit, for every integer dtype:
x // 0 is 0 (XLA's division gives -1, all bits set), as x % 0 is; INT_MIN // -1 wraps to
INT_MIN. floor_divide, the // operator (and its reflection), remainder, %, fmod, divmod
(the function and the builtin), eagerly on XLA, under jit and on the reference backend.
lax.div and lax.rem keep XLA's C semantics, as jax.lax's do (compared with jax.lax).
Float floor division follows NumPy's too (1.0 // 0.1 is 9.0, not floor(10.000001)).
"""

from __future__ import annotations

import builtins
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import lax

INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOATS = [np.float16, np.float32, np.float64]


def operands(dtype):
    """Every pair of interesting values: zeros, +-1, small values, the extremes."""
    info = np.iinfo(dtype)
    vals = {0, 1, 2, 3, 7, info.max, info.max - 1, info.min, info.min + 1}
    if info.min < 0:
        vals |= {-1, -2, -3, -7}
    vals = np.array(sorted(vals), dtype=dtype)
    x, y = np.meshgrid(vals, vals, indexing="ij")
    return x.ravel(), y.ravel()


def bits(a) -> np.ndarray:
    """The bit patterns, every NaN as one: IEEE defines neither a NaN's sign nor its
    payload (x86 makes 0xffc00000, NVIDIA GPUs 0x7fffffff), only that it is a NaN."""
    a = np.asarray(a)
    if a.dtype.kind == "f":
        a = np.where(np.isnan(a), np.array(np.nan, a.dtype), a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def assert_bits_equal(got, want, what: str):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, NumPy {want.dtype}"
    np.testing.assert_array_equal(bits(got), bits(want), err_msg=what)


OPS = {
    "floor_divide": (snp.floor_divide, np.floor_divide),
    "//": (lambda a, b: a // b, np.floor_divide),
    "remainder": (snp.remainder, np.remainder),
    "%": (lambda a, b: a % b, np.remainder),
    "fmod": (snp.fmod, np.fmod),
    "divmod": (snp.divmod, np.divmod),
    "builtin divmod": (builtins.divmod, np.divmod),
}
# true division of floats too (integers divide into the default float, not NumPy's
# float64): on cuda it is written out to be IEEE's (test_gpu_division.py)
FLOAT_OPS = {**OPS, "divide": (snp.divide, np.divide), "/": (lambda a, b: a / b, np.divide)}


def ways(fn, x, y):
    """{way: fn on tensors of x and y}."""
    out = {"eager": fn(snp.asarray(x), snp.asarray(y)),
           "jit": stablejit.jit(fn)(x, y)}
    with stablejit.default_backend("reference"):
        out["reference"] = fn(snp.asarray(x), snp.asarray(y))
        out["reference jit"] = stablejit.jit(fn)(x, y)
    return out


def check_against_numpy(name, x, y):
    ours, theirs = FLOAT_OPS[name]
    with np.errstate(all="ignore"):
        want = theirs(x, y)
        if x.dtype.kind == "f" and name in ("floor_divide", "divmod"):
            # the array API standard's special cases where an operand is infinite: the
            # quotient is x / y (inf // 1 is inf, -1 // inf is -0; NumPy: NaN, -1.0)
            standard = np.where(np.isinf(x) | np.isinf(y), x / y, 0).astype(x.dtype)
            special = np.isinf(x) | np.isinf(y)
            if isinstance(want, tuple):
                want = (np.where(special, standard, want[0]), want[1])
            else:
                want = np.where(special, standard, want)
    subnormal = (x.dtype == np.float32 and name in ("divide", "/")
                 and np.abs(want) < np.finfo(np.float32).tiny)
    for way, got in ways(ours, x, y).items():
        # XLA on the host flushes a float32 subnormal quotient to zero, as jax's does
        # (3e-9 / 1e30); the cuda lowering rounds it as NumPy; so does the reference
        w = want
        if np.any(subnormal) and not way.startswith("reference"):
            w = np.where(subnormal & (np.asarray(got) == 0), want * 0, want)
        if isinstance(w, tuple):
            assert len(got) == 2
            for g, wp, part in zip(got, w, ("quotient", "remainder"), strict=True):
                assert_bits_equal(g, wp, f"{name} {part} via {way}")
        else:
            assert_bits_equal(got, w, f"{name} via {way}")


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
def test_integer_division_matches_numpy_bit_for_bit(dtype, name):
    check_against_numpy(name, *operands(dtype))


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
def test_division_by_a_python_zero_and_reflected_operators(dtype):
    x, _ = operands(dtype)
    zeros = np.zeros_like(x)
    with np.errstate(all="ignore"):
        for fn, want in [(lambda a: a // 0, np.floor_divide(x, zeros)),
                         (lambda a: a % 0, np.remainder(x, zeros)),
                         (lambda a: snp.floor_divide(a, 0), np.floor_divide(x, zeros)),
                         (lambda a: 0 // a, np.floor_divide(zeros, x)),
                         (lambda a: 7 // a, np.floor_divide(np.full_like(x, 7), x)),
                         (lambda a: 7 % a, np.remainder(np.full_like(x, 7), x)),
                         (lambda a: builtins.divmod(7, a)[0],
                          np.floor_divide(np.full_like(x, 7), x))]:
            assert_bits_equal(fn(snp.asarray(x)), want, "eager")
            assert_bits_equal(stablejit.jit(fn)(x), want, "jit")
            with stablejit.default_backend("reference"):
                assert_bits_equal(fn(snp.asarray(x)), want, "reference")


def test_floor_divide_in_place_by_zero():
    t = snp.asarray(np.array([7, -7, 0], np.int32))
    t //= 0
    assert_bits_equal(t, np.zeros(3, np.int32), "//=")


@pytest.mark.parametrize("name", ["floor_divide", "remainder", "fmod", "divmod", "divide", "/"])
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_float_division_matches_numpy_bit_for_bit(dtype, name):
    specials = [0.0, -0.0, 1.0, -1.0, 0.1, -0.1, 2.5, -2.5, 3.0, 7.5, 1e30, -1e30, 3e-9,
                np.inf, -np.inf, np.nan]
    vals = np.array(specials, dtype=dtype)
    x, y = (a.ravel() for a in np.meshgrid(vals, vals, indexing="ij"))
    check_against_numpy(name, x, y)


@pytest.mark.parametrize("name", ["floor_divide", "remainder", "fmod"])
def test_results_of_python_scalars_stay_weak_as_in_jax(name):
    for a, b in itertools.product([7, -7.5, True], [2, 0, 0.5]):
        ours = getattr(snp, name)(a, b)
        theirs = jax.eval_shape(getattr(jnp, name), a, b)
        assert ours.weak == theirs.weak_type, (name, a, b)


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
def test_lax_div_and_rem_keep_xla_semantics_as_jax_lax(dtype):
    """jax.lax.div(x, 0) is -1 (all bits) and lax.rem(x, 0) is x: XLA's, unlike jnp."""
    x, y = operands(dtype)
    with jax.enable_x64(True):
        want_div = np.asarray(jax.lax.div(jnp.asarray(x), jnp.asarray(y)))
        want_rem = np.asarray(jax.lax.rem(jnp.asarray(x), jnp.asarray(y)))
    for fn, want in ((lax.div, want_div), (lax.rem, want_rem)):
        assert_bits_equal(fn(snp.asarray(x), snp.asarray(y)), want, "eager")
        assert_bits_equal(stablejit.jit(fn)(x, y), want, "jit")
        with stablejit.default_backend("reference"):
            assert_bits_equal(fn(snp.asarray(x), snp.asarray(y)), want, "reference")


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint32",
                                   "uint64"])
@pytest.mark.parametrize("path", ["eager", "jit", "reference"])
def test_gcd_and_lcm_of_the_extremes_are_numpys(dtype, path):
    """gcd ran Euclid on abs(x), and abs(INT_MIN) is INT_MIN: gcd(2**31 - 1, -2**31) was
    -1 (NumPy: 1). Now on the magnitudes as unsigned integers."""
    info = np.iinfo(dtype)
    vals = [0, 1, 2, 3, 6, 9, 12, 15, info.max, info.max - 1]
    if info.min < 0:
        vals += [info.min, info.min + 1, -1, -2, -6, -9, -12]
    a = np.array([x for x in vals for _ in vals], dtype)
    b = np.array([y for _ in vals for y in vals], dtype)
    for name in ("gcd", "lcm"):
        f = getattr(snp, name)
        with np.errstate(all="ignore"):
            want = getattr(np, name)(a, b)
        if path == "reference":
            with stablejit.default_backend("reference"):
                got = f(snp.asarray(a), snp.asarray(b))
        elif path == "jit":
            got = stablejit.jit(f)(snp.asarray(a), snp.asarray(b))
        else:
            got = f(snp.asarray(a), snp.asarray(b))
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=name)
