"""Example cases of the reductions, argmax/argmin and dot_general."""

from __future__ import annotations

import numpy as np
from stablejit.compiler import dtypes as dt

from tests.support.dtype_groups import DTYPES, LOGICAL, REAL
from tests.support.prim_table.spec import (
    PrimSpec,
    values,
)


def _reduce_ref(np_fn, bool_fn):
    def f(x, *, axes):
        if x.dtype == np.bool_:
            return bool_fn(x, axis=tuple(axes))
        return np.asarray(np_fn(x, axis=tuple(axes)), dtype=x.dtype)
    return f


def _bitwise_reduce(ufunc, bool_fn):
    def f(x, *, axes):
        if x.dtype == np.bool_:
            return bool_fn(x, axis=tuple(axes))
        out = x
        for a in sorted(axes, reverse=True):
            out = ufunc.reduce(out, axis=a)
        return np.asarray(out, dtype=x.dtype)
    return f


def _dot_expected(x, y, *, contracting, batch, preferred_element_type=None):
    out = np.matmul(x, y)  # the table uses the batched-matmul layout
    return out.astype((preferred_element_type or dt.dtype(x.dtype)).np)


def _dot_make(d, rng):
    x = values(d, rng, (2, 3, 4), low=-2 if d.kind in "iu" else None, high=3)
    y = values(d, rng, (2, 4, 5), low=-2 if d.kind in "iu" else None, high=3)
    return [x, y], {"contracting": ((2,), (1,)), "batch": ((0,), (0,))}


TABLE = {
    "reduce_sum": PrimSpec(DTYPES, lambda d, rng: (
        [values(d, rng, (3, 4, 5), positive=True, high=3)], {"axes": (0, 2)}),
        _reduce_ref(np.sum, np.any)),
    "reduce_prod": PrimSpec(DTYPES, lambda d, rng: (
        [values(d, rng, (3, 4, 2), low=-2 if d.kind == "i" else 0.8, high=3 if d.kind in "iu"
                else 1.25)], {"axes": (0, 2)}), _reduce_ref(np.prod, np.all)),
    "reduce_max": PrimSpec(REAL, lambda d, rng: ([values(d, rng, (3, 4, 5))],
                                                 {"axes": (1,)}),
                           _reduce_ref(np.max, np.any)),
    "reduce_min": PrimSpec(REAL, lambda d, rng: ([values(d, rng, (3, 4, 5))],
                                                 {"axes": (0, 1, 2)}),
                           _reduce_ref(np.min, np.all)),
    "reduce_and": PrimSpec(LOGICAL, lambda d, rng: ([values(d, rng, (3, 4), high=16)],
                                                    {"axes": (0,)}),
                           _bitwise_reduce(np.bitwise_and, np.all)),
    "reduce_or": PrimSpec(LOGICAL, lambda d, rng: ([values(d, rng, (3, 4), high=16)],
                                                   {"axes": (1,)}),
                          _bitwise_reduce(np.bitwise_or, np.any)),
    "argmax": PrimSpec(REAL, lambda d, rng: ([values(d, rng, (3, 5))],
                                             {"axis": 1, "index_dtype": dt.int32}),
                       lambda x, *, axis, index_dtype: np.argmax(x, axis).astype(np.int32)),
    "argmin": PrimSpec(REAL, lambda d, rng: ([values(d, rng, (3, 5))],
                                             {"axis": 0, "index_dtype": dt.int64}),
                       lambda x, *, axis, index_dtype: np.argmin(x, axis).astype(np.int64)),
    "dot_general": PrimSpec(DTYPES, _dot_make, _dot_expected, extra=[
        ("i8->i32", [np.arange(-6, 6, dtype=np.int8).reshape(1, 3, 4),
                     np.arange(8, dtype=np.int8).reshape(1, 4, 2)],
         {"contracting": ((2,), (1,)), "batch": ((0,), (0,)),
          "preferred_element_type": dt.int32})]),
}
