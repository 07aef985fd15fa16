"""N-d convolution: `stablehlo.convolution` with strides, explicit padding, lhs/rhs
dilation, feature and batch groups and dimension numbers.

Attributes (as in lax.conv_general_dilated):
    window_strides, padding ((lo, hi) per spatial axis), lhs_dilation, rhs_dilation,
    feature_group_count, batch_group_count, precision (optional: as dot_general's),
    dimension_numbers = (lhs_spec, rhs_spec, out_spec): each names axes of its tensor,
        lhs/out: (batch, feature, spatial...), rhs: (out feature, in feature, spatial...).
The VJP is two more convolutions (the kernel flipped and transposed for the input;
input and cotangent for the kernel), ported from the standard derivation.
On cuda and rocm, whose XLA compiles only float convolutions, complex and integer ones
are written with other ops (_gpu_convolution.py).
"""

from __future__ import annotations

import numpy as np

from .. import batch_rules as br
from .. import dtypes as dt
from ..emitter import i64_array
from ..errors import ShapeError
from ..ir import TensorType
from ..primitive import Primitive
from . import _gpu_convolution as gpu
from . import shape_ops
from .elementwise import check_kind
from .windows import _conv_vjp_lhs_padding, _dilate, windows_view

_ATTRS = ("window_strides", "padding", "lhs_dilation", "rhs_dilation", "feature_group_count",
          "batch_group_count", "dimension_numbers")


