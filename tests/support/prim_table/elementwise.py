"""Example cases of the elementwise primitives: unary and binary arithmetic, comparisons,
select, clamp and conversions."""

from __future__ import annotations

import math

import numpy as np
from stablejit.compiler import dtypes as dt

from tests.support.dtype_groups import DTYPES, FLOAT, INEXACT, INT, LOGICAL, NUMERIC, REAL, SINT
from tests.support.prim_table.spec import (
    PrimSpec,
    scalar,
    values,
)


def _un(ref, kinds, **kw):
    return PrimSpec(kinds, lambda d, rng: ([values(d, rng, **kw)], {}), ref)


def _bin(ref, kinds, rhs=None, **kw):
    def make(d, rng):
        x = values(d, rng, **kw)
        y = rhs(d, rng) if rhs else values(d, rng, **kw)
        return [x, y], {}
    return PrimSpec(kinds, make, ref)


def _c_div(x, y):
    if x.dtype.kind in "iu":
        return np.trunc(x.astype(np.float64) / y.astype(np.float64)).astype(x.dtype)
    return x / y


def _nonzero(d, rng):
    v = values(d, rng, positive=True)
    if d.kind == "i":
        v = v * np.where(rng.integers(0, 2, v.shape) == 1, 1, -1).astype(d.np)
    return v


def _shift_amount(d, rng):
    return rng.integers(0, d.bits, (2, 3)).astype(d.np)


def _shift_operand(d, rng):
    info = np.iinfo(d.np)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), (2, 3)).astype(d.np)


def _convert_cases():
    out = []
    rng = np.random.default_rng(0)
    targets = (dt.bool_, dt.int8, dt.uint32, dt.int64, dt.float16, dt.bfloat16, dt.float32,
               dt.float64, dt.complex64)
    for src in DTYPES:
        for dst in targets:
            if src.is_complex and not dst.is_complex:
                continue
            x = values(src, rng, low=0 if src.kind in "fc" else None, high=100)
            out.append((f"{src.short}->{dst.short}", [x], {"dtype": dst}))
    return out


def _convert_expected(x, *, dtype):
    if dtype is dt.bool_:
        return x != 0
    if dtype.is_integer and x.dtype.kind == "f":
        return np.trunc(x).astype(dtype.np)
    return x.astype(dtype.np)


_BITCAST_PAIRS = [(dt.int32, dt.float32), (dt.float32, dt.uint32), (dt.float64, dt.int64),
                  (dt.uint64, dt.float64), (dt.int8, dt.uint8), (dt.float16, dt.int16),
                  (dt.bfloat16, dt.uint16), (dt.int16, dt.float16),
                  # to a narrower type: a last dimension of the ratio; to a wider, without it
                  (dt.float32, dt.uint8), (dt.float64, dt.int16), (dt.int64, dt.float32)]
_BITCAST_JOINS = [(np.arange(8, dtype=np.uint8).reshape(2, 4) * 31, dt.float32),
                  (np.array([[0, 16368], [-1, 32752]], np.int16), dt.int32),
                  (np.array([1.5, -2.0, 0.0, 3.0], np.float16).reshape(1, 4), dt.float64)]


