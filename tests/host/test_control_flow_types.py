"""The type rule of every control-flow construct against JAX's, case by case.

while_loop, fori_loop (static and traced bounds), scan, cond, switch, custom_root,
associative_scan and map, each with mismatches of dtype, shape, pytree structure and
weak vs strong type. Every case is written once, for a module namespace `m` (m.lax,
m.np), and run on stablejit and on jax, eagerly and under jit:

  - where jax raises, stablejit raises a TypeError that names the construct and the
    user's line, while tracing: each case is first traced without running
    (stablejit.eval_shape), so a regression fails instead of hanging (the while_loop whose
    int32 carry was silently cast back from float stayed 0 and spun forever);
  - where jax accepts, stablejit gives jax's values, dtypes and weak types.

JAX's rule (jax/_src/lax/control_flow): the structures are equal and every leaf has the
same shape and dtype, weakness ignored, so a Python scalar matches only its own dtype and
is never converted; a loop's weakly typed initial carry leaf is promoted once, to
result_type(init, body result), and the body traced again.

Python scalars have stablejit's default dtypes (int64, float32, complex64). A case runs
jax with 32-bit defaults (jax's default: a Python float is float32) unless it sets
x64=True (a Python int is int64); each case uses Python scalars of the kinds whose
default dtype the chosen jax mode shares with stablejit.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import types
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

SJ = types.SimpleNamespace(name="stablejit", lax=stablejit.lax, np=snp, jit=stablejit.jit)
JX = types.SimpleNamespace(name="jax", lax=jax.lax, np=jnp, jit=jax.jit)


class Case(NamedTuple):
    name: str
    fn: Callable[[Any], Any]
    construct: str  # what stablejit's error must name
    x64: bool = False  # run jax with 64-bit types (Python ints are int64, as in stablejit)
    # where stablejit deliberately raises and jax does not: why
    stricter: str | None = None


def _newton(m):
    def solve(f, x):
        for _ in range(3):
            x = x - f(x) / m.grad(f)(x)
        return x
    return solve


def _tangent(g, y):
    return y / g(1.0)


SJ.grad, JX.grad = stablejit.grad, jax.grad


def _cases() -> list[Case]:
    c = []

    def add(name, construct, fn, **kw):
        c.append(Case(name, fn, construct, **kw))

    # ---- while_loop -------------------------------------------------------------------
    w = "while_loop"
    # the hang: int32 carry, the body adds a Python float (a weak float32)
    add("int32 carry, body adds 0.5", w, lambda m: m.lax.while_loop(
        lambda c: c < 3, lambda c: c + 0.5, m.np.int32(0)))
    add("int32 carry, body adds 1", w, lambda m: m.lax.while_loop(
        lambda c: c < 3, lambda c: c + 1, m.np.int32(0)))
    add("float32 carry, body casts to float16", w, lambda m: m.lax.while_loop(
        lambda c: c < 3, lambda c: (c + 1).astype(m.np.float16), m.np.float32(0)))
    add("float32 carry, body casts to int32", w, lambda m: m.lax.while_loop(
        lambda c: c < 3, lambda c: (c + 1).astype(m.np.int32), m.np.float32(0)))
    add("shape (3,) carry, body returns shape (2,)", w, lambda m: m.lax.while_loop(
        lambda c: c.sum() < 3, lambda c: c[:2] + 1, m.np.zeros(3, m.np.float32)))
    add("shape () carry, body broadcasts to (3,)", w, lambda m: m.lax.while_loop(
        lambda c: m.np.sum(c) < 3, lambda c: c + m.np.ones(3, m.np.float32),
        m.np.float32(0)))
    add("tuple carry, body returns a list", w, lambda m: m.lax.while_loop(
        lambda c: c[0] < 3, lambda c: [c[0] + 1, c[1]], (m.np.int32(0), m.np.float32(1))))
    add("tuple carry, body drops a leaf", w, lambda m: m.lax.while_loop(
        lambda c: c[0] < 3, lambda c: (c[0] + 1,), (m.np.int32(0), m.np.float32(1))))
    add("dict carry, body renames a key", w, lambda m: m.lax.while_loop(
        lambda c: c["n"] < 3, lambda c: {"n": c["n"] + 1, "v": c["w"]},
        {"n": m.np.int32(0), "w": m.np.float32(1)}))
    add("nested leaf carry[1]['w'] changes dtype", w, lambda m: m.lax.while_loop(
        lambda c: c[0] < 3,
        lambda c: (c[0] + 1, {"w": c[1]["w"].astype(m.np.float16)}),
        (m.np.int32(0), {"w": m.np.zeros(2, m.np.float32)})))
    add("pytree carry kept", w, lambda m: m.lax.while_loop(
        lambda c: c[0] < 3, lambda c: (c[0] + 1, {"w": c[1]["w"] * 2.0}),
        (m.np.int32(0), {"w": m.np.ones(2, m.np.float32)})))
    # weak outputs: a Python scalar matches only its own dtype
    add("float32 carry, body returns a Python float", w, lambda m: m.lax.while_loop(
        lambda c: c < 3, lambda c: 5.0, m.np.float32(0)))
    add("float16 carry, body returns a Python float", w, lambda m: m.lax.while_loop(
        lambda c: c < 3, lambda c: 5.0, m.np.float16(0)))
    add("float16 carry, body adds a Python float", w, lambda m: m.lax.while_loop(
        lambda c: c < 3, lambda c: c + 1.0, m.np.float16(0)))
    add("int64 carry, body returns a Python int", w, lambda m: m.lax.while_loop(
        lambda c: c < 3, lambda c: 5, m.np.int64(0)), x64=True)
    add("int8 carry, body returns a Python int", w, lambda m: m.lax.while_loop(
        lambda c: c < 3, lambda c: 5, m.np.int8(0)), x64=True)
    add("int32 carry, body returns a Python int (int64 here)", w, lambda m: m.lax.while_loop(
        lambda c: c < 3, lambda c: 5, m.np.int32(0)), x64=True)
    # weak initial carries take the body's result type (once)
    add("Python float init, float32 body", w, lambda m: m.lax.while_loop(
        lambda c: c < 3, lambda c: c + m.np.float32(1), 0.0))
    add("Python float init, float16 body", w, lambda m: m.lax.while_loop(
        lambda c: c < 3, lambda c: c + m.np.float16(1), 0.0))
    add("Python float init, body returns a Python float", w, lambda m: m.lax.while_loop(
        lambda c: c < 3, lambda c: 5.0, 0.0))
    add("Python float init, body returns int32", w, lambda m: m.lax.while_loop(
        lambda c: c < 3, lambda c: m.np.int32(5), 0.0))
    add("Python float init, body returns bool", w, lambda m: m.lax.while_loop(
        lambda c: c < 3, lambda c: c > 1, 0.0))
    add("Python float init, body broadcasts to (3,)", w, lambda m: m.lax.while_loop(
        lambda c: m.np.sum(c) < 3, lambda c: c + m.np.ones(3, m.np.float32), 0.0))
    add("Python int init, float16 body", w, lambda m: m.lax.while_loop(
        lambda c: c < 3, lambda c: c + m.np.float16(1), 0), x64=True)
    add("Python int init, int8 body", w, lambda m: m.lax.while_loop(
        lambda c: c < 3, lambda c: c + m.np.int8(1), 0), x64=True)
    add("Python int init, uint8 body", w, lambda m: m.lax.while_loop(
        lambda c: c < 3, lambda c: c + m.np.uint8(1), 0), x64=True)
    add("Python int init, complex64 body", w, lambda m: m.lax.while_loop(
        lambda c: m.np.real(c) < 3, lambda c: c + m.np.complex64(1), 0), x64=True)
    add("Python int init, int32 body", w, lambda m: m.lax.while_loop(
        lambda c: c < 3, lambda c: c + m.np.int32(1), 0), x64=True)
    add("weak float32 tensor init, float16 body", w, lambda m: m.lax.while_loop(
        lambda c: c < 3, lambda c: c + m.np.float16(1), m.np.asarray(0.0) * 1.0))
    add("bool carry", w, lambda m: m.lax.while_loop(
        lambda c: ~c, lambda c: c | True, m.np.asarray(False)))

    # ---- fori_loop ------------------------------------------------------------------
    f = "fori_loop"
    add("fori int32 carry, c + 1", f, lambda m: m.lax.fori_loop(
        0, 3, lambda i, c: c + 1, m.np.int32(0)))
    add("fori int32 carry, c + 0.5", f, lambda m: m.lax.fori_loop(
        0, 3, lambda i, c: c + 0.5, m.np.int32(0)))
    add("fori int8 carry, c + i", f, lambda m: m.lax.fori_loop(
        0, 3, lambda i, c: c + i, m.np.int8(0)))
    add("fori float16 carry, c + 1.0", f, lambda m: m.lax.fori_loop(
        0, 3, lambda i, c: c + 1.0, m.np.float16(0)))
    add("fori float32 carry, c + i * 0.5", f, lambda m: m.lax.fori_loop(
        0, 4, lambda i, c: c + i * 0.5, m.np.float32(1)))
    add("fori Python float init, float16 body", f, lambda m: m.lax.fori_loop(
        0, 3, lambda i, c: c + m.np.float16(1), 0.0))
    add("fori shape change", f, lambda m: m.lax.fori_loop(
        0, 3, lambda i, c: c[:1], m.np.zeros(2, m.np.float32)))
    add("fori structure change", f, lambda m: m.lax.fori_loop(
        0, 3, lambda i, c: (c, c), m.np.zeros(2, m.np.float32)))
    add("fori dict leaf dtype", f, lambda m: m.lax.fori_loop(
        0, 3, lambda i, c: {"t": c["t"].astype(m.np.float16), "n": c["n"]},
        {"t": m.np.float32(0), "n": m.np.float32(1)}))
    # int32 bounds: concrete (jax eager: a scan, a Python int index) or traced (under jit:
    # a while_loop, an int32 index)
    add("fori int32 bounds, int8 carry, c + i", f, lambda m: m.lax.fori_loop(
        m.np.int32(0), m.np.int32(3), lambda i, c: c + i, m.np.int8(0)))
    add("fori int32 bounds, int32 carry, c + 0.5", f, lambda m: m.lax.fori_loop(
        m.np.int32(0), m.np.int32(3), lambda i, c: c + 0.5, m.np.int32(0)))
    add("fori int32 bounds, float32 carry", f, lambda m: m.lax.fori_loop(
        m.np.int32(1), m.np.int32(4), lambda i, c: c * i, m.np.float32(1)))
    add("fori bounds int32 and int16", f, lambda m: m.lax.fori_loop(
        m.np.int32(0), m.np.int16(3), lambda i, c: c + 1, m.np.float32(0)))
    add("fori bounds Python int and int16", f, lambda m: m.lax.fori_loop(
        0, m.np.int16(3), lambda i, c: c + i, m.np.int16(0)))
    add("fori bounds Python int and uint8", f, lambda m: m.lax.fori_loop(
        0, m.np.uint8(3), lambda i, c: c + 1, m.np.float32(0)))

    # ---- scan ---------------------------------------------------------------------------
    s = "scan"
    add("scan int32 carry, float xs", s, lambda m: m.lax.scan(
        lambda c, x: (c + x, c), m.np.int32(0), m.np.ones(3, m.np.float32)))
    add("scan float32 carry, float16 result", s, lambda m: m.lax.scan(
        lambda c, x: ((c + x).astype(m.np.float16), x), m.np.float32(0),
        m.np.ones(3, m.np.float32)))
    add("scan carry shape change", s, lambda m: m.lax.scan(
        lambda c, x: (c + x, x), m.np.float32(0), m.np.ones((3, 2), m.np.float32)))
    add("scan carry structure change", s, lambda m: m.lax.scan(
        lambda c, x: ({"b": c["a"] + x}, x), {"a": m.np.float32(0)},
        m.np.ones(3, m.np.float32)))
    add("scan Python int init, float16 xs", s, lambda m: m.lax.scan(
        lambda c, x: (c + x, c), 0, m.np.ones(3, m.np.float16)), x64=True)
    add("scan Python int init, int8 xs", s, lambda m: m.lax.scan(
        lambda c, x: (c + x, c), 0, m.np.ones(3, m.np.int8)), x64=True)
    add("scan Python float init, int8 xs", s, lambda m: m.lax.scan(
        lambda c, x: (c + x, c), 0.0, m.np.ones(3, m.np.int8)))
    add("scan float16 carry, body returns a Python float", s, lambda m: m.lax.scan(
        lambda c, x: (1.0, c), m.np.float16(0), m.np.ones(3, m.np.float32)))
    add("scan float32 carry, body returns a Python float", s, lambda m: m.lax.scan(
        lambda c, x: (1.0, c), m.np.float32(0), m.np.ones(3, m.np.float32)))
    add("scan ys are Python floats", s, lambda m: m.lax.scan(
        lambda c, x: (c, 1.0), m.np.float16(0), m.np.ones(3, m.np.float32)))
    add("scan unrolled, int32 carry, float xs", s, lambda m: m.lax.scan(
        lambda c, x: (c + x, c), m.np.int32(0), m.np.ones(4, m.np.float32), unroll=2))
    add("scan unrolled, Python float init, float16 xs", s, lambda m: m.lax.scan(
        lambda c, x: (c + x, c), 0.0, m.np.ones(5, m.np.float16), unroll=2))

    # ---- cond / switch ------------------------------------------------------------------
    k = "cond"
    add("cond float16 vs Python float", k, lambda m: m.lax.cond(
        True, lambda: m.np.float16(1), lambda: 0.0))
    add("cond float32 vs Python float", k, lambda m: m.lax.cond(
        True, lambda: m.np.float32(1), lambda: 0.0))
    add("cond Python float vs float32", k, lambda m: m.lax.cond(
        False, lambda: 0.0, lambda: m.np.float32(1)))
    add("cond int8 vs Python int", k, lambda m: m.lax.cond(
        True, lambda: m.np.int8(1), lambda: 0), x64=True)
    add("cond int64 vs Python int", k, lambda m: m.lax.cond(
        True, lambda: m.np.int64(1), lambda: 0), x64=True)
    add("cond Python int vs Python int", k, lambda m: m.lax.cond(
        True, lambda: 1, lambda: 0), x64=True)
    add("cond float32 vs int32", k, lambda m: m.lax.cond(
        True, lambda: m.np.float32(1), lambda: m.np.int32(0)))
    add("cond shapes (3,) vs (2,)", k, lambda m: m.lax.cond(
        True, lambda: m.np.zeros(3, m.np.float32), lambda: m.np.zeros(2, m.np.float32)))
    add("cond tuple vs list", k, lambda m: m.lax.cond(
        True, lambda: (m.np.float32(1), m.np.float32(2)),
        lambda: [m.np.float32(1), m.np.float32(2)]))
    add("cond dict operands, matching", k, lambda m: m.lax.cond(
        m.np.asarray(True), lambda x: {"a": x, "b": x}, lambda x: {"a": x, "b": x * 2},
        m.np.float32(3)))
    add("cond dict leaf dtype", k, lambda m: m.lax.cond(
        m.np.asarray(True), lambda x: {"a": x, "b": x},
        lambda x: {"a": x, "b": (x * 2).astype(m.np.float16)}, m.np.float32(3)))
    add("cond operands, nested leaf dtype", k, lambda m: m.lax.cond(
        False, lambda x: (x, {"w": x}), lambda x: (x, {"w": x.astype(m.np.float16)}),
        m.np.float32(3)))
    s2 = "switch"
    add("switch int64 vs Python int", s2, lambda m: m.lax.switch(
        1, [lambda: m.np.int64(1), lambda: 0, lambda: 2]), x64=True)
    add("switch int8 vs Python int", s2, lambda m: m.lax.switch(
        1, [lambda: m.np.int8(1), lambda: 0]), x64=True)
    add("switch float32 vs float16", s2, lambda m: m.lax.switch(
        1, [lambda: m.np.float32(1), lambda: m.np.float16(0)]))
    add("switch third branch's shape", s2, lambda m: m.lax.switch(
        2, [lambda: m.np.zeros(3, m.np.float32), lambda: m.np.ones(3, m.np.float32),
            lambda: m.np.zeros(2, m.np.float32)]))
    add("switch Python float branch 0", s2, lambda m: m.lax.switch(
        1, [lambda x: 0.5, lambda x: x * 2], m.np.float32(3)))

    # ---- custom_root: structures only (jax checks no dtypes there) ------------------------
    r = "custom_root"
    g = lambda m: m.np.float32(2.0)  # noqa: E731
    add("custom_root matching", r, lambda m: m.lax.custom_root(
        lambda x: x ** 2 - 2.0, g(m), _newton(m), _tangent))
    add("custom_root f returns a pair", r, lambda m: m.lax.custom_root(
        lambda x: (x ** 2 - 2.0, x), g(m), lambda f, x: x, _tangent))
    add("custom_root solve returns a pair", r, lambda m: m.lax.custom_root(
        lambda x: x ** 2 - 2.0, g(m), lambda f, x: (x, x), _tangent))
    add("custom_root tangent_solve returns a pair", r, lambda m: m.lax.custom_root(
        lambda x: x ** 2 - 2.0, g(m), _newton(m), lambda g_, y: (y, y)))
    add("custom_root f renames a dict key", r, lambda m: m.lax.custom_root(
        lambda x: {"b": x["a"] ** 2 - 2.0}, {"a": g(m)}, lambda f, x: x, lambda g_, y: y))
    add("custom_root solve changes the dtype", r, lambda m: m.lax.custom_root(
        lambda x: x ** 2 - 2.0, g(m), lambda f, x: x.astype(m.np.float16), _tangent))
    add("custom_root has_aux without aux", r, lambda m: m.lax.custom_root(
        lambda x: x ** 2 - 2.0, g(m), lambda f, x: x, _tangent, has_aux=True))

    # ---- associative_scan -----------------------------------------------------------------
    a = "associative_scan"
    add("associative_scan matching", a, lambda m: m.lax.associative_scan(
        lambda x, y: x + y, m.np.arange(5, dtype=m.np.int32)))
    add("associative_scan pytree elems", a, lambda m: m.lax.associative_scan(
        lambda x, y: [x[0] + y[0], x[1] * y[1]],
        [m.np.arange(4, dtype=m.np.float32), m.np.arange(1, 5, dtype=m.np.float32)]))
    add("associative_scan fn adds 0.5 to ints", a, lambda m: m.lax.associative_scan(
        lambda x, y: x + y + 0.5, m.np.arange(4, dtype=m.np.int32)))
    add("associative_scan fn casts", a, lambda m: m.lax.associative_scan(
        lambda x, y: (x + y).astype(m.np.float16), m.np.arange(4, dtype=m.np.int32)))
    add("associative_scan fn drops a leaf", a, lambda m: m.lax.associative_scan(
        lambda x, y: (x[0] + y[0],), (m.np.arange(4.0), m.np.arange(4.0))))
    add("associative_scan fn returns a Python float", a, lambda m: m.lax.associative_scan(
        lambda x, y: 1.0, m.np.arange(4, dtype=m.np.float32)))
    add("associative_scan fn changes the shape", a, lambda m: m.lax.associative_scan(
        lambda x, y: (x + y)[:1], m.np.arange(4, dtype=m.np.int32)),
        stricter="jax returns a wrong result of 2 elements (its algorithm assumes fn keeps "
                 "the shape); stablejit names the leaf instead")

    # ---- map (no carry: no type rule, only results) -----------------------------------------
    p = "map"
    add("map int8", p, lambda m: m.lax.map(lambda x: x * 2, m.np.ones(3, m.np.int8)))
    add("map returns a Python float", p, lambda m: m.lax.map(
        lambda x: 1.0, m.np.ones(3, m.np.int8)))
    add("map pytree", p, lambda m: m.lax.map(
        lambda x: {"a": x[0] * 0.5, "b": x[1]},
        (m.np.ones(3, m.np.float16), m.np.arange(3, dtype=m.np.int32))))
    return c


CASES = _cases()


def _run(m, case: Case, jit: bool):
    """(leaves as (numpy value, dtype name, weak)) or the exception raised."""
    def thunk():
        return case.fn(m)

    try:
        out = m.jit(thunk)() if jit else thunk()
    except Exception as e:  # noqa: BLE001 - the comparison is whether it raises
        return e
    leaves = jax.tree_util.tree_leaves(out) if m is JX else stablejit.tree.leaves(out)
    if m is JX:
        return [(np.asarray(x), np.dtype(x.dtype).name, bool(x.weak_type)) for x in leaves]
    return [(np.asarray(x), x.dtype.name, bool(x.weak)) for x in leaves]


def _run_jax(case: Case, jit: bool):
    with jax.enable_x64(case.x64):
        return _run(JX, case, jit)


def _types_only(case: Case):
    """[(shape, dtype name, weak)] of the case traced without running it (stablejit's
    eval_shape, jax's under jit), or the exception the trace raises."""
    def thunk():
        return case.fn(SJ)

    try:
        out = stablejit.tree.leaves(stablejit.eval_shape(thunk))
    except Exception as e:  # noqa: BLE001
        return e
    return [(tuple(x.shape), np.dtype(x.dtype).name, bool(x.weak_type)) for x in out]


def _check_error(case: Case, got, want):
    # a TypeError, or the class jax raises (custom_root's has_aux: a ValueError)
    allowed = (TypeError, type(want)) if isinstance(want, Exception) else TypeError
    assert isinstance(got, allowed), (
        f"jax raises {type(want).__name__}: {want}\nstablejit: {got!r}")
    msg = str(got)
    assert msg.startswith(case.construct) or msg.startswith("lax." + case.construct), msg
    assert "test_control_flow_types.py:" in msg, msg  # at the user's line


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_construct_types_match_jax(case, jit):
    # first without running anything: a loop whose carry type goes wrong may never end
    # (the int32 carry cast back from float stayed 0 forever), so the types are compared
    # on the trace before the case runs
    traced, want_jit = _types_only(case), _run_jax(case, True)
    if isinstance(want_jit, Exception) or case.stricter:
        _check_error(case, traced, want_jit)
    else:
        assert not isinstance(traced, Exception), f"jax accepts, stablejit raises: {traced!r}"
        assert traced == [(w[0].shape, w[1], w[2]) for w in want_jit]
    want = want_jit if jit else _run_jax(case, False)
    got = _run(SJ, case, jit)
    if isinstance(want, Exception) or case.stricter:
        _check_error(case, got, want)
        return
    assert not isinstance(got, Exception), f"jax accepts, stablejit raises: {got!r}"
    assert len(got) == len(want)
    for (gv, gd, gw), (wv, wd, ww) in zip(got, want, strict=True):
        assert (gd, gw) == (wd, ww), f"stablejit {gd} weak={gw}, jax {wd} weak={ww}"
        np.testing.assert_allclose(gv.astype(wv.dtype), wv, rtol=1e-6)


# ---- the messages --------------------------------------------------------------------------

def _error(fn):
    """The message of the TypeError that tracing fn raises (traced only, never run: with
    the error missing, some of these loops would not end)."""
    with pytest.raises(TypeError) as e:
        stablejit.eval_shape(fn)
    return str(e.value)


def test_carry_error_names_the_leaf_both_types_and_the_fix():
    msg = _error(lambda: stablejit.while_loop(
        lambda c: c[0] < 3,
        lambda c: (c[0] + 1, {"w": c[1]["w"].astype(snp.float16)}),
        (snp.int32(0), {"w": snp.zeros(2, snp.float32)})))
    assert msg.startswith("while_loop: body_fun changes the type of carry leaf [1]['w']: it "
                          "enters the loop as f32[2] and body_fun returns f16[2]"), msg
    assert ".astype(float32)" in msg and "carry of dtype float16" in msg, msg
    assert "test_control_flow_types.py:" in msg, msg


def test_hang_case_error_says_the_python_float_is_weak_and_what_to_do():
    msg = _error(lambda: stablejit.while_loop(lambda c: c < 3, lambda c: c + 0.5,
                                              snp.asarray(np.int32(0))))
    assert msg.startswith("while_loop: body_fun changes the type of carry: it enters the "
                          "loop as i32[] and body_fun returns f32[] (weakly typed"), msg
    assert ".astype(int32)" in msg and "carry of dtype float32" in msg, msg


def test_weak_init_promotion_is_named_when_it_then_mismatches():
    msg = _error(lambda: stablejit.while_loop(lambda c: c < 3, lambda c: snp.int32(5), 0.0))
    assert "f32[]" in msg and "i32[]" in msg and "weakly typed" in msg, msg


def test_structure_errors_name_the_path_where_they_part():
    msg = _error(lambda: stablejit.while_loop(
        lambda c: c["n"] < 3, lambda c: {"n": c["n"] + 1, "v": c["w"]},
        {"n": snp.int32(0), "w": snp.float32(1)}))
    assert "structure" in msg and "['n', 'w']" in msg and "['n', 'v']" in msg, msg
    msg = _error(lambda: stablejit.scan(lambda c, x: ((c[0], [c[1]]), x),
                                        (snp.float32(0), snp.float32(0)), snp.ones(2)))
    assert msg.startswith("scan: f returns a carry of another pytree structure"), msg
    assert "at [1]" in msg, msg
    msg = _error(lambda: stablejit.cond(True, lambda: (1.0, 2.0), lambda: [1.0, 2.0]))
    assert msg.startswith("cond: true_fn returns") and "structure" in msg, msg


def test_fori_loop_errors_speak_of_fori_loop_and_init_val():
    # a Python int bound: a scan; an int32 bound made inside the trace: a while_loop
    for make_lower in (lambda: 0, lambda: snp.int32(0)):
        msg = _error(lambda make_lower=make_lower: stablejit.fori_loop(
            make_lower(), 3, lambda i, c: {"t": c["t"].astype(snp.float16), "n": c["n"]},
            {"t": snp.float32(0), "n": snp.float32(1)}))
        assert msg.startswith("fori_loop: body_fun changes the type of carry leaf "
                              "init_val['t']: it enters the loop as f32[]"), msg
        assert "scan" not in msg and "while_loop" not in msg, msg
    msg = _error(lambda: stablejit.fori_loop(0, 3, lambda i, c: (c, c), snp.float32(0)))
    assert msg.startswith("fori_loop: body_fun returns a carry of another pytree") \
        and "at init_val" in msg, msg


def test_branch_error_names_both_branches_and_the_python_scalar():
    msg = _error(lambda: stablejit.cond(True, lambda: snp.float16(1), lambda: 0.0))
    assert msg.startswith("cond: output leaf (the output itself) differs between branches: "
                          "false_fn returns f32[] (weakly typed"), msg
    assert "true_fn returns f16[]" in msg and ".astype(float32)" in msg, msg


def test_custom_root_and_associative_scan_errors():
    msg = _error(lambda: stablejit.lax.custom_root(
        lambda x: (x, x), snp.float32(2), lambda f, x: x, _tangent))
    assert msg.startswith("custom_root: f returns tuple(*, *) but initial_guess is *"), msg
    msg = _error(lambda: stablejit.lax.associative_scan(
        lambda x, y: x + y + 0.5, snp.arange(4, dtype=snp.int32)))
    assert msg.startswith("lax.associative_scan: fn changes the type"), msg
    assert "i32[" in msg and "f32[" in msg and ".astype(int32)" in msg, msg


# ---- the hang: raised while tracing, before anything runs -----------------------------------

def test_while_loop_hang_case_raises_while_tracing():
    # lower() traces and emits without running: the error must come from the trace
    f = stablejit.jit(lambda: stablejit.while_loop(lambda c: c < 3, lambda c: c + 0.5,
                                                   snp.asarray(np.int32(0))))
    with pytest.raises(TypeError, match="while_loop"):
        f.lower()


def test_while_loop_hang_case_raises_eagerly_in_bounded_time():
    # eagerly the loop would run in XLA's C++ (no signal gets to Python there), so the
    # case runs in a subprocess with a timeout: a regression fails instead of hanging
    code = textwrap.dedent("""
        import numpy as np, stablejit, stablejit.numpy as snp
        try:
            stablejit.while_loop(lambda c: c < 3, lambda c: c + 0.5,
                                 snp.asarray(np.int32(0)))
        except TypeError as e:
            print("RAISED", str(e).splitlines()[0])
        else:
            print("RETURNED")
    """)
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("while_loop with an int32 carry and a float body hangs")
    assert "RAISED while_loop: body_fun changes the type of carry" in r.stdout, \
        r.stdout + r.stderr
