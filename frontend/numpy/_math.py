"""More elementwise math of the array API standard and NumPy, composed from primitives.

The inverse trigonometric and hyperbolic functions are primitives (CHLO has accurate
decompositions for them); everything else here is a composition: hypot scales to avoid
overflow, logaddexp uses log1p(exp(-|x - y|)), signbit reads the sign bit, gcd runs a
fixed number of Euclid steps (enough for the dtype's range, so it needs no loop).
"""

from __future__ import annotations

import math

import numpy as np

from ..compiler import dtypes as dt
from ..compiler.registry import ALL as P
from ..dispatch import bind1
from ..tensor import Tensor
from ._core import as_tensor, astype, broadcast_shapes, full_like_tensor, prepare, to_inexact
from ._elementwise import (
    _check_kinds,
    _unary,
    abs,
    add,
    divide,
    equal,
    exp,
    exp2,
    greater,
    imag,
    invert,
    isfinite,
    isinf,
    isnan,
    less,
    less_equal,
    log1p,
    logical_and,
    logical_or,
    maximum,
    minimum,
    multiply,
    negative,
    power,
    real,
    remainder,
    sin,
    sqrt,
    subtract,
    trunc,
    where,
)

acos = _unary("acos", "acos")
asin = _unary("asin", "asin")
atan = _unary("atan", "atan")
acosh = _unary("acosh", "acosh")
asinh = _unary("asinh", "asinh")
atanh = _unary("atanh", "atanh")
sinh = _unary("sinh", "sinh")
cosh = _unary("cosh", "cosh")
arccos, arcsin, arctan = acos, asin, atan
arccosh, arcsinh, arctanh = acosh, asinh, atanh


def _real_floats(name: str, *xs):
    """Promote, broadcast and make floating point; real (not complex) operands only."""
    ts, dtype = prepare(*xs)
    _check_kinds(name, dtype, "biuf", "real")
    return [to_inexact(t) for t in ts]


def _real_float(name: str, x) -> Tensor:
    x = as_tensor(x)
    _check_kinds(name, x.dtype, "biuf", "real")
    return to_inexact(x)


def hypot(x1, x2) -> Tensor:
    """sqrt(x1**2 + x2**2) without overflow or underflow in the squares; inf wins over NaN."""
    a, b = _real_floats("hypot", x1, x2)
    a, b = abs(a), abs(b)
    big, small = maximum(a, b), minimum(a, b)
    safe = where(equal(big, 0), full_like_tensor(1, big), big)
    r = divide(small, safe)
    out = multiply(big, sqrt(add(multiply(r, r), 1)))
    out = where(equal(big, 0), full_like_tensor(0, big), out)
    return where(logical_or(isinf(a), isinf(b)), full_like_tensor(np.inf, big), out)


def logaddexp(x1, x2) -> Tensor:
    """log(exp(x1) + exp(x2)) without overflow."""
    a, b = _real_floats("logaddexp", x1, x2)
    d = subtract(a, b)
    out = add(maximum(a, b), log1p(exp(negative(abs(d)))))
    # equal infinities give a NaN difference: the answer is that infinity (or NaN for NaN)
    return where(isnan(d), add(a, b), out)


def logaddexp2(x1, x2) -> Tensor:
    """log2(2**x1 + 2**x2) without overflow."""
    a, b = _real_floats("logaddexp2", x1, x2)
    d = subtract(a, b)
    out = add(maximum(a, b), divide(log1p(exp2(negative(abs(d)))), math.log(2)))
    return where(isnan(d), add(a, b), out)


_SAME_WIDTH_INT = {16: dt.int16, 32: dt.int32, 64: dt.int64}


def signbit(x) -> Tensor:
    """True where the sign bit is set: also for -0.0 and negative NaNs."""
    x = as_tensor(x)
    _check_kinds("signbit", x.dtype, "biuf", "real")
    if x.dtype.kind in "bu":
        return full_like_tensor(False, astype(x, dt.bool_))
    if x.dtype.kind == "i":
        return less(x, 0)
    bits = bind1(P["bitcast_convert"], x, dtype=_SAME_WIDTH_INT[x.dtype.bits])
    return less(bits, 0)


