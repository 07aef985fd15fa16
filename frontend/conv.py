"""stablejit.conv: convolutions and window reductions (pooling) for users.

    conv_general(x, w, strides, padding, lhs_dilation, rhs_dilation,
                 feature_group_count, batch_group_count, dimension_numbers)
    conv2d(x, w, stride=1, padding="SAME")        NCHW input, OIHW kernel by default
    window_sum / window_max / window_min / window_product
    max_pool / avg_pool

`padding` is "VALID", "SAME", "SAME_LOWER" or explicit (lo, hi) pairs per spatial axis.
`dimension_numbers` is either three layout strings such as ("NHWC", "HWIO", "NHWC")
or three tuples of axis numbers (lhs, rhs, out) as the convolution primitive takes.
"""

from __future__ import annotations

from collections.abc import Sequence

from .compiler.primitives import convolution as cv
from .compiler.primitives import windows
from .dispatch import bind1
from .errors import at_user_line
from .numpy import ones
from .numpy._operands import asarray, promote_operands
from .precision import pair as precision_pair

__all__ = ["conv_general", "conv2d", "window_sum", "window_max", "window_min", "window_product",
           "max_pool", "avg_pool", "padding_pairs"]


def _tuple(v, n: int, name: str) -> tuple[int, ...]:
    if isinstance(v, int):
        return (v,) * n
    v = tuple(int(e) for e in v)
    if len(v) != n:
        raise ValueError(at_user_line(f"{name} needs {n} entries (one per spatial axis), got "
                                      f"{v}"))
    return v


