"""Elementwise primitives: unary math, binary arithmetic, comparisons, select, clamp,
conversions.

Operands of binary ops already have equal shapes and dtypes: broadcasting and type
promotion are the frontend's job, as in StableHLO. Each op is one line through
`unary`, `binary` or `compare`; reference rules follow StableHLO semantics (C-style
integer division and remainder, shifts past the bit width give 0 or -1).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as dt
from ..errors import ShapeError
from ..ir import TensorType
from ..primitive import NOT_DIFFERENTIABLE, Primitive

FLOAT = "f"
INEXACT = "fc"
NUMERIC = "iufc"
REAL_NUMERIC = "iuf"
SIGNED = "ifc"  # signed integers, floats, complex
INTEGER = "iu"
LOGICAL = "biu"
ANY = "biufc"

_KIND_WORDS = {"f": "floating-point", "fc": "floating-point or complex",
               "iufc": "numeric", "ifc": "signed numeric", "iuf": "real numeric", "iu": "integer",
               "biu": "boolean or integer", "biufc": "any"}


def check_kind(opname: str, t: TensorType, kinds: str, which: str = "operand") -> None:
    if t.dtype.kind not in kinds:
        raise ShapeError(f"{opname}: {which} has dtype {t.dtype.name}, but {opname} needs "
                         f"a {_KIND_WORDS.get(kinds, kinds)} dtype")


def same_types(opname: str, *types: TensorType) -> None:
    first = types[0]
    for i, t in enumerate(types[1:], 1):
        if t.shape != first.shape:
            raise ShapeError(f"{opname}: operand shapes {first.shape} and {t.shape} differ "
                             f"(operand 0 and operand {i}); broadcast them first")
        if t.dtype is not first.dtype:
            raise ShapeError(f"{opname}: operand dtypes {first.dtype.name} and {t.dtype.name} "
                             f"differ; convert one of them first")


def _elementwise_emit(mlir_name: str):
    def emit(ctx, *xs):
        return ctx.op(mlir_name, list(xs), ctx.out_types)
    return emit


def _errstate(fn):
    def ref(*xs, **attrs):
        with np.errstate(all="ignore"):
            return np.asarray(fn(*xs, **attrs))
    return ref


def unary(name: str, mlir: str, ref, kinds: str = INEXACT, *, out=None,
          differentiable: bool = True) -> Primitive:
    """An elementwise one-operand primitive; `out(dtype)` gives the result dtype."""
    def shape_rule(x):
        check_kind(name, x, kinds)
        return TensorType(x.shape, out(x.dtype) if out else x.dtype)

    def reference(x):
        r = ref(x)
        return np.asarray(r, dtype=(out(dt.dtype(x.dtype)) if out else dt.dtype(x.dtype)).np)

    return Primitive(name, shape_rule, _elementwise_emit(mlir), _errstate(reference),
                     vjp=None if differentiable else NOT_DIFFERENTIABLE, family="elementwise")


def binary(name: str, mlir, ref, kinds: str = NUMERIC, *,
           differentiable: bool = True) -> Primitive:
    """An elementwise two-operand primitive on equal types. `mlir` may be a function of
    the dtype when the StableHLO op depends on it (shift_right)."""
    def shape_rule(x, y):
        same_types(name, x, y)
        check_kind(name, x, kinds)
        return x

    def emit(ctx, x, y):
        op = mlir(ctx.in_types[0].dtype) if callable(mlir) else mlir
        return ctx.op(op, [x, y], ctx.out_types)

    def reference(x, y):
        d = dt.dtype(x.dtype)
        return np.asarray(ref(x, y), dtype=d.np)

    return Primitive(name, shape_rule, emit, _errstate(reference),
                     vjp=None if differentiable else NOT_DIFFERENTIABLE, family="elementwise")


# ---- unary ---------------------------------------------------------------------------

def _real_of(d):
    return dt.real_dtype(d)


def _c_sign(x):
    if np.iscomplexobj(x):
        a = np.abs(x)
        return np.where(a == 0, 0, x / np.where(a == 0, 1, a))
    return np.sign(x)


neg = unary("neg", "stablehlo.negate", np.negative, NUMERIC)
abs_ = unary("abs", "stablehlo.abs", np.abs, SIGNED, out=_real_of)  # no unsigned in StableHLO
sign = unary("sign", "stablehlo.sign", _c_sign, SIGNED)
exp = unary("exp", "stablehlo.exponential", np.exp)
expm1 = unary("expm1", "stablehlo.exponential_minus_one", np.expm1)
log = unary("log", "stablehlo.log", np.log)
log1p = unary("log1p", "stablehlo.log_plus_one", np.log1p)
sqrt = unary("sqrt", "stablehlo.sqrt", np.sqrt)
rsqrt = unary("rsqrt", "stablehlo.rsqrt", lambda x: 1 / np.sqrt(x))
cbrt = unary("cbrt", "stablehlo.cbrt", np.cbrt, FLOAT)
sin = unary("sin", "stablehlo.sine", np.sin)
cos = unary("cos", "stablehlo.cosine", np.cos)
tan = unary("tan", "stablehlo.tan", np.tan)
tanh = unary("tanh", "stablehlo.tanh", np.tanh)
logistic = unary("logistic", "stablehlo.logistic", lambda x: 1 / (1 + np.exp(-x)))


# Inverse trigonometric and hyperbolic functions: CHLO's decompositions are more accurate
# near the branch points than compositions of log and sqrt would be.
def _holomorphic_vjp(deriv):
    """vjp of f with derivative deriv(ops, x, out): ct * conj(f'(x)) (JAX's convention)."""
    def vjp(ops, cts, primals, outs):
        (ct,), (x,), (out,) = cts, primals, outs
        d = deriv(ops, x, out)
        if x.type.dtype.is_complex:
            d = ops.unary("conj", d)
        return (ops.mul(ct, d),)
    return vjp


def _one_minus_sq(ops, x):
    return ops.sub(ops.ones_like(x), ops.mul(x, x))


acos = unary("acos", "chlo.acos", np.arccos)
acos.vjp = _holomorphic_vjp(
    lambda ops, x, out: ops.neg(ops.unary("rsqrt", _one_minus_sq(ops, x))))
asin = unary("asin", "chlo.asin", np.arcsin)
asin.vjp = _holomorphic_vjp(lambda ops, x, out: ops.unary("rsqrt", _one_minus_sq(ops, x)))
atan = unary("atan", "chlo.atan", np.arctan)
atan.vjp = _holomorphic_vjp(
    lambda ops, x, out: ops.div(ops.ones_like(x), ops.add(ops.ones_like(x), ops.mul(x, x))))
acosh = unary("acosh", "chlo.acosh", np.arccosh)
acosh.vjp = _holomorphic_vjp(lambda ops, x, out: ops.unary("rsqrt", ops.mul(
    ops.sub(x, ops.ones_like(x)), ops.add(x, ops.ones_like(x)))))
asinh = unary("asinh", "chlo.asinh", np.arcsinh)
asinh.vjp = _holomorphic_vjp(
    lambda ops, x, out: ops.unary("rsqrt", ops.add(ops.mul(x, x), ops.ones_like(x))))
atanh = unary("atanh", "chlo.atanh", np.arctanh)
atanh.vjp = _holomorphic_vjp(
    lambda ops, x, out: ops.div(ops.ones_like(x), _one_minus_sq(ops, x)))
sinh = unary("sinh", "chlo.sinh", np.sinh)
sinh.vjp = _holomorphic_vjp(lambda ops, x, out: ops.unary("cosh", x))
cosh = unary("cosh", "chlo.cosh", np.cosh)
cosh.vjp = _holomorphic_vjp(lambda ops, x, out: ops.unary("sinh", x))
floor = unary("floor", "stablehlo.floor", np.floor, FLOAT)
ceil = unary("ceil", "stablehlo.ceil", np.ceil, FLOAT)
round_ = unary("round", "stablehlo.round_nearest_even", np.round, FLOAT)
is_finite = unary("is_finite", "stablehlo.is_finite", np.isfinite, FLOAT,
                  out=lambda d: dt.bool_, differentiable=False)
not_ = unary("not", "stablehlo.not",
             lambda x: np.logical_not(x) if x.dtype == np.bool_ else np.invert(x), LOGICAL,
             differentiable=False)
real = unary("real", "stablehlo.real", np.real, INEXACT, out=_real_of)
imag = unary("imag", "stablehlo.imag", lambda x: np.imag(x) if np.iscomplexobj(x)
             else np.zeros_like(x), INEXACT, out=_real_of)


def _conj_emit(ctx, x):
    t = ctx.in_types[0]
    if not t.dtype.is_complex:
        return x
    rt = t.with_dtype(dt.real_dtype(t.dtype))
    re = ctx.op("stablehlo.real", [x], [rt])[0]
    im = ctx.op("stablehlo.imag", [x], [rt])[0]
    nim = ctx.op("stablehlo.negate", [im], [rt])[0]
    return ctx.op("stablehlo.complex", [re, nim], [t])[0]


conj = Primitive("conj", lambda x: (check_kind("conj", x, NUMERIC), x)[1], _conj_emit,
                 _errstate(np.conj), family="elementwise")

# ---- binary --------------------------------------------------------------------------


def _c_div(x, y):
    if x.dtype.kind in "iu":
        y1 = np.where(y == 0, 1, y)
        q = np.abs(x) // np.abs(y1) * np.sign(x) * np.sign(y1)
        return np.where(y == 0, -1, q)  # XLA's CPU/GPU give all-ones bits
    return np.divide(x, y)


def _c_rem(x, y):
    if x.dtype.kind in "iu":
        y1 = np.where(y == 0, 1, y)
        return np.where(y == 0, x, np.fmod(x, y1))
    return np.fmod(x, y)


def _bits(x):
    return 8 * x.dtype.itemsize


def _shl(x, y):
    big = (y < 0) | (y >= _bits(x))
    return np.where(big, 0, np.left_shift(x, np.where(big, 0, y)))


def _shr(x, y):
    big = (y < 0) | (y >= _bits(x))
    fill = np.where(x < 0, -1, 0) if x.dtype.kind == "i" else 0
    return np.where(big, fill, np.right_shift(x, np.where(big, 0, y)))


def _power(x, y):
    if x.dtype.kind in "iu":  # integer power by squaring; negative exponents give 0
        y = np.where(y < 0, 0, y) if x.dtype.kind == "i" else y
        return np.power(x, y)
    return np.power(x, y)


add = binary("add", "stablehlo.add", lambda x, y: x + y if x.dtype != np.bool_ else x | y, ANY)
subtract = binary("subtract", "stablehlo.subtract", np.subtract)
multiply = binary("multiply", "stablehlo.multiply",
                  lambda x, y: x * y if x.dtype != np.bool_ else x & y, ANY)
divide = binary("divide", "stablehlo.divide", _c_div)
remainder = binary("remainder", "stablehlo.remainder", _c_rem, REAL_NUMERIC)
power = binary("power", "stablehlo.power", _power)
maximum = binary("maximum", "stablehlo.maximum", np.maximum, "biuf")
minimum = binary("minimum", "stablehlo.minimum", np.minimum, "biuf")
atan2 = binary("atan2", "stablehlo.atan2", np.arctan2, INEXACT)
and_ = binary("and", "stablehlo.and", np.bitwise_and, LOGICAL, differentiable=False)
or_ = binary("or", "stablehlo.or", np.bitwise_or, LOGICAL, differentiable=False)
xor = binary("xor", "stablehlo.xor", np.bitwise_xor, LOGICAL, differentiable=False)
shift_left = binary("shift_left", "stablehlo.shift_left", _shl, INTEGER, differentiable=False)
shift_right = binary(
    "shift_right",
    lambda d: "stablehlo.shift_right_arithmetic" if d.kind == "i" else
    "stablehlo.shift_right_logical", _shr, INTEGER, differentiable=False)
nextafter = binary("nextafter", "chlo.next_after", np.nextafter, FLOAT, differentiable=False)

# ---- comparisons ---------------------------------------------------------------------

_COMPARE_TYPE = {"b": "UNSIGNED", "u": "UNSIGNED", "i": "SIGNED", "f": "FLOAT", "c": "FLOAT"}


def compare(name: str, direction: str, ref) -> Primitive:
    def shape_rule(x, y):
        same_types(name, x, y)
        if x.dtype.is_complex and direction not in ("EQ", "NE"):
            raise ShapeError(f"{name}: complex numbers have no order; compare their real "
                             f"parts or absolute values instead")
        return TensorType(x.shape, dt.bool_)

    def emit(ctx, x, y):
        ct = _COMPARE_TYPE[ctx.in_types[0].dtype.kind]
        return ctx.op("stablehlo.compare", [x, y], ctx.out_types,
                      f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
                      f"compare_type = #stablehlo<comparison_type {ct}>")

    return Primitive(name, shape_rule, emit, _errstate(lambda x, y: ref(x, y)),
                     vjp=NOT_DIFFERENTIABLE, family="elementwise")


eq = compare("eq", "EQ", np.equal)
ne = compare("ne", "NE", np.not_equal)
lt = compare("lt", "LT", np.less)
le = compare("le", "LE", np.less_equal)
gt = compare("gt", "GT", np.greater)
ge = compare("ge", "GE", np.greater_equal)

# ---- select, clamp -------------------------------------------------------------------


def _select_rule(pred, on_true, on_false):
    if pred.dtype is not dt.bool_:
        raise ShapeError(f"select: the predicate must be boolean, got {pred.dtype.name}")
    same_types("select", on_true, on_false)
    if pred.shape not in ((), on_true.shape):
        raise ShapeError(f"select: predicate shape {pred.shape} does not match the "
                         f"operands' shape {on_true.shape}")
    return on_true


select = Primitive("select", _select_rule, _elementwise_emit("stablehlo.select"),
                   lambda p, a, b: np.where(p, a, b), family="elementwise")


def _clamp_rule(lo, x, hi):
    check_kind("clamp", x, "biuf")
    for which, t in (("lower bound", lo), ("upper bound", hi)):
        if t.dtype is not x.dtype or t.shape not in ((), x.shape):
            raise ShapeError(f"clamp: {which} has type {t}, expected {x.dtype.short}[] or {x}")
    return x


clamp = Primitive("clamp", _clamp_rule, _elementwise_emit("stablehlo.clamp"),
                  lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi), family="elementwise")

# ---- conversions ---------------------------------------------------------------------


def _convert_rule(x, *, dtype):
    if x.dtype.is_complex and not dtype.is_complex:
        raise ShapeError(f"convert: {x.dtype.name} -> {dtype.name} would drop the imaginary "
                         f"part; take real() or abs() first")
    return TensorType(x.shape, dtype)


def _convert_emit(ctx, x):
    src, dst = ctx.in_types[0], ctx.out_types[0]
    if src.dtype is dst.dtype:
        return x
    if dst.dtype is dt.bool_:  # XLA's convert to pred is `x != 0`; say so explicitly
        zero = ctx.constant(0, src.dtype, src.shape)
        return ctx.op("stablehlo.compare", [x, zero], [dst],
                      "comparison_direction = #stablehlo<comparison_direction NE>, "
                      f"compare_type = #stablehlo<comparison_type {_COMPARE_TYPE[src.dtype.kind]}>")
    return ctx.op("stablehlo.convert", [x], [dst])


def _convert_ref(x, *, dtype):
    with np.errstate(all="ignore"):
        if dtype.is_integer and x.dtype.kind in "fc":
            # XLA saturates float->int (NaN -> 0); NumPy's cast is undefined there
            info = np.iinfo(dtype.np)
            x = np.nan_to_num(np.trunc(np.real(x)), nan=0.0)
            return np.clip(x, info.min, info.max).astype(dtype.np)
        return np.asarray(x).astype(dtype.np)


convert = Primitive("convert", _convert_rule, _convert_emit, _convert_ref, family="elementwise")


def _bitcast_rule(x, *, dtype):
    if x.dtype.bits != dtype.bits or x.dtype.kind == "b" or dtype.kind == "b":
        raise ShapeError(f"bitcast_convert: {x.dtype.name} and {dtype.name} must be non-boolean "
                         f"types of the same bit width")
    return TensorType(x.shape, dtype)


bitcast_convert = Primitive(
    "bitcast_convert", _bitcast_rule, _elementwise_emit("stablehlo.bitcast_convert"),
    lambda x, *, dtype: np.ascontiguousarray(x).view(dtype.np), vjp=NOT_DIFFERENTIABLE,
    family="elementwise")


def _complex_rule(re, im):
    same_types("complex", re, im)
    check_kind("complex", re, "f")
    if re.dtype not in (dt.float32, dt.float64):
        raise ShapeError(f"complex: parts must be float32 or float64, got {re.dtype.name}")
    return TensorType(re.shape, dt.complex_dtype(re.dtype))


complex_ = Primitive("complex", _complex_rule, _elementwise_emit("stablehlo.complex"),
                     lambda re, im: (re + 1j * im).astype(np.result_type(re.dtype, np.complex64)),
                     family="elementwise")

PRIMITIVES = [
    neg, abs_, sign, exp, expm1, log, log1p, sqrt, rsqrt, cbrt, sin, cos, tan, tanh, logistic,
    acos, asin, atan, acosh, asinh, atanh, sinh, cosh,
    floor, ceil, round_, is_finite, not_, real, imag, conj,
    add, subtract, multiply, divide, remainder, power, maximum, minimum, atan2,
    and_, or_, xor, shift_left, shift_right, nextafter,
    eq, ne, lt, le, gt, ge, select, clamp, convert, bitcast_convert, complex_,
]