def copysign(x1, x2) -> Tensor:
    """|x1| with the sign bit of x2."""
    a, b = _real_floats("copysign", x1, x2)
    m = abs(a)
    return where(signbit(b), negative(m), m)


def nextafter(x1, x2) -> Tensor:
    """The next representable float after x1 in the direction of x2."""
    a, b = _real_floats("nextafter", x1, x2)
    return bind1(P["nextafter"], a, b)


def heaviside(x1, x2) -> Tensor:
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0 (NaN stays NaN)."""
    a, b = _real_floats("heaviside", x1, x2)
    zero, one = full_like_tensor(0, a), full_like_tensor(1, a)
    out = where(less(a, 0), zero, where(greater(a, 0), one, b))
    return where(isnan(a), a, out)


def deg2rad(x) -> Tensor:
    return multiply(_real_float("deg2rad", x), math.pi / 180)


def rad2deg(x) -> Tensor:
    return multiply(_real_float("rad2deg", x), 180 / math.pi)


radians, degrees = deg2rad, rad2deg


def sinc(x) -> Tensor:
    """sin(pi x) / (pi x), with sinc(0) = 1."""
    x = to_inexact(as_tensor(x))
    zero = equal(x, 0)
    px = multiply(where(zero, full_like_tensor(1, x), x), math.pi)
    return where(zero, full_like_tensor(1, x), divide(sin(px), px))


def float_power(x1, x2) -> Tensor:
    """x1 ** x2 computed in float64 (complex128 for complex operands), as NumPy does."""
    (a, b), dtype = prepare(x1, x2)
    target = dt.complex128 if dtype.is_complex else dt.float64
    return power(astype(a, target), astype(b, target))


def fabs(x) -> Tensor:
    return abs(_real_float("fabs", x))


def _ignoring_nan(name: str, op, x1, x2) -> Tensor:
    """op (maximum/minimum) that ignores NaNs: NaN only where both operands are NaN."""
    (a, b), dtype = prepare(x1, x2)
    _check_kinds(name, dtype, "biuf", "real")
    if dtype.kind != "f":
        return op(a, b)
    return where(isnan(a), b, where(isnan(b), a, op(a, b)))


def fmax(x1, x2) -> Tensor:
    """Elementwise maximum that ignores NaNs."""
    return _ignoring_nan("fmax", maximum, x1, x2)


def fmin(x1, x2) -> Tensor:
    """Elementwise minimum that ignores NaNs."""
    return _ignoring_nan("fmin", minimum, x1, x2)


def ldexp(x1, x2) -> Tensor:
    """x1 * 2**x2 for integer x2."""
    x2 = as_tensor(x2)
    _check_kinds("ldexp (exponent)", x2.dtype, "iu", "integer")
    a = _real_float("ldexp", x1)
    return multiply(a, exp2(astype(x2, a.dtype)))


def divmod(x1, x2) -> tuple[Tensor, Tensor]:  # noqa: A001 - NumPy's name
    from ._elementwise import floor_divide

    return floor_divide(x1, x2), remainder(x1, x2)


def modf(x) -> tuple[Tensor, Tensor]:
    """Fractional and integral parts, both with the sign of x."""
    x = _real_float("modf", x)
    i = trunc(x)
    frac = where(isinf(x), full_like_tensor(0, x), subtract(x, i))
    return copysign(frac, x), i


def angle(z, deg: bool = False) -> Tensor:
    """The argument of complex numbers (0 or pi for reals)."""
    z = as_tensor(z)
    z = z if z.dtype.is_inexact else to_inexact(z)
    out = bind1(P["atan2"], imag(z), real(z))
    return rad2deg(out) if deg else out


def isposinf(x) -> Tensor:
    x = as_tensor(x)
    return logical_and(isinf(x), greater(x, 0))


def isneginf(x) -> Tensor:
    x = as_tensor(x)
    return logical_and(isinf(x), less(x, 0))


def isreal(x) -> Tensor:
    x = as_tensor(x)
    return equal(imag(x), 0) if x.dtype.is_complex else full_like_tensor(
        True, astype(x, dt.bool_))


def iscomplex(x) -> Tensor:
    return invert(isreal(x))


def nan_to_num(x, copy: bool = True, nan: float = 0.0, posinf=None, neginf=None) -> Tensor:
    """NaN -> `nan`, +inf -> `posinf` (default the largest finite value), -inf -> `neginf`
    (default the most negative finite value); complex numbers part by part."""
    x = as_tensor(x)
    if x.dtype.kind in "biu":
        return x
    if x.dtype.is_complex:
        parts = [nan_to_num(p, nan=nan, posinf=posinf, neginf=neginf)
                 for p in (real(x), imag(x))]
        return bind1(P["complex"], *parts)
    info = dt.finfo(x.dtype)
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    out = where(isnan(x), full_like_tensor(nan, x), x)
    out = where(isposinf(x), full_like_tensor(hi, x), out)
    return where(isneginf(x), full_like_tensor(lo, x), out)


def isclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """|a - b| <= atol + rtol * |b| elementwise (NumPy's asymmetric test); equal infinities
    are close, NaNs only with equal_nan=True."""
    (x, y), dtype = prepare(a, b)
    if not dtype.is_inexact:
        x, y = to_inexact(x), to_inexact(y)
    close = less_equal(abs(subtract(x, y)), add(multiply(abs(y), rtol), atol))
    out = logical_or(logical_and(close, isfinite(y)), equal(x, y))
    if equal_nan:
        out = logical_or(out, logical_and(isnan(x), isnan(y)))
    return out


def allclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
             ) -> Tensor:
    """A 0-d boolean tensor: whether all elements are close (bool() it outside jit)."""
    from ._reductions import all as all_

    return all_(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan: bool = False) -> Tensor:
    """A 0-d boolean tensor: same shape and equal elements."""
    from ._reductions import all as all_

    x, y = as_tensor(a1), as_tensor(a2, a1 if isinstance(a1, Tensor) else None)
    if x.shape != y.shape:
        return full_like_tensor(False, astype(all_(x), dt.bool_))
    eq = equal(x, y)
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(x), isnan(y)))
    return all_(eq)


def array_equiv(a1, a2) -> Tensor:
    """A 0-d boolean tensor: equal after broadcasting (False if they do not broadcast)."""
    from ._reductions import all as all_

    x, y = as_tensor(a1), as_tensor(a2, a1 if isinstance(a1, Tensor) else None)
    try:
        broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return full_like_tensor(False, astype(all_(x), dt.bool_))
    return all_(equal(x, y))


def _euclid_steps(d: dt.DType) -> int:
    # Euclid needs at most log_phi(max) + 2 steps (consecutive Fibonacci numbers)
    return int(math.log(2.0 ** d.bits) / math.log((1 + 5 ** 0.5) / 2)) + 2


def gcd(x1, x2) -> Tensor:
    """Greatest common divisor of integers (non-negative; gcd(0, 0) = 0)."""
    (a, b), dtype = prepare(x1, x2)
    _check_kinds("gcd", dtype, "iu", "integer")
    a, b = abs(a), abs(b)
    zero, one = full_like_tensor(0, a), full_like_tensor(1, a)
    for _ in range(_euclid_steps(dtype)):
        done = equal(b, 0)
        r = bind1(P["remainder"], a, where(done, one, b))
        a, b = where(done, a, b), where(done, zero, r)
    return a


def lcm(x1, x2) -> Tensor:
    """Least common multiple of integers (non-negative; 0 if either is 0)."""
    (a, b), dtype = prepare(x1, x2)
    _check_kinds("lcm", dtype, "iu", "integer")
    g = gcd(a, b)
    zero = equal(g, 0)
    q = bind1(P["divide"], abs(a), where(zero, full_like_tensor(1, g), g))
    return where(zero, full_like_tensor(0, g), multiply(q, abs(b)))
