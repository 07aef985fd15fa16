"""Integer matrix products as they are lowered for cuda and rocm, run on the host.

XLA's GPU backends gave other values than the host for int8 x int8 -> int32 products
(jax's as well), and int8 x int8 -> float32 stopped the test worker (an H200,
2026-11-26). So on cuda and rocm, dot_general converts integer operands to a wider
preferred_element_type first (compiler/primitives/products.py, _gpu_integer_operands)
and multiplies in that type, a float one at HIGHEST precision. Here each product is
lowered for both GPU platforms, its text checked for that form, then compiled for the
host CPU and run: its results must be NumPy's in the preferred type bit for bit, and the
host's own program's, with operands over the whole range of their type (int32 sums
that wrap around included)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

from tests.host.test_convolution_gpu_lowering import run_text
from tests.host.test_precision import restore_default_precision  # noqa: F401 - a fixture

PRODUCTS = {
    "matmul": lambda t: lambda x, y: snp.matmul(x, y, preferred_element_type=t),
    "dot": lambda t: lambda x, y: snp.dot(x, y, preferred_element_type=t),
    "tensordot": lambda t: lambda x, y: snp.tensordot(x, y, 1, preferred_element_type=t),
    "einsum": lambda t: lambda x, y: snp.einsum("ij,jk->ik", x, y,
                                                preferred_element_type=t),
    "batched matmul": lambda t: lambda x, y: snp.matmul(
        snp.stack([x, x[::-1]]), y, preferred_element_type=t),
}
# (operand dtype, preferred dtype): float results only where the products and their
# sums are exact in float32, so that any summation order gives NumPy's bits
PAIRS = [("int8", "int32"), ("uint8", "int32"), ("int16", "int32"), ("int8", "float32"),
         ("uint8", "float32"), ("int8", "int16")]
_SHORT = {"int32": "i32", "int16": "i16", "float32": "f32"}
_DOT = re.compile(r'"stablehlo\.dot_general".*?: \((tensor<[^>]*>), (tensor<[^>]*>)\) -> '
                  r'(tensor<[^>]*>)')


def _operands(dtype, seed=0):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    k = 3 if dtype == "int16" else 64  # int16: 3 products of ~2**30 wrap an int32 sum
    x = rng.integers(info.min, info.max, (5, k), endpoint=True).astype(dtype)
    y = rng.integers(info.min, info.max, (k, 7), endpoint=True).astype(dtype)
    x[0], y[:, 0] = info.min, info.min  # the extremes, multiplied and summed
    x[1], y[:, 1] = info.max, info.max
    return x, y


def _numpy(name, x, y, preferred):
    a, b = x.astype(preferred), y.astype(preferred)
    if name == "batched matmul":
        return np.matmul(np.stack([a, a[::-1]]), b)
    return np.matmul(a, b)  # (wraps around as the int32 GEMM does)


@pytest.mark.parametrize("platform", ["cuda", "rocm"])
@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[0]}->{p[1]}")
@pytest.mark.parametrize("name", list(PRODUCTS))
def test_gpu_integer_products_multiply_in_the_preferred_type(name, pair, platform):
    operand, preferred = pair
    x, y = _operands(operand)
    f = stablejit.jit(PRODUCTS[name](getattr(snp, preferred)))
    text = f.lower(x, y, platform=platform).as_text()
    dots = _DOT.findall(text)
    assert dots, text
    for types in dots:  # every product multiplies in the preferred type
        assert {t.rsplit("x", 1)[-1] for t in types} == {f"{_SHORT[preferred]}>"}, types
    if preferred.startswith("float"):
        assert "precision_config = [#stablehlo<precision HIGHEST>" in text, text
    with np.errstate(over="ignore"):
        want = _numpy(name, x, y, np.dtype(preferred))
    got = run_text(text, (x, y), want)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, np.asarray(f(x, y)))  # the host's own program


@pytest.mark.parametrize("platform", ["host", "cuda", "rocm"])
@pytest.mark.parametrize("pair", [("int8", None), ("int32", "int32"), ("float16", "float32"),
                                  ("float32", None), ("int32", "int8"),
                                  ("int16", "float16")], ids=str)
def test_other_products_keep_one_dot_general(pair, platform):
    """Where the operands are the result's type or wider, or floats, or the platform is
    the host, the product stays one dot_general of the operands, with no convert."""
    operand, preferred = pair
    x = np.ones((4, 3), operand)
    text = stablejit.jit(lambda a: snp.matmul(
        a, a.T, preferred_element_type=preferred)).lower(x, platform=platform).as_text()
    assert text.count('"stablehlo.dot_general"') == 1, text
    assert "stablehlo.convert" not in text, text


def test_host_int8_products_keep_one_dot_general():
    """The host multiplies int8 operands into int32 or float32 as they are."""
    x = np.ones((4, 3), np.int8)
    for preferred in (np.int32, np.float32):
        text = stablejit.jit(lambda a, t=preferred: snp.matmul(
            a, a.T, preferred_element_type=t)).lower(x, platform="host").as_text()
        assert "stablehlo.convert" not in text, text
        assert text.count('"stablehlo.dot_general"') == 1, text


@pytest.mark.usefixtures("restore_default_precision")
@pytest.mark.parametrize("name", ["einsum", "convolve", "correlate"])
def test_integers_made_floats_multiply_at_highest_precision(name):
    """einsum, convolve and correlate convert their operands to a preferred_element_type
    themselves: integers made floats then multiply at HIGHEST precision, on every
    platform (a GPU's default TF32 would round 127 * 127); floats keep the default."""
    f = {"einsum": lambda a, t: snp.einsum("ij,kj->ik", a, a, preferred_element_type=t),
         "convolve": lambda a, t: snp.convolve(a[0], a[1], preferred_element_type=t),
         "correlate": lambda a, t: snp.correlate(a[0], a[1], "full",
                                                 preferred_element_type=t)}[name]
    stablejit.config.update("default_matmul_precision", None)  # a GPU run sets highest
    for operand, highest in (("int8", True), ("uint8", True), ("float16", False)):
        x = np.full((4, 3), 127, operand)
        for platform in ("host", "cuda"):
            text = stablejit.jit(lambda a: f(a, np.float32)).lower(
                x, platform=platform).as_text()
            assert ("HIGHEST" in text) == highest, (operand, platform, text)
        got = np.asarray(stablejit.jit(lambda a: f(a, np.float32))(x))
        want = np.asarray(f(snp.asarray(x.astype(np.float32)), None))
        np.testing.assert_array_equal(got, want)
