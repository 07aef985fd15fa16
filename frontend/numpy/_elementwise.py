"""Elementwise functions of the namespace, as compositions of primitives.

Integer and boolean inputs to float-only math (sin, exp, sqrt, true division, ...)
become the default float (float32), as in JAX and the array API's guidance.

The inverse trigonometric and hyperbolic functions are primitives (CHLO has accurate
decompositions for them); the rest is composed: hypot scales to avoid overflow,
logaddexp uses log1p(exp(-|x - y|)), signbit reads the sign bit, gcd runs a fixed
number of Euclid steps (enough for the dtype's range, so it needs no loop). On complex
operands exp, log, sqrt and the (inverse) trigonometric and hyperbolic functions go
through _complex_special, which gives the standard's special values and signed zeros.

`select` is the three-argument where; the public `where`, whose one-argument form is
nonzero, is in _searching (the array API lists it among the searching functions).
"""

from __future__ import annotations

import builtins
import functools
from decimal import Decimal

import numpy as np

from ..compiler import dtypes as dt
from ..compiler.primitives import custom_ad as ad
from ..compiler.primitives import elementwise as ew
from ..composite import one_program
from ..dispatch import bind, bind1, bind_binary, bind_broadcast, bind_scalar, bind_unary
from ..errors import at_user_line
from ..promotion import DEFAULT_INT
from ..tensor import Tensor
from ..tracebacks import filter_exception
from ._complex_special import complex_function
from ._operands import (
    as_tensor,
    astype,
    broadcast_shapes,
    broadcast_to,
    copy_of,
    full_like_tensor,
    prepare,
    promote_operands,
    to_inexact,
)


def _check_kinds(name: str, dtype: dt.DType, kinds: str, what: str) -> None:
    if dtype.kind not in kinds:
        raise TypeError(at_user_line(f"{name} is only defined for {what} tensors, not "
                                     f"{dtype.name}"))


def _unary(name: str, prim, *, inexact: bool = True, kinds: str = "biufc",
           what: str = "numeric"):
    on_complex = complex_function(name, prim)

    fast = "f" in kinds

    def f(x) -> Tensor:
        # a public boundary, inline as _binary's (a wrapper would cost every call a frame)
        try:
            if type(x) is Tensor and fast and x.type.dtype.kind == "f":
                return bind_unary(prim, x)  # a real float tensor: nothing to convert
            x = as_tensor(x)
            _check_kinds(name, x.dtype, kinds, what)
            if inexact:
                x = to_inexact(x)
            if on_complex is not None and x.dtype.is_complex:
                out = on_complex(x)
                out.weak = x.weak  # a composition: weak in, weak out, as the primitive
                return out
            return bind1(prim, x)
        except Exception as e:
            filter_exception(e)
            raise

    f.__name__ = name
    f.__doc__ = f"Elementwise {name} (primitive {prim.name})."
    f.__stablejit_boundary__ = True  # (wrap_namespace leaves it as it is)
    if fast:  # its first branch, which recorder_native.namespace_ops takes to C
        f._native_op, f._unary = (prim, "f", False), True
    return f


_PY_NUMBERS = (int, float)  # exact types: bool is not a number here
_FAST_KINDS = "fc"


