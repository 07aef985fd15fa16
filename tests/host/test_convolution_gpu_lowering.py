"""Convolutions as they are lowered for cuda and rocm, run on the host.

XLA's GPU backends compile only floating-point convolutions, so for cuda and rocm
compiler/primitives/_gpu_convolution.py writes complex ones as four real convolutions
and integer ones with no convolution op (slices, products, reductions; a while loop over
the kernel taps past UNROLL_TAPS). That StableHLO uses only ops the host compiles too, so
each case here lowers a program for cuda (and rocm), checks that its text has no complex
or integer `stablehlo.convolution`, compiles the text for the host CPU and compares the
result with the host's own program (one convolution op): bit for bit for integers, with
values over the whole range so that products and sums wrap around, and within rounding
for complex. Oracles besides: jax.lax.conv_general_dilated and the primitive's NumPy
reference (integers), np.convolve / np.correlate (snp.convolve and snp.correlate)."""

from __future__ import annotations

import re

import jax
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from jax import lax
from stablejit import export as E
from stablejit.compiler.primitives import _gpu_convolution
from stablejit.compiler.primitives.convolution import _reference, convolution
from stablejit.compiler.primitives.linalg import UnsupportedPlatformError
from stablejit.dispatch import bind1
from stablejit.runtime import buffers, client
from stablejit.runtime.buffers import to_device
from stablejit.runtime.executable import Executable

from tests.support.jax_equivalents import jax_on_the_host

INTS = ("int8", "int32", "int64", "uint8")
COMPLEX = ("complex64", "complex128")
# (rtol, atol relative to the largest |result|): the four-convolution form rounds
# differently from the host's complex convolution
COMPLEX_TOL = {"complex64": 1e-6, "complex128": 1e-12}

I = (0, 1, 2, 3)  # canonical 2-d dimension numbers: NCHW, OIHW, NCHW
NHWC = ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))  # NHWC, HWIO, NHWC


def _case(label, x, w, strides=None, padding=None, lhs_dil=None, rhs_dil=None, fg=1, bg=1,
          dn=None):
    nsp = len(x) - 2
    ident = tuple(range(len(x)))
    attrs = dict(window_strides=tuple(strides or (1,) * nsp),
                 padding=tuple(padding or ((0, 0),) * nsp),
                 lhs_dilation=tuple(lhs_dil or (1,) * nsp),
                 rhs_dilation=tuple(rhs_dil or (1,) * nsp),
                 feature_group_count=fg, batch_group_count=bg,
                 dimension_numbers=tuple(dn or (ident, ident, ident)))
    return pytest.param(x, w, attrs, id=label)


# (input shape, kernel shape, attributes): shapes in the layout the dimension numbers name
CASES = [
    _case("1d", (2, 3, 10), (4, 3, 3)),
    _case("1d-stride-pad-rhs-dilation", (2, 3, 11), (2, 3, 3), strides=(2,), padding=((2, 1),),
          rhs_dil=(2,)),
    _case("1d-negative-pad-lhs-dilation", (1, 2, 6), (3, 2, 2), padding=((-1, -2),),
          lhs_dil=(3,)),
    _case("1d-depthwise", (2, 6, 9), (6, 1, 4), fg=6),
    _case("1d-long-kernel", (1, 1, 40), (2, 1, 21), padding=((20, 20),), strides=(3,)),
    _case("2d-nchw", (2, 3, 7, 6), (4, 3, 3, 2)),
    _case("2d-all-attributes", (3, 4, 7, 6), (6, 2, 3, 2), strides=(2, 1),
          padding=((1, -1), (2, 0)), lhs_dil=(2, 1), rhs_dil=(1, 2), fg=2),
    _case("2d-1x1", (2, 5, 4, 3), (3, 5, 1, 1), strides=(2, 2)),
    _case("2d-nhwc", (2, 7, 6, 4), (3, 3, 4, 5), padding=((1, 1), (1, 1)), dn=NHWC),
    _case("2d-nhwc-groups-strides", (2, 8, 7, 6), (2, 3, 2, 6), strides=(2, 3),
          padding=((0, 1), (-1, 2)), fg=3, dn=NHWC),
    _case("2d-batch-groups", (4, 3, 6, 5), (4, 3, 2, 2), bg=2),
    _case("2d-batch-groups-nhwc-dilated", (6, 5, 6, 2), (3, 2, 2, 6), bg=3, strides=(1, 2),
          padding=((1, 2), (0, -1)), lhs_dil=(1, 2), rhs_dil=(2, 1), dn=NHWC),
    _case("2d-odd-dimension-numbers", (5, 2, 4, 6), (3, 2, 6, 2), padding=((1, 0), (0, 1)),
          dn=((2, 3, 0, 1), (1, 2, 3, 0), (3, 0, 2, 1))),
    _case("3d", (1, 2, 5, 4, 6), (3, 2, 2, 3, 2), strides=(1, 2, 1),
          padding=((1, 0), (0, 1), (1, 1))),
    _case("3d-27-taps-groups", (2, 4, 5, 5, 4), (4, 2, 3, 3, 3), padding=((1, 1),) * 3,
          rhs_dil=(1, 1, 2), fg=2),
    _case("3d-batch-groups-negative-pad", (4, 2, 6, 5, 5), (2, 2, 2, 2, 2), bg=2,
          padding=((-1, 0), (0, -1), (2, -2)), lhs_dil=(2, 1, 1)),
]


