"""Example cases of fft: all four FFT types, 1-D to 3-D transforms."""

from __future__ import annotations

import numpy as np
from stablejit.compiler import dtypes as dt

from tests.support.prim_table.spec import (
    PrimSpec,
    values,
)


def _fft_expected(x, *, fft_type, fft_length):
    axes = tuple(range(x.ndim - len(fft_length), x.ndim))
    if fft_type == "FFT":
        return np.fft.fftn(x, axes=axes)
    if fft_type == "IFFT":
        return np.fft.ifftn(x, axes=axes)
    if fft_type == "RFFT":
        return np.fft.rfftn(x, axes=axes)
    return np.fft.irfftn(x, s=fft_length, axes=axes)


def _fft_case(label, dtype, shape, fft_type, fft_length):
    x = values(dtype, np.random.default_rng(len(label)), shape)
    return (label, [x], {"fft_type": fft_type, "fft_length": fft_length})


TABLE = {
    "fft": PrimSpec((), None, _fft_expected, extra=[
        _fft_case("c64-fft", dt.complex64, (3, 8), "FFT", (8,)),
        _fft_case("c128-fft2", dt.complex128, (2, 4, 6), "FFT", (4, 6)),
        _fft_case("c64-ifft", dt.complex64, (5, 6), "IFFT", (5, 6)),
        _fft_case("f32-rfft", dt.float32, (2, 10), "RFFT", (10,)),
        _fft_case("f64-rfft3", dt.float64, (2, 3, 4), "RFFT", (2, 3, 4)),
        _fft_case("c64-irfft", dt.complex64, (2, 6), "IRFFT", (10,)),
        _fft_case("c128-irfft-odd", dt.complex128, (3, 4), "IRFFT", (3, 7))]),
}
