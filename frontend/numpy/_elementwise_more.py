"""The elementwise math NumPy and the array API standard add to the core of
_elementwise.py: inverse trigonometric and hyperbolic functions, hypot, logaddexp,
signbit / copysign / nextafter, frexp / ldexp / modf, fmax / fmin, isclose,
nan_to_num, gcd / lcm and the like, composed from primitives and the core functions."""

from __future__ import annotations

import builtins
import math

import numpy as np

from ..compiler import dtypes as dt
from ..compiler.primitives import elementwise as ew
from ..dispatch import bind1
from ..tensor import Tensor
from ._elementwise import (
    _check_kinds,
    _real_float,
    _real_floats,
    _unary,
    abs,
    add,
    clip,
    copysign,
    divide,
    equal,
    exp,
    exp2,
    floor_divide,
    greater,
    greater_equal,
    imag,
    invert,
    isfinite,
    isinf,
    isnan,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    logical_or,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    power,
    real,
    remainder,
    select,
    sin,
    sqrt,
    subtract,
    trunc,
)
from ._operands import (
    as_tensor,
    astype,
    copy_of,
    full_like_tensor,
    prepare,
    to_inexact,
)

# ---- more math of the array API standard and NumPy ----------------------------------

acos = _unary("acos", ew.acos)
asin = _unary("asin", ew.asin)
atan = _unary("atan", ew.atan)
acosh = _unary("acosh", ew.acosh)
asinh = _unary("asinh", ew.asinh)
atanh = _unary("atanh", ew.atanh)
sinh = _unary("sinh", ew.sinh)
cosh = _unary("cosh", ew.cosh)
arccos, arcsin, arctan = acos, asin, atan
arccosh, arcsinh, arctanh = acosh, asinh, atanh


def hypot(x1, x2) -> Tensor:
    """sqrt(x1**2 + x2**2) without overflow or underflow in the squares; inf wins over NaN."""
    a, b = _real_floats("hypot", x1, x2)
    a, b = abs(a), abs(b)
    big, small = maximum(a, b), minimum(a, b)
    safe = select(equal(big, 0), full_like_tensor(1, big), big)
    r = divide(small, safe)
    out = multiply(big, sqrt(add(multiply(r, r), 1)))
    # big itself where it is 0 (not a constant): its derivative there is JAX's, 1/2 to
    # each leg from maximum's tie
    out = select(equal(big, 0), big, out)
    return select(logical_or(isinf(a), isinf(b)), full_like_tensor(np.inf, big), out)


def _larger_and_gap(a, b):
    """(the larger of a and b, minus the gap between them, where the gap is undefined)
    for logaddexp, chosen by one select: at a tie each operand's derivative is then 1/2
    (1 and 0 from the larger, -1/2 and +1/2 from the gap), as JAX's rule gives, whatever
    abs does at its kink. Equal infinities (and NaNs) have no gap: it is 0 there, so no
    NaN reaches the derivative through the branch logaddexp does not take."""
    first = greater_equal(a, b)
    undefined = isnan(subtract(a, b))
    gap = select(first, subtract(b, a), subtract(a, b))
    return select(first, a, b), select(undefined, full_like_tensor(0, gap), gap), undefined


def _without_gap(a, b, exp_, log_, log_2: float):
    """logaddexp (log_(exp_(a) + exp_(b))) where a - b is undefined: equal infinities
    give that infinity, with derivative 1/2 each (logaddexp(x, x) = x + log 2 has slope
    1 everywhere); a NaN operand gives NaN, with a NaN derivative (as JAX's), never a
    finite one that would hide the NaN: log_ of exp_ there, computed at 0 elsewhere so
    its unused derivative multiplies no NaN into the result."""
    nan = logical_or(isnan(a), isnan(b))
    zero = full_like_tensor(0, a)
    an, bn = select(nan, a, zero), select(nan, b, zero)
    return select(nan, log_(add(exp_(an), exp_(bn))), add(multiply(add(a, b), 0.5), log_2))


def logaddexp(x1, x2) -> Tensor:
    """log(exp(x1) + exp(x2)) without overflow."""
    a, b = _real_floats("logaddexp", x1, x2)
    larger, gap, undefined = _larger_and_gap(a, b)
    out = add(larger, log1p(exp(gap)))
    return select(undefined, _without_gap(a, b, exp, log, math.log(2)), out)


def logaddexp2(x1, x2) -> Tensor:
    """log2(2**x1 + 2**x2) without overflow."""
    a, b = _real_floats("logaddexp2", x1, x2)
    larger, gap, undefined = _larger_and_gap(a, b)
    out = add(larger, divide(log1p(exp2(gap)), math.log(2)))
    return select(undefined, _without_gap(a, b, exp2, _log2, 1.0), out)