def _binary(name: str, prim, *, inexact: bool = False, kinds: str = "biufc",
            what: str = "numeric"):
    def f(x, y) -> Tensor:
        # the operators x + y, x < y ... are this function: a public boundary, inline
        # (free until something is raised; a wrapper would cost every eager op a frame)
        try:
            if (type(x) is Tensor and type(y) is Tensor and x.type is y.type
                    and x.type.dtype.kind in kinds
                    and not (inexact and x.type.dtype.kind in "biu")):
                # same types: no promotion or broadcasting (tensors of two backends, such
                # as a device's and a lazy graph's, take bind's path from there)
                return bind_binary(prim, x, y)
            # a float tensor and a Python number: the number takes the tensor's dtype and
            # weakness (JAX's rule for a weak scalar), with no promotion table to walk
            if type(y) in _PY_NUMBERS and type(x) is Tensor and x.type.dtype.kind in _FAST_KINDS:
                if x.type.dtype.kind in kinds:
                    return bind_scalar(prim, x, y)[0]
            elif type(x) in _PY_NUMBERS and type(y) is Tensor and y.type.dtype.kind in _FAST_KINDS:
                if y.type.dtype.kind in kinds:
                    return bind_scalar(prim, y, x, scalar_first=True)[0]
            (x, y), dtype = promote_operands(x, y)
            _check_kinds(name, dtype, kinds, what)
            if inexact and not dtype.is_inexact:
                x, y = to_inexact(x), to_inexact(y)
            return bind_broadcast(prim, (x, y), broadcast_shapes(x.shape, y.shape))[0]
        except Exception as e:
            filter_exception(e)
            raise

    f.__name__ = name
    f.__doc__ = f"Elementwise {name} with broadcasting (primitive {prim.name})."
    f.__stablejit_boundary__ = True  # (wrap_namespace leaves it as it is)
    # what the native operators need of f's fast branches (recorder_native.operators)
    f._native_op = (prim, kinds, inexact)
    return f


exp = _unary("exp", ew.exp)
expm1 = _unary("expm1", ew.expm1)
log = _unary("log", ew.log)
log1p = _unary("log1p", ew.log1p)
sqrt = _unary("sqrt", ew.sqrt)
rsqrt = _unary("rsqrt", ew.rsqrt)
cbrt = _unary("cbrt", ew.cbrt, kinds="biuf", what="real")
sin = _unary("sin", ew.sin)
cos = _unary("cos", ew.cos)
tan = _unary("tan", ew.tan)
tanh = _unary("tanh", ew.tanh)
sigmoid = _unary("sigmoid", ew.logistic)

add = _binary("add", ew.add)
subtract = _binary("subtract", ew.subtract, kinds="iufc", what="numeric (not boolean)")
multiply = _binary("multiply", ew.multiply)
maximum = _binary("maximum", ew.maximum, kinds="biuf", what="real")
minimum = _binary("minimum", ew.minimum, kinds="biuf", what="real")
arctan2 = _binary("arctan2", ew.atan2, inexact=True, kinds="biuf", what="real")
atan2 = arctan2
bitwise_and = _binary("bitwise_and", ew.and_, kinds="biu", what="boolean or integer")
bitwise_or = _binary("bitwise_or", ew.or_, kinds="biu", what="boolean or integer")
bitwise_xor = _binary("bitwise_xor", ew.xor, kinds="biu", what="boolean or integer")
left_shift = _binary("left_shift", ew.shift_left, kinds="iu", what="integer")
right_shift = _binary("right_shift", ew.shift_right, kinds="iu", what="integer")
bitwise_left_shift, bitwise_right_shift = left_shift, right_shift
equal = _binary("equal", ew.eq)
not_equal = _binary("not_equal", ew.ne)
less = _binary("less", ew.lt, kinds="biuf", what="real")
less_equal = _binary("less_equal", ew.le, kinds="biuf", what="real")
greater = _binary("greater", ew.gt, kinds="biuf", what="real")
greater_equal = _binary("greater_equal", ew.ge, kinds="biuf", what="real")


def negative(x) -> Tensor:
    try:  # an operator: a public boundary, inline (free until a raise)
        x = as_tensor(x)
        _check_kinds("negative", x.dtype, "iufc", "numeric (not boolean)")
        return bind1(ew.neg, x)
    except Exception as e:
        filter_exception(e)
        raise


# -x records in C on a lazy backend or grad tape (recorder_native): a tensor of these
# kinds is negated as it is, as above
negative._native_op = (ew.neg, "iufc", False)
negative._unary = True


def positive(x) -> Tensor:
    try:  # an operator: a public boundary, inline (free until a raise)
        return copy_of(as_tensor(x))
    except Exception as e:
        filter_exception(e)
        raise


