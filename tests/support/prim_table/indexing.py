"""Example cases of gather (starts clamped into the operand) and scatter (windows that
leave the operand dropped), against NumPy indexing and Python loops."""

from __future__ import annotations

import numpy as np
from stablejit.compiler import dtypes as dt

from tests.support.dtype_groups import DTYPES, NUMERIC
from tests.support.prim_table.spec import (
    JoinedSpec,
    PrimSpec,
    values,
)

_GATHER_ROWS = {"offset_dims": (2,), "collapsed_slice_dims": (0,), "start_index_map": (0,),
                "index_vector_dim": 2, "slice_sizes": (1, 3)}


def _gather_rows_expected(x, idx, **attrs):  # x[idx], starts clamped into the operand
    return x[np.clip(idx, 0, x.shape[0] - 1)]


def _gather_points_expected(x, idx, **attrs):
    return x[np.clip(idx[:, 0], 0, x.shape[0] - 1), np.clip(idx[:, 1], 0, x.shape[1] - 1)]


def _gather_columns_expected(x, idx, **attrs):
    return x[:, np.clip(idx, 0, x.shape[1] - 1)]


def _gather_windows_expected(x, idx, *, slice_sizes, **attrs):
    k = slice_sizes[0]
    return np.stack([x[s:s + k] for s in np.clip(idx[:, 0], 0, len(x) - k)])


_SCATTER_ROWS = {"update_window_dims": (1,), "inserted_window_dims": (0,),
                 "scatter_dims_to_operand_dims": (0,), "index_vector_dim": 1}
_COMBINE = {"set": lambda old, new: new, "add": np.add, "mul": np.multiply,
            "min": np.minimum, "max": np.maximum}


def _scatter_rows_case(label, d, rows, kind, seed=0):
    rng = np.random.default_rng(seed)
    x, upd = values(d, rng, (5, 3)), values(d, rng, (len(rows), 3))
    return label, [x, np.asarray(rows, np.int32)[:, None], upd], {**_SCATTER_ROWS,
                                                                  "kind": kind}


def _scatter_rows_expected(x, idx, upd, *, kind, **attrs):
    out = x.copy()
    for r, u in zip(idx[:, 0], upd, strict=True):
        if 0 <= r < x.shape[0]:  # a window that leaves the operand is dropped
            out[r] = _COMBINE[kind](out[r], u)
    return out


def _scatter_points_expected(x, idx, upd, *, kind, **attrs):
    out = x.copy()
    for (i, j), u in zip(idx, upd, strict=True):
        if 0 <= i < x.shape[0] and 0 <= j < x.shape[1]:
            out[i, j] = _COMBINE[kind](out[i, j], u)
    return out


TABLE = {
    "gather": JoinedSpec(
        rows=PrimSpec(DTYPES, lambda d, rng: (
            [values(d, rng, (5, 3)), np.array([[0, 4], [2, 7]], np.int32)], _GATHER_ROWS),
            _gather_rows_expected, upcast=False),
        points=PrimSpec((dt.float32,), lambda d, rng: (
            [values(d, rng, (4, 5)), np.array([[1, 2], [3, 0], [-1, 9]], np.int64)],
            {"offset_dims": (), "collapsed_slice_dims": (0, 1), "start_index_map": (0, 1),
             "index_vector_dim": 1, "slice_sizes": (1, 1)}), _gather_points_expected),
        columns=PrimSpec((dt.int32,), lambda d, rng: (
            [values(d, rng, (4, 5)), np.array([3, 0, 4, 6], np.int32)],
            {"offset_dims": (0,), "collapsed_slice_dims": (1,), "start_index_map": (1,),
             "index_vector_dim": 1, "slice_sizes": (4, 1)}), _gather_columns_expected),
        windows=PrimSpec((dt.float64,), lambda d, rng: (
            [values(d, rng, (6,)), np.array([[4], [-3], [1]], np.int32)],
            {"offset_dims": (1,), "collapsed_slice_dims": (), "start_index_map": (0,),
             "index_vector_dim": 1, "slice_sizes": (3,)}), _gather_windows_expected)),
    "scatter": JoinedSpec(
        rows=PrimSpec(NUMERIC, lambda d, rng: _scatter_rows_case("", d, [1, 3, 1], "add")[1:],
                      _scatter_rows_expected, extra=[
            _scatter_rows_case("bool-set", dt.bool_, [4, 0], "set"),
            _scatter_rows_case("c128-set", dt.complex128, [2, 0, 4], "set"),
            _scatter_rows_case("f32-mul", dt.float32, [0, 0, 3], "mul"),
            _scatter_rows_case("i16-min", dt.int16, [2, 4, 2], "min"),
            _scatter_rows_case("f64-max", dt.float64, [3, 1, 3], "max"),
            _scatter_rows_case("f32-dropped", dt.float32, [0, 7, -1, 2], "add")]),
        points=PrimSpec((dt.int32,), lambda d, rng: (
            [values(d, rng, (3, 4)), np.array([[0, 1], [2, 3], [0, 1], [3, 0]], np.int32),
             values(d, rng, (4,))],
            {"update_window_dims": (), "inserted_window_dims": (0, 1),
             "scatter_dims_to_operand_dims": (0, 1), "index_vector_dim": 1, "kind": "add"}),
            _scatter_points_expected)),
}
