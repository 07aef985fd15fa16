"""Elementwise primitives: unary math, binary arithmetic, comparisons, select, clamp,
conversions.

Operands of binary ops already have equal shapes and dtypes: broadcasting and type
promotion are the frontend's job, as in StableHLO. Each op is one line through
`unary`, `binary` or `compare`; reference rules follow StableHLO semantics (C-style
integer division and remainder, shifts past the bit width give 0 or -1).
"""

from __future__ import annotations

import math

import numpy as np

from .. import batch_rules as br
from .. import dtypes as dt
from ..errors import ShapeError
from ..ir import TensorType
from ..primitive import NOT_DIFFERENTIABLE, Primitive
from ._integer_power import emit_power

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
          differentiable: bool = True, vjp=None, jvp=None) -> Primitive:
    """An elementwise one-operand primitive; `out(dtype)` gives the result dtype."""
    def shape_rule(x):
        check_kind(name, x, kinds)
        return TensorType(x.shape, out(x.dtype) if out else x.dtype)

    def reference(x):
        r = ref(x)
        return np.asarray(r, dtype=(out(dt.dtype(x.dtype)) if out else dt.dtype(x.dtype)).np)

    return Primitive(name, shape_rule, _elementwise_emit(mlir), _errstate(reference),
                     vjp=vjp if differentiable else NOT_DIFFERENTIABLE, jvp=jvp,
                     family="elementwise")


def binary(name: str, mlir, ref, kinds: str = NUMERIC, *,
           differentiable: bool = True, vjp=None, jvp=None, emit=None) -> Primitive:
    """An elementwise two-operand primitive on equal types. `mlir` may be a function of
    the dtype when the StableHLO op depends on it (shift_right); `emit`, a rule of its
    own (ctx, x, y) where the platform matters (divide)."""
    def shape_rule(x, y):
        same_types(name, x, y)
        check_kind(name, x, kinds)
        return x

    def one_op(ctx, x, y):
        op = mlir(ctx.in_types[0].dtype) if callable(mlir) else mlir
        return ctx.op(op, [x, y], ctx.out_types)

    def reference(x, y):
        d = dt.dtype(x.dtype)
        return np.asarray(ref(x, y), dtype=d.np)

    return Primitive(name, shape_rule, emit or one_op, _errstate(reference),
                     vjp=vjp if differentiable else NOT_DIFFERENTIABLE, jvp=jvp,
                     family="elementwise")


# ---- derivative rules (contract: compiler/ops.py) -------------------------------------

def _deriv(d):
    """vjp and jvp of y = f(x) from d(ops, x, y) = f'(x): ct * f'(x) and t * f'(x).
    As in JAX, cotangents are transposes, not adjoints: no conjugation for complex."""
    def vjp(ops, cts, primals, outs):
        return (ops.mul(cts[0], d(ops, primals[0], outs[0])),)

    def jvp(ops, tangents, primals, outs):
        return (ops.mul(tangents[0], d(ops, primals[0], outs[0])),)

    return {"vjp": vjp, "jvp": jvp}


def _bin_deriv(dx, dy):
    """vjp/jvp of z = f(x, y) from partial derivatives dx(ops, x, y, z), dy(...)."""
    def vjp(ops, cts, primals, outs):
        x, y = primals
        return (ops.mul(cts[0], dx(ops, x, y, outs[0])),
                ops.mul(cts[0], dy(ops, x, y, outs[0])))

    def jvp(ops, tangents, primals, outs):
        x, y = primals
        tx, ty = tangents
        parts = [ops.mul(tx, dx(ops, x, y, outs[0])) if tx is not None else None,
                 ops.mul(ty, dy(ops, x, y, outs[0])) if ty is not None else None]
        parts = [p for p in parts if p is not None]
        return (parts[0] if len(parts) == 1 else ops.add(*parts),)

    return {"vjp": vjp, "jvp": jvp}


def _replace_zero(ops, x):
    return ops.select(ops.eq(x, ops.zeros_like(x)), ops.ones_like(x), x)


