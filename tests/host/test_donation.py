"""Donation: jit(f, donate_argnums=...) hands the input's buffer to an output. PJRT
really aliases (the executable's alias bytes, the input buffer deleted), using the
donated tensor afterwards is a clear error, and a donation that cannot be used warns."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import DeletedTensorError


def sgd(w, g):
    return w - 0.5 * g


def entry_of(jitted):
    (entry,) = jitted._cache._done.values()
    return entry


def test_donated_buffer_is_reused():
    f = stablejit.jit(sgd, donate_argnums=0)
    w0 = np.linspace(-1, 1, 1024, dtype=np.float32)
    g = snp.asarray(np.full(1024, 0.25, np.float32))
    w = snp.asarray(w0)
    buf = w._data
    w1 = f(w, g)
    np.testing.assert_allclose(np.asarray(w1), w0 - 0.125, rtol=1e-6)
    assert buf.is_deleted() and w._data is None
    exe = entry_of(f).exe
    assert "tf.aliasing_output = 0 : i32" in exe.stablehlo
    assert exe.memory_analysis()["alias_bytes"] == 1024 * 4
    assert "input_output_alias" in exe.optimized_hlo()
    with pytest.raises(DeletedTensorError, match="(?s)donated to a jitted function.*"
                                                 "test_donation.py"):
        w + 1
    # a training loop: each step donates the previous weights
    for _ in range(3):
        w1 = f(w1, g)
    np.testing.assert_allclose(np.asarray(w1), w0 - 0.5, rtol=1e-6)
    assert np.asarray(g).tolist() == [0.25] * 1024  # not donated, still valid


def test_undonated_function_does_not_alias():
    f = stablejit.jit(sgd)
    w = snp.asarray(np.ones(16, np.float32))
    f(w, w)
    assert entry_of(f).exe.memory_analysis()["alias_bytes"] == 0
    assert w._data is not None and not w._data.is_deleted()


def test_pytree_donation_and_three_paths():
    def step(params, x):
        return {"a": params["a"] * x, "b": params["b"] + x}, snp.sum(x)

    p0 = {"a": np.arange(4, dtype=np.float32), "b": np.ones(4, np.float32)}
    x = np.full(4, 2.0, np.float32)
    f = stablejit.jit(step, donate_argnums=0)
    params = {k: snp.asarray(v) for k, v in p0.items()}
    new, s = f(params, x)
    assert params["a"]._data is None and params["b"]._data is None
    assert entry_of(f).exe.memory_analysis()["alias_bytes"] == 2 * 16
    with stablejit.default_backend("reference"):
        ref_new, ref_s = stablejit.jit(step)(p0, x)
    for got in (new, ref_new):
        np.testing.assert_allclose(np.asarray(got["a"]), p0["a"] * 2)
        np.testing.assert_allclose(np.asarray(got["b"]), p0["b"] + 2)
    assert float(s) == float(ref_s) == 8.0


def test_unusable_donation_warns_and_keeps_the_input():
    f = stablejit.jit(lambda v: snp.sum(v), donate_argnums=0)
    v = snp.asarray(np.arange(5, dtype=np.float32))
    with pytest.warns(UserWarning, match=r"(?s)donated argument leaf 0 \(f32\[5\]\) matches "
                                         r"no output.*stays valid") as rec:
        assert float(f(v)) == 10.0
    assert rec[0].filename == __file__  # reported at the user's line
    assert np.asarray(v).tolist() == [0, 1, 2, 3, 4]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(f(v)) == 10.0  # compiled once: no second warning


def test_donating_host_data_is_harmless():
    f = stablejit.jit(sgd, donate_argnums=0)
    w = np.ones(8, np.float32)
    out = f(w, np.ones(8, np.float32))
    np.testing.assert_allclose(np.asarray(out), 0.5)
    assert w.tolist() == [1.0] * 8  # the NumPy array is the user's; only its copy is donated
