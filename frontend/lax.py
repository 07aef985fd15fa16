"""stablejit.lax: JAX's low-level names (`jax.lax`), as thin wrappers over the primitives,
so that `from jax import lax` ports by changing the import.

Semantics are lax's, not NumPy's:
  - binary ops do not promote: operands need one dtype. A Python scalar (or a weak
    tensor, e.g. a Python number passed to jit) takes the other operand's dtype when its
    kind fits (an int fits any number, a float any inexact type, a complex a complex
    type); JAX is stricter there (it accepts only the default dtypes), never looser.
  - binary ops do not broadcast, except that a 0-d operand broadcasts to the other's
    shape (as in JAX).
  - integer div and rem round toward zero (C), as XLA.
  - `precision=` is accepted and has no effect: host XLA computes in full precision.

Control flow (cond, switch, while_loop, fori_loop, scan) and stop_gradient are the
same functions as stablejit's.
"""

from __future__ import annotations

import builtins
import enum
import math
import numbers
import operator
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from . import control_flow as _cf
from . import conv as _conv
from . import numpy as snp
from . import tree
from .autodiff import jvp as _jvp
from .autodiff import stop_gradient
from .collectives import (  # noqa: F401
    all_gather,
    all_to_all,
    axis_index,
    pmax,
    pmean,
    pmin,
    ppermute,
    psum,
    psum_scatter,
)
from .compiler import dtypes as dt
from .compiler.ir import Attrs
from .compiler.primitives import elementwise as ew
from .compiler.primitives import products, reductions, shape_ops, sorting
from .control_flow import cond, fori_loop, scan, switch, while_loop
from .dispatch import bind, bind1
from .errors import at_user_line
from .numpy._operands import as_tensor
from .scipy.special import erfinv as _erf_inv
from .spmd import with_sharding_constraint  # noqa: F401
from .tensor import Tensor
from .vmap import vmap as _vmap

__all__ = [
    "ConvDimensionNumbers", "Precision", "RoundingMethod", "abs", "acos", "acosh", "add",
    "argmax", "argmin", "asin", "asinh", "associative_scan", "atan", "atan2", "atanh",
    "batch_matmul", "bitcast_convert_type", "bitwise_and", "bitwise_not", "bitwise_or",
    "bitwise_xor", "broadcast", "broadcast_in_dim", "broadcast_to_rank", "broadcasted_iota",
    "cbrt", "ceil", "clamp", "collapse", "complex", "concatenate", "cond", "conj", "conv",
    "conv_dimension_numbers", "conv_general_dilated", "convert_element_type", "cos", "cosh",
    "cummax", "cummin", "cumprod", "cumsum", "custom_root", "div", "dot", "dot_general",
    "dynamic_index_in_dim", "dynamic_slice", "dynamic_slice_in_dim",
    "dynamic_update_index_in_dim", "dynamic_update_slice", "dynamic_update_slice_in_dim", "eq",
    "erf", "erf_inv", "erfc", "exp", "expand_dims", "expm1", "floor", "fori_loop", "full",
    "full_like",
    "ge", "gt", "imag", "index_in_dim", "integer_pow", "iota", "is_finite", "le", "log",
    "log1p", "logistic", "lt", "map", "max", "min", "mul", "ne", "neg", "nextafter", "pad",
    "population_count", "pow", "real", "reciprocal", "reduce", "reduce_and", "reduce_max",
    "reduce_min", "reduce_or",
    "reduce_prod", "reduce_sum", "reduce_window", "rem", "reshape", "rev", "round", "rsqrt",
    "scan", "select", "select_n", "shift_left", "shift_right_arithmetic",
    "shift_right_logical", "sign", "sin", "sinh", "slice", "slice_in_dim", "sort",
    "sort_key_val", "sqrt", "square", "squeeze", "stop_gradient", "sub", "switch", "tan",
    "tanh", "top_k", "transpose", "while_loop",
]