def _abs_vjp(ops, cts, primals, outs):
    (ct,), (x,) = cts, primals
    if not x.type.dtype.is_complex:
        # JAX's convention at the kink: x >= 0 (so +0 and -0) takes +1 (a subgradient;
        # sign(x) would give 0, and a ported L1 penalty on zero weights would not move)
        return (ops.select(ops.ge(x, ops.zeros_like(x)), ct, ops.neg(ct)),)
    # d|x| = real(conj(x) / |x| * dx); its transpose: complex(ct, 0) * conj(x) / |x|
    r = _replace_zero(ops, outs[0])
    unit = ops.div(ops.conj(x), ops.complex(r, ops.zeros_like(r)))
    return (ops.mul(ops.complex(ct, ops.zeros_like(ct)), unit),)


def _real_vjp(ops, cts, primals, outs):
    (ct,), (x,) = cts, primals
    if not x.type.dtype.is_complex:
        return (ct,)
    return (ops.complex(ct, ops.zeros_like(ct)),)


def _imag_vjp(ops, cts, primals, outs):
    (ct,), (x,) = cts, primals
    if not x.type.dtype.is_complex:
        return (None,)
    return (ops.complex(ops.zeros_like(ct), ops.neg(ct)),)


def _div_vjp(ops, cts, primals, outs):
    (ct,), (_, y) = cts, primals
    return (ops.div(ct, y), ops.neg(ops.div(ops.mul(ct, outs[0]), y)))


def _rem_dy(ops, x, y, z):
    q = ops.div(x, y)
    return ops.neg(ops.mul(ops.bind(sign, q), ops.bind(floor, ops.bind(abs_, q))))


def _pow_dx(ops, x, y, z):
    # y * x^(y-1), and 0 where y == 0 (x^0 is constant even at x == 0), but NaN where
    # x is NaN: a NaN input keeps a NaN derivative (as JAX's)
    d = ops.mul(y, ops.pow(x, ops.sub(y, ops.ones_like(y))))
    flat = ops.select(ops.eq(x, x), ops.zeros_like(y), x)
    return ops.select(ops.eq(y, ops.zeros_like(y)), flat, d)


def _pow_dy(ops, x, y, z):
    if x.type.dtype.is_complex:
        return ops.mul(z, ops.bind(log, _replace_zero(ops, x)))
    # log(x) * x^y; 0 where x == 0 (x^y is flat or undefined there)
    zero = ops.zeros_like(x)
    safe = ops.select(ops.eq(x, zero), ops.ones_like(x), x)
    return ops.mul(z, ops.bind(log, safe))


def _balanced(ops, x, y, z):
    """Share of the gradient of max/min(x, y) that goes to x: 1 where x alone is the
    result, 1/2 on ties (as JAX)."""
    one, zero = ops.ones_like(x), ops.zeros_like(x)
    half = ops.full_like(x, 0.5)
    return ops.select(ops.eq(x, z), ops.select(ops.eq(y, z), half, one), zero)


def _atan2_d(sign):
    def d(ops, x, y, z):
        den = ops.add(ops.mul(x, x), ops.mul(y, y))
        num = y if sign > 0 else ops.neg(x)
        return ops.div(num, den)
    return d


def _select_vjp(ops, cts, primals, outs):
    (ct,), p = cts, primals[0]
    zero = ops.zeros_like(ct)
    return (None, ops.select(p, ct, zero), ops.select(p, zero, ct))


def _select_jvp(ops, tangents, primals, outs):
    _, ta, tb = tangents
    p, a, b = primals
    ta = ta if ta is not None else ops.zeros_like(a)
    tb = tb if tb is not None else ops.zeros_like(b)
    return (ops.select(p, ta, tb),)


def _clamp_vjp(ops, cts, primals, outs):
    (ct,), (lo, x, hi) = cts, primals
    shape = x.type.shape
    lo_b = ops.broadcast(lo, shape, ()) if lo.type.shape != shape else lo
    hi_b = ops.broadcast(hi, shape, ()) if hi.type.shape != shape else hi
    zero = ops.zeros_like(ct)
    g_x = ops.select(ops.and_(ops.gt(x, lo_b), ops.lt(x, hi_b)), ct, zero)
    g_lo = ops.select(ops.and_(ops.gt(lo_b, x), ops.lt(lo_b, hi_b)), ct, zero)
    g_hi = ops.select(ops.lt(hi_b, x), ct, zero)
    return (ops.sum_to_shape(g_lo, lo.type.shape), g_x, ops.sum_to_shape(g_hi, hi.type.shape))


