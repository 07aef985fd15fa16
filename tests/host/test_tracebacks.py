"""Traceback filtering (frontend/tracebacks.py): a user error that leaves a public call
(jit, a transformation, control flow, a namespace function, an operator or method)
carries the user's frames only, the same frames as jax's filtered traceback of the same
program, with its message unchanged; with filtering off the internal frames are back.

Each case is one user program written once against a namespace of functions, run with
stablejit's and with jax's (None where jax accepts the program or has no such call)."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import textwrap
import traceback
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import config, tracebacks

OURS = SimpleNamespace(
    np=snp, jit=stablejit.jit, grad=stablejit.grad, vmap=stablejit.vmap, jvp=stablejit.jvp,
    vjp=stablejit.vjp, jacrev=stablejit.jacrev, checkpoint=stablejit.checkpoint,
    while_loop=stablejit.while_loop, fori_loop=stablejit.fori_loop, cond=stablejit.cond,
    switch=stablejit.switch, scan=stablejit.scan, map=stablejit.lax.map,
    custom_jvp=stablejit.custom_jvp, key=lambda: stablejit.random.key(0),
    random=stablejit.random)
JAX = SimpleNamespace(
    np=jnp, jit=jax.jit, grad=jax.grad, vmap=jax.vmap, jvp=jax.jvp, vjp=jax.vjp,
    jacrev=jax.jacrev, checkpoint=jax.checkpoint, while_loop=jax.lax.while_loop,
    fori_loop=jax.lax.fori_loop, cond=jax.lax.cond, switch=jax.lax.switch,
    scan=jax.lax.scan, map=jax.lax.map, custom_jvp=jax.custom_jvp,
    key=lambda: jax.random.key(0), random=jax.random)


# ---- the user programs: each raises at a line of this file ---------------------------------

def shape_mismatch_in_jit(s):
    def f(x, y):
        return x + y
    return s.jit(f)(s.np.ones(3), s.np.ones(4))


def grad_of_non_scalar(s):
    return s.grad(lambda x: x * 2)(s.np.ones(3))


def bad_axis(s):
    return s.np.sum(s.np.ones(3), axis=2)


def while_loop_type_mismatch(s):
    return s.while_loop(lambda c: c < 3, lambda c: c + 0.5, s.np.asarray(np.int32(0)))


def cond_branch_mismatch(s):
    return s.cond(True, lambda: s.np.ones(2), lambda: s.np.ones(3))


def switch_branch_mismatch(s):
    return s.switch(1, [lambda x: x, lambda x: x[:1]], s.np.ones(2))


def fori_loop_in_jit(s):
    def f(x):
        return s.fori_loop(0, 3, lambda i, c: c.astype(s.np.float16), x)
    return s.jit(f)(s.np.ones(2))


def scan_carry_shape(s):
    return s.scan(lambda c, x: (c[None], x), s.np.ones(()), s.np.ones(3))


def index_out_of_bounds(s):
    return s.np.ones(3)[5]


def reshape_size(s):
    return s.np.reshape(s.np.ones(6), (4,))


def matmul_shapes(s):
    return s.np.ones((2, 3)) @ s.np.ones((2, 3))


def vmap_axis_sizes(s):
    return s.vmap(lambda a, b: a + b)(s.np.ones(3), s.np.ones(4))


def users_own_error_in_jit(s):
    def f(x):
        raise ValueError("my own error")
    return s.jit(f)(s.np.ones(2))


def bool_of_traced(s):
    return s.jit(lambda x: 1.0 if x > 0 else 0.0)(s.np.ones(()))


def concatenate_shapes(s):
    return s.np.concatenate([s.np.ones((2, 3)), s.np.ones((2, 4))])


def grad_of_int_input(s):
    return s.grad(lambda x: x * x)(3)


def jvp_tangent_shape(s):
    return s.jvp(lambda x: x * 2, (s.np.ones(3),), (s.np.ones(4),))


def nested_transformations(s):
    def loss(w, x):
        return s.np.sum(w @ x)
    return s.jit(s.vmap(s.grad(loss), in_axes=(None, 0)))(s.np.ones((2, 3)),
                                                           s.np.ones((5, 2)))


def map_body_error(s):
    return s.map(lambda x: x @ x, s.np.ones((3, 2, 4)))


def custom_jvp_rule_error(s):
    @s.custom_jvp
    def f(x):
        return x * 2

    @f.defjvp
    def f_jvp(primals, tangents):
        return f(primals[0]), tangents[0][:1]
    return s.jvp(f, (s.np.ones(3),), (s.np.ones(3),))


def random_bad_shape(s):
    return s.random.normal(s.key(), (2, -1))


def eager_operator(s):
    return s.np.ones(3) + s.np.ones(4)


def method_bad_axis(s):
    return s.np.ones(3).sum(axis=3)


def mean_bad_axis(s):  # (a one_program composite: called from C on the native path)
    return s.np.mean(s.np.ones((2, 3)), axis=4)


def transpose_bad_axes(s):  # (a view FastOp: its Python function raises)
    return s.np.transpose(s.np.ones((2, 3)), (0, 0))


def checkpoint_in_grad(s):
    return s.grad(s.checkpoint(lambda x: x * s.np.ones(4)))(s.np.ones(3))


def setitem_out_of_bounds(s):
    x = s.np.zeros(3)
    x[5] = 1.0
    return x


NUMPY = SimpleNamespace(np=np)  # the peer where jax accepts the program (x[5] clamps)
CASES = [(c, JAX) for c in (
    shape_mismatch_in_jit, grad_of_non_scalar, bad_axis, while_loop_type_mismatch,
    cond_branch_mismatch, switch_branch_mismatch, fori_loop_in_jit, scan_carry_shape,
    reshape_size, matmul_shapes, vmap_axis_sizes, users_own_error_in_jit, bool_of_traced,
    concatenate_shapes, grad_of_int_input, jvp_tangent_shape, nested_transformations,
    map_body_error, custom_jvp_rule_error, random_bad_shape, eager_operator,
    method_bad_axis, mean_bad_axis, transpose_bad_axes, checkpoint_in_grad)] + [
    (index_out_of_bounds, NUMPY), (setitem_out_of_bounds, NUMPY)]


def _raise(case, s) -> BaseException:
    try:
        case(s)
    except Exception as e:
        return e
    pytest.fail(f"{case.__name__} raised nothing")


def _frames(e) -> list[tuple[str, int, str]]:
    return [(f.filename, f.lineno, f.name) for f in traceback.extract_tb(e.__traceback__)]


def _ours(frames) -> list:
    package = os.path.dirname(os.path.dirname(stablejit.__file__))
    return [f for f in frames if f[0].startswith(tuple(
        os.path.join(package, d) + os.sep for d in ("frontend", "compiler", "runtime")))]


def _users(frames) -> list:
    return [f for f in frames if f[0] == __file__]


@pytest.fixture
def filtering():
    """Sets traceback filtering for one test, then puts the setting back."""
    before = config.traceback_filtering
    yield lambda mode: config.update("traceback_filtering", mode)
    config.update("traceback_filtering", before)


@pytest.mark.parametrize("case,peer", CASES, ids=[c.__name__ for c, _ in CASES])
def test_a_filtered_traceback_holds_the_users_frames_as_jax_s_does(filtering, case, peer):
    filtering("on")
    e = _raise(case, OURS)
    frames = _frames(e)
    assert len(_ours(frames)) <= 1, frames
    assert frames[-1][0] == __file__, frames  # the last frame is the user's line
    tail = str(e).rpartition("(at ")[2]
    if tail != str(e):  # the message's location is a line of the traceback
        file, line = tail.rstrip(")").rsplit(":", 2)[:2]
        assert (file, int(line)) in [(f, n) for f, n, _ in frames], (tail, frames)
    assert e.__notes__.count(tracebacks.NOTE) == 1
    peers = _frames(_raise(case, peer))
    assert _users(frames) == _users(peers), (frames, peers)

    filtering("off")
    full = _raise(case, OURS)
    assert type(full) is type(e) and str(full) == str(e)  # the message is unchanged
    assert len(_ours(_frames(full))) >= 2
    assert _users(_frames(full)) == _users(frames)
    assert tracebacks.NOTE not in getattr(full, "__notes__", ())


@pytest.mark.parametrize("spelling", ["traceback_filtering", "jax_traceback_filtering",
                                      "stablejit_traceback_filtering"])
@pytest.mark.parametrize("value,want", [("off", "off"), (False, "off"), ("on", "on"),
                                        (True, "on"), ("auto", "on"), ("0", "off"),
                                        ("quiet_remove_frames", "on")])
def test_the_setting_reads_back_in_every_spelling(filtering, spelling, value, want):
    filtering("on" if want == "off" else "off")
    config.update(spelling, value)
    assert config.traceback_filtering == want
    assert config.jax_traceback_filtering == want


@pytest.mark.parametrize("value", ["tracebackhide", "maybe", "", 2, None, 1.0])
def test_a_bad_setting_names_the_values(filtering, value):
    with pytest.raises(ValueError, match="takes 'on' or 'off'"):
        config.update("traceback_filtering", value)


def test_the_environment_variable_turns_it_off():
    code = textwrap.dedent("""
        import traceback, stablejit, stablejit.numpy as snp
        try:
            snp.sum(snp.ones(3), axis=2)
        except Exception as e:
            print(sum("/frontend/" in f.filename for f in traceback.extract_tb(e.__traceback__)))
    """)
    counts = []
    for value in ("off", "on"):
        env = {**os.environ, "STABLEJIT_TRACEBACK_FILTERING": value}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        counts.append(int(out.stdout))
    assert counts[0] >= 2 and counts[1] == 0


def test_chained_exceptions_are_filtered_too(filtering):
    filtering("on")

    def f(x):
        try:
            return snp.sum(x, axis=4)
        except np.exceptions.AxisError as e:
            raise RuntimeError("wrapped") from e
    e = _raise(lambda s: stablejit.jit(f)(snp.ones(2)), OURS)
    assert not _ours(_frames(e)) and not _ours(_frames(e.__cause__))


def _annotated(a: int, b=2) -> float:
    "doc"


_annotated.extra = 1


class _WithMethod:
    def method(self):
        "method doc"


# every kind of callable a transformation wraps: tracebacks._wraps must copy what
# functools.update_wrapper copies (its plain-function steps are written out)
_WRAPPED = [("annotated function with a __dict__", _annotated),
            ("method", _WithMethod.method), ("lambda", lambda x: x),
            ("partial", functools.partial(_annotated, 1)), ("builtin", len),
            ("jitted", stablejit.jit(lambda x: x)), ("grad", stablejit.grad(lambda x: x * x))]


@pytest.mark.parametrize("wrapped", [w for _, w in _WRAPPED], ids=[n for n, _ in _WRAPPED])
def test_boundary_metadata_is_update_wrappers(wrapped):
    from stablejit.tracebacks import _wraps

    def make():
        def wrapper():
            pass
        return wrapper
    a, b = make(), make()
    functools.update_wrapper(a, wrapped)
    _wraps(b, wrapped)
    for attr in ("__module__", "__name__", "__qualname__", "__doc__", "__annotations__",
                 "__wrapped__"):
        assert getattr(a, attr, None) == getattr(b, attr, None), attr
    assert vars(a) == vars(b)