class Precision(enum.Enum):
    """Accepted for `precision=` arguments; host XLA computes in full precision."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2


class RoundingMethod(enum.IntEnum):
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


class ConvDimensionNumbers(NamedTuple):
    """Axis numbers of (batch, feature, spatial...) in lhs and out, (out feature, in
    feature, spatial...) in rhs: what conv_dimension_numbers returns."""

    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


# ---- operands ------------------------------------------------------------------------

# (lax.complex below shadows the builtin in this module)
_PY_SCALARS = (bool, int, float, builtins.complex)


def _is_weak(x) -> bool:
    """A Python scalar, or a weakly typed tensor (a Python scalar passed to jit)."""
    return (isinstance(x, _PY_SCALARS) and not isinstance(x, np.generic)
            ) or isinstance(x, Tensor) and x.weak


# the kinds of weak operands that may take a strong operand's dtype, by its kind
_WEAK_FITS = {"b": "b", "i": "i", "u": "i", "f": "if", "c": "ifc"}


def _same_dtype(name: str, *xs) -> list[Tensor]:
    """lax's operand rule: one dtype for all; weak operands take the strong one's dtype."""
    ts = [as_tensor(x) for x in xs]
    weak = [_is_weak(x) for x in xs]
    target = next((t for t, w in zip(ts, weak, strict=True) if not w), ts[0]).dtype
    out = []
    for i, (t, w) in enumerate(zip(ts, weak, strict=True)):
        if w and t.dtype is not target:
            if t.dtype.kind not in _WEAK_FITS[target.kind]:
                raise TypeError(at_user_line(
                    f"lax.{name}: operand {i} is a weak {t.dtype.name} scalar, which does not "
                    f"fit dtype {target.name}; convert it with lax.convert_element_type"))
            t = snp.astype(t, target)
        if t.dtype is not target:
            raise TypeError(at_user_line(
                f"lax.{name} requires arguments to have the same dtypes, got "
                f"{', '.join(u.dtype.name for u in ts)}; convert one with "
                f"lax.convert_element_type, or use stablejit.numpy, which promotes"))
        out.append(t)
    return out


def _same_shape(name: str, ts: list[Tensor]) -> list[Tensor]:
    """Equal shapes; a 0-d operand broadcasts to the others' shape."""
    shapes = {t.shape for t in ts if t.ndim}
    if len(shapes) > 1:
        raise TypeError(at_user_line(
            f"lax.{name}: operand shapes {[t.shape for t in ts]} differ; lax does not "
            f"broadcast (only 0-d operands do): use lax.broadcast_in_dim, or "
            f"stablejit.numpy, which broadcasts"))
    if not shapes:
        return ts
    (shape,) = shapes
    return [t if t.shape == shape else snp.broadcast_to(t, shape) for t in ts]


def _nary(name: str, prim, *xs) -> Tensor:
    return bind1(prim, *_same_shape(name, _same_dtype(name, *xs)))


def _binary_op(name: str, prim, doc: str) -> Callable:
    def op(x, y) -> Tensor:
        return _nary(name, prim, x, y)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


def _unary_op(name: str, prim, doc: str) -> Callable:
    def op(x) -> Tensor:
        return bind1(prim, as_tensor(x))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


# ---- elementwise ---------------------------------------------------------------------

add = _binary_op("add", ew.add, "x + y, one dtype.")
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
    """Reinterpret the bits as `new_dtype` (of the same width)."""
    return bind1(ew.bitcast_convert, as_tensor(operand), dtype=dt.dtype(new_dtype))


# ---- shapes ----------------------------------------------------------------------------

def _ints(v, what: str) -> tuple[int, ...]:
    try:
        return tuple(operator.index(e) for e in v)
    except TypeError:
        raise TypeError(at_user_line(f"{what} must be a sequence of Python ints, got "
                                     f"{v!r}")) from None


def broadcast_in_dim(operand, shape, broadcast_dimensions) -> Tensor:
    """operand's axis i becomes axis broadcast_dimensions[i] of `shape`."""
    return bind1(shape_ops.broadcast_in_dim, as_tensor(operand), shape=_ints(shape, "shape"),
                 broadcast_dimensions=_ints(broadcast_dimensions, "broadcast_dimensions"))


def broadcast(operand, sizes) -> Tensor:
    """New leading axes of `sizes`."""
    x = as_tensor(operand)
    sizes = _ints(sizes, "sizes")
    return broadcast_in_dim(x, sizes + x.shape, range(len(sizes), len(sizes) + x.ndim))


def broadcasted_iota(dtype, shape, dimension: int) -> Tensor:
    """0, 1, 2... along `dimension` of a tensor of `shape`."""
    shape = _ints(shape, "shape")
    return bind1(shape_ops.iota, shape=shape, dtype=dt.dtype(dtype),
                 dimension=_axis(dimension, len(shape)))


def iota(dtype, size: int) -> Tensor:
    return broadcasted_iota(dtype, (operator.index(size),), 0)


def full(shape, fill_value, dtype=None) -> Tensor:
    """A tensor of `shape` filled with fill_value (dtype: fill_value's, weak scalars
    taking the default dtypes)."""
    return snp.full(_ints(shape, "shape"), fill_value, dtype=dtype)


def full_like(x, fill_value, dtype=None, shape=None) -> Tensor:
    x = as_tensor(x)
    return full(x.shape if shape is None else shape, fill_value,
                x.dtype if dtype is None else dtype)