def abs(x) -> Tensor:  # noqa: A001 - the array API's name
    try:  # an operator: a public boundary, inline (free until a raise)
        x = as_tensor(x)
        if x.dtype.kind in "bu":
            return copy_of(x)
        if x.dtype.is_complex:
            return _complex_abs(x)
        return bind1(ew.abs_, x)
    except Exception as e:
        filter_exception(e)
        raise


absolute = abs


@one_program
def _complex_abs(z: Tensor) -> Tensor:
    """|z|, +inf where either part is infinite even if the other is NaN (C99's hypot,
    the array API's rule, NumPy's answer; XLA's complex abs gives NaN there)."""
    a = bind1(ew.abs_, z)
    out = select(logical_or(isinf(real(z)), isinf(imag(z))), full_like_tensor(np.inf, a), a)
    out.weak = z.weak  # (abs of a Python complex is weak, as the primitive's)
    return out


def sign(x) -> Tensor:
    x = as_tensor(x)
    _check_kinds("sign", x.dtype, "iufc", "numeric")
    if x.dtype.kind == "u":
        return astype(greater(x, 0), x.dtype)
    if x.dtype.kind == "i":
        return bind1(ew.sign, x)
    if not x.dtype.is_complex:
        s = bind1(ew.sign, x)
    else:
        # z/|z| part by part, as NumPy: XLA's complex sign loses the sign of a zero part.
        # Where one part is infinite and the other finite, z/|z| is NaN; NumPy gives the
        # unit along the infinite part.
        re, im = real(x), imag(x)
        r = bind1(ew.abs_, x)
        s = bind1(ew.complex_, bind1(ew.divide, re, r), bind1(ew.divide, im, r))
        zero = full_like_tensor(0, re)
        unit = bind1(ew.complex_, select(isinf(re), bind1(ew.sign, re), zero),
                     select(isinf(im), bind1(ew.sign, im), zero))
        s = select(logical_and(logical_xor(isinf(re), isinf(im)), logical_not(isnan(x))),
                   unit, s)
    # StableHLO's sign keeps the zero's sign (sign(-0.0) is -0.0); NumPy and the
    # standard give +0
    return bind1(ew.select, equal(x, 0), full_like_tensor(0, x), s)


def square(x) -> Tensor:
    x = as_tensor(x)
    return bind1(ew.multiply, x, x)


def reciprocal(x) -> Tensor:
    return divide(1, to_inexact(as_tensor(x)))


def divide(x, y) -> Tensor:
    """True division: integers divide as floats."""
    try:  # an operator: a public boundary, inline (free until a raise)
        if type(x) is Tensor:  # the common float cases, as _binary's fast paths
            kind = x.type.dtype.kind
            if type(y) in _PY_NUMBERS and kind in _FAST_KINDS:
                return bind_scalar(ew.divide, x, y)[0]
            if type(y) is Tensor and y.type is x.type and kind in _FAST_KINDS \
                    and y._backend is x._backend:
                return bind(ew.divide, (x, y))[0]
        elif type(x) in _PY_NUMBERS and type(y) is Tensor and y.type.dtype.kind in _FAST_KINDS:
            return bind_scalar(ew.divide, y, x, scalar_first=True)[0]
        (x, y), dtype = prepare(x, y)
        if not dtype.is_inexact:
            x, y = to_inexact(x), to_inexact(y)
        return bind1(ew.divide, x, y)
    except Exception as e:
        filter_exception(e)
        raise


true_divide = divide


def floor_divide(x, y) -> Tensor:
    """Python/NumPy floor division. An integer division by zero is 0, as in NumPy (and
    as remainder's); XLA's division gives -1 (all bits set). INT_MIN // -1 wraps to
    INT_MIN, as in NumPy."""
    try:  # an operator: a public boundary, inline (free until a raise)
        (x, y), dtype = prepare(x, y)
        _check_kinds("floor_divide", dtype, "iuf", "real")
        if dtype.kind == "f":
            return _weak_if(_float_floor_divide(x, y), x, y)
        if dtype.kind == "u":
            return _weak_if(_zero_where_divisor_is_zero(bind1(ew.divide, x, y), y), x, y)
        # C division truncates; step down when the signs differ and it was inexact
        q = bind1(ew.divide, x, y)
        r = bind1(ew.remainder, x, y)
        zero = full_like_tensor(0, x)
        adjust = bitwise_and(not_equal(r, zero), not_equal(less(r, zero), less(y, zero)))
        return _weak_if(_zero_where_divisor_is_zero(select(adjust, subtract(q, 1), q), y), x, y)
    except Exception as e:
        filter_exception(e)
        raise


