"""Comparing results with expectations at a tolerance chosen by dtype.

    tolerance(dtype) -> (rtol, atol)
        per-dtype tolerance for values computed in that dtype (exact for int/bool).
    assert_close(actual, expected, dtype=None, *, rtol=None, atol=None, msg="",
                 check_dtype=True, signed_zeros=False)
        compare arrays (NaNs must match, bf16/f16 compared in float32).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from stablejit.compiler import dtypes as dt

_TOL = {
    "float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (2e-5, 1e-6),
    "float64": (1e-12, 1e-14), "complex64": (2e-5, 1e-6), "complex128": (1e-12, 1e-14),
}


def tolerance(dtype) -> tuple[float, float]:
    """(rtol, atol) for results computed in `dtype`; (0, 0) for integers and bool."""
    return _TOL.get(dt.dtype(dtype).name, (0.0, 0.0))


def widen(a: np.ndarray) -> np.ndarray:
    """float16 and bfloat16 as float32 (NumPy computes and compares them poorly)."""
    if a.dtype in (np.float16, ml_dtypes.bfloat16):
        return a.astype(np.float32)
    return a


def assert_close(actual, expected, dtype=None, *, rtol=None, atol=None, msg: str = "",
                 check_dtype: bool = True, signed_zeros: bool = False) -> None:
    """Compare `actual` with `expected`: same shape (and dtype unless check_dtype=False),
    NaNs at the same places, values within the tolerance of `dtype` (default: the
    coarser of the two dtypes)."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"{msg}: shape {actual.shape} != {expected.shape}"
    if check_dtype:
        assert actual.dtype == expected.dtype, f"{msg}: dtype {actual.dtype} != {expected.dtype}"
    if dtype is None:
        cands = [dt.dtype(actual.dtype), dt.dtype(expected.dtype)]
        dtype = max(cands, key=lambda d: tolerance(d)[0])
    r, a = tolerance(dtype)
    rtol = r if rtol is None else rtol
    atol = a if atol is None else atol
    x, y = widen(actual), widen(expected)
    if x.dtype.kind in "biu" and y.dtype.kind in "biu" and rtol == 0 and atol == 0:
        np.testing.assert_array_equal(x, y, err_msg=msg)
    else:
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, equal_nan=True, err_msg=msg)
    if signed_zeros and x.dtype.kind == "f":
        zeros = (y == 0)
        np.testing.assert_array_equal(np.signbit(x[zeros]), np.signbit(y[zeros]),
                                      err_msg=f"{msg}: signs of zeros differ")