def _bitcast_expected(x, *, dtype):
    old, new = x.dtype.itemsize, dtype.np.itemsize
    return np.ascontiguousarray(x).view(dtype.np).reshape(
        x.shape + (old // new,) if old > new else x.shape[:-1] if old < new else x.shape)


TABLE = {
    # ---- elementwise unary
    "neg": _un(np.negative, NUMERIC),
    "abs": _un(np.abs, SINT + INEXACT),
    "sign": _un(np.sign, SINT + INEXACT),
    "exp": _un(np.exp, INEXACT),
    "expm1": _un(np.expm1, INEXACT),
    "log": _un(np.log, INEXACT, positive=True),
    "log1p": _un(np.log1p, INEXACT, positive=True),
    "sqrt": _un(np.sqrt, INEXACT, positive=True),
    "rsqrt": _un(lambda x: 1 / np.sqrt(x), INEXACT, positive=True),
    "cbrt": _un(np.cbrt, FLOAT),
    "sin": _un(np.sin, INEXACT),
    "cos": _un(np.cos, INEXACT),
    "tan": _un(np.tan, INEXACT, low=-1.2, high=1.2),
    "tanh": _un(np.tanh, INEXACT),
    "logistic": _un(lambda x: 1 / (1 + np.exp(-x)), INEXACT),
    "erf": _un(np.vectorize(math.erf), FLOAT),
    "erfc": _un(np.vectorize(math.erfc), FLOAT),
    "asin": _un(np.arcsin, INEXACT, low=-0.9, high=0.9),
    "acos": _un(np.arccos, INEXACT, low=-0.9, high=0.9),
    "atan": _un(np.arctan, INEXACT),
    "asinh": _un(np.arcsinh, INEXACT),
    "acosh": _un(np.arccosh, INEXACT, low=1.1, high=3.0),
    "atanh": _un(np.arctanh, INEXACT, low=-0.9, high=0.9),
    "sinh": _un(np.sinh, INEXACT),
    "cosh": _un(np.cosh, INEXACT),
    "floor": _un(np.floor, FLOAT),
    "ceil": _un(np.ceil, FLOAT),
    "round": PrimSpec(FLOAT, lambda d, rng: ([np.array(
        [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49, -3.7], d.np)], {}), np.round),
    "is_finite": PrimSpec(FLOAT, lambda d, rng: ([np.array(
        [0.0, -1.0, np.inf, -np.inf, np.nan, 3.0], d.np)], {}), np.isfinite),
    "not": _un(lambda x: np.logical_not(x) if x.dtype == np.bool_ else np.invert(x),
               LOGICAL),
    "real": _un(np.real, INEXACT),
    "imag": _un(lambda x: np.imag(x) if np.iscomplexobj(x) else np.zeros_like(x), INEXACT),
    "conj": _un(np.conj, NUMERIC),
    # ---- elementwise binary
    "add": _bin(lambda x, y: np.logical_or(x, y) if x.dtype == np.bool_ else x + y, DTYPES),
    "subtract": _bin(np.subtract, NUMERIC),
    "multiply": _bin(lambda x, y: np.logical_and(x, y) if x.dtype == np.bool_ else x * y,
                     DTYPES),
    "divide": _bin(_c_div, NUMERIC, rhs=_nonzero),
    "remainder": _bin(np.fmod, INT + FLOAT, rhs=_nonzero),
    "power": PrimSpec(NUMERIC, lambda d, rng: (
        [values(d, rng, positive=True, high=4 if d.kind in "iu" else 2.0),
         values(d, rng, low=0, high=4) if d.kind in "iu" else values(d, rng)], {}),
        np.power),
    "maximum": _bin(np.maximum, REAL),
    "minimum": _bin(np.minimum, REAL),
    "atan2": _bin(np.arctan2, FLOAT),
    "and": _bin(np.bitwise_and, LOGICAL),
    "or": _bin(np.bitwise_or, LOGICAL),
    "xor": _bin(np.bitwise_xor, LOGICAL),
    "shift_left": PrimSpec(INT, lambda d, rng: ([_shift_operand(d, rng),
                                                 _shift_amount(d, rng)], {}), np.left_shift),
    "shift_right": PrimSpec(INT, lambda d, rng: ([_shift_operand(d, rng),
                                                  _shift_amount(d, rng)], {}), np.right_shift),
    "nextafter": PrimSpec(FLOAT, lambda d, rng: ([values(d, rng), values(d, rng)], {}),
                          np.nextafter, upcast=False),
    # ---- comparisons, select, clamp
    "eq": _bin(np.equal, DTYPES, low=-1, high=2),
    "ne": _bin(np.not_equal, DTYPES, low=-1, high=2),
    "lt": _bin(np.less, REAL, low=-1, high=2),
    "le": _bin(np.less_equal, REAL, low=-1, high=2),
    "gt": _bin(np.greater, REAL, low=-1, high=2),
    "ge": _bin(np.greater_equal, REAL, low=-1, high=2),
    "select": PrimSpec(DTYPES, lambda d, rng: (
        [rng.integers(0, 2, (2, 3)).astype(bool), values(d, rng), values(d, rng)], {}),
        np.where, extra=[("scalar-pred", [np.array(True), np.arange(3.0), -np.arange(3.0)],
                          {})]),
    "clamp": PrimSpec(REAL, lambda d, rng: (
        [scalar(d, 0 if d.kind == "b" else 1), values(d, rng, high=8),
         scalar(d, 1 if d.kind == "b" else 4)], {}),
        lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi),
        extra=[("tensor-bounds", [np.zeros(4, np.float32), np.array([-1, .5, 2, np.nan],
                                                                   np.float32),
                                  np.ones(4, np.float32)], {})]),
    # ---- conversions
    "convert": PrimSpec((), None, _convert_expected, upcast=False, extra=_convert_cases()),
    "bitcast_convert": PrimSpec((), None, _bitcast_expected, upcast=False, extra=[
        (f"{a.short}->{b.short}", [values(a, np.random.default_rng(1))], {"dtype": b})
        for a, b in _BITCAST_PAIRS] + [(f"join-{x.dtype}->{b.short}", [x], {"dtype": b})
                                       for x, b in _BITCAST_JOINS]),
    "complex": PrimSpec((dt.float32, dt.float64), lambda d, rng: (
        [values(d, rng), values(d, rng)], {}),
        lambda re, im: re + 1j * im if re.dtype == np.float64 else
        (re + 1j * im).astype(np.complex64)),
}