def _convert_vjp(ops, cts, primals, outs, *, dtype):
    (ct,), (x,) = cts, primals
    if x.type.dtype.kind not in "fc":
        return (None,)
    if ct.type.dtype.is_complex and not x.type.dtype.is_complex:
        ct = ops.real(ct)
    return (ops.convert(ct, x.type.dtype),)


def _convert_jvp(ops, tangents, primals, outs, *, dtype):
    (t,) = tangents
    if dtype.kind not in "fc":
        return (None,)
    return (ops.convert(t, dtype),)


def _complex_vjp(ops, cts, primals, outs):
    (ct,) = cts
    return (ops.real(ct), ops.neg(ops.imag(ct)))


def _complex_jvp(ops, tangents, primals, outs):
    tr, ti = tangents
    re, im = primals
    return (ops.complex(tr if tr is not None else ops.zeros_like(re),
                     ti if ti is not None else ops.zeros_like(im)),)


def _linear_jvp(prim):
    """jvp of a linear primitive: the primitive applied to the tangent. Set after the
    primitive exists (the rule names it as an object)."""
    def jvp(ops, tangents, primals, outs, **attrs):
        return (ops.bind(prim, tangents[0], **attrs),)
    return jvp


def _add_jvp(sub):
    def jvp(ops, tangents, primals, outs):
        tx, ty = tangents
        if ty is None:
            return (tx,)
        if tx is None:
            return (ops.neg(ty) if sub else ty,)
        return ((ops.sub if sub else ops.add)(tx, ty),)
    return jvp


# ---- unary ---------------------------------------------------------------------------

def _real_of(d):
    return dt.real_dtype(d)


def _c_sign(x):
    if np.iscomplexobj(x):
        a = np.abs(x)
        return np.where(a == 0, 0, x / np.where(a == 0, 1, a))
    return np.where(x == 0, x, np.sign(x))  # StableHLO: sign(-0.0) is -0.0


neg = unary("neg", "stablehlo.negate", np.negative, NUMERIC,
            vjp=lambda ops, cts, p, o: (ops.neg(cts[0]),))
abs_ = unary("abs", "stablehlo.abs", np.abs, SIGNED, out=_real_of,  # no unsigned in StableHLO
             vjp=_abs_vjp)
sign = unary("sign", "stablehlo.sign", _c_sign, SIGNED, differentiable=False)
exp = unary("exp", "stablehlo.exponential", np.exp, **_deriv(lambda ops, x, y: y))
expm1 = unary("expm1", "stablehlo.exponential_minus_one", np.expm1,
              **_deriv(lambda ops, x, y: ops.add(y, ops.ones_like(y))))
log = unary("log", "stablehlo.log", np.log,
            **_deriv(lambda ops, x, y: ops.div(ops.ones_like(x), x)))
log1p = unary("log1p", "stablehlo.log_plus_one", np.log1p,
              **_deriv(lambda ops, x, y: ops.div(ops.ones_like(x), ops.add(x, ops.ones_like(x)))))
sqrt = unary("sqrt", "stablehlo.sqrt", np.sqrt,
             **_deriv(lambda ops, x, y: ops.div(ops.full_like(y, 0.5), y)))
rsqrt = unary("rsqrt", "stablehlo.rsqrt", lambda x: 1 / np.sqrt(x),
              **_deriv(lambda ops, x, y: ops.div(ops.scale(y, -0.5), x)))
cbrt = unary("cbrt", "stablehlo.cbrt", np.cbrt, FLOAT,
             **_deriv(lambda ops, x, y: ops.div(ops.full_like(y, 1 / 3), ops.mul(y, y))))
