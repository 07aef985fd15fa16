"""Window reductions: reduce_window (sum, max, min, prod), and the two linear maps behind
the derivatives of max/min pooling, transposes of each other:
    select_and_gather_add   per window, the tangent at the operand's selected element
                            (forward mode of max/min pooling);
    select_and_scatter_add  per window, the source value added at that element (reverse
                            mode).
Both select the first maximum (select "ge") or minimum ("le") of the window's operand
elements in row-major window order and never select padding, so they are exact transposes
(a window of padding only gathers 0 and receives nothing).

Window attributes follow StableHLO, one entry per operand axis:
    window_dimensions, window_strides, padding ((lo, hi) per axis, may be negative),
    base_dilations (interior spacing of the operand), window_dilations (holes in the window).
"""

from __future__ import annotations

import numpy as np

from .. import batch_rules as br
from .. import dtypes as dt
from ..emitter import i64_array
from ..errors import ShapeError
from ..ir import TensorType, scalar_type
from ..primitive import Primitive
from . import shape_ops
from .elementwise import check_kind
from .reductions import _identity, reducer


def _dilate(n: int, d: int) -> int:
    return 0 if n == 0 else 1 + d * (n - 1)


def window_shape(opname: str, shape, window_dimensions, window_strides, padding,
                 base_dilations, window_dilations) -> tuple[int, ...]:
    """The result shape of a window op over an operand of `shape`, checking attributes."""
    r = len(shape)
    for what, v in (("window_dimensions", window_dimensions), ("window_strides", window_strides),
                    ("padding", padding), ("base_dilations", base_dilations),
                    ("window_dilations", window_dilations)):
        if len(v) != r:
            raise ShapeError(f"{opname}: {what} has {len(v)} entries but the operand has rank "
                             f"{r} (shape {tuple(shape)}); give one per axis")
    out = []
    for i, (n, w, s, (lo, hi), bd, wd) in enumerate(zip(
            shape, window_dimensions, window_strides, padding, base_dilations,
            window_dilations, strict=True)):
        if w < 1 or s < 1 or bd < 1 or wd < 1:
            raise ShapeError(f"{opname}: axis {i}: window size, stride and dilations must be "
                             f">= 1 (got window {w}, stride {s}, base dilation {bd}, window "
                             f"dilation {wd})")
        padded = _dilate(n, bd) + lo + hi
        span = _dilate(w, wd)
        if padded < span:
            raise ShapeError(f"{opname}: axis {i}: the window (size {w}, dilated to {span}) is "
                             f"larger than the padded operand axis ({padded}); pad more or use "
                             f"a smaller window")
        out.append((padded - span) // s + 1)
    return tuple(out)


def _window_attrs(attrs) -> str:
    pad = np.asarray(attrs["padding"], dtype=np.int64).reshape(-1, 2)
    return (f"window_dimensions = {i64_array(attrs['window_dimensions'])}, "
            f"window_strides = {i64_array(attrs['window_strides'])}, "
            f"padding = dense<{pad.tolist()}> : tensor<{pad.shape[0]}x2xi64>")


def windows_view(x: np.ndarray, init, window_dimensions, window_strides, padding,
                 base_dilations, window_dilations) -> np.ndarray:
    """A view [out..., window...] of the padded, dilated operand (NumPy reference helper)."""
    shape = [_dilate(n, d) for n, d in zip(x.shape, base_dilations, strict=True)]
    base = np.full(shape, init, dtype=x.dtype)
    base[tuple(slice(None, None, d) for d in base_dilations)] = x
    pos = [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    base = np.pad(base, pos, constant_values=init)
    base = base[tuple(slice(max(-lo, 0), base.shape[i] - max(-hi, 0))
                      for i, (lo, hi) in enumerate(padding))]
    spans = [_dilate(w, d) for w, d in zip(window_dimensions, window_dilations, strict=True)]
    v = np.lib.stride_tricks.sliding_window_view(base, spans)
    r = x.ndim
    v = v[tuple(slice(None, None, s) for s in window_strides)
          + tuple(slice(None, None, d) for d in window_dilations)]
    assert v.ndim == 2 * r
    return v


# ---- reduce_window ------------------------------------------------------------------

_KINDS = {"sum": "biufc", "prod": "biufc", "max": "biuf", "min": "biuf"}
_NP = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}


def _reduce_window(kind: str) -> Primitive:
    name = f"reduce_window_{kind}"

    def shape_rule(x, *, window_dimensions, window_strides, padding, base_dilations,
                   window_dilations):
        check_kind(name, x, _KINDS[kind])
        return TensorType(window_shape(name, x.shape, window_dimensions, window_strides,
                                       padding, base_dilations, window_dilations), x.dtype)

    def emit(ctx, x):
        init, region = reducer(ctx, kind, ctx.in_types[0].dtype)
        a = ctx.attrs
        return ctx.op("stablehlo.reduce_window", [x, init], ctx.out_types,
                      f"{_window_attrs(a)}, base_dilations = {i64_array(a['base_dilations'])}, "
                      f"window_dilations = {i64_array(a['window_dilations'])}",
                      regions=[region])

    def reference(x, **attrs):
        init = _identity(kind, dt.dtype(x.dtype))
        v = windows_view(x, init, **attrs)
        axes = tuple(range(x.ndim, 2 * x.ndim))
        if x.dtype == np.bool_ and kind in ("sum", "prod"):
            return (np.any if kind == "sum" else np.all)(v, axis=axes)
        with np.errstate(all="ignore"):
            return np.asarray(_NP[kind](v, axis=axes), dtype=x.dtype)

    p = Primitive(name, shape_rule, emit, reference,
                  vjp=_VJPS[kind], jvp=_JVPS.get(kind), family="windows")
    p.batch = lambda ops, xs, batched, **attrs: (ops.bind(p, xs[0], **_batch_window(attrs)),)
    return p


def _batch_window(attrs) -> dict:
    """Window attributes with a window of one over a new leading batch axis."""
    lead = {"window_dimensions": 1, "window_strides": 1, "padding": (0, 0),
            "base_dilations": 1, "window_dilations": 1}
    return {k: (lead[k],) + tuple(v) if k in lead else v for k, v in attrs.items()}


def _conv_vjp_lhs_padding(in_shape, window, strides, out_shape, padding, lhs_dil, rhs_dil):
    """Padding of the (stride-dilated) cotangent so that a stride-1 window pass over it
    gives the operand's shape back. Shared with convolution's transpose rule."""
    lhs_d = [_dilate(n, d) for n, d in zip(in_shape, lhs_dil, strict=True)]
    rhs_d = [_dilate(n, d) for n, d in zip(window, rhs_dil, strict=True)]
    out_d = [_dilate(n, d) for n, d in zip(out_shape, strides, strict=True)]
    before = [r - lo - 1 for r, (lo, _) in zip(rhs_d, padding, strict=True)]
    after = [l + r - 1 - o - b for l, r, o, b in zip(lhs_d, rhs_d, out_d, before, strict=True)]
    return list(zip(before, after, strict=True))


def _sum_vjp(ops, cts, primals, outs, *, window_dimensions, window_strides, padding,
             base_dilations, window_dilations):
    (ct,), (x,) = cts, primals
    if ct is None:
        return (None,)
    r = x.type.ndim
    pads = _conv_vjp_lhs_padding(x.type.shape, window_dimensions, window_strides,
                                 ct.type.shape, padding, base_dilations, window_dilations)
    padded = ops.bind(shape_ops.pad, ct, ops.const(0, ct.type.dtype),
                      low=tuple(lo for lo, _ in pads), high=tuple(hi for _, hi in pads),
                      interior=tuple(s - 1 for s in window_strides))
    out = ops.bind(reduce_window_sum, padded, window_dimensions=tuple(window_dimensions),
                   window_strides=tuple(base_dilations), padding=((0, 0),) * r,
                   base_dilations=(1,) * r, window_dilations=tuple(window_dilations))
    return (out,)


def _extremum_vjp(kind):
    def vjp(ops, cts, primals, outs, *, window_dimensions, window_strides, padding,
            base_dilations, window_dilations):
        (ct,), (x,) = cts, primals
        if ct is None:
            return (None,)
        if any(d != 1 for d in base_dilations) or any(d != 1 for d in window_dilations):
            raise NotImplementedError(
                f"the gradient of reduce_window_{kind} (max/min pooling) with base or window "
                f"dilation is not supported; use dilation 1")
        out = ops.bind(select_and_scatter_add, ct, x, ops.const(0, ct.type.dtype),
                       select="ge" if kind == "max" else "le",
                       window_dimensions=tuple(window_dimensions),
                       window_strides=tuple(window_strides), padding=tuple(padding))
        return (out,)
    return vjp


def _extremum_jvp(kind):
    def jvp(ops, tangents, primals, outs, **attrs):
        (t,), (x,) = tangents, primals
        if t is None:
            return (None,)
        return (ops.bind(select_and_gather_add, t, x, select="ge" if kind == "max" else "le",
                         **attrs),)
    return jvp


def _prod_vjp(ops, cts, primals, outs, **attrs):
    raise NotImplementedError(
        "the gradient of reduce_window_prod (window product) is not supported: a zero in a "
        "window makes the usual y/x rule wrong. For positive data differentiate "
        "exp(window_sum(log(x))) instead")


_VJPS = {"sum": _sum_vjp, "max": _extremum_vjp("max"), "min": _extremum_vjp("min"),
         "prod": _prod_vjp}
_JVPS = {"max": _extremum_jvp("max"), "min": _extremum_jvp("min")}

reduce_window_sum = _reduce_window("sum")
reduce_window_max = _reduce_window("max")
reduce_window_min = _reduce_window("min")
reduce_window_prod = _reduce_window("prod")

# ---- select_and_scatter ---------------------------------------------------------------


_EXTREMUM = {"ge": "max", "le": "min"}  # what each select attribute picks


def _check_select(opname: str, select) -> None:
    if select not in _EXTREMUM:
        raise ShapeError(f"{opname}: select must be 'ge' (max) or 'le' (min), got {select!r}")


def _compare(ctx, a, c, dtype, direction):
    ctype = {"f": "FLOAT", "i": "SIGNED", "u": "UNSIGNED"}[dtype.kind]
    return ctx.op("stablehlo.compare", [a, c], [scalar_type(dt.bool_)],
                  f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
                  f"compare_type = #stablehlo<comparison_type {ctype}>")[0]


def _selected(x: np.ndarray, select, window_dimensions, window_strides, padding,
              base_dilations, window_dilations):
    """Per window of x, the flat index in the window of its first extremum among operand
    elements (never padding or dilation holes), and whether the window has any operand
    element. The NumPy references of select_and_scatter_add and select_and_gather_add."""
    r = x.ndim
    fill = _identity(_EXTREMUM[select], dt.dtype(x.dtype))
    window = (window_dimensions, window_strides, padding, base_dilations, window_dilations)
    v = windows_view(x, fill, *window)
    real = windows_view(np.ones(x.shape, bool), False, *window)
    flat, real = v.reshape(v.shape[:r] + (-1,)), real.reshape(v.shape[:r] + (-1,))
    best = (np.max if select == "ge" else np.min)(flat, axis=-1, keepdims=True)
    return np.argmax(real & (flat == best), axis=-1), real.any(axis=-1)


def _sas_rule(source, x, init, *, select, window_dimensions, window_strides, padding):
    check_kind("select_and_scatter_add", x, "iuf")
    _check_select("select_and_scatter_add", select)
    r = x.ndim
    out = window_shape("select_and_scatter_add", x.shape, window_dimensions, window_strides,
                       padding, (1,) * r, (1,) * r)
    if source.shape != out:
        raise ShapeError(f"select_and_scatter_add: source has shape {source.shape}, but the "
                         f"windows over the operand {x.shape} give {out}")
    if source.dtype is not x.dtype or init.dtype is not x.dtype or init.shape != ():
        raise ShapeError(f"select_and_scatter_add: source {source}, operand {x} and init "
                         f"{init} must share one dtype (init a scalar)")
    return x


def _sas_emit(ctx, source, x, init):
    t = ctx.in_types[1]
    s = scalar_type(t.dtype)
    # select(kept, next) is applied in window order: true keeps the first of equal elements
    select = ctx.region([s, s], lambda a, c: [_compare(ctx, a, c, t.dtype,
                                                       ctx.attrs["select"].upper())])
    scatter = ctx.region([s, s], lambda a, c: ctx.op("stablehlo.add", [a, c], [s]))
    return ctx.op("stablehlo.select_and_scatter", [x, source, init], ctx.out_types,
                  _window_attrs(ctx.attrs), regions=[select, scatter],
                  operand_types=[t, ctx.in_types[0], ctx.in_types[2]])


def _sas_ref(source, x, init, *, select, window_dimensions, window_strides, padding):
    r = x.ndim
    pick, some = _selected(x, select, window_dimensions, window_strides, padding, (1,) * r,
                           (1,) * r)
    widx = np.unravel_index(pick, window_dimensions)
    out = np.zeros(x.shape, dtype=x.dtype)
    for o in zip(*np.nonzero(some), strict=True):
        pos = tuple(o[i] * window_strides[i] + widx[i][o] - padding[i][0] for i in range(r))
        out[pos] += source[o]
    return out + init


def _sas_vjp(ops, cts, primals, outs, *, select, window_dimensions, window_strides,
             padding):
    """Linear in source (its transpose is select_and_gather_add) and in init (added to every
    element); no gradient to the operand, whose order only picks the positions."""
    (ct,), (_, x, _) = cts, primals
    if ct is None:
        return (None, None, None)
    r = x.type.ndim
    source_ct = ops.bind(select_and_gather_add, ct, x, select=select,
                         window_dimensions=tuple(window_dimensions),
                         window_strides=tuple(window_strides), padding=tuple(padding),
                         base_dilations=(1,) * r, window_dilations=(1,) * r)
    return (source_ct, None, ops.reduce_sum(ct, range(r)))


def _sas_batch(ops, xs, batched, **attrs):
    """Source and operand get the batch axis; a batched init, which is added to every
    element, is added after a scatter onto zeros."""
    n = br.batch_size(xs, batched)
    source, x = (br.bring(ops, v, b, n) for v, b in zip(xs[:2], batched[:2], strict=True))
    init = ops.const(0, x.type.dtype) if batched[2] else xs[2]
    out = ops.bind(select_and_scatter_add, source, x, init, **_batch_window(attrs))
    if batched[2]:
        out = ops.add(out, ops.broadcast(xs[2], out.type.shape, (0,)))
    return (out,)


select_and_scatter_add = Primitive("select_and_scatter_add", _sas_rule, _sas_emit, _sas_ref,
                                   vjp=_sas_vjp, family="windows")
select_and_scatter_add.batch = _sas_batch

# ---- select_and_gather_add -------------------------------------------------------------


def _sga_rule(tangent, x, *, select, window_dimensions, window_strides, padding,
              base_dilations, window_dilations):
    check_kind("select_and_gather_add", x, "iuf")
    _check_select("select_and_gather_add", select)
    if tangent != x:
        raise ShapeError(f"select_and_gather_add: tangent {tangent} and operand {x} must have "
                         f"one type (one tangent value per operand element)")
    return TensorType(window_shape("select_and_gather_add", x.shape, window_dimensions,
                                   window_strides, padding, base_dilations,
                                   window_dilations), x.dtype)


def _sga_emit(ctx, tangent, x):
    """One reduce_window over the triples (operand, tangent, row-major position): the body
    keeps the triple whose operand wins, the smaller position on ties. XLA applies the body
    in no fixed order (on the host, pairs alone keep the last of equal elements), so the
    position is what makes the first one win, as select_and_scatter_add picks it. Padding
    and the initial triple are (-inf or +inf, 0, past the last position)."""
    t, a = ctx.in_types[1], ctx.attrs
    s = scalar_type(t.dtype)
    pos_dtype = dt.int32 if t.size < 2**31 - 1 else dt.int64
    p = scalar_type(pos_dtype)
    flat = ctx.op("stablehlo.iota", [], [TensorType((t.size,), pos_dtype)],
                  "iota_dimension = 0 : i64")[0]
    pos = ctx.op("stablehlo.reshape", [flat], [TensorType(t.shape, pos_dtype)])[0]
    better = "GT" if a["select"] == "ge" else "LT"

    def body(kept_x, kept_t, kept_p, next_x, next_t, next_p):
        tie = ctx.op("stablehlo.and", [_compare(ctx, kept_x, next_x, t.dtype, "EQ"),
                                       _compare(ctx, kept_p, next_p, pos_dtype, "LT")],
                     [scalar_type(dt.bool_)])[0]
        keep = ctx.op("stablehlo.or", [_compare(ctx, kept_x, next_x, t.dtype, better), tie],
                      [scalar_type(dt.bool_)])[0]
        return [ctx.op("stablehlo.select", [keep, k, n], [ty])[0]
                for k, n, ty in ((kept_x, next_x, s), (kept_t, next_t, s),
                                 (kept_p, next_p, p))]

    inits = [ctx.constant(_identity(_EXTREMUM[a["select"]], t.dtype), t.dtype),
             ctx.constant(0, t.dtype), ctx.constant(t.size, pos_dtype)]
    out = ctx.out_types[0]
    results = ctx.op("stablehlo.reduce_window", [x, tangent, pos, *inits],
                     [out, out, TensorType(out.shape, pos_dtype)],
                     f"{_window_attrs(a)}, base_dilations = {i64_array(a['base_dilations'])}, "
                     f"window_dilations = {i64_array(a['window_dilations'])}",
                     regions=[ctx.region([s, s, p, s, s, p], body)])
    return results[1]


def _sga_ref(tangent, x, *, select, **window):
    r = x.ndim
    pick, some = _selected(x, select, **window)
    t = windows_view(tangent, 0, **window)
    t = t.reshape(t.shape[:r] + (-1,))
    picked = np.take_along_axis(t, pick[..., None], axis=-1)[..., 0]
    return np.where(some, picked, np.zeros((), x.dtype)).astype(x.dtype)


def _sga_vjp(ops, cts, primals, outs, *, select, window_dimensions, window_strides, padding,
             base_dilations, window_dilations):
    """Linear in the tangent, its transpose scatters the cotangent to the selected
    positions; no gradient to the operand."""
    (ct,), (_, x) = cts, primals
    if ct is None:
        return (None, None)
    if any(d != 1 for d in base_dilations) or any(d != 1 for d in window_dilations):
        raise NotImplementedError(
            "the gradient of select_and_gather_add (forward mode of max/min pooling) with "
            "base or window dilation is not supported; use dilation 1")
    out = ops.bind(select_and_scatter_add, ct, x, ops.const(0, ct.type.dtype), select=select,
                   window_dimensions=tuple(window_dimensions),
                   window_strides=tuple(window_strides), padding=tuple(padding))
    return (out, None)


def _sga_jvp(ops, tangents, primals, outs, **attrs):
    """Linear in the tangent, so its tangent is itself applied to the tangent's tangent
    (kept explicit: transposing the vjp would not allow dilations)."""
    (t, _), (_, x) = tangents, primals
    return (None if t is None else ops.bind(select_and_gather_add, t, x, **attrs),)


select_and_gather_add = Primitive("select_and_gather_add", _sga_rule, _sga_emit, _sga_ref,
                                  vjp=_sga_vjp, jvp=_sga_jvp, family="windows")
select_and_gather_add.batch = lambda ops, xs, batched, **attrs: (ops.bind(
    select_and_gather_add, *br.bring_all(ops, xs, batched), **_batch_window(attrs)),)

PRIMITIVES = [reduce_window_sum, reduce_window_max, reduce_window_min, reduce_window_prod,
              select_and_scatter_add, select_and_gather_add]
