"""lax's elementwise functions: arithmetic, comparisons, transcendental and bitwise ops,
select / clamp and dtype conversions."""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable

from .. import numpy as snp
from ..compiler import dtypes as dt
from ..compiler.primitives import bits
from ..compiler.primitives import elementwise as ew
from ..dispatch import bind1
from ..errors import at_user_line
from ..numpy._operands import as_tensor
from ..scipy.special import erfinv as _erf_inv
from ..tensor import Tensor
from ._operands import (
    RoundingMethod,
    _binary_op,
    _is_weak,
    _nary,
    _same_dtype,
    _same_shape,
    _unary_op,
)

add = _binary_op("add", ew.add, """x + y, one dtype and one shape (no promotion or broadcasting).

    Example:
        >>> stablejit.lax.add(snp.asarray([1, 2]), snp.asarray([10, 20]))
        Tensor<i64[2] xla:host:0>
        [11, 22]
    """)


sub = _binary_op("sub", ew.subtract, "x - y, one dtype.")


mul = _binary_op("mul", ew.multiply, "x * y, one dtype.")


div = _binary_op("div", ew.divide, "x / y; integers round toward zero (C).")


rem = _binary_op("rem", ew.remainder, "C remainder: the sign of x (as math.fmod).")


max = _binary_op("max", ew.maximum, "Elementwise maximum; NaN propagates.")


min = _binary_op("min", ew.minimum, "Elementwise minimum; NaN propagates.")


eq = _binary_op("eq", ew.eq, "x == y.")


ne = _binary_op("ne", ew.ne, "x != y.")


lt = _binary_op("lt", ew.lt, "x < y.")


le = _binary_op("le", ew.le, "x <= y.")


gt = _binary_op("gt", ew.gt, "x > y.")


ge = _binary_op("ge", ew.ge, "x >= y.")


neg = _unary_op("neg", ew.neg, "-x.")


sign = _unary_op("sign", ew.sign, "-1, 0 or 1 (NaN for NaN).")


sqrt = _unary_op("sqrt", ew.sqrt, "Square root.")


rsqrt = _unary_op("rsqrt", ew.rsqrt, "1 / sqrt(x).")


exp = _unary_op("exp", ew.exp, "e**x.")


log = _unary_op("log", ew.log, "Natural logarithm.")


log1p = _unary_op("log1p", ew.log1p, "log(1 + x), accurate near 0.")


expm1 = _unary_op("expm1", ew.expm1, "exp(x) - 1, accurate near 0.")


tanh = _unary_op("tanh", ew.tanh, "Hyperbolic tangent.")


logistic = _unary_op("logistic", ew.logistic, "1 / (1 + exp(-x)).")


sin = _unary_op("sin", ew.sin, "Sine.")


cos = _unary_op("cos", ew.cos, "Cosine.")


erf = _unary_op("erf", ew.erf, "The error function.")


def erf_inv(x) -> Tensor:
    """The inverse error function of a floating-point x (XLA's algorithm; +-inf at +-1,
    NaN outside [-1, 1])."""
    t = as_tensor(x)
    if t.dtype.kind != "f":
        raise TypeError(at_user_line(
            f"lax.erf_inv needs a floating-point operand, got {t.dtype.name}; convert it "
            f"with lax.convert_element_type"))
    return _erf_inv(t)


def population_count(x) -> Tensor:
    """The number of 1 bits of each integer (two's complement for negative ones), in
    x's dtype."""
    t = as_tensor(x)
    if t.dtype.kind not in "iu":
        raise TypeError(at_user_line(
            f"lax.population_count needs an integer operand, got {t.dtype.name}"))
    u = t if t.dtype.kind == "u" else bind1(ew.bitcast_convert, t, dtype=dt.dtype(
        f"uint{t.dtype.bits}"))
    return snp.astype(snp.bitwise_count(u), t.dtype)