sin = unary("sin", "stablehlo.sine", np.sin, **_deriv(lambda ops, x, y: ops.bind(cos, x)))
cos = unary("cos", "stablehlo.cosine", np.cos,
            **_deriv(lambda ops, x, y: ops.neg(ops.bind(sin, x))))
tan = unary("tan", "stablehlo.tan", np.tan,
            **_deriv(lambda ops, x, y: ops.add(ops.ones_like(y), ops.mul(y, y))))
tanh = unary("tanh", "stablehlo.tanh", np.tanh,
             **_deriv(lambda ops, x, y: ops.sub(ops.ones_like(y), ops.mul(y, y))))
logistic = unary("logistic", "stablehlo.logistic", lambda x: 1 / (1 + np.exp(-x)),
                 **_deriv(lambda ops, x, y: ops.mul(y, ops.sub(ops.ones_like(y), y))))


# erf/erfc: NumPy has none, so the reference is math.erf/erfc in float64, element by
# element, rounded to the operand's dtype. d/dx erf(x) = 2/sqrt(pi) exp(-x^2).
def _erf_slope(sign: float):
    def d(ops, x, y):
        return ops.scale(ops.bind(exp, ops.neg(ops.mul(x, x))), sign * 2 / math.sqrt(math.pi))
    return d


erf = unary("erf", "chlo.erf", np.vectorize(math.erf, otypes=[np.float64]), FLOAT,
            **_deriv(_erf_slope(1.0)))
erfc = unary("erfc", "chlo.erfc", np.vectorize(math.erfc, otypes=[np.float64]), FLOAT,
             **_deriv(_erf_slope(-1.0)))


# Inverse trigonometric and hyperbolic functions: CHLO's decompositions are more accurate
# near the branch points than compositions of log and sqrt would be.
def _holomorphic_vjp(deriv):
    """vjp of f with derivative deriv(ops, x, out): ct * f'(x). JAX's convention: the
    transpose, not the adjoint (jax.vjp(jnp.arcsin, z)(1) == arcsin'(z), no conj)."""
    def vjp(ops, cts, primals, outs):
        (ct,), (x,), (out,) = cts, primals, outs
        return (ops.mul(ct, deriv(ops, x, out)),)
    return vjp


def _one_minus_sq(ops, x):
    return ops.sub(ops.ones_like(x), ops.mul(x, x))


acos = unary("acos", "chlo.acos", np.arccos)
acos.vjp = _holomorphic_vjp(
    lambda ops, x, out: ops.neg(ops.bind(rsqrt, _one_minus_sq(ops, x))))
asin = unary("asin", "chlo.asin", np.arcsin)
asin.vjp = _holomorphic_vjp(lambda ops, x, out: ops.bind(rsqrt, _one_minus_sq(ops, x)))
atan = unary("atan", "chlo.atan", np.arctan)
atan.vjp = _holomorphic_vjp(
    lambda ops, x, out: ops.div(ops.ones_like(x), ops.add(ops.ones_like(x), ops.mul(x, x))))
acosh = unary("acosh", "chlo.acosh", np.arccosh)
acosh.vjp = _holomorphic_vjp(lambda ops, x, out: ops.bind(rsqrt, ops.mul(
    ops.sub(x, ops.ones_like(x)), ops.add(x, ops.ones_like(x)))))
asinh = unary("asinh", "chlo.asinh", np.arcsinh)
asinh.vjp = _holomorphic_vjp(
    lambda ops, x, out: ops.bind(rsqrt, ops.add(ops.mul(x, x), ops.ones_like(x))))
atanh = unary("atanh", "chlo.atanh", np.arctanh)
atanh.vjp = _holomorphic_vjp(
    lambda ops, x, out: ops.div(ops.ones_like(x), _one_minus_sq(ops, x)))
