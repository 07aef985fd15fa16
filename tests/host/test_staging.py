"""Every transformation stages the user's function through staging.stage: its Python runs
once per staging, and at most twice when it reads a value (a Python `if` on data
inside an eager grad: once abstractly or on the grad tape, once more on values). The
count of Python runs is the public observable; the values are compared with jax."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

X = np.array([0.5, -1.5, 2.0], np.float32)


def branching(np_):
    """A loss whose Python branches on a value, and one that does not."""
    def loss(x):
        if np_.sum(x) > 0:
            return np_.sum(x * x * 3.0)
        return np_.sum(np_.sin(x))
    return loss


def straight(np_):
    def loss(x):
        return np_.sum(np_.tanh(x) * x)
    return loss


def _transforms(lib):
    """name -> (transformation applied to f, how many Python runs it may take at most
    when f reads a value / when it does not)."""
    return {
        "grad": (lambda f: lib.grad(f), 2, 1),
        "value_and_grad": (lambda f: lib.value_and_grad(f), 2, 1),
        "vjp": (lambda f: lambda x: lib.vjp(f, x)[1](np.float32(1.0))[0], 2, 1),
        "jvp": (lambda f: lambda x: lib.jvp(f, (x,), (np.ones_like(X),))[1], 2, 1),
        "jacrev": (lambda f: lib.jacrev(f), 2, 1),
        "jacfwd": (lambda f: lib.jacfwd(f), 2, 1),
    }


@pytest.mark.parametrize("reads_value", [True, False], ids=["reads a value", "straight"])
@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize("name", list(_transforms(stablejit)))
def test_python_runs_at_most_twice_and_values_match_jax(name, lazy, reads_value):
    make = branching if reads_value else straight
    runs = [0]
    f = make(snp)

    def counted(x):
        runs[0] += 1
        return f(x)

    ours, most_reads, most_straight = _transforms(stablejit)[name]
    theirs = _transforms(jax)[name][0]
    for x in (X, -X):  # both branches
        runs[0] = 0
        if lazy:
            with stablejit.lazy():
                got = ours(counted)(snp.asarray(x))
                got = jax.tree_util.tree_map(np.asarray, got)
        else:
            got = ours(counted)(snp.asarray(x))
        want = theirs(make(jnp))(jnp.asarray(x))
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want),
                        strict=True):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-6, atol=1e-6)
        assert 1 <= runs[0] <= (most_reads if reads_value else most_straight), runs[0]


@pytest.mark.parametrize("name, run", [
    ("jit", lambda f, x: stablejit.jit(f)(x)),
    ("vmap", lambda f, x: stablejit.vmap(f)(snp.stack([x, x]))),
    ("cond", lambda f, x: stablejit.lax.cond(True, f, f, x)),
    ("fori_loop body", lambda f, x: stablejit.lax.fori_loop(0, 3, lambda i, c: c + f(x), 0.0)),
    ("scan body", lambda f, x: stablejit.lax.scan(lambda c, e: (c + f(e), c), 0.0,
                                                  snp.stack([x, x]))[0]),
    ("checkpoint", lambda f, x: stablejit.grad(stablejit.checkpoint(f))(x)),
    ("eval_shape", lambda f, x: stablejit.eval_shape(f, x)),
    ("make_jaxpr", lambda f, x: stablejit.make_jaxpr(f)(x)),
])
def test_staging_runs_the_python_once(name, run):
    """Constructs that stage abstractly run the function's Python once per staging (a
    cond stages each branch once; here both branches are the same function)."""
    runs = [0]
    f = straight(snp)

    def counted(x):
        runs[0] += 1
        return f(x)

    run(counted, snp.asarray(X))
    most = 2 if name in ("cond", "checkpoint") else 1
    assert 1 <= runs[0] <= most, runs[0]


def test_a_traced_value_read_names_the_transformation():
    """Under jit there are no values: the branch is an error that names the
    transformation and says what to use instead (never a third run)."""
    with pytest.raises(stablejit.TracerBoolConversionError, match="stablejit.grad"):
        stablejit.jit(stablejit.grad(branching(snp)))(snp.asarray(X))