def _float_floor_divide(x: Tensor, y: Tensor) -> Tensor:
    """NumPy's float floor division (npy_divmod), which agrees with its remainder:
    (x - fmod(x, y)) / y, one down where fmod's sign differs from y's, rounded to the
    nearest integer; x / y for y = 0. floor(x / y) is not it: 1.0 // 0.1 is 9 (0.1 is a
    little above 1/10). Where an operand is infinite the array API standard's special
    cases hold instead (x / y: inf // 1 is inf and -1 // inf is -0, where NumPy gives
    NaN and -1). Half floats are computed in float32, as NumPy does. The quotient is
    piecewise constant: its derivative is 0 everywhere (JAX's), not the 1/y the division
    in it would give."""
    dtype = x.dtype
    x, y = bind1(ad.stop_gradient, x), bind1(ad.stop_gradient, y)
    if dtype.bits < 32:
        x, y = astype(x, dt.float32), astype(y, dt.float32)
    zero, one = full_like_tensor(0, x), full_like_tensor(1, x)
    mod = bind1(ew.remainder, x, y)
    div = bind1(ew.divide, subtract(x, mod), y)
    below = bitwise_and(not_equal(mod, zero), not_equal(less(y, zero), less(mod, zero)))
    div = select(below, subtract(div, one), div)
    q = bind1(ew.floor, div)
    q = select(greater(subtract(div, q), full_like_tensor(0.5, x)), add(q, one), q)
    quotient = bind1(ew.divide, x, y)
    q = select(equal(div, zero), copysign(zero, quotient), q)
    q = select(logical_or(equal(y, zero), logical_or(isinf(x), isinf(y))), quotient, q)
    return astype(q, dtype) if q.dtype is not dtype else q


def remainder(x, y) -> Tensor:
    """Python/NumPy modulo: the result takes the divisor's sign."""
    try:  # an operator: a public boundary, inline (free until a raise)
        (x, y), dtype = prepare(x, y)
        _check_kinds("remainder", dtype, "iuf", "real")
        r = bind1(ew.remainder, x, y)
        if dtype.kind in "iu":
            r = _zero_where_divisor_is_zero(r, y)
        if dtype.kind == "u":
            return _weak_if(r, x, y)
        zero = full_like_tensor(0, x)
        adjust = bitwise_and(not_equal(r, zero), not_equal(less(r, zero), less(y, zero)))
        out = select(adjust, add(r, y), r)
        if dtype.kind == "f":  # a zero result takes the divisor's sign too: -0 % 2 is +0
            # as signed zero minus (out - out): the same value (x - x is +0, and z - +0 is z
            # for either zero z), and out's derivative still flows (1 in x, as in JAX),
            # where select's constant branch would make it 0 at every multiple of y
            through = subtract(bind1(ad.stop_gradient, out), out)
            out = select(equal(out, zero), subtract(copysign(zero, y), through), out)
        return _weak_if(out, x, y)
    except Exception as e:
        filter_exception(e)
        raise


mod = remainder


def fmod(x, y) -> Tensor:
    """C's remainder: the result takes the dividend's sign."""
    (x, y), dtype = prepare(x, y)
    r = bind1(ew.remainder, x, y)
    return _weak_if(_zero_where_divisor_is_zero(r, y), x, y) if dtype.kind in "iu" else r


def _weak_if(out: Tensor, x: Tensor, y: Tensor) -> Tensor:
    """out (a fresh tensor of the operands' dtype), weak when both operands are, as JAX
    types x // y and x % y of Python scalars (the strong constants of the steps above
    would make it strong)."""
    if x.weak and y.weak and not out.weak:
        out.weak = True
    return out