def clz(x) -> Tensor:
    """The number of leading zero bits of each integer (of its two's-complement pattern
    for negative ones: 0), in x's dtype (stablehlo.count_leading_zeros)."""
    t = as_tensor(x)
    if t.dtype.kind not in "iu":
        raise TypeError(at_user_line(
            f"lax.clz needs an integer operand, got {t.dtype.name}; for floats, "
            f"bitcast_convert_type them to an integer type of their width first"))
    return bind1(bits.clz, t)


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int) -> Tensor:
    """operand rounded to a float format of `exponent_bits` and `mantissa_bits` (to
    nearest, ties to even; overflow gives infinity, the format's subnormals flush to
    zero), kept in operand's dtype: XLA's ReducePrecision. (5, 10) is float16, (8, 7)
    bfloat16. Its derivative rounds the tangent the same way, as jax's."""
    t = as_tensor(operand)
    if t.dtype.kind != "f":
        raise TypeError(at_user_line(
            f"lax.reduce_precision needs a floating-point operand, got {t.dtype.name}; "
            f"convert it with lax.convert_element_type"))
    e, m = operator.index(exponent_bits), operator.index(mantissa_bits)
    if e < 1 or m < 0:
        raise ValueError(at_user_line(
            f"lax.reduce_precision: exponent_bits must be at least 1 and mantissa_bits at "
            f"least 0, got exponent_bits={e}, mantissa_bits={m}"))
    return bind1(bits.reduce_precision, t, exponent_bits=e, mantissa_bits=m)


floor = _unary_op("floor", ew.floor, "Round toward -inf.")


ceil = _unary_op("ceil", ew.ceil, "Round toward +inf.")


tan = _unary_op("tan", ew.tan, "Tangent.")


asin = _unary_op("asin", ew.asin, "Inverse sine.")


acos = _unary_op("acos", ew.acos, "Inverse cosine.")


atan = _unary_op("atan", ew.atan, "Inverse tangent.")


sinh = _unary_op("sinh", ew.sinh, "Hyperbolic sine.")


cosh = _unary_op("cosh", ew.cosh, "Hyperbolic cosine.")


asinh = _unary_op("asinh", ew.asinh, "Inverse hyperbolic sine.")


acosh = _unary_op("acosh", ew.acosh, "Inverse hyperbolic cosine.")


atanh = _unary_op("atanh", ew.atanh, "Inverse hyperbolic tangent.")


cbrt = _unary_op("cbrt", ew.cbrt, "Cube root.")


erfc = _unary_op("erfc", ew.erfc, "1 - erf(x), accurate for large x.")


is_finite = _unary_op("is_finite", ew.is_finite, "Neither infinite nor NaN.")


real = _unary_op("real", ew.real, "Real part.")


imag = _unary_op("imag", ew.imag, "Imaginary part.")


conj = _unary_op("conj", ew.conj, "Complex conjugate.")


bitwise_not = _unary_op("bitwise_not", ew.not_, "~x (logical not for booleans).")


atan2 = _binary_op("atan2", ew.atan2, "The angle of (x, y) = atan(x / y), by quadrant.")


nextafter = _binary_op("nextafter", ew.nextafter, "The next float after x toward y.")


complex = _binary_op("complex", ew.complex_, "x + i y.")


bitwise_and = _binary_op("bitwise_and", ew.and_, "x & y.")


bitwise_or = _binary_op("bitwise_or", ew.or_, "x | y.")


bitwise_xor = _binary_op("bitwise_xor", ew.xor, "x ^ y.")


shift_left = _binary_op("shift_left", ew.shift_left, "x << y (0 when y >= the bit width).")


def _shift_right(name: str, signed: bool) -> Callable:
    def op(x, y) -> Tensor:
        x, y = _same_shape(name, _same_dtype(name, x, y))
        if x.dtype.kind not in "iu":
            raise TypeError(at_user_line(f"lax.{name} needs integer operands, got "
                                         f"{x.dtype.name}"))
        if (x.dtype.kind == "i") == signed:
            return bind1(ew.shift_right, x, y)
        # the primitive shifts signed types arithmetically, unsigned logically: reinterpret
        other = dt.dtype(("int" if signed else "uint") + str(x.dtype.bits))
        shifted = bind1(ew.shift_right, bind1(ew.bitcast_convert, x, dtype=other),
                        bind1(ew.bitcast_convert, y, dtype=other))
        return bind1(ew.bitcast_convert, shifted, dtype=x.dtype)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"x >> y, {'copying the sign bit' if signed else 'shifting in zeros'}."
    return op


shift_right_arithmetic = _shift_right("shift_right_arithmetic", True)


shift_right_logical = _shift_right("shift_right_logical", False)


def square(x) -> Tensor:
    """x * x."""
    x = as_tensor(x)
    return bind1(ew.multiply, x, x)


def reciprocal(x) -> Tensor:
    """1 / x."""
    return integer_pow(x, -1)


