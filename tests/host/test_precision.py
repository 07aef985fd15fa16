"""lax's precision= reaches the program as jax's does: the same precision_config on the
same dot_general, for every spelling jax takes, through grad and vmap too. The host
computes float32 in full precision whatever the config says; a GPU takes float32 products
as TF32 under DEFAULT (an H200 run differed from NumPy by ~1e-3 relative) and in full
float32 under HIGHEST, so an ignored precision= is a silently less accurate answer there."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import lax

from tests.support.jax_equivalents import jax_on_the_host

A = np.random.default_rng(0).normal(size=(2, 3)).astype(np.float32)
B = np.random.default_rng(1).normal(size=(3, 4)).astype(np.float32)

SPELLINGS = [None, "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
             ("highest", "default"), ("default", "high")]
ENUMS = ["DEFAULT", "HIGH", "HIGHEST"]


def _configs(text: str) -> list[str]:
    """Each dot_general's (or convolution's) precision_config in order ('' where it has
    none), in the pretty (jax) or generic (ours) printing."""
    out = []
    for line in text.splitlines():
        if "dot_general" in line and "stablehlo.dot" in line or \
                "stablehlo.convolution" in line:
            m = re.search(r"precision(?:_config)? = \[([^\]]*)\]", line)
            out.append(re.sub(r"#stablehlo<precision (\w+)>", r"\1", m.group(1))
                       if m else "")
    return out


def _ours(f, *args) -> list[str]:
    return _configs(stablejit.jit(f).lower(*args).as_text())


def _jax(f, *args) -> list[str]:
    return _configs(jax.jit(f).trace(*args).lower().as_text())


def _norm(configs):  # jax writes DEFAULT, DEFAULT out; we leave the default unwritten
    return [c.replace(" ", "") or "DEFAULT,DEFAULT" for c in configs]


@pytest.mark.parametrize("precision", SPELLINGS + [f"enum {e}" for e in ENUMS],
                         ids=str)
@pytest.mark.parametrize("fn", ["dot", "dot_general", "batch_matmul"])
def test_precision_config_as_jax_emits_it(precision, fn):
    if isinstance(precision, str) and precision.startswith("enum "):
        ours_p = getattr(lax.Precision, precision[5:])
        jax_p = getattr(jax.lax.Precision, precision[5:])
    else:
        ours_p = jax_p = precision
    a, b = (A, B) if fn != "batch_matmul" else (A[None], B[None])

    def call(L, p):
        if fn == "dot":
            return lambda x, y: L.dot(x, y, precision=p)
        if fn == "dot_general":
            return lambda x, y: L.dot_general(x, y, (((1,), (0,)), ((), ())), precision=p)
        return lambda x, y: L.batch_matmul(x, y, precision=p)
    jax_fn = call(jax.lax, jax_p) if fn != "batch_matmul" else (
        lambda x, y: jnp.matmul(x, y, precision=jax_p))
    assert _norm(_ours(call(lax, ours_p), a, b)) == _norm(_jax(jax_fn, a, b))


@pytest.mark.parametrize("precision", ["highest", ("high", "highest")])
def test_a_convolution_gradient_keeps_the_precision(precision):
    k = B[None, None, :2, :2]

    def f(L, n, p):
        return lambda x: n.sin(L.conv_general_dilated(x, k, (1, 1), "SAME",
                                                      precision=p)).sum()
    ours = _ours(stablejit.grad(f(lax, snp, precision)), A[None, None])
    theirs = _jax(jax.grad(f(jax.lax, jnp, precision)), A[None, None])
    assert sorted(_norm(ours)) == sorted(_norm(theirs)) and all(ours)


@pytest.mark.parametrize("precision", ["highest", ("high", "highest")])
def test_gradient_and_vmap_keep_the_precision(precision):
    def f(L, n, p):
        return lambda x: n.sin(L.dot(x, B, precision=p)).sum()
    ours = _ours(stablejit.grad(f(lax, snp, precision)), A)
    theirs = _jax(jax.grad(f(jax.lax, jnp, precision)), A)
    assert sorted(_norm(ours)) == sorted(_norm(theirs)) and all(ours)  # each one set
    vm = _ours(stablejit.vmap(lambda x: lax.dot(x, B, precision=precision)), A[None])
    assert vm and all(vm)


def test_values_do_not_change_on_the_host():
    want = np.asarray(lax.dot(A, B))
    for p in ("highest", "high", lax.Precision.DEFAULT):
        np.testing.assert_array_equal(np.asarray(lax.dot(A, B, precision=p)), want)
        np.testing.assert_array_equal(
            np.asarray(stablejit.jit(lambda x, y, p=p: lax.dot(x, y, precision=p))(A, B)),
            want)


@pytest.mark.parametrize("bad", ["fast", "HIGHEST", 3, ("highest",), ("a", "b", "c")],
                         ids=str)
def test_an_unknown_precision_names_the_choices(bad):
    with pytest.raises(ValueError, match="precision"):
        lax.dot(A, B, precision=bad)


# the NumPy namespace's products take jax.numpy's precision= (keyword) too
NUMPY_PRODUCTS = {
    "matmul": (lambda n, p: lambda x, y: n.matmul(x, y, precision=p), A, B),
    "matmul, batched": (lambda n, p: lambda x, y: n.matmul(x, y, precision=p),
                        np.stack([A, A]), B),
    "dot": (lambda n, p: lambda x, y: n.dot(x, y, precision=p), A, B),
    "dot, 3-d": (lambda n, p: lambda x, y: n.dot(x, y, precision=p), A, np.stack([B, B])),
    "tensordot": (lambda n, p: lambda x, y: n.tensordot(x, y, 1, precision=p), A, B),
    "inner": (lambda n, p: lambda x, y: n.inner(x, y, precision=p), A, B.T),
    "vdot": (lambda n, p: lambda x, y: n.vdot(x, x, precision=p), A, B),
    "einsum": (lambda n, p: lambda x, y: n.einsum("ij,jk->ik", x, y, precision=p), A, B),
    "convolve": (lambda n, p: lambda x, y: n.convolve(x, y, precision=p), A[0], B[:, 0]),
    "correlate": (lambda n, p: lambda x, y: n.correlate(x, y, "full", precision=p), A[0],
                  B[:, 0]),
    "lax.conv_general_dilated": (
        lambda n, p: lambda x, y: (lax if n is snp else jax.lax).conv_general_dilated(
            x, y, (1, 1), "SAME", precision=p),
        A[None, None], B[None, None, :2, :2]),
}


@pytest.mark.parametrize("precision", ["highest", "high", None, ("highest", "default")],
                         ids=str)
@pytest.mark.parametrize("name", list(NUMPY_PRODUCTS))
def test_numpy_products_take_precision_as_jax_numpy(name, precision):
    make, a, b = NUMPY_PRODUCTS[name]
    assert _norm(_ours(make(snp, precision), a, b)) == _norm(_jax(make(jnp, precision), a, b))
    np.testing.assert_allclose(np.asarray(make(snp, precision)(a, b)),
                               np.asarray(make(jnp, precision)(a, b)), rtol=1e-6)


@pytest.fixture
def restore_default_precision():
    ours, theirs = (stablejit.config.default_matmul_precision,
                    jax.config.jax_default_matmul_precision)
    yield
    stablejit.config.update("default_matmul_precision", ours)
    jax.config.update("jax_default_matmul_precision", theirs)


@pytest.mark.parametrize("name", ["highest", "float32", "high", "tensorfloat32", "default",
                                  "bfloat16"])
def test_the_default_precision_as_jaxs_setting(name, restore_default_precision):
    """config.update("jax_default_matmul_precision", ...) as jax's: products that pass
    no precision take it, explicit ones keep theirs; jitted functions traced before the
    change trace again (the setting is in their key)."""
    f = stablejit.jit(lambda x, y: x @ y)
    f(A, B)
    stablejit.config.update("jax_default_matmul_precision", name)
    jax.config.update("jax_default_matmul_precision", name)
    for make, a, b in NUMPY_PRODUCTS.values():
        assert _norm(_ours(make(snp, None), a, b)) == _norm(_jax(make(jnp, None), a, b))
        assert _norm(_ours(make(snp, "high"), a, b)) == _norm(_jax(make(jnp, "high"), a, b))
    want = _jax(lambda x, y: x @ y, A, B)
    assert _norm(_configs(f.lower(A, B).as_text())) == _norm(want)
    # bit for bit with jax's product on the same device (NumPy's on the host: a GPU sums
    # in another order, and under "default" in TF32)
    np.testing.assert_array_equal(np.asarray(f(A, B)), np.asarray(jax.jit(lambda x, y: x @ y)(
        jnp.asarray(A), jnp.asarray(B))))


def _without_precision(env):
    """The environment without either default precision (a GPU run of the suite sets
    both: tests/conftest.py)."""
    return {k: v for k, v in env.items() if k not in (
        "STABLEJIT_DEFAULT_MATMUL_PRECISION", "JAX_DEFAULT_MATMUL_PRECISION")}


def test_the_default_precision_from_the_environment():
    code = ("import stablejit, numpy as np; a = np.ones((2, 3), np.float32); "
            "print(stablejit.config.default_matmul_precision, 'HIGHEST' in "
            "stablejit.jit(lambda x: x @ x.T).lower(a).as_text())")
    for var in ("STABLEJIT_DEFAULT_MATMUL_PRECISION", "JAX_DEFAULT_MATMUL_PRECISION"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env={**_without_precision(os.environ), var: "float32"},
                             timeout=120)
        assert out.stdout.split() == ["float32", "True"], out.stderr


@pytest.mark.parametrize("bad", ["HIGHEST", "fast", 3, ("highest", "high")], ids=str)
def test_a_bad_default_precision_names_the_choices(bad, restore_default_precision):
    with pytest.raises((ValueError, TypeError), match="default_matmul_precision"):
        stablejit.config.update("default_matmul_precision", bad)


def test_log_compiles_says_the_default_precision_changed(restore_default_precision, caplog,
                                                         monkeypatch):
    stablejit.config.update("default_matmul_precision", "default")  # a GPU run sets highest
    f = stablejit.jit(lambda x, y: x @ y)
    monkeypatch.setenv("STABLEJIT_LOG_COMPILES", "1")
    with caplog.at_level("WARNING", logger="stablejit"):
        f(A, B)
        stablejit.config.update("default_matmul_precision", "highest")
        f(A, B)
    assert "the default matmul precision changed from DEFAULT to HIGHEST" in caplog.text


# jax.numpy's preferred_element_type= on the same functions: the result's dtype, the
# products accumulated in it (int8 operands with int32 do not wrap at 8 bits)
I8 = (np.arange(6, dtype=np.int8).reshape(2, 3) * 40,
      np.arange(12, dtype=np.int8).reshape(3, 4) * 30)
PREFERRED = {
    "matmul": lambda n, t: lambda x, y: n.matmul(x, y, preferred_element_type=t),
    "dot": lambda n, t: lambda x, y: n.dot(x, y, preferred_element_type=t),
    "tensordot": lambda n, t: lambda x, y: n.tensordot(x, y, 1, preferred_element_type=t),
    "inner": lambda n, t: lambda x, y: n.inner(x, y.T, preferred_element_type=t),
    "vdot": lambda n, t: lambda x, y: n.vdot(x, x, preferred_element_type=t),
    "einsum": lambda n, t: lambda x, y: n.einsum("ij,jk->ik", x, y, preferred_element_type=t),
    "convolve": lambda n, t: lambda x, y: n.convolve(x[0], y[:, 0], preferred_element_type=t),
    "correlate": lambda n, t: lambda x, y: n.correlate(x[0], y[:, 0], "full",
                                                       preferred_element_type=t),
}


@pytest.mark.parametrize("operands,preferred", [
    ("int8", np.int32), ("int8", None), ("float16", np.float32), ("float32", np.float32),
    ("int8", np.float32)], ids=str)
@pytest.mark.parametrize("name", list(PREFERRED))
@pytest.mark.parametrize("way", ["eager", "jit"])
def test_preferred_element_type_as_jax_numpy(name, operands, preferred, way):
    a, b = (x.astype(operands) for x in I8)
    ours, theirs = PREFERRED[name](snp, preferred), PREFERRED[name](jnp, preferred)
    if name in ("convolve", "correlate") and operands == "int8" and preferred is None:
        # integer convolve keeps NumPy's dtype (and its wrap-around), where jax makes floats
        theirs = {"convolve": lambda x, y: np.convolve(x[0], y[:, 0]),
                  "correlate": lambda x, y: np.correlate(x[0], y[:, 0], "full")}[name]
    if way == "jit":
        ours = stablejit.jit(ours)
    # jax on the host for integer operands: its GPU's int8 products are no oracle (other
    # values than the host's for int32, a dead process for float32: docs/devices.md)
    with jax_on_the_host() if operands == "int8" else contextlib.nullcontext():
        want = np.asarray(theirs(a, b))
    got = np.asarray(ours(a, b))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-3 if operands == "float16" else 0)