def _values(shape, dtype, rng):
    """The whole range of an integer dtype (products and sums overflow and wrap), unit
    normal real and imaginary parts for complex, normal floats."""
    d = np.dtype(dtype)
    if d.kind in "iu":
        info = np.iinfo(d)
        return rng.integers(info.min, info.max, shape, dtype=d, endpoint=True)
    if d.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(d)
    return rng.standard_normal(shape).astype(d)


def run_text(text, args, like):
    """Compile StableHLO text for the host CPU and run it on NumPy arguments (a program
    lowered for another platform, here and in test_gpu_division.py)."""
    device = client.default_device("host")
    exe = Executable.compile(text, device)
    out = exe.run([to_device(np.asarray(a), device) for a in args],
                  exe.result_handlers([(like.shape, like.dtype)]))
    return buffers.to_numpy(out[0])  # (np.asarray does not know a bfloat16 result)


_ELEMENT = re.compile(r"tensor<(?:\d+x)*(complex<\w+>|\w+)>")


def _convolutions(text):
    """The element types (operands and result) of each stablehlo.convolution."""
    return [_ELEMENT.findall(line.rsplit("} : ", 1)[1].split(" loc(")[0])
            for line in text.splitlines() if '"stablehlo.convolution"' in line]


def _check_gpu_text(text, dtype):
    convs = _convolutions(text)
    if np.dtype(dtype).kind in "iu":
        assert convs == [], "an integer program for the GPU has a convolution op"
        assert "stablehlo.convolution" not in text
    elif np.dtype(dtype).kind == "c":
        part = {"complex64": "f32", "complex128": "f64"}[np.dtype(dtype).name]
        assert convs and all(set(types) == {part} for types in convs), convs
        assert len(convs) % 4 == 0  # four real convolutions for each complex one
    else:
        assert len(convs) == 1, "a float convolution stays one op on the GPU"


def _gpu_and_host(f, args, dtype, platform="cuda"):
    """(f's cuda program run on the host, f's host program's result)."""
    jf = stablejit.jit(f)
    text = jf.lower(*args, platform=platform).as_text()
    _check_gpu_text(text, dtype)
    host = np.asarray(jf(*args))
    return run_text(text, args, host), host


def _compare(got, host, dtype):
    assert got.dtype == host.dtype and got.shape == host.shape
    if np.dtype(dtype).kind == "c":
        tol = COMPLEX_TOL[np.dtype(dtype).name]
        np.testing.assert_allclose(got, host, rtol=tol, atol=tol * np.abs(host).max())
    elif np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(got, host, rtol=1e-5, atol=1e-5 * np.abs(host).max())
    else:
        np.testing.assert_array_equal(got, host)  # bit for bit, wrap-around included


@pytest.fixture(params=["unrolled", "loop"])
def taps_mode(request, monkeypatch):
    """Integer kernels' taps written out one by one, or looped over in a while."""
    monkeypatch.setattr(_gpu_convolution, "UNROLL_TAPS", 10**6 if request.param ==
                        "unrolled" else 0)
    return request.param


