"""lax's products and windows: dot_general / dot, convolutions and reduce_window."""

from __future__ import annotations

import math
import numbers
import operator
from typing import NamedTuple

from .. import conv as _conv
from .. import numpy as snp
from ..compiler import dtypes as dt
from ..compiler.primitives import elementwise as ew
from ..compiler.primitives import products
from ..dispatch import bind1
from ..errors import at_user_line
from ..numpy._operands import as_tensor
from ..precision import pair as precision_pair
from ..tensor import Tensor
from ._operands import _same_dtype
from .elementwise import add, max, min, mul
from .shapes import _ints, pad


class ConvDimensionNumbers(NamedTuple):
    """Axis numbers of (batch, feature, spatial...) in lhs and out, (out feature, in
    feature, spatial...) in rhs: what conv_dimension_numbers returns."""

    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


def _preferred(preferred_element_type):
    return None if preferred_element_type is None else dt.dtype(preferred_element_type)


def dot_general(lhs, rhs, dimension_numbers, precision=None,
                preferred_element_type=None) -> Tensor:
    """dimension_numbers = ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch));
    the result's axes are batch, lhs free, rhs free.

    Example:
        >>> lhs, rhs = snp.ones((2, 3, 4)), snp.ones((2, 4, 5))
        >>> stablejit.lax.dot_general(lhs, rhs, (((2,), (1,)), ((0,), (0,)))).shape
        (2, 3, 5)
    """
    x, y = _same_dtype("dot_general", lhs, rhs)
    (lc, rc), (lb, rb) = dimension_numbers
    attrs = {"contracting": (_ints(lc, "contracting"), _ints(rc, "contracting")),
             "batch": (_ints(lb, "batch"), _ints(rb, "batch"))}
    pref = _preferred(preferred_element_type)
    if pref is not None and pref is not x.dtype:
        attrs["preferred_element_type"] = pref
    pair = precision_pair(precision, "dot_general")
    if pair is not None:
        attrs["precision"] = pair
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
    """General convolution (cross-correlation), as lax.conv_general_dilated.

    Example:
        >>> x = snp.arange(5.0).reshape(1, 1, 5)     # N, C, W
        >>> w = snp.asarray([1.0, 0.0, -1.0]).reshape(1, 1, 3)   # O, I, W
        >>> stablejit.lax.conv_general_dilated(x, w, window_strides=(1,), padding='VALID')
        Tensor<f32[1,1,3] xla:host:0>
        [[[-2., -2., -2.]]]
    """
    x, w = _same_dtype("conv_general_dilated", lhs, rhs)
    pref = _preferred(preferred_element_type)
    if pref is not None:
        x, w = snp.astype(x, pref), snp.astype(w, pref)
    nsp = x.ndim - 2
    dn = conv_dimension_numbers(x.shape, w.shape, dimension_numbers)
    return _conv.conv_general(x, w, window_strides, padding, lhs_dilation or (1,) * nsp,
                              rhs_dilation or (1,) * nsp, feature_group_count,
                              batch_group_count, tuple(dn), precision)


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