def _log2(x) -> Tensor:
    return divide(log(x), math.log(2))


def nextafter(x1, x2) -> Tensor:
    """The next representable float after x1 in the direction of x2."""
    a, b = _real_floats("nextafter", x1, x2)
    return bind1(ew.nextafter, a, b)


def heaviside(x1, x2) -> Tensor:
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0 (NaN stays NaN)."""
    a, b = _real_floats("heaviside", x1, x2)
    zero, one = full_like_tensor(0, a), full_like_tensor(1, a)
    out = select(less(a, 0), zero, select(greater(a, 0), one, b))
    return select(isnan(a), a, out)


def deg2rad(x) -> Tensor:
    return multiply(_real_float("deg2rad", x), math.pi / 180)


def rad2deg(x) -> Tensor:
    return multiply(_real_float("rad2deg", x), 180 / math.pi)


radians, degrees = deg2rad, rad2deg


def sinc(x) -> Tensor:
    """sin(pi x) / (pi x), with sinc(0) = 1."""
    x = to_inexact(as_tensor(x))
    zero = equal(x, 0)
    px = multiply(select(zero, full_like_tensor(1, x), x), math.pi)
    return select(zero, full_like_tensor(1, x), divide(sin(px), px))


def float_power(x1, x2) -> Tensor:
    """x1 ** x2 computed in float64 (complex128 for complex operands), as NumPy does."""
    (a, b), dtype = prepare(x1, x2)
    target = dt.complex128 if dtype.is_complex else dt.float64
    return power(astype(a, target), astype(b, target))


def fabs(x) -> Tensor:
    return abs(_real_float("fabs", x))


def _ignoring_nan(name: str, pick, x1, x2) -> Tensor:
    """fmax/fmin: x1 where pick(x1, x2) holds or x2 is NaN, else x2, as JAX's: NaN only
    where both are NaN; on a tie (signed zeros included) x2, which gets the whole
    derivative (JAX's; maximum's tie splits it)."""
    (a, b), dtype = prepare(x1, x2)
    _check_kinds(name, dtype, "biuf", "real")
    if dtype.kind != "f":
        return (maximum if pick is greater else minimum)(a, b)
    return select(logical_or(pick(a, b), isnan(b)), a, b)


def fmax(x1, x2) -> Tensor:
    """The larger of x1 and x2, ignoring NaNs (NumPy's fmax)."""
    return _ignoring_nan("fmax", greater, x1, x2)


def fmin(x1, x2) -> Tensor:
    """The smaller of x1 and x2, ignoring NaNs (NumPy's fmin)."""
    return _ignoring_nan("fmin", less, x1, x2)


def ldexp(x1, x2) -> Tensor:
    """x1 * 2**x2 for integer x2, as C's scalbn: exact products by powers of two made
    from their bits, rounded once. One factor 2**x2 overflows or underflows where the
    result need not (ldexp(1e-30, 130); ldexp(inf, -200) was inf * 0, NaN), and exp2
    is approximated."""
    x2 = as_tensor(x2)
    _check_kinds("ldexp (exponent)", x2.dtype, "iu", "integer")
    a = _real_float("ldexp", x1)
    if a.dtype == dt.float16:  # exact in float32, then one rounding
        return astype(ldexp(astype(a, dt.float32), x2), dt.float16)
    info = dt.finfo(a.dtype)
    nmant, emax, emin = int(info.nmant), int(info.maxexp) - 1, int(info.minexp)
    # past it every finite non-zero result has over- or underflowed
    limit = 2 * emax + nmant + 4
    bounds = dt.iinfo(x2.dtype)
    lo = None if x2.dtype.kind == "u" else builtins.max(-limit, int(bounds.min))
    n = astype(clip(x2, lo, builtins.min(limit, int(bounds.max))), dt.int32)
    # scalbn's steps: by 2**emax up; down by 2**(emin + nmant + 1), which rounds only
    # where the result is below half the smallest subnormal (0 either way); the last
    # step, in the normal range, rounds once
    int_type, down = dt.dtype(f"int{a.dtype.bits}"), emin + nmant + 1
    for last in (False, False, True):
        k = clip(n, emin, emax) if last else select(
            greater(n, emax), full_like_tensor(emax, n),
            select(less(n, emin), full_like_tensor(down, n), n))
        bits = astype(add(k, emax), int_type) << nmant
        a = multiply(a, bind1(ew.bitcast_convert, bits, dtype=a.dtype))
        n = subtract(n, k)
    return a


def frexp(x) -> tuple[Tensor, Tensor]:
    """Mantissa and exponent, x = m * 2**e with 0.5 <= |m| < 1 (m = x, e = 0 for zeros,
    infinities and NaNs); e is int32. Read from the bits, so exact for subnormals too."""
    x = _real_float("frexp", x)
    info = dt.finfo(x.dtype)
    nmant, nexp = int(info.nmant), int(info.nexp)
    int_type = dt.dtype(f"int{x.dtype.bits}")
    mask, bias = (1 << nexp) - 1, 1 - int(info.minexp)
    # Only integer ops touch a subnormal: a CPU that flushes subnormals to zero (XLA's
    # does) would read one as 0 in any float comparison or product. Its value is its
    # mantissa field times 2**(1 - bias - nmant), and that integer as a float is normal.
    raw = bind1(ew.bitcast_convert, x, dtype=int_type)
    fraction = raw & ((1 << nmant) - 1)
    sub = logical_and(equal(raw >> nmant & mask, 0), not_equal(fraction, 0))
    as_normal = astype(fraction, x.dtype)
    scaled = select(sub, select(less(raw, 0), negative(as_normal), as_normal), x)
    bits = bind1(ew.bitcast_convert, scaled, dtype=int_type)
    e = (bits >> nmant & mask) - (bias - 1) + select(sub, 1 - bias - nmant, 0)
    m_bits = bits & ~(mask << nmant) | (bias - 1) << nmant
    m = bind1(ew.bitcast_convert, m_bits, dtype=x.dtype)
    zero = equal(raw & ((1 << (x.dtype.bits - 1)) - 1), 0)  # +0 or -0, from the bits
    special = logical_or(logical_or(isinf(x), isnan(x)), zero)
    return select(special, x, m), astype(select(special, 0, e), dt.int32)


def divmod(x1, x2) -> tuple[Tensor, Tensor]:  # noqa: A001 - NumPy's name
    return floor_divide(x1, x2), remainder(x1, x2)


def modf(x) -> tuple[Tensor, Tensor]:
    """Fractional and integral parts, both with the sign of x."""
    x = _real_float("modf", x)
    i = trunc(x)
    frac = select(isinf(x), full_like_tensor(0, x), subtract(x, i))
    return copysign(frac, x), i


def angle(z, deg: bool = False) -> Tensor:
    """The argument of complex numbers (0 or pi for reals)."""
    z = as_tensor(z)
    z = z if z.dtype.is_inexact else to_inexact(z)
    out = bind1(ew.atan2, imag(z), real(z))
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
        return copy_of(x)
    if x.dtype.is_complex:
        parts = [nan_to_num(p, nan=nan, posinf=posinf, neginf=neginf)
                 for p in (real(x), imag(x))]
        return bind1(ew.complex_, *parts)
    info = dt.finfo(x.dtype)
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    out = select(isnan(x), full_like_tensor(nan, x), x)
    out = select(isposinf(x), full_like_tensor(hi, x), out)
    return select(isneginf(x), full_like_tensor(lo, x), out)


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


def _euclid_steps(d: dt.DType) -> int:
    # Euclid needs at most log_phi(max) + 2 steps (consecutive Fibonacci numbers)
    return int(math.log(2.0 ** d.bits) / math.log((1 + 5 ** 0.5) / 2)) + 2


def gcd(x1, x2) -> Tensor:
    """Greatest common divisor of integers (non-negative; gcd(0, 0) = 0)."""
    (a, b), dtype = prepare(x1, x2)
    _check_kinds("gcd", dtype, "iu", "integer")
    # on the magnitudes as unsigned: abs(INT_MIN) is INT_MIN, whose remainders are
    # negative (gcd(2**31 - 1, -2**31) was -1); 2**bits-1 itself wraps back, as NumPy's
    unsigned = dtype if dtype.kind == "u" else dt.dtype(f"uint{dtype.bits}")
    a, b = astype(abs(a), unsigned), astype(abs(b), unsigned)
    zero, one = full_like_tensor(0, a), full_like_tensor(1, a)
    for _ in range(_euclid_steps(dtype)):
        done = equal(b, 0)
        r = bind1(ew.remainder, a, select(done, one, b))
        a, b = select(done, a, b), select(done, zero, r)
    return astype(a, dtype)


def lcm(x1, x2) -> Tensor:
    """Least common multiple of integers (non-negative; 0 if either is 0)."""
    (a, b), dtype = prepare(x1, x2)
    _check_kinds("lcm", dtype, "iu", "integer")
    g = gcd(a, b)
    zero = equal(g, 0)
    q = bind1(ew.divide, abs(a), select(zero, full_like_tensor(1, g), g))
    return select(zero, full_like_tensor(0, g), multiply(q, abs(b)))