def padding_pairs(padding, in_sizes, windows, strides, dilations=None):
    """Explicit (lo, hi) pairs for "VALID"/"SAME"/"SAME_LOWER" or given pairs."""
    n = len(in_sizes)
    dilations = dilations or (1,) * n
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            return tuple((0, 0) for _ in range(n))
        if mode in ("SAME", "SAME_LOWER"):
            out = []
            for size, w, s, d in zip(in_sizes, windows, strides, dilations, strict=True):
                span = (w - 1) * d + 1
                total = max((-(-size // s) - 1) * s + span - size, 0)
                lo = total // 2 if mode == "SAME" else (total + 1) // 2
                out.append((lo, total - lo))
            return tuple(out)
        raise ValueError(at_user_line(f"padding must be 'VALID', 'SAME', 'SAME_LOWER' or "
                                      f"(lo, hi) pairs, got {padding!r}"))
    pairs = tuple(tuple(int(e) for e in p) for p in padding)
    if len(pairs) != n or any(len(p) != 2 for p in pairs):
        raise ValueError(at_user_line(f"padding needs {n} (lo, hi) pairs, got {padding!r}"))
    return pairs


def _dimension_numbers(dn, ndim: int):
    if dn is None:
        ident = tuple(range(ndim))
        return ident, ident, ident
    if all(isinstance(s, str) for s in dn):
        lhs, rhs, out = dn
        if not len(lhs) == len(rhs) == len(out) == ndim:
            raise ValueError(at_user_line(f"dimension_numbers {dn} do not match rank {ndim}"))
        spatial = [c for c in rhs if c not in "OI"]

        def spec(s, first, second):
            try:
                return (s.index(first), s.index(second), *[s.index(c) for c in spatial])
            except ValueError:
                raise ValueError(at_user_line(
                    f"dimension_numbers layout {s!r} must name {first}, {second} and the "
                    f"kernel's spatial axes {''.join(spatial)}")) from None

        return spec(lhs, "N", "C"), spec(rhs, "O", "I"), spec(out, "N", "C")
    return tuple(tuple(int(e) for e in s) for s in dn)


def conv_general(x, w, strides=1, padding="VALID", lhs_dilation=1, rhs_dilation=1,
                 feature_group_count: int = 1, batch_group_count: int = 1,
                 dimension_numbers=None, precision=None):
    """N-d convolution (cross-correlation, as in deep learning and lax.conv_general_dilated);
    precision= as a matrix product's (frontend/precision.py)."""
    prec = precision_pair(precision, "conv_general")
    (x, w), dtype = promote_operands(asarray(x), asarray(w))
    if not dtype.is_inexact:
        raise TypeError(at_user_line(f"conv_general: needs floating-point or complex operands, "
                                     f"got {dtype.name}"))
    if x.ndim != w.ndim or x.ndim < 3:
        raise ValueError(at_user_line(f"conv_general: input {x.shape} and kernel {w.shape} "
                                      f"need the same rank >= 3 (batch, feature, spatial...)"))
    ls, rs, os = _dimension_numbers(dimension_numbers, x.ndim)
    nsp = x.ndim - 2
    strides = _tuple(strides, nsp, "strides")
    lhs_dilation = _tuple(lhs_dilation, nsp, "lhs_dilation")
    rhs_dilation = _tuple(rhs_dilation, nsp, "rhs_dilation")
    in_sizes = [(x.shape[a] - 1) * d + 1 for a, d in zip(ls[2:], lhs_dilation, strict=True)]
    pads = padding_pairs(padding, in_sizes, [w.shape[a] for a in rs[2:]], strides,
                         rhs_dilation)
    extra = {} if prec is None else {"precision": prec}
    return bind1(cv.convolution, x, w, window_strides=strides, padding=pads,
                 lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
                 feature_group_count=int(feature_group_count),
                 batch_group_count=int(batch_group_count),
                 dimension_numbers=(ls, rs, os), **extra)


def conv2d(x, w, stride=1, padding="SAME", dilation=1, groups: int = 1,
           layout: tuple[str, str, str] = ("NCHW", "OIHW", "NCHW")):
    return conv_general(x, w, stride, padding, 1, dilation, groups, 1, layout)


_WINDOW_REDUCTIONS = {"sum": windows.reduce_window_sum, "max": windows.reduce_window_max,
                      "min": windows.reduce_window_min, "prod": windows.reduce_window_prod}


def _window(kind: str, x, window_shape: Sequence[int], strides=None, padding="VALID",
            base_dilation=None, window_dilation=None):
    x = asarray(x)
    r = x.ndim
    window = _tuple(window_shape, r, "window_shape")
    strides = _tuple(strides if strides is not None else 1, r, "strides")
    bd = _tuple(base_dilation if base_dilation is not None else 1, r, "base_dilation")
    wd = _tuple(window_dilation if window_dilation is not None else 1, r, "window_dilation")
    sizes = [(n - 1) * d + 1 for n, d in zip(x.shape, bd, strict=True)]
    pads = padding_pairs(padding, sizes, window, strides, wd)
    return bind1(_WINDOW_REDUCTIONS[kind], x, window_dimensions=window,
                 window_strides=strides, padding=pads, base_dilations=bd, window_dilations=wd)


def window_sum(x, window_shape, strides=None, padding="VALID", base_dilation=None,
               window_dilation=None):
    """Sum over sliding windows; one window size/stride/padding per axis of x."""
    return _window("sum", x, window_shape, strides, padding, base_dilation, window_dilation)


def window_max(x, window_shape, strides=None, padding="VALID", base_dilation=None,
               window_dilation=None):
    return _window("max", x, window_shape, strides, padding, base_dilation, window_dilation)


def window_min(x, window_shape, strides=None, padding="VALID", base_dilation=None,
               window_dilation=None):
    return _window("min", x, window_shape, strides, padding, base_dilation, window_dilation)


def window_product(x, window_shape, strides=None, padding="VALID", base_dilation=None,
                   window_dilation=None):
    return _window("prod", x, window_shape, strides, padding, base_dilation, window_dilation)


def _pool_window(x, window, strides, layout: str):
    nsp = len(layout) - 2
    window = _tuple(window, nsp, "window")
    strides = _tuple(strides if strides is not None else window, nsp, "strides")
    full_w, full_s = [1] * x.ndim, [1] * x.ndim
    spatial = [i for i, c in enumerate(layout) if c not in "NC"]
    for i, a in enumerate(spatial):
        full_w[a], full_s[a] = window[i], strides[i]
    return full_w, full_s


def max_pool(x, window, strides=None, padding="VALID", layout: str = "NCHW"):
    """Max pooling over the spatial axes named by `layout` (default NCHW)."""
    x = asarray(x)
    w, s = _pool_window(x, window, strides, layout)
    return window_max(x, w, s, padding)


def avg_pool(x, window, strides=None, padding="VALID", layout: str = "NCHW",
             count_include_pad: bool = True):
    """Average pooling; with padding, count_include_pad=False divides by the number of
    real (unpadded) elements of each window."""
    x = asarray(x)
    w, s = _pool_window(x, window, strides, layout)
    total = window_sum(x, w, s, padding)
    if count_include_pad or (isinstance(padding, str) and padding.upper() == "VALID"):
        n = 1
        for e in w:
            n *= e
        return total / n
    counts = window_sum(ones(x.shape, dtype=x.dtype), w, s, padding)
    return total / counts
