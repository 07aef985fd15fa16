"""Products of boolean tensors (matmul, @, dot, vdot, inner, outer, tensordot, einsum,
vecdot, matvec, kron): NumPy's and jax's bool, the logical or of the ands; eagerly, under
jit and under vmap. They were refused with 'convert them to an integer dtype first'."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp


def _bools(shape, seed):
    return np.random.default_rng(seed).random(shape) > 0.6


# (name, f(namespace, a, b), shape of a, shape of b)
FUNCS = [
    ("matmul 2x2", lambda m, a, b: m.matmul(a, b), (3, 4), (4, 5)),
    ("matmul batched", lambda m, a, b: m.matmul(a, b), (2, 3, 4), (4, 2)),
    ("matmul vector", lambda m, a, b: m.matmul(a, b), (4,), (4, 3)),
    ("@", lambda m, a, b: a @ b, (3, 4), (4,)),
    ("matmul empty inner", lambda m, a, b: m.matmul(a, b), (2, 0), (0, 3)),
    ("matmul empty rows", lambda m, a, b: m.matmul(a, b), (0, 3), (3, 2)),
    ("dot", lambda m, a, b: m.dot(a, b), (2, 3, 4), (5, 4, 2)),
    ("dot scalar", lambda m, a, b: m.dot(a, b), (), (3,)),
    ("vdot", lambda m, a, b: m.vdot(a, b), (3, 4), (12,)),
    ("inner", lambda m, a, b: m.inner(a, b), (3, 4), (2, 4)),
    ("outer", lambda m, a, b: m.outer(a, b), (3,), (2, 2)),
    ("tensordot 2", lambda m, a, b: m.tensordot(a, b), (2, 3, 4), (3, 4, 5)),
    ("tensordot axes", lambda m, a, b: m.tensordot(a, b, ((0,), (1,))), (3, 2), (4, 3)),
    ("einsum ij,jk", lambda m, a, b: m.einsum("ij,jk->ik", a, b), (3, 4), (4, 2)),
    ("einsum batch", lambda m, a, b: m.einsum("bij,bjk->bik", a, b), (2, 3, 4), (2, 4, 2)),
    ("einsum sums out", lambda m, a, b: m.einsum("ij,kl->i", a, b), (3, 4), (2, 2)),
    ("einsum trace", lambda m, a, b: m.einsum("ii,jj", a, b), (3, 3), (2, 2)),
    ("vecdot", lambda m, a, b: m.vecdot(a, b), (3, 4), (4,)),
    ("matvec", lambda m, a, b: m.matvec(a, b), (3, 4), (4,)),
    ("kron", lambda m, a, b: m.kron(a, b), (2, 2), (2, 3)),
]


@pytest.mark.parametrize("name, f, sa, sb", FUNCS, ids=[c[0] for c in FUNCS])
@pytest.mark.parametrize("seed", [0, 1])
def test_products_of_booleans_are_numpys(name, f, sa, sb, seed):
    a, b = _bools(sa, seed), _bools(sb, seed + 10)
    want = np.asarray(f(np, a, b))
    assert want.dtype == np.bool_
    for got in (f(snp, snp.asarray(a), snp.asarray(b)),
                stablejit.jit(lambda x, y: f(snp, x, y))(snp.asarray(a), snp.asarray(b))):
        assert got.dtype == snp.bool_ and got.shape == want.shape
        np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("name, f", [("matmul", lambda m, a, b: m.matmul(a, b)),
                                     ("einsum", lambda m, a, b: m.einsum("ij,j->i", a, b)),
                                     ("dot", lambda m, a, b: m.dot(a, b))])
def test_vmap_of_a_boolean_product_is_jaxs(name, f):
    a, b = _bools((4, 3, 5), 2), _bools((4, 5), 3)
    want = jax.vmap(lambda x, y: f(jnp, x, y))(a, b)
    got = stablejit.vmap(lambda x, y: f(snp, x, y))(snp.asarray(a), snp.asarray(b))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), want)


def test_a_preferred_integer_type_counts_the_true_products_as_jax():
    a, b = _bools((3, 6), 4), _bools((6, 2), 5)
    want = jnp.matmul(a, b, preferred_element_type=jnp.int32)
    got = snp.matmul(snp.asarray(a), snp.asarray(b), preferred_element_type=snp.int32)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), want)


def test_a_boolean_and_an_integer_operand_promote_as_numpy():
    a, b = _bools((3, 4), 6), np.arange(8, dtype=np.int32).reshape(4, 2)
    got = snp.asarray(a) @ snp.asarray(b)
    assert got.dtype == snp.int32
    np.testing.assert_array_equal(np.asarray(got), a @ b)