def abs(x) -> Tensor:
    """|x|; complex gives the (real) modulus; unsigned integers are returned as they are."""
    x = as_tensor(x)
    return x if x.dtype.kind in "ub" else bind1(ew.abs_, x)


def pow(x, y) -> Tensor:
    """x ** y. y may be an integer tensor when x is inexact (as lax.pow); otherwise one
    dtype."""
    xt = as_tensor(x)
    if not _is_weak(y) and as_tensor(y).dtype.is_integer and xt.dtype.is_inexact:
        y = snp.astype(as_tensor(y), xt.dtype)
    return _nary("pow", ew.power, x, y)


def integer_pow(x, y: int) -> Tensor:
    """x ** y for a static Python int y, by repeated squaring (the same multiplications
    as JAX's, so the same bits); a negative y gives 1 / x**-y."""
    x = as_tensor(x)
    n = operator.index(y)
    if n == 0:
        return snp.ones_like(x)
    acc, base, k = None, x, builtins.abs(n)
    while k:
        if k & 1:
            acc = base if acc is None else bind1(ew.multiply, acc, base)
        k >>= 1
        if k:
            base = bind1(ew.multiply, base, base)
    return bind1(ew.divide, snp.ones_like(acc), acc) if n < 0 else acc


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO) -> Tensor:
    """Round to an integral value; halves go away from zero (lax's default) or to even
    (RoundingMethod.TO_NEAREST_EVEN)."""
    x = as_tensor(x)
    if RoundingMethod(rounding_method) == RoundingMethod.TO_NEAREST_EVEN:
        return bind1(ew.round_, x)
    # exact: t = trunc(x), then add sign(x) where |x - t| >= 0.5 (x + 0.5 could round up)
    ax = bind1(ew.abs_, x)
    t = bind1(ew.floor, ax)
    up = snp.astype(bind1(ew.ge, bind1(ew.subtract, ax, t), snp.full_like(x, 0.5)), x.dtype)
    mag = bind1(ew.add, t, up)
    return bind1(ew.select, bind1(ew.lt, x, snp.zeros_like(x)), bind1(ew.neg, mag), mag)


def select(pred, on_true, on_false) -> Tensor:
    """on_true where pred else on_false; pred is boolean, of their shape or 0-d."""
    t, f = _same_dtype("select", on_true, on_false)
    if t.shape != f.shape:
        raise TypeError(at_user_line(f"lax.select: cases have shapes {t.shape} and {f.shape}; "
                                     f"they must be equal"))
    return bind1(ew.select, as_tensor(pred), t, f)


def select_n(which, *cases) -> Tensor:
    """cases[which], elementwise: a boolean `which` picks cases[1] where true (two cases),
    an integer one the case of that number (out-of-range indices are undefined, as in
    JAX)."""
    if not cases:
        raise ValueError(at_user_line("lax.select_n needs at least one case"))
    which = as_tensor(which)
    cases = _same_dtype("select_n", *cases)
    if len(cases) == 1:
        return cases[0]
    if which.dtype is dt.bool_:
        if len(cases) != 2:
            raise ValueError(at_user_line(f"lax.select_n: a boolean selector picks one of "
                                          f"two cases, got {len(cases)}"))
        return select(which, cases[1], cases[0])
    out = cases[0]
    for i, c in enumerate(cases[1:], 1):
        out = bind1(ew.select, bind1(ew.eq, which, snp.full_like(which, i)), c, out)
    return out


def clamp(min, x, max) -> Tensor:
    """x limited to [min, max]; the bounds are 0-d or of x's shape."""
    lo, t, hi = _same_dtype("clamp", min, x, max)
    return bind1(ew.clamp, lo, t, hi)


def convert_element_type(operand, new_dtype) -> Tensor:
    """Convert to `new_dtype` (complex to real keeps the real part, as JAX)."""
    return snp.astype(as_tensor(operand), new_dtype)


def bitcast_convert_type(operand, new_dtype) -> Tensor:
    """Reinterpret the bits as `new_dtype`, with jax's shape rule: to a narrower type the
    result gains a last dimension of the width ratio (float32 -> uint8: shape + (4,),
    bytes in the host's order); to a wider type the operand's last dimension must be
    that ratio, and it is dropped."""
    return bind1(ew.bitcast_convert, as_tensor(operand), dtype=dt.dtype(new_dtype))