sinh = unary("sinh", "chlo.sinh", np.sinh)
sinh.vjp = _holomorphic_vjp(lambda ops, x, out: ops.bind(cosh, x))
cosh = unary("cosh", "chlo.cosh", np.cosh)
cosh.vjp = _holomorphic_vjp(lambda ops, x, out: ops.bind(sinh, x))
floor = unary("floor", "stablehlo.floor", np.floor, FLOAT, differentiable=False)
ceil = unary("ceil", "stablehlo.ceil", np.ceil, FLOAT, differentiable=False)
round_ = unary("round", "stablehlo.round_nearest_even", np.round, FLOAT, differentiable=False)
is_finite = unary("is_finite", "stablehlo.is_finite", np.isfinite, FLOAT,
                  out=lambda d: dt.bool_, differentiable=False)
not_ = unary("not", "stablehlo.not",
             lambda x: np.logical_not(x) if x.dtype == np.bool_ else np.invert(x), LOGICAL,
             differentiable=False)
real = unary("real", "stablehlo.real", np.real, INEXACT, out=_real_of, vjp=_real_vjp)
imag = unary("imag", "stablehlo.imag", lambda x: np.imag(x) if np.iscomplexobj(x)
             else np.zeros_like(x), INEXACT, out=_real_of, vjp=_imag_vjp)


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
                 _errstate(np.conj), vjp=lambda ops, cts, p, o: (ops.conj(cts[0]),),
                 family="elementwise")
for _linear in (neg, real, imag, conj):
    _linear.jvp = _linear_jvp(_linear)

# ---- binary --------------------------------------------------------------------------


def _c_div(x, y):
    if x.dtype.kind in "iu":
        # C's truncating division from NumPy's floor division (|INT_MIN| overflows, so
        # no abs): one up where the division was inexact and the signs differ
        y1 = np.where(y == 0, 1, y).astype(x.dtype)
        with np.errstate(all="ignore"):
            q = np.floor_divide(x, y1)
            q = q + ((np.remainder(x, y1) != 0) & ((x < 0) != (y1 < 0))).astype(x.dtype)
        if x.dtype.kind == "i":  # INT_MIN / -1 wraps to INT_MIN, as XLA gives
            q = np.where((x == np.iinfo(x.dtype).min) & (y1 == -1), x, q)
        return np.where(y == 0, np.asarray(-1).astype(x.dtype), q)  # XLA: all-ones bits
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
    if x.dtype.kind == "i":  # by squaring; a negative exponent gives XLA's 1 / x**-y
        # truncated: 1 for 1, +-1 for -1 (by the exponent's parity), 0 for the rest and 0
        neg = y < 0
        p = np.power(x, np.where(neg, 0, y))
        unit = np.where(y % 2 == 0, 1, x).astype(x.dtype)
        return np.where(neg, np.where(np.abs(x) == 1, unit, 0), p).astype(x.dtype)
    # full operands: with a 0-d or broadcast exponent of 0.5 NumPy takes sqrt, -0.0 for
    # -0.0 ** 0.5 and NaN for -inf ** 0.5 where C's pow (and XLA) give +0.0 and inf
    shape = np.broadcast_shapes(x.shape, y.shape)
    x, y = (np.array(np.broadcast_to(v, shape)).reshape(-1) for v in (x, y))
    return np.power(x, y).reshape(shape)


add = binary("add", "stablehlo.add", lambda x, y: x + y if x.dtype != np.bool_ else x | y, ANY,
             vjp=lambda ops, cts, p, o: (cts[0], cts[0]), jvp=_add_jvp(False))
subtract = binary("subtract", "stablehlo.subtract", np.subtract,
                  vjp=lambda ops, cts, p, o: (cts[0], ops.neg(cts[0])), jvp=_add_jvp(True))
multiply = binary("multiply", "stablehlo.multiply",
                  lambda x, y: x * y if x.dtype != np.bool_ else x & y, ANY,
                  **_bin_deriv(lambda ops, x, y, z: y, lambda ops, x, y, z: x))