def _check_conv(x_shape, w_shape, attrs, dtype, seed=0, platform="cuda"):
    rng = np.random.default_rng(seed)
    x, w = _values(x_shape, dtype, rng), _values(w_shape, dtype, rng)
    with stablejit.experimental.enable_x64():
        got, host = _gpu_and_host(lambda a, b: bind1(convolution, a, b, **attrs), (x, w),
                                  dtype, platform)
    _compare(got, host, dtype)
    ls, rs, os = attrs["dimension_numbers"]
    # (jax on the host: its GPU has no integer convolution but cuDNN's int8 one, which
    # saturates where the host wraps around)
    with jax.enable_x64(True), jax_on_the_host():
        want = np.asarray(lax.conv_general_dilated(
            x, w, attrs["window_strides"], attrs["padding"], attrs["lhs_dilation"],
            attrs["rhs_dilation"], lax.ConvDimensionNumbers(ls, rs, os),
            attrs["feature_group_count"], attrs["batch_group_count"]))
    _compare(got, want, dtype)
    if np.dtype(dtype).kind in "iu":
        np.testing.assert_array_equal(got, _reference(x, w, **attrs))
    return got


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize(("x_shape", "w_shape", "attrs"), CASES)
def test_integer_convolution_without_a_convolution_op(x_shape, w_shape, attrs, dtype,
                                                      taps_mode):
    got = _check_conv(x_shape, w_shape, attrs, dtype)
    assert got.size and np.any(got != 0)


@pytest.mark.parametrize("dtype", (*COMPLEX, "float32"))
@pytest.mark.parametrize(("x_shape", "w_shape", "attrs"), CASES)
def test_complex_as_four_real_convolutions_and_float_as_one(x_shape, w_shape, attrs, dtype):
    _check_conv(x_shape, w_shape, attrs, dtype)


@pytest.mark.parametrize("dtype", ("int32", "complex64"))
def test_rocm_lowers_the_same_way(dtype, taps_mode):
    x_shape, w_shape, attrs = CASES[6].values
    _check_conv(x_shape, w_shape, attrs, dtype, platform="rocm")


@pytest.mark.parametrize("dtype", ("int32", "complex64"))
@pytest.mark.parametrize(("x_shape", "w_shape"), [((0, 3, 10), (4, 3, 3)),
                                                  ((2, 0, 10), (4, 0, 3)),
                                                  ((2, 3, 10), (0, 3, 3))])
def test_empty_axes(x_shape, w_shape, dtype, taps_mode):
    """No batch, no input features (a sum of nothing: zeros) or no output features."""
    attrs = _case("empty", x_shape, w_shape).values[2]
    x, w = np.ones(x_shape, dtype), np.ones(w_shape, dtype)
    got, host = _gpu_and_host(lambda a, b: bind1(convolution, a, b, **attrs), (x, w), dtype)
    assert got.shape == host.shape == (x_shape[0], w_shape[0], 8)
    np.testing.assert_array_equal(got, host)
    np.testing.assert_array_equal(got, np.zeros_like(got))


def test_the_host_keeps_one_convolution_op():
    x, w = np.ones((1, 2, 5), np.int32), np.ones((3, 2, 2), np.int32)
    text = stablejit.jit(lambda a, b: bind1(convolution, a, b, **CASES[0].values[2])).lower(
        x, w, platform="host").as_text()
    assert len(_convolutions(text)) == 1 and "xi32>" in text


def test_integer_products_wrap_around():
    """int8 127 * 127 * 4 taps and int32 near its limits: the sums wrap, as on the host."""
    attrs = CASES[0].values[2]
    for dtype, v in (("int8", 127), ("int32", 2**31 - 1), ("uint8", 255)):
        x = np.full((1, 1, 4), v, dtype)
        with stablejit.experimental.enable_x64():
            got, host = _gpu_and_host(lambda a, b: bind1(convolution, a, b, **attrs), (x, x),
                                      dtype)
        wrapped = np.array([[[(v * v * 4) % 2**(8 * x.itemsize)]]]).astype(
            np.dtype(dtype).str.replace("i", "u")).view(dtype)
        np.testing.assert_array_equal(got, host)
        np.testing.assert_array_equal(got, wrapped)


