"""Example cases of convolution (grouped, dilated, strided, NHWC layouts) against a loop
over kernel taps."""

from __future__ import annotations

import numpy as np
from stablejit.compiler import dtypes as dt

from tests.support.dtype_groups import NUMERIC
from tests.support.prim_table.spec import (
    PrimSpec,
    small_ints,
)


def _conv_attrs(**kw):
    a = {"window_strides": (1, 1), "padding": ((0, 0), (0, 0)), "lhs_dilation": (1, 1),
         "rhs_dilation": (1, 1), "feature_group_count": 1, "batch_group_count": 1,
         "dimension_numbers": ((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))}
    a.update(kw)
    return a


def _conv_expected(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   feature_group_count, batch_group_count, dimension_numbers):
    """A loop over kernel taps of NCHW x OIHW (batch_group_count 1, non-negative padding)."""
    assert batch_group_count == 1
    ls, rs, os = dimension_numbers
    x, w = np.transpose(lhs, ls), np.transpose(rhs, rs)
    n, c, h, wd = x.shape
    o, ci, kh, kw = w.shape
    xd = np.zeros((n, c, (h - 1) * lhs_dilation[0] + 1, (wd - 1) * lhs_dilation[1] + 1),
                  x.dtype)
    xd[:, :, ::lhs_dilation[0], ::lhs_dilation[1]] = x
    xp = np.pad(xd, ((0, 0), (0, 0), *padding))
    (s0, s1), (d0, d1) = window_strides, rhs_dilation
    oh = (xp.shape[2] - (kh - 1) * d0 - 1) // s0 + 1
    ow = (xp.shape[3] - (kw - 1) * d1 - 1) // s1 + 1
    g = feature_group_count
    out = np.zeros((n, o, oh, ow), np.result_type(x.dtype, np.float64 if x.dtype.kind == "f"
                                                   else x.dtype))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * d0:i * d0 + s0 * (oh - 1) + 1:s0,
                       j * d1:j * d1 + s1 * (ow - 1) + 1:s1]
            for k in range(g):
                pg = patch[:, k * ci:(k + 1) * ci]
                wg = w[k * (o // g):(k + 1) * (o // g), :, i, j]
                out[:, k * (o // g):(k + 1) * (o // g)] += np.einsum("nchw,oc->nohw", pg, wg)
    return np.transpose(out, np.argsort(os)).astype(lhs.dtype)


def _conv_make(d, rng):
    return [small_ints(d, rng, (2, 2, 5, 4), -2, 3), small_ints(d, rng, (3, 2, 2, 3), -2, 3)], \
        _conv_attrs(window_strides=(2, 1), padding=((1, 0), (1, 1)))


TABLE = {
    "convolution": PrimSpec(NUMERIC, _conv_make, _conv_expected, extra=[
        ("f32-nhwc-groups-dilated", [
            small_ints(dt.float32, np.random.default_rng(1), (2, 5, 6, 4)),
            small_ints(dt.float32, np.random.default_rng(2), (2, 3, 2, 4))],
         _conv_attrs(window_strides=(1, 2), padding=((1, 1), (0, 2)), lhs_dilation=(1, 2),
                     rhs_dilation=(2, 1), feature_group_count=2,
                     dimension_numbers=((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))))]),
}