def _emit_divide(ctx, x, y):
    """On cuda, real floats of 32 bits or fewer divide in float64, then round: XLA's
    NVPTX backend divides float32 with div.full.f32, up to 1 ulp from the IEEE quotient
    (x / x can be 0.99999994: openxla/xla#37181), and half floats go through that
    float32 quotient. A float64 quotient rounded to a format of 24 bits or fewer is the
    correctly rounded one (53 >= 2 * 24 + 2), as NumPy and the host give.

    The rounding is written out in float64 (reduce_precision to the format, exact
    multiples of its smallest subnormal below its normal range), and only then
    converted: LLVM folds fptrunc(fdiv(fpext a, fpext b)) back into a float32 division
    (valid in IEEE arithmetic, so it may), which NVPTX then emits as div.full.f32
    again. A plain convert of the float64 quotient still gave 6 of 256 float32
    floor_divide results 1 ulp off on an H200 (benchmarks/gpu_floor_divide_probe.py).
    The price is a float64 division on the GPU (not measured yet; an elementwise kernel
    is usually bound by memory, not by its arithmetic)."""
    t = ctx.in_types[0]
    d = t.dtype
    if ctx.emitter.platform != "cuda" or d.kind != "f" or d.bits > 32:
        return ctx.op("stablehlo.divide", [x, y], ctx.out_types)
    wide = t.with_dtype(dt.float64)
    xw, yw = (ctx.op("stablehlo.convert", [v], [wide])[0] for v in (x, y))
    q = ctx.op("stablehlo.divide", [xw, yw], [wide])[0]
    info = dt.finfo(d)
    normal = ctx.op("stablehlo.reduce_precision", [q], [wide],
                    f"exponent_bits = {info.nexp} : i32, mantissa_bits = {info.nmant} : i32")[0]
    # below the normal range (where reduce_precision may flush to zero): the nearest
    # multiple of the format's smallest subnormal, 2 ** -quantum
    min_exponent = info.minexp
    quantum = info.nmant - min_exponent

    def const(v):
        return ctx.constant(v, dt.float64, t.shape)

    scaled = ctx.op("stablehlo.multiply", [q, const(2.0 ** quantum)], [wide])[0]
    rounded = ctx.op("stablehlo.round_nearest_even", [scaled], [wide])[0]
    tiny = ctx.op("stablehlo.multiply", [rounded, const(2.0 ** -quantum)], [wide])[0]
    magnitude = ctx.op("stablehlo.abs", [q], [wide])[0]
    small = ctx.op("stablehlo.compare", [magnitude, const(2.0 ** min_exponent)],
                   [t.with_dtype(dt.bool_)],
                   "comparison_direction = #stablehlo<comparison_direction LT>, "
                   "compare_type = #stablehlo<comparison_type FLOAT>")[0]
    r = ctx.op("stablehlo.select", [small, tiny, normal], [wide])[0]
    return ctx.op("stablehlo.convert", [r], ctx.out_types)


divide = binary("divide", "stablehlo.divide", _c_div, vjp=_div_vjp, emit=_emit_divide)
remainder = binary("remainder", "stablehlo.remainder", _c_rem, REAL_NUMERIC,
                   **_bin_deriv(lambda ops, x, y, z: ops.ones_like(x), _rem_dy))
power = binary("power", "stablehlo.power", _power, **_bin_deriv(_pow_dx, _pow_dy),
               emit=emit_power)
maximum = binary("maximum", "stablehlo.maximum", np.maximum, "biuf",
                 **_bin_deriv(_balanced, lambda ops, x, y, z: _balanced(ops, y, x, z)))
minimum = binary("minimum", "stablehlo.minimum", np.minimum, "biuf",
                 **_bin_deriv(_balanced, lambda ops, x, y, z: _balanced(ops, y, x, z)))
atan2 = binary("atan2", "stablehlo.atan2", np.arctan2, INEXACT,
               **_bin_deriv(_atan2_d(1), _atan2_d(-1)))
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
                   lambda p, a, b: np.where(p, a, b), vjp=_select_vjp, jvp=_select_jvp,
                   family="elementwise")


def _clamp_rule(lo, x, hi):
    check_kind("clamp", x, "biuf")
    for which, t in (("lower bound", lo), ("upper bound", hi)):
        if t.dtype is not x.dtype or t.shape not in ((), x.shape):
            raise ShapeError(f"clamp: {which} has type {t}, expected {x.dtype.short}[] or {x}")
    return x


