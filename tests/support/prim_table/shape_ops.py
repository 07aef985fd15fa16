"""Example cases of the shape primitives: constants, iota, broadcasting, reshaping, slicing,
concatenation, padding and reversal."""

from __future__ import annotations

import numpy as np
from stablejit.compiler import dtypes as dt
from stablejit.compiler.ir import Literal

from tests.support.dtype_groups import DTYPES, NUMERIC
from tests.support.prim_table.spec import (
    PrimSpec,
    scalar,
    values,
)


def _pad_expected(x, value, *, low, high, interior):
    shape = [lo + hi + n + max(n - 1, 0) * it for n, lo, hi, it in
             zip(x.shape, low, high, interior, strict=True)]
    out = np.full(shape, value, dtype=x.dtype)
    for idx in np.ndindex(*x.shape):
        pos = tuple(lo + i * (it + 1) for i, lo, it in zip(idx, low, interior, strict=True))
        if all(0 <= p < s for p, s in zip(pos, shape, strict=True)):
            out[pos] = x[idx]
    return out


def _ds_expected(x, *starts, sizes):
    # StableHLO clamps each start into [0, n - size]
    st = [int(np.clip(s, 0, n - k)) for s, n, k in zip(starts, x.shape, sizes, strict=True)]
    return x[tuple(slice(s, s + k) for s, k in zip(st, sizes, strict=True))]


def _dus_expected(x, u, i, j):
    out = x.copy()
    out[i:i + u.shape[0], j:j + u.shape[1]] = u
    return out


TABLE = {
    "constant": PrimSpec(DTYPES, lambda d, rng: (
        [], {"value": Literal(values(d, rng))}), lambda *, value: value.array, upcast=False,
        extra=[("splat", [], {"value": Literal(np.full((2, 2), 3.5, np.float32))}),
               ("scalar", [], {"value": Literal(np.asarray(7, np.int32))})]),
    "iota": PrimSpec(NUMERIC, lambda d, rng: ([], {"shape": (3, 4), "dtype": d,
                                                   "dimension": 1}),
                     lambda *, shape, dtype, dimension: np.broadcast_to(
                         np.arange(shape[dimension]).astype(dtype.np), shape)),
    "broadcast_in_dim": PrimSpec(DTYPES, lambda d, rng: (
        [values(d, rng, (3, 1))], {"shape": (2, 3, 4), "broadcast_dimensions": (1, 2)}),
        lambda x, *, shape, broadcast_dimensions: np.broadcast_to(x[None], shape),
        upcast=False),
    "reshape": PrimSpec(DTYPES, lambda d, rng: ([values(d, rng, (2, 6))], {"shape": (3, 4)}),
                        lambda x, *, shape: x.reshape(shape), upcast=False),
    "transpose": PrimSpec(DTYPES, lambda d, rng: (
        [values(d, rng, (2, 3, 4))], {"permutation": (2, 0, 1)}),
        lambda x, *, permutation: x.transpose(permutation), upcast=False),
    "slice": PrimSpec(DTYPES, lambda d, rng: (
        [values(d, rng, (5, 6))], {"start": (1, 0), "limit": (4, 6), "strides": (2, 3)}),
        lambda x, **a: x[1:4:2, 0:6:3], upcast=False),
    "dynamic_slice": PrimSpec(DTYPES, lambda d, rng: (
        [values(d, rng, (5, 6)), scalar(dt.int32, 2), scalar(dt.int32, 4)],
        {"sizes": (2, 3)}), _ds_expected, upcast=False,
        extra=[("negative-start", [np.arange(12.0).reshape(3, 4), scalar(dt.int64, -3),
                                   scalar(dt.int64, 1)], {"sizes": (2, 2)})]),
    "dynamic_update_slice": PrimSpec(DTYPES, lambda d, rng: (
        [values(d, rng, (4, 5)), values(d, rng, (2, 2)), scalar(dt.int32, 3),
         scalar(dt.int32, -1)], {}), lambda x, u, i, j: _dus_expected(x, u, 2, 0),
        upcast=False),
    "concatenate": PrimSpec(DTYPES, lambda d, rng: (
        [values(d, rng, (2, 3)), values(d, rng, (4, 3)), values(d, rng, (1, 3))],
        {"dimension": 0}), lambda *xs, dimension: np.concatenate(xs, dimension),
        upcast=False),
    "pad": PrimSpec(DTYPES, lambda d, rng: (
        [values(d, rng, (2, 3)), scalar(d, 1)],
        {"low": (1, -1), "high": (0, 2), "interior": (1, 0)}), _pad_expected, upcast=False),
    "reverse": PrimSpec(DTYPES, lambda d, rng: ([values(d, rng, (2, 3, 4))], {"axes": (0, 2)}),
                        lambda x, *, axes: x[::-1, :, ::-1], upcast=False),
}