def _zero_where_divisor_is_zero(r: Tensor, y: Tensor) -> Tensor:
    # an integer remainder or floor division by 0 is 0, as in NumPy (XLA's rem gives the
    # dividend, its division -1)
    zero = full_like_tensor(0, r)
    return select(equal(broadcast_to(y, r.shape), zero), zero, r)


def rint(x) -> Tensor:
    """Round half to even to the nearest integer value; integers become the default
    float, as in JAX."""
    return round(to_inexact(as_tensor(x)))


def power(x, y) -> Tensor:
    try:  # an operator: a public boundary, inline (free until a raise)
        if isinstance(y, int) and not isinstance(y, bool) and isinstance(x, Tensor) and (
                0 <= y <= 4 or (x.dtype.kind in "iu" and 0 <= y <= np.iinfo(x.dtype.np).max)):
            # small powers, and integer ones, as multiplications (by squaring): exact, and
            # a few products where an integer stablehlo.power compiles to loops
            return _power_by_squaring(x, y)
        (x, y), dtype = prepare(x, y)
        if dtype.kind == "b":  # booleans raise to a power as default ints, as in jax
            x, y = astype(x, DEFAULT_INT), astype(y, DEFAULT_INT)
        return bind1(ew.power, x, y)
    except Exception as e:
        filter_exception(e)
        raise


pow = power  # noqa: A001 - the array API's name


def _power_by_squaring(x: Tensor, y: int) -> Tensor:
    out, square = None, x
    while y:
        if y & 1:
            out = square if out is None else multiply(out, square)
        y >>= 1
        if y:
            square = multiply(square, square)
    return full_like_tensor(1, x) if out is None else out


def floor(x) -> Tensor:
    x = as_tensor(x)
    return copy_of(x) if x.dtype.kind in "biu" else bind1(ew.floor, x)


def ceil(x) -> Tensor:
    x = as_tensor(x)
    return copy_of(x) if x.dtype.kind in "biu" else bind1(ew.ceil, x)


def trunc(x) -> Tensor:
    x = as_tensor(x)
    if x.dtype.kind in "biu":
        return copy_of(x)
    return select(less(x, 0), ceil(x), floor(x))


fix = trunc


def round(x, decimals: int = 0) -> Tensor:  # noqa: A001
    """Round half to even, to `decimals` places (negative: to tens, hundreds, ...)."""
    x = as_tensor(x)
    if x.dtype.kind in "iu" and decimals < 0:
        return _round_int(x, 10 ** -decimals)
    if x.dtype.kind in "biu":
        return copy_of(x)
    if x.dtype.is_complex:
        return bind1(ew.complex_, round(real(x), decimals), round(imag(x), decimals))
    if decimals == 0:
        return bind1(ew.round_, x)
    scale = 10.0 ** decimals
    return divide(bind1(ew.round_, multiply(x, scale)), scale)


around = round


def _round_int(x: Tensor, q: int) -> Tensor:
    """Integers rounded half to even to a multiple of q, exactly (NumPy's answer; a
    float detour would lose int64 digits)."""
    if q > np.iinfo(x.dtype.np).max:  # every value is nearer 0 than the first multiple
        return full_like_tensor(0, x)
    r = remainder(x, q)  # in [0, q): base = x - r is the multiple at or below x
    base = subtract(x, r)
    half = subtract(full_like_tensor(q, x), r)  # q - r: no overflow, unlike 2 * r
    odd = not_equal(remainder(floor_divide(base, q), 2), 0)
    up = logical_or(greater(r, half), logical_and(equal(r, half), odd))
    return select(up, add(base, q), base)


def isfinite(x) -> Tensor:
    x = as_tensor(x)
    if x.dtype.kind in "biu":
        return full_like_tensor(True, astype(x, dt.bool_))
    if x.dtype.is_complex:
        return logical_and(isfinite(real(x)), isfinite(imag(x)))
    return bind1(ew.is_finite, x)