def broadcast_to_rank(x, rank: int) -> Tensor:
    """x with leading size-1 axes up to `rank`."""
    x = as_tensor(x)
    return reshape(x, (1,) * (rank - x.ndim) + x.shape) if x.ndim < rank else x


def collapse(operand, start_dimension: int, stop_dimension: int | None = None) -> Tensor:
    """Axes start_dimension..stop_dimension-1 merged into one."""
    x = as_tensor(operand)
    stop = x.ndim if stop_dimension is None else stop_dimension
    start, stop = start_dimension % x.ndim, stop % (x.ndim + 1) if stop < 0 else stop
    size = 1
    for n in x.shape[start:stop]:
        size *= n
    return reshape(x, x.shape[:start] + (size,) + x.shape[stop:])


def _axis(axis: int, ndim: int) -> int:
    a = operator.index(axis)
    if not -ndim <= a < ndim:
        raise ValueError(at_user_line(f"axis {a} is out of range for rank {ndim}"))
    return a % ndim


def reshape(operand, new_sizes, dimensions=None) -> Tensor:
    """Reshape (row-major); `dimensions` transposes first."""
    x = as_tensor(operand)
    if dimensions is not None:
        x = transpose(x, dimensions)
    return bind1(shape_ops.reshape, x, shape=_ints(new_sizes, "new_sizes"))


def squeeze(array, dimensions) -> Tensor:
    """Drop the size-1 axes `dimensions`."""
    x = as_tensor(array)
    dims = {_axis(d, x.ndim) for d in _ints(dimensions, "dimensions")}
    for d in dims:
        if x.shape[d] != 1:
            raise ValueError(at_user_line(f"lax.squeeze: axis {d} of shape {x.shape} has "
                                          f"size {x.shape[d]}, not 1"))
    return bind1(shape_ops.reshape, x,
                 shape=tuple(n for i, n in enumerate(x.shape) if i not in dims))


def expand_dims(array, dimensions) -> Tensor:
    """New size-1 axes at `dimensions` (axes of the result)."""
    x = as_tensor(array)
    return snp.expand_dims(x, _ints(dimensions, "dimensions"))


def transpose(operand, permutation) -> Tensor:
    return bind1(shape_ops.transpose, as_tensor(operand),
                 permutation=_ints(permutation, "permutation"))


def pad(operand, padding_value, padding_config) -> Tensor:
    """Pad with (low, high, interior) per axis; negative low/high crop."""
    x, v = _same_dtype("pad", operand, padding_value)
    cfg = [_ints(c, "padding_config entries") for c in padding_config]
    if len(cfg) != x.ndim or builtins.any(len(c) != 3 for c in cfg):
        raise ValueError(at_user_line(f"lax.pad: padding_config needs one (low, high, "
                                      f"interior) triple per axis of {x.shape}, got "
                                      f"{padding_config!r}"))
    return bind1(shape_ops.pad, x, v, low=tuple(c[0] for c in cfg),
                 high=tuple(c[1] for c in cfg), interior=tuple(c[2] for c in cfg))


def concatenate(operands, dimension: int) -> Tensor:
    ts = _same_dtype("concatenate", *operands)
    return bind1(shape_ops.concatenate, *ts, dimension=_axis(dimension, ts[0].ndim))


def rev(operand, dimensions) -> Tensor:
    """Reverse the order of elements along `dimensions`."""
    x = as_tensor(operand)
    return bind1(shape_ops.reverse, x,
                 axes=tuple(_axis(d, x.ndim) for d in _ints(dimensions, "dimensions")))


# ---- slicing ---------------------------------------------------------------------------

def slice(operand, start_indices, limit_indices, strides=None) -> Tensor:
    """operand[start:limit:stride] per axis, with static indices."""
    x = as_tensor(operand)
    start, limit = _ints(start_indices, "start_indices"), _ints(limit_indices, "limit_indices")
    strides = (1,) * x.ndim if strides is None else _ints(strides, "strides")
    return bind1(shape_ops.slice_, x, start=start, limit=limit, strides=strides)


def slice_in_dim(operand, start_index, limit_index, stride: int = 1, axis: int = 0) -> Tensor:
    """slice along one axis; None means the axis's end, negative indices count from it."""
    x = as_tensor(operand)
    axis = _axis(axis, x.ndim)
    n = x.shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = n if limit_index is None else operator.index(limit_index)
    start, limit = start + n if start < 0 else start, limit + n if limit < 0 else limit
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return slice(x, starts, limits, strides)