# ---- snp.convolve and snp.correlate ------------------------------------------------------

LENGTHS = [(9, 4), (4, 9), (7, 7), (1, 5), (50, 40)]  # (50, 40): 40 taps, the while loop


def _np_oracle(fn, a, v, mode):
    """np.convolve / np.correlate; integers in int64 (uint64 for int64), then wrapped."""
    if a.dtype.kind in "iu":
        wide = np.uint64
        return fn(a.astype(wide), v.astype(wide), mode).astype(a.dtype)
    return fn(a, v, mode)


@pytest.mark.parametrize("mode", ("full", "same", "valid"))
@pytest.mark.parametrize("name", ("convolve", "correlate"))
@pytest.mark.parametrize("dtype", (*INTS, *COMPLEX))
@pytest.mark.parametrize(("n", "m"), LENGTHS)
def test_convolve_and_correlate(n, m, dtype, name, mode):
    rng = np.random.default_rng(n * 100 + m)
    a, v = _values((n,), dtype, rng), _values((m,), dtype, rng)
    fn = getattr(snp, name)
    with stablejit.experimental.enable_x64():
        got, host = _gpu_and_host(lambda x, y: fn(x, y, mode), (a, v), dtype)
    _compare(got, host, dtype)
    want = _np_oracle(getattr(np, name), a, v, mode)
    if np.dtype(dtype).kind == "c":
        np.testing.assert_allclose(got, want, rtol=COMPLEX_TOL[np.dtype(dtype).name],
                                   atol=COMPLEX_TOL[np.dtype(dtype).name] * np.abs(want).max())
    else:
        np.testing.assert_array_equal(got, want)


def test_long_integer_kernels_loop_over_their_taps():
    """Past UNROLL_TAPS the program stays small: one while loop, not a slice per tap."""
    a = np.arange(300, dtype=np.int32)
    text = stablejit.jit(lambda x, y: snp.convolve(x, y)).lower(a, a, platform="cuda").as_text()
    assert text.count('"stablehlo.while"') == 1 and text.count('"stablehlo.slice"') < 10
    got = run_text(text, (a, a), np.asarray(snp.convolve(a, a)))
    np.testing.assert_array_equal(got, np.convolve(a, a).astype(np.int32))


def test_complex_gradient_on_the_gpu_has_no_complex_convolution():
    """The VJP's convolutions are convolution ops too: they go through the same rule."""
    rng = np.random.default_rng(3)
    x, w = _values((1, 2, 6, 5), "complex64", rng), _values((3, 2, 2, 2), "complex64", rng)
    attrs = CASES[5].values[2]

    def loss(a, b):
        return snp.sum(snp.abs(bind1(convolution, a, b, **attrs)) ** 2)

    g = stablejit.jit(stablejit.grad(loss, argnums=(0, 1)))
    text = g.lower(x, w, platform="cuda").as_text()
    assert _convolutions(text) and all(set(t) == {"f32"} for t in _convolutions(text))
    host = [np.asarray(r) for r in g(x, w)]
    device = client.default_device("host")
    exe = Executable.compile(text, device)
    out = exe.run([to_device(x, device), to_device(w, device)],
                  exe.result_handlers([(h.shape, h.dtype) for h in host]))
    for o, h in zip(out, host, strict=True):
        np.testing.assert_allclose(np.asarray(o), h, rtol=1e-5, atol=1e-5 * np.abs(h).max())


def test_symbolic_integer_convolution_on_the_gpu_is_a_clear_error():
    attrs = CASES[0].values[2]
    f = stablejit.jit(lambda a, b: bind1(convolution, a, b, **attrs))
    x = stablejit.ShapeDtypeStruct(E.symbolic_shape("b, 3, 10"), np.int32)
    w = stablejit.ShapeDtypeStruct((4, 3, 3), np.int32)
    with pytest.raises(UnsupportedPlatformError,
                       match=r"integer convolution.*'cuda'.*platform='host'"):
        E.export(f, platforms="cuda")(x, w)
    E.export(f, platforms="host")(x, w)  # one convolution op there, symbolic or not
