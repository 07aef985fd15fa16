"""An AOT Compiled (jit(f).lower(...).compile()) checks its arguments against the lowered
signature.

Found as regressions (issue 9): each test failed before its fix."""

import re

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

# ---- an AOT Compiled checks its arguments against the lowered signature ----------------

def _aot():
    x = snp.asarray(np.arange(6, dtype=np.float32))
    return stablejit.jit(lambda x: x * 2).lower(x).compile(), x


def test_compiled_runs_its_own_signature():
    c, x = _aot()
    assert np.array_equal(np.asarray(c(x)), np.arange(6, dtype=np.float32) * 2)
    assert np.array_equal(np.asarray(c(np.ones(6, np.float32))), np.full(6, 2, np.float32))


@pytest.mark.parametrize("arg,given", [
    (np.arange(6, dtype=np.int32), "int32[6]"),
    (np.ones((2, 3), np.float32), "float32[2,3]"),
    (np.ones(5, np.float32), "float32[5]"),
    (7, "int64[]"),
])
def test_compiled_rejects_another_dtype_or_shape(arg, given):
    c, _ = _aot()
    with pytest.raises(TypeError, match=rf"argument 'x'.*float32\[6\].*{re.escape(given)}"):
        c(snp.asarray(arg) if isinstance(arg, np.ndarray) else arg)


def test_compiled_rejects_another_structure_and_static_value():
    x = snp.ones(3)
    c = stablejit.jit(lambda p: p["a"] + p["b"]).lower({"a": x, "b": x}).compile()
    with pytest.raises(TypeError, match="structure"):
        c({"a": x})
    with pytest.raises(TypeError, match="structure"):
        c(x, x)
    g = stablejit.jit(lambda x, n: x * n, static_argnums=1).lower(x, 3).compile()
    assert np.array_equal(np.asarray(g(x, 3)), np.full(3, 3, np.float32))
    with pytest.raises(TypeError, match="static"):
        g(x, 4)
