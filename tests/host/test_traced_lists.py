"""A Python list (or tuple) of traced values given to a namespace function raises a
TypeError that says to pass an array, as jax.numpy's functions refuse lists of tracers;
the functions that take sequences of arrays (asarray, array, stack, concatenate, ...)
accept them, as in jax. Eagerly, lists stay accepted, as in NumPy.

The case that motivated it: a list passed to jit is a pytree of scalars, so in
`jit(lambda x: snp.mean(x * 2))([1., 2., 3.])`, `x * 2` is Python's list repetition and
the mean of the six scalars was silently 2.0 (the array answer is 4.0).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

A = np.arange(3, dtype=np.float32)
B = A + 1

# name -> f(namespace, list of two 1-d arrays of 3 elements)
CASES = {
    # jax accepts lists of tracers in these
    "asarray": lambda ns, l: ns.asarray(l),
    "array": lambda ns, l: ns.array(l),
    "stack": lambda ns, l: ns.stack(l),
    "concatenate": lambda ns, l: ns.concatenate(l),
    "concatenate(tuple)": lambda ns, l: ns.concatenate(tuple(l)),
    "hstack": lambda ns, l: ns.hstack(l),
    "vstack": lambda ns, l: ns.vstack(l),
    "dstack": lambda ns, l: ns.dstack(l),
    "column_stack": lambda ns, l: ns.column_stack(l),
    "block": lambda ns, l: ns.block(l),
    "select": lambda ns, l: ns.select([l[0] > 0, l[1] > 1], l, 0.0),
    "choose": lambda ns, l: ns.choose(ns.asarray([0, 1, 0]), l, mode="clip"),
    "lexsort": lambda ns, l: ns.lexsort(l),
    "meshgrid": lambda ns, l: ns.meshgrid(*l),
    "broadcast_arrays": lambda ns, l: ns.broadcast_arrays(*l),
    "einsum": lambda ns, l: ns.einsum("i,i->", *l),
    "piecewise": lambda ns, l: ns.piecewise(l[0], [l[0] > 0, l[1] > 2], [1.0, 2.0]),
    "linalg.multi_dot": lambda ns, l: ns.linalg.multi_dot(
        [ns.reshape(l[0], (3, 1)), ns.reshape(l[1], (1, 3))]),
    "array_equal": lambda ns, l: ns.array_equal(l, ns.stack(l)),
    "array_equiv": lambda ns, l: ns.array_equiv(ns.stack(l), l),
    "vectorize": lambda ns, l: ns.vectorize(lambda v: v * 2)(l),
    "fft.ihfft": lambda ns, l: ns.fft.ihfft(l),
    # and refuses them in these
    "mean": lambda ns, l: ns.mean(l),
    "mean(tuple)": lambda ns, l: ns.mean(tuple(l)),
    "sum": lambda ns, l: ns.sum(l),
    "max": lambda ns, l: ns.max(l),
    "argmax": lambda ns, l: ns.argmax(l),
    "var": lambda ns, l: ns.var(l),
    "all": lambda ns, l: ns.all(l),
    "cumsum": lambda ns, l: ns.cumsum(l),
    "add(list, scalar)": lambda ns, l: ns.add(l, 1.0),
    "add(scalar, list)": lambda ns, l: ns.add(1.0, l),
    "multiply(array, list)": lambda ns, l: ns.multiply(l[0], l),
    "maximum": lambda ns, l: ns.maximum(l, 0.0),
    "exp": lambda ns, l: ns.exp(l),
    "abs": lambda ns, l: ns.abs(l),
    "isnan": lambda ns, l: ns.isnan(l),
    "clip": lambda ns, l: ns.clip(l, 0.0, 1.0),
    "where": lambda ns, l: ns.where(True, l, 0.0),
    "reshape": lambda ns, l: ns.reshape(l, (-1,)),
    "transpose": lambda ns, l: ns.transpose(l),
    "ravel": lambda ns, l: ns.ravel(l),
    "flip": lambda ns, l: ns.flip(l),
    "squeeze": lambda ns, l: ns.squeeze(l),
    "expand_dims": lambda ns, l: ns.expand_dims(l, 0),
    "atleast_2d": lambda ns, l: ns.atleast_2d(l),
    "tile": lambda ns, l: ns.tile(l, 2),
    "pad": lambda ns, l: ns.pad(l, 1),
    "roll": lambda ns, l: ns.roll(l, 1),
    "append": lambda ns, l: ns.append(l[0], l),
    "diff": lambda ns, l: ns.diff(l),
    "sort": lambda ns, l: ns.sort(l),
    "take": lambda ns, l: ns.take(l, ns.asarray([0])),
    "zeros_like": lambda ns, l: ns.zeros_like(l),
    "full_like": lambda ns, l: ns.full_like(l, 2.0),
    "matmul": lambda ns, l: ns.matmul(l, l[0]),
    "outer": lambda ns, l: ns.outer(l, l[0]),
    "cross": lambda ns, l: ns.cross(l[0], l),
    "linalg.norm": lambda ns, l: ns.linalg.norm(l),
    "fft.fft": lambda ns, l: ns.fft.fft(l),
}


def outcome(ns, jit, fn) -> str:
    try:
        jit(lambda a, b: fn(ns, [a, b]))(A, B)
    except TypeError:
        return "TypeError"
    return "accepted"


@pytest.mark.parametrize("name", list(CASES))
def test_lists_of_traced_values_are_accepted_or_refused_as_in_jax(name):
    fn = CASES[name]
    want = outcome(jnp, jax.jit, fn)
    assert outcome(snp, stablejit.jit, fn) == want
    if want == "accepted":  # and give jax's values
        ours = stablejit.jit(lambda a, b: fn(snp, [a, b]))(A, B)
        theirs = jax.jit(lambda a, b: fn(jnp, [a, b]))(A, B)
        for o, t in zip(jax.tree.leaves(ours, is_leaf=lambda v: hasattr(v, "numpy")),
                        jax.tree.leaves(theirs), strict=True):
            np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-6)


@pytest.mark.parametrize("name", list(CASES))
def test_lists_are_accepted_eagerly_as_in_numpy(name):
    fn = CASES[name]
    for backend in ("xla", "reference"):
        with stablejit.default_backend(backend):
            fn(snp, [snp.asarray(A), snp.asarray(B)])  # tensors
            if name not in ("einsum", "meshgrid", "broadcast_arrays", "lexsort", "choose",
                            "vectorize"):
                fn(snp, [A, B])  # NumPy arrays


def test_the_error_names_the_function_and_says_to_pass_an_array():
    f = stablejit.jit(lambda x: snp.mean(x * 2))
    with pytest.raises(TypeError, match=r"snp\.mean got a list of traced values.*"
                                        r"snp\.asarray\(x\) or snp\.stack\(x\)"):
        f([1.0, 2.0, 3.0])
    assert float(f(np.array([1.0, 2.0, 3.0], np.float32))) == 4.0
    assert float(snp.mean(snp.asarray([1.0, 2.0, 3.0]) * 2)) == 4.0
    for fn, name in [(lambda x: snp.linalg.norm(x), r"snp\.linalg\.norm"),
                     (lambda x: snp.fft.fft(x), r"snp\.fft\.fft"),
                     (lambda x: x[0] + x, r"snp\.add"),
                     (lambda x: snp.sum(tuple(x)), r"snp\.sum got a tuple"),
                     (lambda x: snp.asarray(x).sum() + snp.exp(x), r"snp\.exp")]:
        with pytest.raises(TypeError, match=name):
            stablejit.jit(fn)([1.0, 2.0, 3.0])


def test_refused_under_grad_and_vmap_too():
    with pytest.raises(TypeError, match="list of traced values"):
        stablejit.grad(lambda x: snp.sum([x, x]))(1.0)
    with pytest.raises(TypeError, match="list of traced values"):
        stablejit.vmap(lambda x: snp.mean([x, x]))(snp.asarray(A))
    # the sequence functions still take them
    assert float(stablejit.grad(lambda x: snp.sum(snp.stack([x, x])))(1.0)) == 2.0


def test_lists_of_constants_inside_jit_are_accepted():
    """Only traced values are refused: a list of Python numbers or concrete tensors is
    a constant of the program (NumPy's reading, as eagerly)."""
    c = snp.asarray(B)
    out = stablejit.jit(lambda x: x + snp.mean([1.0, 2.0]) + snp.sum([c, c]))(A)
    np.testing.assert_allclose(np.asarray(out), A + 1.5 + 2 * B.sum())