def isnan(x) -> Tensor:
    x = as_tensor(x)
    if x.dtype.kind in "biu":
        return full_like_tensor(False, astype(x, dt.bool_))
    if x.dtype.is_complex:
        return logical_or(isnan(real(x)), isnan(imag(x)))
    return bind1(ew.ne, x, x)


def isinf(x) -> Tensor:
    x = as_tensor(x)
    if x.dtype.kind in "biu":
        return full_like_tensor(False, astype(x, dt.bool_))
    if x.dtype.is_complex:
        return logical_or(isinf(real(x)), isinf(imag(x)))
    return equal(abs(x), np.inf)


def logical_not(x) -> Tensor:
    return bind1(ew.not_, astype(as_tensor(x), dt.bool_))


def logical_and(x, y) -> Tensor:
    return bitwise_and(astype(as_tensor(x), dt.bool_), astype(as_tensor(y), dt.bool_))


def logical_or(x, y) -> Tensor:
    return bitwise_or(astype(as_tensor(x), dt.bool_), astype(as_tensor(y), dt.bool_))


def logical_xor(x, y) -> Tensor:
    return bitwise_xor(astype(as_tensor(x), dt.bool_), astype(as_tensor(y), dt.bool_))


def invert(x) -> Tensor:
    try:  # an operator: a public boundary, inline (free until a raise)
        x = as_tensor(x)
        _check_kinds("invert", x.dtype, "biu", "boolean or integer")
        return bind1(ew.not_, x)
    except Exception as e:
        filter_exception(e)
        raise


bitwise_not = bitwise_invert = invert


def log2(x) -> Tensor:
    """log(x) / log(2), exact at the powers of two (log2(8.0) is 3.0), as NumPy's.

    Example:
        >>> snp.log2(snp.asarray([1.0, 8.0, 10.0]))
        Tensor<f32[3] xla:host:0>
        [0.      , 3.      , 3.321928]
    """
    return _log_base(to_inexact(as_tensor(x)), 2)


def log10(x) -> Tensor:
    """log(x) / log(10), exact at the floats nearest the powers of ten (log10(1000.0) is
    3.0, log10(0.1) is -1.0), as NumPy's.

    Example:
        >>> snp.log10(snp.asarray([0.1, 1000.0, 2.0]))
        Tensor<f32[3] xla:host:0>
        [-1.        ,  3.        ,  0.30102998]
    """
    return _log_base(to_inexact(as_tensor(x)), 10)


@one_program
def _log_base(x: Tensor, base: int) -> Tensor:
    """log(x) / log(base), made the integer k where x is the float nearest base**k and
    k is its correctly rounded logarithm, as C's log2 and log10 (so NumPy's) give: the
    quotient misses k by an ulp for a fifth of the powers of two and most powers of ten,
    and floor(log10(1e5)) would be 4. float16 and bfloat16 compute in float32. One
    program eagerly."""
    if x.dtype.is_complex:
        # each part times log_base(e), as NumPy: a complex quotient by log(base) makes
        # the imaginary part of log10(0j) or log2(inf+0j) NaN
        return _scale_parts(log(x), float(1 / np.log(base)))
    narrow = x.dtype in (dt.float16, dt.bfloat16)
    w = astype(x, dt.float32) if narrow else x
    r = divide(log(w), float(np.log(base)))
    table, low = _powers(x.dtype.np, base)
    k = round(r)
    i = astype(clip(select(isfinite(k), k, 0) - low, 0, table.shape[0] - 1), dt.int32)
    # k as r plus the (exact, gradient-free) step to it: the derivative stays r's
    k = add(r, bind1(ad.stop_gradient, subtract(k, r)))
    out = select(equal(as_tensor(table, w)[i], w), k, r)  # i is in range: a gather
    return astype(out, x.dtype) if narrow else out


