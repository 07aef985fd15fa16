"""Float division as it is lowered for cuda, run on the host.

XLA's NVPTX backend divides float32 with div.full.f32, up to 1 ulp from the IEEE
quotient, so on cuda elementwise.divide divides real floats of 32 bits or fewer in
float64 and rounds there (compiler/primitives/elementwise.py, _emit_divide). The cuda program's
text is checked here for that form, then compiled for the host CPU and run: its results
must be NumPy's bit for bit, special values included (the float64 quotient rounded to
float32 or a half float is the correctly rounded one)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

from tests.host.test_convolution_gpu_lowering import run_text

NARROW = (np.float32, np.float16, ml_dtypes.bfloat16)
# (no subnormals: XLA flushes them to zero on the host, as on the GPU)
SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.1, 3.0, 7.5, 1e30, -1e30, 3e-9, np.inf, -np.inf, np.nan]


def _operands(dtype, n=4000, seed=0):
    rng = np.random.default_rng(seed)
    info = ml_dtypes.finfo(dtype)
    specials = np.array([v for v in SPECIALS if v == 0 or not np.isfinite(v)
                         or float(info.tiny) <= abs(v) <= float(info.max)], np.float64)
    a, b = (s.ravel() for s in np.meshgrid(specials, specials, indexing="ij"))
    # random significands over half the exponent range, so that quotients stay normal
    # (the ones that div.full rounds the wrong way are common: about one in four)
    exps = rng.integers(info.minexp // 2, info.maxexp // 2, (2, n))
    x, y = (rng.uniform(1, 2, (2, n)) * np.exp2(exps.astype(np.float64))
            * rng.choice([-1.0, 1.0], (2, n)))
    same = x[: n // 4]  # x / x is 1 exactly
    # quotients across the bottom of float16's normal range, into its subnormals (float32
    # normals, so not flushed): the lowering rounds those to multiples of 2 ** -24
    low_x = rng.uniform(1, 2, n // 4) * 2.0 ** -13
    low_y = rng.uniform(2, 64, n // 4)
    with np.errstate(over="ignore"):
        return (np.concatenate([a, x, same, low_x]).astype(dtype),
                np.concatenate([b, y, same, low_y]).astype(dtype))


def _bits(a):
    a = np.asarray(a)
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


@pytest.mark.parametrize("dtype", NARROW, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("spelling", ["divide", "operator", "lax.div"])
def test_cuda_divides_narrow_floats_as_ieee(dtype, spelling):
    f = {"divide": snp.divide, "operator": lambda a, b: a / b,
         "lax.div": stablejit.lax.div}[spelling]
    x, y = _operands(dtype)
    text = stablejit.jit(f).lower(x, y, platform="cuda").as_text()
    # (the rounding written out in float64: a plain convert of the float64 quotient is
    # folded by LLVM back into the float32 division)
    assert "xf64>" in text and text.count("stablehlo.convert") == 3, text
    assert "stablehlo.reduce_precision" in text and "round_nearest_even" in text, text
    with np.errstate(all="ignore"):
        want = np.divide(x, y)  # (IEEE's quotient; half floats' through float32, as exact)
    wide = want.astype(np.float32)
    tiny = float(np.finfo(np.float32).tiny)  # (float16 subnormals are float32 normals)
    want = np.where((wide != 0) & (np.abs(wide) < tiny), wide * 0, want).astype(dtype)  # (FTZ)
    got = run_text(text, (x, y), want)
    nan = np.isnan(want.astype(np.float32))
    assert np.array_equal(np.isnan(got.astype(np.float32)), nan)
    np.testing.assert_array_equal(_bits(got)[~nan], _bits(want)[~nan])


@pytest.mark.parametrize("dtype", [np.float64, np.complex64, np.int32])
def test_cuda_divides_other_types_with_one_op(dtype):
    x = np.arange(1, 7).astype(dtype)
    with stablejit.experimental.enable_x64():
        text = stablejit.jit(snp.divide if np.dtype(dtype).kind != "i" else
                             stablejit.lax.div).lower(x, x, platform="cuda").as_text()
    assert "stablehlo.convert" not in text and "stablehlo.divide" in text


@pytest.mark.parametrize("platform", ["host", "rocm", "tpu"])
def test_other_platforms_keep_one_divide(platform):
    x = np.arange(1, 7, dtype=np.float32)
    text = stablejit.jit(snp.divide).lower(x, x, platform=platform).as_text()
    assert "stablehlo.convert" not in text and "f64" not in text
