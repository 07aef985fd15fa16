"""stablejit.numpy.fft three ways against NumPy (f32/c64 and f64/c128), and gradients
against jax.grad."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

from tests.support.compare import assert_close
from tests.support.runners import run_three_ways


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-4), (np.float64, 1e-11)])
def test_transforms_match_numpy(dtype, tol):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 6, 5)).astype(dtype)
    z = (x + 1j * rng.standard_normal(x.shape)).astype(np.result_type(dtype, np.complex64))
    F = snp.fft

    def f(x, z):
        return (F.fft(z), F.ifft(z, n=7), F.rfft(x), F.irfft(F.rfft(x), n=5), F.fft2(z),
                F.ifftn(z, axes=(0, 2)), F.rfftn(x, s=(4, 6), axes=(1, 2)), F.irfftn(z[..., :3]),
                F.fft(x, norm="ortho"), F.fftshift(x, axes=1), F.ifftshift(x))

    N = np.fft
    expected = (N.fft(z), N.ifft(z, n=7), N.rfft(x), N.irfft(N.rfft(x), n=5), N.fft2(z),
                N.ifftn(z, axes=(0, 2)), N.rfftn(x, s=(4, 6), axes=(1, 2)), N.irfftn(z[..., :3]),
                N.fft(x, norm="ortho"), N.fftshift(x, axes=1), N.ifftshift(x))
    for path, outs in run_three_ways(f, x, z).items():
        for i, (got, want) in enumerate(zip(outs, expected, strict=True)):
            assert_close(got, want, atol=tol * 10, rtol=tol, check_dtype=False,
                         msg=f"{path} #{i}")
            assert np.asarray(got).dtype.itemsize * 8 in (32, 64, 128)


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_hermitian_transforms_match_numpy(norm):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    z = (x + 1j * rng.standard_normal(x.shape)).astype(np.complex64)
    F, N = snp.fft, np.fft

    def f(x, z):
        return F.hfft(z, norm=norm), F.hfft(z, n=7, axis=0, norm=norm), F.ihfft(x, norm=norm), \
            F.ihfft(x, n=5, axis=0, norm=norm)
    expected = (N.hfft(z, norm=norm), N.hfft(z, n=7, axis=0, norm=norm),
                N.ihfft(x, norm=norm), N.ihfft(x, n=5, axis=0, norm=norm))
    for path, outs in run_three_ways(f, x, z).items():
        for i, (got, want) in enumerate(zip(outs, expected, strict=True)):
            assert_close(got, want, atol=1e-4, rtol=1e-4, check_dtype=False,
                         msg=f"{path} #{i}")
            assert np.asarray(got).dtype == (np.float32 if i < 2 else np.complex64)


def test_freqs_and_errors():
    assert_close(snp.fft.fftfreq(8, 0.5), np.fft.fftfreq(8, 0.5), check_dtype=False)
    assert_close(snp.fft.rfftfreq(9), np.fft.rfftfreq(9), check_dtype=False)
    with pytest.raises(TypeError, match="real input"):
        snp.fft.rfft(np.ones(4, np.complex64))
    with pytest.raises(stablejit.ShapeError, match="fft_length"):
        from stablejit.compiler.registry import ALL
        from stablejit.dispatch import bind1

        bind1(ALL["fft"], snp.asarray(np.ones((4,), np.complex64)), fft_type="FFT",
              fft_length=(5,))


def test_gradients_match_jax():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    cases = [
        (lambda x: snp.sum(snp.abs(snp.fft.fft(x)) ** 2),
         lambda x: jnp.sum(jnp.abs(jnp.fft.fft(x)) ** 2)),
        (lambda x: snp.sum(snp.real(snp.fft.rfftn(x)) ** 3),
         lambda x: jnp.sum(jnp.real(jnp.fft.rfftn(x)) ** 3)),
        (lambda x: snp.sum(snp.fft.irfft(snp.fft.rfft(x) * 2.0, n=6) ** 2 * x),
         lambda x: jnp.sum(jnp.fft.irfft(jnp.fft.rfft(x) * 2.0, n=6) ** 2 * x)),
        (lambda x: snp.sum(snp.imag(snp.fft.ifft(x * (1 + 2j))) ** 2),
         lambda x: jnp.sum(jnp.imag(jnp.fft.ifft(x * (1 + 2j))) ** 2)),
    ]
    for f, jf in cases:
        assert_close(stablejit.grad(f)(x), jax.grad(jf)(x), atol=1e-3, rtol=1e-4)


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
@pytest.mark.parametrize("n", [None, 4, 9])
def test_hfft_ihfft_match_numpy(norm, n):
    # array API 2023.12: hfft/ihfft were missing; their norm runs the other way from irfft
    rng = np.random.default_rng(2)
    z = (rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))).astype(np.complex64)
    x = rng.standard_normal((4, 6)).astype(np.float32)

    def f(z, x):
        return snp.fft.hfft(z, n=n, norm=norm), snp.fft.ihfft(x, n=n, axis=0, norm=norm)

    want = (np.fft.hfft(z, n=n, norm=norm).astype(np.float32),
            np.fft.ihfft(x, n=n, axis=0, norm=norm).astype(np.complex64))
    for path, outs in run_three_ways(f, z, x).items():
        for got, expected in zip(outs, want, strict=True):
            assert_close(got, expected, atol=1e-5, rtol=1e-5, msg=path)