def _rule(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
          feature_group_count, batch_group_count, dimension_numbers, precision=None):
    check_kind("convolution", lhs, "iufc", "lhs (input)")
    if lhs.dtype is not rhs.dtype:
        raise ShapeError(f"convolution: input dtype {lhs.dtype.name} and kernel dtype "
                         f"{rhs.dtype.name} differ; convert one first")
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise ShapeError(f"convolution: input {lhs.shape} and kernel {rhs.shape} need the "
                         f"same rank (>= 2): batch, feature and spatial axes")
    ls, rs, os = dimension_numbers
    r = lhs.ndim
    for which, spec in (("lhs", ls), ("rhs", rs), ("out", os)):
        if sorted(spec) != list(range(r)):
            raise ShapeError(f"convolution: {which} dimension numbers {spec} are not a "
                             f"permutation of the {r} axes")
    nsp = r - 2
    for what, v in (("window_strides", window_strides), ("padding", padding),
                    ("lhs_dilation", lhs_dilation), ("rhs_dilation", rhs_dilation)):
        if len(v) != nsp:
            raise ShapeError(f"convolution: {what} needs one entry per spatial axis ({nsp}), "
                             f"got {len(v)}")
    if any(s < 1 for s in (*window_strides, *lhs_dilation, *rhs_dilation)):
        raise ShapeError("convolution: strides and dilations must be >= 1")
    g, b = feature_group_count, batch_group_count
    if g < 1 or b < 1 or (g > 1 and b > 1):
        raise ShapeError(f"convolution: feature_group_count ({g}) and batch_group_count ({b}) "
                         f"must be >= 1 and at most one of them > 1")
    n, c = lhs.shape[ls[0]], lhs.shape[ls[1]]
    o, i = rhs.shape[rs[0]], rhs.shape[rs[1]]
    if c != i * g:
        raise ShapeError(f"convolution: the input has {c} features but the kernel takes {i} "
                         f"input features x feature_group_count {g} = {i * g}")
    if o % g or o % b:
        raise ShapeError(f"convolution: the kernel's {o} output features are not divisible by "
                         f"the group count ({max(g, b)})")
    if n % b:
        raise ShapeError(f"convolution: batch size {n} is not divisible by batch_group_count "
                         f"{b}")
    spatial = []
    for k in range(nsp):
        size = _dilate(lhs.shape[ls[2 + k]], lhs_dilation[k]) + sum(padding[k])
        win = _dilate(rhs.shape[rs[2 + k]], rhs_dilation[k])
        if size < win:
            raise ShapeError(f"convolution: spatial axis {k}: the kernel (dilated size {win}) "
                             f"is larger than the padded input ({size})")
        spatial.append((size - win) // window_strides[k] + 1)
    canon = [n // b, o, *spatial]
    shape = [0] * r
    for j, axis in enumerate(os):
        shape[axis] = canon[j]
    return TensorType(shape, lhs.dtype)


def _labels(spec, first: str, second: str) -> str:
    out = [""] * len(spec)
    out[spec[0]], out[spec[1]] = first, second
    for k, axis in enumerate(spec[2:]):
        out[axis] = str(k)
    return "[" + ", ".join(out) + "]"


def _conv_op(ctx, lhs, rhs, out_t):
    """The one `stablehlo.convolution` of the op's attributes, with result type out_t."""
    a = ctx.attrs
    ls, rs, os = a["dimension_numbers"]
    pad = np.asarray(a["padding"], dtype=np.int64).reshape(-1, 2)
    pad_text = (f"dense<{pad.tolist()}> : tensor<{pad.shape[0]}x2xi64>" if pad.size else
                "dense<> : tensor<0x2xi64>")
    dn = (f"#stablehlo.conv<{_labels(ls, 'b', 'f')}x{_labels(rs, 'o', 'i')}->"
          f"{_labels(os, 'b', 'f')}>")
    return ctx.op("stablehlo.convolution", [lhs, rhs], [out_t],
                  f"window_strides = {i64_array(a['window_strides'])}, padding = {pad_text}, "
                  f"lhs_dilation = {i64_array(a['lhs_dilation'])}, "
                  f"rhs_dilation = {i64_array(a['rhs_dilation'])}, "
                  f"dimension_numbers = {dn}, "
                  f"feature_group_count = {a['feature_group_count']} : i64, "
                  f"batch_group_count = {a['batch_group_count']} : i64" + _precision(a))[0]


def _precision(attrs) -> str:
    """The op's precision_config, if it has a precision (products.py's attribute)."""
    p = attrs.get("precision")
    return "" if p is None else (", precision_config = [" + ", ".join(
        f"#stablehlo<precision {q}>" for q in p) + "]")


def _emit(ctx, lhs, rhs):
    # XLA's GPU backends compile only floating-point convolutions (cuDNN / MIOpen have no
    # complex or general integer ones: "UNIMPLEMENTED: Convolutions must have
    # floating-point or integral operands/outputs, but got ... c64", and a bare
    # UNIMPLEMENTED for s32), so there complex and integer convolutions are written with
    # other ops (see _gpu_convolution.py). The host compiles every dtype as one op.
    d = ctx.out_types[0].dtype
    if ctx.emitter.platform in ("cuda", "rocm") and (d.is_complex or d.kind in "iu"):
        if d.is_complex:
            return gpu.complex_conv(ctx, lhs, rhs, _conv_op)
        return gpu.integer_conv(ctx, lhs, rhs)
    return _conv_op(ctx, lhs, rhs, ctx.out_types[0])


def _reference(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               feature_group_count, batch_group_count, dimension_numbers, precision=None):
    ls, rs, os = dimension_numbers
    x = np.transpose(lhs, ls)  # N C S...
    w = np.transpose(rhs, rs)  # O I K...
    nsp = x.ndim - 2
    v = windows_view(x, 0, (1, 1, *w.shape[2:]), (1, 1, *window_strides),
                     ((0, 0), (0, 0), *padding), (1, 1, *lhs_dilation), (1, 1, *rhs_dilation))
    v = v.reshape(v.shape[:2 + nsp] + v.shape[4 + nsp:])  # N C Out... K...
    g, b = feature_group_count, batch_group_count
    n, c = x.shape[:2]
    o, i = w.shape[:2]
    sp = "".join(chr(ord("p") + k) for k in range(nsp))  # output spatial letters
    ks = "".join(chr(ord("A") + k) for k in range(nsp))  # kernel tap letters
    vv = v.reshape((b, n // b, g, c // g) + v.shape[2:])
    ww = w.reshape((b, g, o // (b * g), i) + w.shape[2:])
    wide = dt.dtype(lhs.dtype).kind == "f"  # bfloat16 is kind "V" to NumPy
    acc = np.float64 if wide else lhs.dtype
    out = np.einsum(f"yngc{sp}{ks},ygoc{ks}->nygo{sp}", vv.astype(acc), ww.astype(acc))
    out = out.reshape((n // b, o) + out.shape[4:])
    return np.transpose(out, np.argsort(os)).astype(lhs.dtype)


# ---- VJP --------------------------------------------------------------------------------


def _spec_t(spec):
    return (spec[1], spec[0], *spec[2:])


def _axis_out_of(ops, src, size1, x):
    shape = list(x.type.shape)
    shape[src:src + 1] = [size1, shape[src] // size1]
    return ops.reshape(x, shape)


def _axis_into(ops, src, dst, x):
    perm = [i for i in range(x.type.ndim) if i != src]
    perm.insert(dst, src)
    shape = list(np.delete(np.asarray(x.type.shape), src))
    shape[dst] *= x.type.shape[src]
    return ops.reshape(ops.transpose(x, perm), shape)


def _conv(ops, lhs, rhs, **attrs):
    attrs = {k: (tuple(map(tuple, v)) if k in ("padding", "dimension_numbers") else
                 tuple(v) if isinstance(v, (list, tuple, np.ndarray)) else int(v))
             for k, v in attrs.items() if v is not None}  # (precision None: none)
    attrs["padding"] = tuple((int(lo), int(hi)) for lo, hi in attrs["padding"])
    return ops.bind(convolution, lhs, rhs, **attrs)


def _vjp(ops, cts, primals, outs, *, window_strides, padding, lhs_dilation, rhs_dilation,
         feature_group_count, batch_group_count, dimension_numbers, precision=None):
    (g,), (lhs, rhs) = cts, primals
    if g is None:
        return (None, None)
    ls, rs, os = dimension_numbers
    lsd, rsd, osd = ls[2:], rs[2:], os[2:]
    lshape, rshape, gshape = lhs.type.shape, rhs.type.shape, g.type.shape
    take = lambda shape, dims: [shape[d] for d in dims]

    # d lhs: convolve the cotangent with the flipped, transposed kernel
    w, fg = rhs, feature_group_count
    if feature_group_count > 1 or batch_group_count > 1:
        w = _axis_out_of(ops, rs[0], max(feature_group_count, batch_group_count), w)
        w = _axis_into(ops, rs[0], rs[1], w)
        fg = max(feature_group_count, batch_group_count)
    pads = _conv_vjp_lhs_padding(take(lshape, lsd), take(w.type.shape, rsd), window_strides,
                                 take(gshape, osd), padding, lhs_dilation, rhs_dilation)
    w = ops.bind(shape_ops.reverse, w, axes=tuple(rsd))
    dl = _conv(ops, g, w, window_strides=lhs_dilation, padding=pads,
               lhs_dilation=window_strides, rhs_dilation=rhs_dilation,
               dimension_numbers=(os, _spec_t(rs), ls), feature_group_count=fg,
               batch_group_count=1, precision=precision)
    if batch_group_count > 1:
        dl = _axis_out_of(ops, ls[1], batch_group_count, dl)
        dl = _axis_into(ops, ls[1], ls[0], dl)

    # d rhs: convolve the input with the cotangent
    if batch_group_count > 1:
        fg2, bg2 = batch_group_count, 1
    elif feature_group_count > 1:
        fg2, bg2 = 1, feature_group_count
    else:
        fg2, bg2 = 1, 1
    in_d = [_dilate(n, d) for n, d in zip(take(lshape, lsd), lhs_dilation, strict=True)]
    k_d = [_dilate(n, d) for n, d in zip(take(rshape, rsd), rhs_dilation, strict=True)]
    out_d = [_dilate(n, d) for n, d in zip(take(gshape, osd), window_strides, strict=True)]
    lo = [p[0] for p in padding]
    hi = [o - i + k - l - 1 for o, i, k, l in zip(out_d, in_d, k_d, lo, strict=True)]
    dr = _conv(ops, lhs, g, window_strides=rhs_dilation, padding=list(zip(lo, hi, strict=True)),
               lhs_dilation=lhs_dilation, rhs_dilation=window_strides,
               dimension_numbers=(_spec_t(ls), _spec_t(os), _spec_t(rs)),
               feature_group_count=fg2, batch_group_count=bg2, precision=precision)
    return (dl, dr)


convolution = Primitive("convolution", _rule, _emit, _reference, vjp=_vjp,
                        family="convolution")


def _batch(ops, xs, batched, **attrs):
    """The batch axis folds into an axis the convolution keeps apart (as JAX's
    _conv_general_dilated_batch_rule does): into the input's batch axis when only the
    input is batched; into the output features when the kernel is, with the examples as
    feature (or batch) groups when both are. _axis_into's `dst` counts axes without
    `src`, so with the batch axis at 0 it names an axis of the unbatched value."""
    (lhs, rhs), (bl, bk) = xs, batched
    n = br.batch_size(xs, batched)
    ls, rs, os = attrs["dimension_numbers"]
    g, b = attrs["feature_group_count"], attrs["batch_group_count"]
    if bl and bk:
        if b > 1:  # each example is b more batch groups
            lhs, attrs["batch_group_count"] = _axis_into(ops, 0, ls[0], lhs), b * n
        else:  # each example is g more feature groups
            lhs, attrs["feature_group_count"] = _axis_into(ops, 0, ls[1], lhs), g * n
        out = _conv(ops, lhs, _axis_into(ops, 0, rs[0], rhs), **attrs)
        axis = os[1]
    elif bl:
        if b > 1:  # keep the b groups outermost in the input batch axis
            lhs = _axis_into(ops, 0, ls[0] + 1, _axis_out_of(ops, ls[0] + 1, b, lhs))
            lhs = _axis_into(ops, ls[0], ls[0], lhs)
        else:
            lhs = _axis_into(ops, 0, ls[0], lhs)
        out = _conv(ops, lhs, rhs, **attrs)
        axis = os[0]
    elif g == b == 1:
        out = _conv(ops, lhs, _axis_into(ops, 0, rs[0], rhs), **attrs)
        axis = os[1]
    else:  # keep the groups outermost in the kernel's (and output's) feature axis
        groups = max(g, b)
        rhs = _axis_into(ops, 0, rs[0] + 1, _axis_out_of(ops, rs[0] + 1, groups, rhs))
        out = _conv(ops, lhs, _axis_into(ops, rs[0], rs[0], rhs), **attrs)
        out = _axis_out_of(ops, os[1] + 1, n, _axis_out_of(ops, os[1], groups, out))
        out = _axis_into(ops, os[1], os[1] + 1, out)
        return (br.move_axis(ops, out, os[1], 0),)
    return (br.move_axis(ops, _axis_out_of(ops, axis, n, out), axis, 0),)


convolution.batch = _batch

PRIMITIVES = [convolution]
