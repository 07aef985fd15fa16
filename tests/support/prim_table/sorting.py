"""Example cases of sort, top_k and the cumulative reductions. Sort has plain single-operand
cases and keyed ones (payload operands, several keys, NaN and -0.0 ordering)."""

from __future__ import annotations

import numpy as np

from tests.support.dtype_groups import FLOAT, INT, NUMERIC
from tests.support.prim_table.spec import (
    JoinedSpec,
    PrimSpec,
    values,
)


def _sort_keyed_expected(*xs, dimension, num_keys, descending):
    """1-D: a stable Python sort on the key tuples, NaN after every number, -0.0 == 0.0."""
    def key(i):
        return [(bool(np.isnan(x[i])), 0.0 if np.isnan(x[i]) else float(x[i]))
                for x in xs[:num_keys]]
    order = sorted(range(len(xs[0])), key=key, reverse=descending)  # reverse keeps ties
    return tuple(x[order] for x in xs)


_SORT_KEYS = np.array([3, 1, np.nan, 1, -0.0, 0.0, -np.inf, np.nan, 1], np.float32)


TABLE = {
    "sort": JoinedSpec(
        values=PrimSpec(INT + FLOAT, lambda d, rng: ([values(d, rng, (3, 5))],
                                                     {"dimension": 1}),
                        lambda x, *, dimension: (np.sort(x, dimension),)),
        keyed=PrimSpec((), None, _sort_keyed_expected, upcast=False, extra=[
            (f"f32-payload-{'desc' if desc else 'asc'}",
             [_SORT_KEYS, np.arange(9, dtype=np.int32)],
             {"dimension": 0, "num_keys": 1, "descending": desc}) for desc in (False, True)] + [
            ("i32-f64-two-keys", [np.array([2, 1, 2, 1, 2, 1], np.int32),
                                  np.array([0.5, 3, -1, 3, 0.5, np.nan]),
                                  np.arange(6, dtype=np.uint8)],
             {"dimension": 0, "num_keys": 2, "descending": False})])),
    "top_k": PrimSpec(INT + FLOAT, lambda d, rng: ([np.arange(10).reshape(2, 5)[:, ::-1]
                                                    .astype(d.np) * (1 if d.kind == "u" else
                                                                     -1)], {"k": 2}),
                      lambda x, *, k: (np.sort(x, -1)[:, ::-1][:, :k],
                                       np.argsort(-x.astype(np.float64), -1,
                                                  kind="stable")[:, :k].astype(np.int32))),
    "cumsum": PrimSpec(NUMERIC, lambda d, rng: ([values(d, rng, (3, 4), positive=True,
                                                       high=3)], {"axis": 1}),
                       lambda x, *, axis: np.cumsum(x, axis).astype(x.dtype)),
    "cumprod": PrimSpec(FLOAT, lambda d, rng: ([values(d, rng, (2, 4), low=0.8, high=1.25)],
                                               {"axis": 0, "reverse": True}),
                        lambda x, *, axis, reverse: np.flip(np.cumprod(np.flip(x, axis), axis),
                                                            axis)),
    "cummax": PrimSpec(INT + FLOAT, lambda d, rng: ([values(d, rng, (3, 4))], {"axis": 1}),
                       lambda x, *, axis: np.maximum.accumulate(x, axis)),
    "cummin": PrimSpec(INT + FLOAT, lambda d, rng: ([values(d, rng, (3, 4))], {"axis": 0}),
                       lambda x, *, axis: np.minimum.accumulate(x, axis)),
}
