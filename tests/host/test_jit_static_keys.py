"""jit's cache tells static argument values apart exactly (by type and bits).

Found as regressions (issue 9): each test failed before its fix."""


import numpy as np
import stablejit
import stablejit.numpy as snp


def _bits(a) -> np.ndarray:
    a = np.asarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


# ---- jit's cache tells static values apart exactly --------------------------------------

def test_static_arguments_are_compared_by_type_and_bits():
    f = stablejit.jit(lambda x, s: x * s, static_argnums=1)
    x = snp.ones(2)
    assert not np.signbit(np.asarray(f(x, 0.0))).any()
    assert np.signbit(np.asarray(f(x, -0.0))).all()
    xi = snp.ones(2, dtype=snp.int32)
    assert f(xi, 1).dtype is snp.int32
    assert f(xi, 1.0).dtype is snp.float32
    assert f(xi, True).dtype is snp.int32
    g = stablejit.jit(lambda x, s: x * s[0], static_argnums=1)
    assert np.signbit(np.asarray(g(x, (0.0,)))).any() == False  # noqa: E712
    assert np.signbit(np.asarray(g(x, (-0.0,)))).all()
    h = stablejit.jit(lambda x, s: x + s, static_argnames="s")
    nan = float("nan")
    h(x, s=nan)
    h(x, s=float("nan"))  # the same NaN bits: no new trace
    assert h.traces == 1