clamp = Primitive("clamp", _clamp_rule, _elementwise_emit("stablehlo.clamp"),
                  lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi), vjp=_clamp_vjp,
                  family="elementwise")

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
            # compare in float64 against powers of two: exact, unlike info.max in float32
            info = np.iinfo(dtype.np)
            x = np.nan_to_num(np.trunc(np.real(x)).astype(np.float64), nan=0.0)
            hi, lo = x >= 2.0 ** (dtype.bits - (dtype.kind == "i")), x < float(info.min)
            out = np.where(hi | lo, 0, x).astype(dtype.np)
            return np.where(hi, info.max, np.where(lo, info.min, out)).astype(dtype.np)
        return np.asarray(x).astype(dtype.np)


convert = Primitive("convert", _convert_rule, _convert_emit, _convert_ref, vjp=_convert_vjp,
                    jvp=_convert_jvp, family="elementwise")


def _bitcast_rule(x, *, dtype):
    """jax's shape rule: a wider type to a narrower one adds a last dimension of the
    width ratio; a narrower to a wider one needs that last dimension and drops it."""
    if x.dtype.kind == "b" or dtype.kind == "b":
        raise ShapeError(f"bitcast_convert: {x.dtype.name} and {dtype.name} must both be "
                         f"non-boolean types")
    old, new = x.dtype.bits, dtype.bits
    if old > new:
        return TensorType(x.shape + (old // new,), dtype)
    if old < new and (x.shape[-1:] or (1,))[0] * old != new:
        raise ShapeError(f"bitcast_convert: a {x.dtype.name} operand of shape {x.shape} "
                         f"becomes {dtype.name} by joining its last dimension, which must "
                         f"have {new // old} elements ({new} / {old}, the ratio of the bit "
                         f"widths); reshape the operand so that it ends in {new // old}")
    return TensorType(x.shape[:-1] if old < new else x.shape, dtype)


def _bitcast_ref(x, *, dtype):
    # the host's byte order, as XLA's; NumPy views a 0-d array only at one width
    out = np.ascontiguousarray(x).reshape(x.shape or (1,)).view(dtype.np)
    old, new = x.dtype.itemsize, dtype.np.itemsize
    return out.reshape(x.shape + (old // new,) if old > new else
                       x.shape[:-1] if old < new else x.shape)


bitcast_convert = Primitive(
    "bitcast_convert", _bitcast_rule, _elementwise_emit("stablehlo.bitcast_convert"),
    _bitcast_ref, vjp=NOT_DIFFERENTIABLE, family="elementwise")


def _complex_rule(re, im):
    same_types("complex", re, im)
    check_kind("complex", re, "f")
    if re.dtype not in (dt.float32, dt.float64):
        raise ShapeError(f"complex: parts must be float32 or float64, got {re.dtype.name}")
    return TensorType(re.shape, dt.complex_dtype(re.dtype))


def _complex_ref(re, im):
    # part by part: re + 1j * im loses -0.0 imaginary parts and makes inf real parts NaN
    out = np.empty(re.shape, np.result_type(re.dtype, np.complex64))
    out.real, out.imag = re, im
    return out


complex_ = Primitive("complex", _complex_rule, _elementwise_emit("stablehlo.complex"),
                     _complex_ref,
                     vjp=_complex_vjp, jvp=_complex_jvp, family="elementwise")

PRIMITIVES = [
    neg, abs_, sign, exp, expm1, log, log1p, sqrt, rsqrt, cbrt, sin, cos, tan, tanh, logistic,
    erf, erfc,
    acos, asin, atan, acosh, asinh, atanh, sinh, cosh,
    floor, ceil, round_, is_finite, not_, real, imag, conj,
    add, subtract, multiply, divide, remainder, power, maximum, minimum, atan2,
    and_, or_, xor, shift_left, shift_right, nextafter,
    eq, ne, lt, le, gt, ge, select, clamp, convert, bitcast_convert, complex_,
]

# Every elementwise primitive batches the same way: broadcast the operands to the
# batched shape and apply it unchanged.
for _p in PRIMITIVES:
    _p.batch = br.elementwise(_p)