@functools.cache
def _powers(np_dtype, base: int) -> tuple[np.ndarray, int]:
    """(table, low): table[k - low] is the normal float of np_dtype nearest base**k when
    its correctly rounded log_base is k, else NaN (float16's nearest to 1e-4 is too far:
    its log10 is -4.0002); float32 for float16 and bfloat16, which compute in float32."""
    ks = np.arange(-330, 330) if base == 10 else np.arange(-1100, 1100)
    with np.errstate(over="ignore", under="ignore"):
        near = np.ldexp(1.0, ks) if base == 2 else np.array([float(f"1e{k}") for k in ks])
        vals = near.astype(np_dtype)
    tiny = float(dt.finfo(dt.dtype(np_dtype)).tiny)
    exact = {}
    for k, v in zip(ks.tolist(), vals.tolist(), strict=True):
        if np.isfinite(v) and v >= tiny:
            power = Decimal(base) ** k
            off = builtins.abs(float((Decimal(v) - power) / power)) / np.log(base)  # |log(v) - k|
            if off < 0.45 * builtins.abs(float(np.spacing(np.dtype(np_dtype).type(k or 1)))):
                exact[k] = v
    low, high = builtins.min(exact), builtins.max(exact)
    wide = np.float32 if np.dtype(np_dtype).itemsize < 4 else np_dtype
    return np.array([exact.get(k, np.nan) for k in range(low, high + 1)], wide), low


def exp2(x) -> Tensor:
    x = to_inexact(as_tensor(x))
    if x.dtype.is_complex:  # exp(z * ln 2), part by part, as NumPy (2**z loses -0j)
        return exp(_scale_parts(x, float(np.log(2))))
    return power(full_like_tensor(2, x), x)


def _scale_parts(z: Tensor, c: float) -> Tensor:
    """The complex z with each part times the real number c (a complex product by c + 0j
    makes inf * 0 NaN in the other part)."""
    return bind1(ew.complex_, multiply(real(z), c), multiply(imag(z), c))


def real(x) -> Tensor:
    x = as_tensor(x)
    return bind1(ew.real, x) if x.dtype.is_complex else x


def imag(x) -> Tensor:
    x = as_tensor(x)
    return bind1(ew.imag, x) if x.dtype.is_complex else full_like_tensor(0, x)


def conj(x) -> Tensor:
    x = as_tensor(x)
    return bind1(ew.conj, x) if x.dtype.is_complex else copy_of(x)


conjugate = conj


def select(condition, x, y) -> Tensor:
    """x where condition holds, else y (the three-argument where), with promotion and
    broadcasting."""
    c = astype(as_tensor(condition), dt.bool_)
    (x, y), _ = promote_operands(x, y, like=c)  # two scalars: made where c lives
    return bind_broadcast(ew.select, (c, x, y), broadcast_shapes(c.shape, x.shape, y.shape))[0]


def clip(x, min=None, max=None) -> Tensor:  # noqa: A002
    x = as_tensor(x)
    if min is None and max is None:
        return copy_of(x)
    if min is not None:
        x = maximum(x, min)
    if max is not None:
        x = minimum(x, max)
    return x


def _real_floats(name: str, *xs):
    """Promote, broadcast and make floating point; real (not complex) operands only."""
    ts, dtype = prepare(*xs)
    _check_kinds(name, dtype, "biuf", "real")
    return [to_inexact(t) for t in ts]


def _real_float(name: str, x) -> Tensor:
    x = as_tensor(x)
    _check_kinds(name, x.dtype, "biuf", "real")
    return to_inexact(x)


_SAME_WIDTH_INT = {16: dt.int16, 32: dt.int32, 64: dt.int64}


def signbit(x) -> Tensor:
    """True where the sign bit is set: also for -0.0 and negative NaNs."""
    x = as_tensor(x)
    _check_kinds("signbit", x.dtype, "biuf", "real")
    if x.dtype.kind in "bu":
        return full_like_tensor(False, astype(x, dt.bool_))
    if x.dtype.kind == "i":
        return less(x, 0)
    bits = bind1(ew.bitcast_convert, x, dtype=_SAME_WIDTH_INT[x.dtype.bits])
    return less(bits, 0)


def copysign(x1, x2) -> Tensor:
    """|x1| with the sign bit of x2."""
    a, b = _real_floats("copysign", x1, x2)
    m = abs(a)
    return select(signbit(b), negative(m), m)
