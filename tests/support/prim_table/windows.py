"""Example cases of the window reductions (every dtype, padding, base and window dilations),
select_and_scatter_add and select_and_gather_add (ties, padding, dilations), against
independent loops."""

from __future__ import annotations

import numpy as np
from stablejit.compiler import dtypes as dt

from tests.support.dtype_groups import DTYPES, FLOAT, INT, REAL
from tests.support.prim_table.spec import (
    PrimSpec,
    small_ints,
)


def _window_expected(kind):
    def f(x, *, window_dimensions, window_strides, padding, base_dilations, window_dilations):
        if kind in ("max", "min"):
            if x.dtype.kind == "f":
                init = -np.inf if kind == "max" else np.inf
            elif x.dtype == np.bool_:
                init = kind == "min"
            else:
                info = np.iinfo(x.dtype)
                init = info.min if kind == "max" else info.max
        else:
            init = (x.dtype == np.bool_) if kind == "prod" else 0
            init = 1 if kind == "prod" else init
        base = [(n - 1) * b + 1 for n, b in zip(x.shape, base_dilations, strict=True)]
        out_shape = [(bs + lo + hi - (w - 1) * wd - 1) // s + 1 for bs, (lo, hi), w, wd, s in
                     zip(base, padding, window_dimensions, window_dilations, window_strides,
                         strict=True)]
        out = np.empty(out_shape, x.dtype)
        for o in np.ndindex(*out_shape):
            vals = []
            for t in np.ndindex(*window_dimensions):
                pos = [oi * s + ti * wd - lo for oi, s, ti, wd, (lo, _) in
                       zip(o, window_strides, t, window_dilations, padding, strict=True)]
                ok = all(0 <= p < b and p % bd == 0 for p, b, bd in
                         zip(pos, base, base_dilations, strict=True))
                vals.append(x[tuple(p // bd for p, bd in zip(pos, base_dilations,
                                                             strict=True))] if ok else init)
            vals = np.array(vals, x.dtype)
            if x.dtype == np.bool_ and kind in ("sum", "prod"):
                out[o] = vals.any() if kind == "sum" else vals.all()
            else:
                out[o] = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}[kind](
                    vals)
        return out
    return f


_WIN = {"window_dimensions": (2, 2), "window_strides": (1, 2), "padding": ((1, 0), (0, 1)),
        "base_dilations": (1, 1), "window_dilations": (1, 1)}
_WIN_DILATED = [("f32-dilated", [np.arange(20.0, dtype=np.float32).reshape(4, 5) - 7],
                 {"window_dimensions": (2, 3), "window_strides": (2, 1),
                  "padding": ((0, 1), (1, 1)), "base_dilations": (2, 1),
                  "window_dilations": (1, 2)})]


def _rw_spec(kind, kinds):
    return PrimSpec(kinds, lambda d, rng: ([small_ints(d, rng, (4, 5), -2, 3)], dict(_WIN)),
                    _window_expected(kind), extra=_WIN_DILATED)


def _sas_make(select):
    def make(d, rng):
        x = rng.permutation(24).reshape(4, 6).astype(d.np)  # no ties inside a window
        src = small_ints(d, rng, (2, 3), 1, 4)
        return [src, x, np.asarray(1, d.np)], {
            "select": select, "window_dimensions": (2, 2), "window_strides": (2, 2),
            "padding": ((0, 0), (0, 0))}
    return make


def _sas_expected(source, x, init, *, select, window_dimensions, window_strides, padding):
    out = np.full(x.shape, init, x.dtype)
    for o in np.ndindex(*source.shape):
        best = None
        for t in np.ndindex(*window_dimensions):
            pos = tuple(oi * s + ti for oi, s, ti in zip(o, window_strides, t, strict=True))
            if best is None or (x[pos] > x[best] if select == "ge" else x[pos] < x[best]):
                best = pos
        out[best] += source[o]
    return out


def _sga_make(select, window_dimensions, window_strides, padding, base_dilations=(1, 1),
              window_dilations=(1, 1)):
    def make(d, rng):
        x = small_ints(d, rng, (5, 6), -2, 2)  # four values over 30 elements: many ties
        tangent = rng.standard_normal((5, 6)).astype(d.np)
        return [tangent, x], {
            "select": select, "window_dimensions": window_dimensions,
            "window_strides": window_strides, "padding": padding,
            "base_dilations": base_dilations, "window_dilations": window_dilations}
    return make


def _sga_expected(tangent, x, *, select, window_dimensions, window_strides, padding,
                  base_dilations, window_dilations):
    """Per window, the tangent at the first extremum of its operand elements in row-major
    order (padding and dilation holes are never picked; 0 when the window has none)."""
    base = [(n - 1) * b + 1 for n, b in zip(x.shape, base_dilations, strict=True)]
    out_shape = [(bs + lo + hi - (w - 1) * wd - 1) // s + 1 for bs, (lo, hi), w, wd, s in
                 zip(base, padding, window_dimensions, window_dilations, window_strides,
                     strict=True)]
    out = np.zeros(out_shape, x.dtype)
    for o in np.ndindex(*out_shape):
        best = None
        for t in np.ndindex(*window_dimensions):
            pos = [oi * s + ti * wd - lo for oi, s, ti, wd, (lo, _) in
                   zip(o, window_strides, t, window_dilations, padding, strict=True)]
            if not all(0 <= p < b and p % bd == 0 for p, b, bd in
                       zip(pos, base, base_dilations, strict=True)):
                continue
            at = tuple(p // bd for p, bd in zip(pos, base_dilations, strict=True))
            if best is None or (x[at] > best if select == "ge" else x[at] < best):
                best, out[o] = x[at], tangent[at]
    return out


def _sga_extra(label, dtype, *args):
    return (label, *_sga_make(*args)(dtype, np.random.default_rng(len(label))))


TABLE = {
    "reduce_window_sum": _rw_spec("sum", DTYPES),
    "reduce_window_prod": _rw_spec("prod", DTYPES),
    "reduce_window_max": _rw_spec("max", REAL),
    "reduce_window_min": _rw_spec("min", REAL),
    "select_and_scatter_add": PrimSpec(INT + FLOAT, _sas_make("ge"), _sas_expected, extra=[
        ("f32-min", *_sas_make("le")(dt.float32, np.random.default_rng(0)))]),
    "select_and_gather_add": PrimSpec(
        (dt.float32, dt.float64), _sga_make("ge", (2, 2), (1, 2), ((1, 0), (0, 1))),
        _sga_expected, extra=[
            _sga_extra("f32-min-strided", dt.float32, "le", (3, 2), (2, 2), ((1, 1), (0, 0))),
            _sga_extra("f64-max-negative-padding", dt.float64, "ge", (2, 3), (1, 1),
                       ((-1, 0), (2, -1))),
            _sga_extra("f64-min-whole-axis", dt.float64, "le", (5, 1), (1, 1), ((0, 0),) * 2),
            _sga_extra("f32-max-dilated", dt.float32, "ge", (2, 3), (2, 1), ((0, 1), (1, 1)),
                       (2, 1), (1, 2)),
        ]),
}
