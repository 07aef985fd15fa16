"""Where an op runs when its operands live on two backends: data made without asking for
a device (on the default backend) follows data placed elsewhere on purpose, as jax's
uncommitted arrays follow committed ones; two devices placed on purpose are an error.

jax is the oracle for every op of the table: the same op on an array put on device 1
(`jax.device_put`, committed) and one made with no device (uncommitted, device 0) must
land on the device jax picks. The reference backend plays SciPy's part (a sample made
with `device=` and a scalar `xp.asarray(ddof)` made without)."""

from __future__ import annotations

import contextlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import DeviceMismatchError

pytestmark = pytest.mark.host_devices(3)

X = np.array([1.5, -2.0, 3.0], np.float32)
S = np.float32(2.0)

# (name, op(xp, placed, made)): `placed` is on device 1 on purpose, `made` on the default
OPS = {
    "add": lambda xp, p, m: p + m,
    "add, made first": lambda xp, p, m: m + p,
    "subtract (reflected)": lambda xp, p, m: m - p,
    "multiply by a 0-d made": lambda xp, p, m: p * m[0],
    "where(cond placed)": lambda xp, p, m: xp.where(p > 0, m, p),
    "where(cond made)": lambda xp, p, m: xp.where(m > 0, p, m),
    "maximum": lambda xp, p, m: xp.maximum(m, p),
    "concatenate, made first": lambda xp, p, m: xp.concatenate([m, p]),
    "stack": lambda xp, p, m: xp.stack([p, m]),
    "matmul": lambda xp, p, m: m @ p,
    "take with made indices": lambda xp, p, m: xp.take(p, xp.asarray([2, 0])),
    "index with a made index tensor": lambda xp, p, m: p[xp.asarray([1, 1, 0])],
    "arctan2": lambda xp, p, m: xp.arctan2(m, p),
    "clip by made bounds": lambda xp, p, m: xp.clip(p, m[0] - 10, m[1]),
}


def _device_id(t) -> int:
    return next(iter(t.devices())).id if hasattr(t, "devices") else t.device.id


@pytest.mark.parametrize("way", ["eager", "jit"])
@pytest.mark.parametrize("name", list(OPS))
def test_made_data_follows_placed_data_as_in_jax(name, way):
    op = OPS[name]
    jd = jax.devices()
    jop = op if way == "eager" else jax.jit(lambda p, m: op(jnp, p, m))
    sop = op if way == "eager" else stablejit.jit(lambda p, m: op(snp, p, m))
    args = (jnp,) if way == "eager" else ()
    want = jop(*args, jax.device_put(X, jd[1]), jnp.asarray(X[::-1].copy()))
    sd = stablejit.devices()
    args = (snp,) if way == "eager" else ()
    got = sop(*args, snp.asarray(X, device=sd[1]), snp.asarray(X[::-1].copy()))
    assert _device_id(got) == _device_id(want) == 1
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("way", ["eager", "jit"])
@pytest.mark.parametrize("name", [n for n in OPS if "indices" not in n and "index" not in n])
def test_two_devices_placed_on_purpose_are_an_error(name, way):
    sd = stablejit.devices()
    op = OPS[name]
    f = (lambda p, m: op(snp, p, m)) if way == "eager" else stablejit.jit(
        lambda p, m: op(snp, p, m))
    with pytest.raises(DeviceMismatchError, match="two devices"):
        np.asarray(f(snp.asarray(X, device=sd[1]), snp.asarray(X, device=sd[2])))


@pytest.mark.parametrize("name", list(OPS))
def test_default_data_follows_a_reference_sample(name):
    """SciPy's pattern: `xp.asarray(ddof)` (no device) meets a sample made on another
    backend; the result stays with the sample (SciPy's test_device_dtype checks it)."""
    sample = snp.asarray(X, device=stablejit.REFERENCE)
    got = OPS[name](snp, sample, snp.asarray(X[::-1].copy()))
    assert got.backend is stablejit.REFERENCE
    np.testing.assert_array_equal(np.asarray(got), OPS[name](np, X, X[::-1].copy()))


def test_a_default_backend_block_decides_what_is_default():
    """Inside `default_backend(b)`, b's data is what was made without asking; outside, it
    is data placed elsewhere (what the block was for), so default data follows it."""
    host = snp.asarray(X)
    with stablejit.default_backend("reference"):
        r = snp.asarray(X)
        assert (r + host).backend is host.backend  # host data is not the default here
    assert (host + r).backend is stablejit.REFERENCE


def test_namespace_functions_keep_the_rule_where_they_follow_their_inputs():
    """A namespace function runs where its first tensor lives (constants it makes go
    there); that must not make device 1 count as the default for the rule."""
    sd = stablejit.devices()
    p = snp.asarray(X, device=sd[1])
    m = snp.asarray(S)
    assert snp.where(p > 0, m, p).device == sd[1]
    assert snp.where(p > 0, p, m).device == sd[1]


def test_a_block_without_a_target_records_for_the_default_of_the_moment():
    """lazy() with no target remembers its answer for the process-wide default; a default
    changed since, a default_backend block or an enclosing backend is followed."""
    from stablejit import context
    from stablejit.lazy import lazy_backend
    host0, host1 = (stablejit.resolve_backend(f"xla:host:{i}") for i in (0, 1))
    devices = {host0: stablejit.devices()[0], host1: stablejit.devices()[1]}
    assert context.global_default() is host0
    cases = [  # (what is in effect, the device the block records for)
        ("the process default", lambda: contextlib.nullcontext(), host0),
        ("another process default", lambda: _global_default(host1), host1),
        ("a default_backend block", lambda: stablejit.default_backend("xla:host:1"), host1),
        ("an enclosing lazy() block of host 1", lambda: stablejit.lazy(host1), host1),
        ("the process default again", lambda: contextlib.nullcontext(), host0)]
    for what, make, device in cases:
        for _ in range(2):  # (the second block takes the remembered answer where it can)
            with make(), stablejit.lazy() as backend:
                y = snp.asarray([1.0, 2.0], device=devices[device]) * 2.0
            assert backend.target is device, what
            assert backend is lazy_backend(device) and y._data.buffer is not None, what
            assert y.tolist() == [2.0, 4.0], what


@contextlib.contextmanager
def _global_default(backend):
    from stablejit import context
    before = context.global_default()
    context.set_global_default(backend)
    try:
        yield
    finally:
        context.set_global_default(before)