def index_in_dim(operand, index: int, axis: int = 0, keepdims: bool = True) -> Tensor:
    x = as_tensor(operand)
    axis = _axis(axis, x.ndim)
    i = operator.index(index)
    i = i + x.shape[axis] if i < 0 else i
    out = slice_in_dim(x, i, i + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def _start_indices(name: str, x: Tensor, start_indices) -> list[Tensor]:
    """One integer scalar tensor per axis, of one dtype; negative starts count from the
    end (as JAX); XLA then clamps the window into the operand."""
    if isinstance(start_indices, Tensor) or hasattr(start_indices, "__array__"):
        st = as_tensor(start_indices)
        if st.ndim != 1:
            raise ValueError(at_user_line(f"lax.{name}: start_indices must be a sequence or "
                                          f"a 1-d array, got shape {st.shape}"))
        starts = [st[i] for i in range(st.shape[0])]
    else:
        starts = [as_tensor(s) if not isinstance(s, numbers.Integral) or isinstance(s, Tensor)
                  else s for s in start_indices]
    if len(starts) != x.ndim:
        raise ValueError(at_user_line(f"lax.{name}: needs {x.ndim} start indices for an "
                                      f"operand of shape {x.shape}, got {len(starts)}"))
    tensors = [s for s in starts if isinstance(s, Tensor)]
    for s in tensors:
        if s.ndim or not s.dtype.is_integer:
            raise TypeError(at_user_line(f"lax.{name}: start indices must be integer "
                                         f"scalars, got {s.type}"))
    idt = tensors[0].dtype if tensors and not tensors[0].weak else dt.int32
    out = []
    for s, n in zip(starts, x.shape, strict=True):
        if isinstance(s, Tensor):
            s = snp.astype(s, idt)
            s = snp.where(s < 0, s + n, s) if idt.kind == "i" else s
        else:
            s = snp.asarray(int(s) + n if s < 0 else int(s), dtype=idt)
        out.append(s)
    return out


def dynamic_slice(operand, start_indices, slice_sizes) -> Tensor:
    """The window of `slice_sizes` at traced `start_indices` (clamped into the operand)."""
    x = as_tensor(operand)
    starts = _start_indices("dynamic_slice", x, start_indices)
    return bind1(shape_ops.dynamic_slice, x, *starts, sizes=_ints(slice_sizes, "slice_sizes"))


def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0) -> Tensor:
    x = as_tensor(operand)
    axis = _axis(axis, x.ndim)
    starts = [0] * x.ndim
    starts[axis] = start_index
    sizes = list(x.shape)
    sizes[axis] = operator.index(slice_size)
    return dynamic_slice(x, starts, sizes)


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True) -> Tensor:
    x = as_tensor(operand)
    axis = _axis(axis, x.ndim)
    out = dynamic_slice_in_dim(x, index, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice(operand, update, start_indices) -> Tensor:
    """operand with `update` written at traced `start_indices` (clamped)."""
    x, u = _same_dtype("dynamic_update_slice", operand, update)
    starts = _start_indices("dynamic_update_slice", x, start_indices)
    return bind1(shape_ops.dynamic_update_slice, x, u, *starts)


def dynamic_update_slice_in_dim(operand, update, start_index, axis: int) -> Tensor:
    x = as_tensor(operand)
    axis = _axis(axis, x.ndim)
    starts = [0] * x.ndim
    starts[axis] = start_index
    return dynamic_update_slice(x, update, starts)


def dynamic_update_index_in_dim(operand, update, index, axis: int) -> Tensor:
    """operand with `update` (with or without the size-1 axis) written at index."""
    x, u = as_tensor(operand), as_tensor(update)
    axis = _axis(axis, x.ndim)
    if u.ndim == x.ndim - 1:
        u = snp.expand_dims(u, axis)
    return dynamic_update_slice_in_dim(x, u, index, axis)


# ---- reductions, scans, sorting -----------------------------------------------------------

def _reduce(prim, operand, axes) -> Tensor:
    x = as_tensor(operand)
    axes = tuple(sorted({_axis(a, x.ndim) for a in _ints(axes, "axes")}))
    return bind1(prim, x, axes=axes) if axes else x


def reduce_sum(operand, axes) -> Tensor:
    return _reduce(reductions.reduce_sum, operand, axes)


def reduce_prod(operand, axes) -> Tensor:
    return _reduce(reductions.reduce_prod, operand, axes)


def reduce_max(operand, axes) -> Tensor:
    return _reduce(reductions.reduce_max, operand, axes)


def reduce_min(operand, axes) -> Tensor:
    return _reduce(reductions.reduce_min, operand, axes)


def reduce_and(operand, axes) -> Tensor:
    return _reduce(reductions.reduce_and, operand, axes)


def reduce_or(operand, axes) -> Tensor:
    return _reduce(reductions.reduce_or, operand, axes)


# computation -> (reduction, its identity for a dtype): lax.reduce's fast path
_MONOIDS = {"add": "sum", "mul": "prod", "max": "max", "min": "min"}


def _identity(kind: str, d: dt.DType):
    if kind in ("sum", "prod"):
        return int(kind == "prod")
    big = math.inf if d.kind in "fc" else (
        True if d is dt.bool_ else int(np.iinfo(d.np).max))
    low = -math.inf if d.kind in "fc" else (
        False if d is dt.bool_ else int(np.iinfo(d.np).min))
    return low if kind == "max" else big


def _monoid(computation, x: Tensor, init) -> str | None:
    """The reduction kind when reduce(x, init, computation) is one of reduce_sum/prod/
    max/min: a lax computation and init its identity (a concrete value)."""
    kind = next((k for name, k in _MONOIDS.items() if computation is globals()[name]
                 or computation is getattr(snp, {"add": "add", "mul": "multiply",
                                                 "max": "maximum", "min": "minimum"}[name])),
                None)
    if kind is None or x.dtype.kind == "c" and kind in ("max", "min"):
        return None
    v = _concrete_scalar(init)
    return kind if v is not None and v == _identity(kind, x.dtype) else None


def _vmapped(fn: Callable, depth: int) -> Callable:
    for _ in builtins.range(depth):
        fn = _vmap(fn)
    return fn


def reduce(operands, init_values, computation: Callable, dimensions):
    """Reduce `operands` (an array or a pytree of arrays of one shape) over
    `dimensions` with `computation(x, y)`, a function of two scalars (or two pytrees of
    scalars, like operands) starting from `init_values` (jax.lax.reduce). lax.add, mul,
    max and min with their identity as init run as reduce_sum, prod, max, min; any
    other computation is applied pairwise in a tree of log2(n) vectorised steps, init
    combined once at the end, so it should be associative and commutative (XLA's
    order of reduction is unspecified too)."""
    xs, td = tree.flatten(operands)
    inits, init_td = tree.flatten(init_values)
    if init_td != td:
        raise ValueError(at_user_line(
            f"lax.reduce: operands have structure {td!r} but init_values {init_td!r}; give "
            f"one init value per operand"))
    if not xs:
        raise ValueError(at_user_line("lax.reduce: needs at least one operand"))
    pairs = [_same_dtype("reduce", x, v) for x, v in zip(xs, inits, strict=True)]
    xs, inits = [p[0] for p in pairs], [p[1] for p in pairs]
    if any(v.ndim for v in inits):
        raise TypeError(at_user_line(
            f"lax.reduce: init_values must be scalars, got shapes {[v.shape for v in inits]}"))
    shape = xs[0].shape
    if any(x.shape != shape for x in xs):
        raise ValueError(at_user_line(
            f"lax.reduce: operands have different shapes {[x.shape for x in xs]}; they "
            f"need one shape"))
    dims = [_axis(a, len(shape)) for a in _ints(dimensions, "dimensions")]
    if len(set(dims)) != len(dims):
        raise ValueError(at_user_line(f"lax.reduce: dimensions {tuple(dimensions)} repeat "
                                      f"an axis"))
    if len(xs) == 1:
        kind = _monoid(computation, xs[0], init_values if not isinstance(
            init_values, (tuple, list)) else inits[0])
        if kind is not None:
            out = _reduce(getattr(reductions, f"reduce_{kind}"), xs[0], dims)
            return tree.unflatten(td, [out])
    kept = [a for a in builtins.range(len(shape)) if a not in dims]
    kept_shape = tuple(shape[a] for a in kept)
    n = math.prod(shape[a] for a in dims)
    # the reduced axes as one leading axis: (n, *kept)
    xs = [snp.reshape(transpose(x, (*dims, *kept)), (n, *kept_shape)) for x in xs]

    def combine(a: list, b: list) -> list:
        out, out_td = tree.flatten(computation(tree.unflatten(td, a), tree.unflatten(td, b)))
        if out_td != td:
            raise TypeError(at_user_line(
                f"lax.reduce: computation returned structure {out_td!r}; it must return "
                f"the operands' structure {td!r}"))
        out = [as_tensor(o) for o in out]
        for o, x in zip(out, a, strict=True):
            if o.dtype is not x.dtype or o.ndim:
                raise TypeError(at_user_line(
                    f"lax.reduce: computation returned a {o.dtype.name}{list(o.shape)} for "
                    f"a {x.dtype.name} operand; it must return a scalar of the operand's "
                    f"dtype"))
        return out

    pairwise = _vmapped(combine, 1 + len(kept_shape))
    while n > 1:  # halves combined elementwise; an odd last row waits for the next step
        half = n // 2
        merged = pairwise([x[:half] for x in xs], [x[half:2 * half] for x in xs])
        xs = [snp.concatenate([m, x[2 * half:]]) if n % 2 else m
              for m, x in zip(merged, xs, strict=True)]
        n = half + n % 2
    start = [snp.broadcast_to(v, kept_shape) for v in inits]
    out = start if n == 0 else _vmapped(combine, len(kept_shape))(start, [x[0] for x in xs])
    return tree.unflatten(td, out)


def argmax(operand, axis: int, index_dtype) -> Tensor:
    """Index of the maximum along `axis` (NaN counts as the maximum; ties: first)."""
    x = as_tensor(operand)
    return bind1(reductions.argmax, x, axis=_axis(axis, x.ndim),
                 index_dtype=dt.dtype(index_dtype))


def argmin(operand, axis: int, index_dtype) -> Tensor:
    x = as_tensor(operand)
    return bind1(reductions.argmin, x, axis=_axis(axis, x.ndim),
                 index_dtype=dt.dtype(index_dtype))


def _cumulative(prim, operand, axis: int, reverse: bool) -> Tensor:
    x = as_tensor(operand)
    axis = _axis(axis, x.ndim)
    if x.shape[axis] == 0:
        return x
    return bind1(prim, x, axis=axis, reverse=bool(reverse))


def cumsum(operand, axis: int = 0, reverse: bool = False) -> Tensor:
    """Running sum along `axis` (from the end when reverse), in operand's dtype."""
    return _cumulative(sorting.cumsum, operand, axis, reverse)


def cumprod(operand, axis: int = 0, reverse: bool = False) -> Tensor:
    return _cumulative(sorting.cumprod, operand, axis, reverse)


def cummax(operand, axis: int = 0, reverse: bool = False) -> Tensor:
    return _cumulative(sorting.cummax, operand, axis, reverse)


def cummin(operand, axis: int = 0, reverse: bool = False) -> Tensor:
    return _cumulative(sorting.cummin, operand, axis, reverse)


def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """Sort along `dimension`. A sequence of operands is sorted together by its first
    `num_keys` (lexicographically) and returned as a tuple; NaNs sort last."""
    single = not isinstance(operand, (list, tuple))
    ts = [as_tensor(operand)] if single else [as_tensor(o) for o in operand]
    axis = _axis(dimension, ts[0].ndim)
    out = bind(sorting.sort, tuple(ts), Attrs({"dimension": axis, "num_keys": int(num_keys),
                                               "descending": False,
                                               "is_stable": bool(is_stable)}))
    return out[0] if single else tuple(out)


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    """(sorted keys, values in the keys' order)."""
    return sort((keys, values), dimension, is_stable, 1)


def top_k(operand, k: int) -> tuple[Tensor, Tensor]:
    """The k largest entries along the last axis (descending) and their int32 indices."""
    return snp.top_k(operand, k)


# ---- products and convolutions ----------------------------------------------------------

def _preferred(preferred_element_type):
    return None if preferred_element_type is None else dt.dtype(preferred_element_type)


def dot_general(lhs, rhs, dimension_numbers, precision=None,
                preferred_element_type=None) -> Tensor:
    """dimension_numbers = ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch));
    the result's axes are batch, lhs free, rhs free."""
    x, y = _same_dtype("dot_general", lhs, rhs)
    (lc, rc), (lb, rb) = dimension_numbers
    attrs = {"contracting": (_ints(lc, "contracting"), _ints(rc, "contracting")),
             "batch": (_ints(lb, "batch"), _ints(rb, "batch"))}
    pref = _preferred(preferred_element_type)
    if pref is not None and pref is not x.dtype:
        attrs["preferred_element_type"] = pref
    return bind1(products.dot_general, x, y, **attrs)


def dot(lhs, rhs, precision=None, preferred_element_type=None) -> Tensor:
    """Vector-vector, matrix-vector or matrix-matrix product: lhs's last axis against
    rhs's first."""
    x = as_tensor(lhs)
    return dot_general(x, rhs, (((x.ndim - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)


def batch_matmul(lhs, rhs, precision=None) -> Tensor:
    """Matrix products over the leading (batch) axes."""
    x = as_tensor(lhs)
    nb = x.ndim - 2
    return dot_general(x, rhs, (((x.ndim - 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))),
                       precision)


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """Axis numbers from layout strings such as ("NHWC", "HWIO", "NHWC"); None gives
    NCHW/OIHW/NCHW."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    n = len(lhs_shape)
    if len(rhs_shape) != n:
        raise ValueError(at_user_line(f"conv_dimension_numbers: lhs rank {n} and rhs rank "
                                      f"{len(rhs_shape)} differ"))
    if dimension_numbers is None:
        ident = tuple(range(n))
        return ConvDimensionNumbers(ident, ident, ident)
    lhs, rhs, out = (tuple(s) for s in _conv._dimension_numbers(dimension_numbers, n))
    return ConvDimensionNumbers(lhs, rhs, out)


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None,
                         feature_group_count: int = 1, batch_group_count: int = 1,
                         precision=None, preferred_element_type=None) -> Tensor:
    """General convolution (cross-correlation), as lax.conv_general_dilated."""
    x, w = _same_dtype("conv_general_dilated", lhs, rhs)
    pref = _preferred(preferred_element_type)
    if pref is not None:
        x, w = snp.astype(x, pref), snp.astype(w, pref)
    nsp = x.ndim - 2
    dn = conv_dimension_numbers(x.shape, w.shape, dimension_numbers)
    return _conv.conv_general(x, w, window_strides, padding, lhs_dilation or (1,) * nsp,
                              rhs_dilation or (1,) * nsp, feature_group_count,
                              batch_group_count, tuple(dn))


def conv(lhs, rhs, window_strides, padding, precision=None,
         preferred_element_type=None) -> Tensor:
    """NCHW/OIHW convolution without dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


_WINDOW_OPS = {add: ("sum", 0), max: ("max", -math.inf), min: ("min", math.inf),
               mul: ("prod", 1), operator.add: ("sum", 0), operator.mul: ("prod", 1),
               snp.add: ("sum", 0), snp.maximum: ("max", -math.inf),
               snp.minimum: ("min", math.inf), snp.multiply: ("prod", 1)}
_WINDOWS = {"sum": _conv.window_sum, "max": _conv.window_max, "min": _conv.window_min,
            "prod": _conv.window_product}


def _concrete_scalar(v):
    if isinstance(v, numbers.Number):
        return v
    t = as_tensor(v)
    return t.item() if t._backend.concrete and t.ndim == 0 else None


def reduce_window(operand, init_value, computation, window_dimensions, window_strides,
                  padding, base_dilation=None, window_dilation=None) -> Tensor:
    """Reduce each window with `computation` (lax.add, lax.max, lax.min or lax.mul) and
    `init_value` (combined once per window); padded elements count as init_value (as
    XLA)."""
    try:
        kind, identity = _WINDOW_OPS[computation]
    except (KeyError, TypeError):
        raise NotImplementedError(at_user_line(
            f"lax.reduce_window: computation {computation!r} is not supported; use lax.add, "
            f"lax.max, lax.min or lax.mul")) from None
    x, init = _same_dtype("reduce_window", operand, init_value)
    if _concrete_scalar(init_value) == identity:
        return _WINDOWS[kind](x, window_dimensions, window_strides, padding, base_dilation,
                              window_dilation)
    # padded elements are init_value: pad with it explicitly, then reduce unpadded windows
    dilation = (1,) * x.ndim if base_dilation is None else _ints(base_dilation, "base_dilation")
    sizes = [(n - 1) * d + 1 for n, d in zip(x.shape, dilation, strict=True)]
    pairs = _conv.padding_pairs(padding, sizes, _ints(window_dimensions, "window_dimensions"),
                                _ints(window_strides, "window_strides"), window_dilation)
    padded = pad(x, init, [(lo, hi, d - 1) for (lo, hi), d in zip(pairs, dilation,
                                                                 strict=True)])
    out = _WINDOWS[kind](padded, window_dimensions, window_strides, "VALID", None,
                         window_dilation)
    combine = {"sum": ew.add, "prod": ew.multiply, "max": ew.maximum, "min": ew.minimum}[kind]
    return bind1(combine, out, snp.broadcast_to(init, out.shape))


# ---- functions of functions ---------------------------------------------------------------

def map(f: Callable, xs, *, batch_size: int | None = None):
    """[f(x) for x in xs] along the leading axis of every leaf, as one scan. batch_size
    is accepted for JAX's signature; the results do not depend on it."""
    return scan(lambda carry, x: (carry, f(x)), (), xs)[1]


def associative_scan(fn: Callable, elems, reverse: bool = False, axis: int = 0):
    """Inclusive scan with an associative fn(a, b) applied elementwise along `axis`, in
    O(log n) parallel steps (Blelloch; the same combination order as JAX's, so the same
    rounding). elems is a pytree of tensors with one length along axis."""
    flat, td = tree.flatten(elems)
    flat = [as_tensor(e) for e in flat]
    if not flat:
        raise ValueError(at_user_line("lax.associative_scan: elems has no tensors"))
    axis = _axis(axis, flat[0].ndim)
    n = flat[0].shape[axis]
    if builtins.any(e.shape[axis] != n for e in flat):
        raise ValueError(at_user_line(
            f"lax.associative_scan: all elems need the same length along axis {axis}, got "
            f"shapes {[e.shape for e in flat]}"))
    if reverse:
        flat = [rev(e, (axis,)) for e in flat]

    def combine(a, b):
        # fn must keep its inputs' structure, shapes and dtypes (JAX's version fails
        # inside, or returns a wrong result, when it does not)
        leaves, out_td = tree.flatten(fn(tree.unflatten(td, a), tree.unflatten(td, b)))
        out = [as_tensor(c) for c in leaves]
        _cf.check_elements("lax.associative_scan", "fn", "elems", td, [x.type for x in a],
                           out_td, [c.type for c in out], [c.weak for c in out])
        return out

    def part(e, start, limit, stride=1):
        return slice_in_dim(e, start, limit, stride, axis)

    def interleave(a, b):
        even = a.shape[axis] == b.shape[axis]
        pa, pb = [(0, 0, 0)] * a.ndim, [(0, 0, 0)] * b.ndim
        pa[axis], pb[axis] = (0, 1 if even else 0, 1), (1, 0 if even else 1, 1)
        zero_a, zero_b = snp.zeros((), a.dtype), snp.zeros((), b.dtype)
        op = bitwise_or if a.dtype is dt.bool_ else add
        return op(pad(a, zero_a, pa), pad(b, zero_b, pb))

    def scan_(es):
        m = es[0].shape[axis]
        if m < 2:
            return es
        odd = scan_(combine([part(e, 0, -1, 2) for e in es],
                            [part(e, 1, None, 2) for e in es]))
        firsts = [part(e, 0, -1) for e in odd] if m % 2 == 0 else odd
        even = combine(firsts, [part(e, 2, None, 2) for e in es])
        even = [concatenate([part(e, 0, 1), r], axis) for e, r in zip(es, even, strict=True)]
        return [interleave(a, b) for a, b in zip(even, odd, strict=True)]

    out = scan_(flat)
    if reverse:
        out = [rev(e, (axis,)) for e in out]
    return tree.unflatten(td, out)


def custom_root(f: Callable, initial_guess, solve: Callable, tangent_solve: Callable,
                has_aux: bool = False):
    """x = solve(f, initial_guess), a root of f, differentiated implicitly (as JAX's
    lax.custom_root): derivatives do not flow through the solver's iterations but follow
    dx = -J^-1 (df at fixed x), with tangent_solve(g, y) solving the linear g(x) = y for
    g the linearisation of f at the root. Only the closed-over values of f get
    gradients, not initial_guess.

    As in JAX, f, solve and tangent_solve must return initial_guess's pytree structure
    (f's is found by tracing it, before solve runs); their dtypes are not checked."""
    g_leaves, g_tree = tree.flatten(initial_guess)
    g_leaves = [as_tensor(x) for x in g_leaves]
    f_tree = _cf._trace(f, g_tree, [(x.type, x.weak) for x in g_leaves], "custom_root_f",
                        spread=False).out_tree
    _cf.check_structure("custom_root", "f", f_tree, "initial_guess", g_tree)
    guess = tree.map(stop_gradient, initial_guess)
    found = solve(f, guess)
    if has_aux and not (isinstance(found, (tuple, list)) and len(found) == 2):
        raise TypeError(at_user_line(
            f"custom_root: with has_aux=True, solve must return a pair (root, aux), it "
            f"returns {tree.structure(found)!r} (as in jax.lax.custom_root)"))
    root, aux = found if has_aux else (found, None)
    _cf.check_structure("custom_root", "solve", tree.structure(root), "initial_guess",
                        g_tree)
    root = tree.map(stop_gradient, root)

    def linearized(v):
        return _jvp(f, (root,), (v,))[1]

    # one implicit-function step: value zero (f(root) = 0 up to the solver's residual,
    # which is removed), derivative -J^-1 df
    step = tangent_solve(linearized, f(root))
    _cf.check_structure("custom_root", "tangent_solve", tree.structure(step),
                        "initial_guess", g_tree)
    correction = tree.map(lambda s: stop_gradient(s) - s, step)
    out = tree.map(lambda r, c: r + c, root, correction)
    return (out, aux) if has_aux else out

