"""roll with a shift known only when the program runs (a jit argument, a vmapped one):
the same values as NumPy's roll with that shift, as jax.numpy.roll gives. The shift never
decides roll's shape; it was refused with the reason that it did."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

# (shape, axis, shifts to try: ints, or lists of one int per axis)
CASES = [((5,), None, [0, 2, -1, 7, -13]), ((5,), 0, [0, 3, -4, 10]),
         ((2, 3), None, [1, -7]), ((2, 3), 1, [1, -1, 5]), ((2, 3), -2, [1, 3]),
         ((2, 3), (0, 1), [[1, 2], [-3, 4], [0, 0]]), ((2, 3), (1, 1), [[1, 1]]),
         ((2, 3), (0, 1), [5]), ((3, 0), 1, [2]), ((0,), 0, [3]), ((4,), None, [[1, 2]])]
PARAMS = [(shape, axis, s) for shape, axis, shifts in CASES for s in shifts]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
@pytest.mark.parametrize("shape, axis, shift", PARAMS)
def test_a_traced_shift_rolls_as_numpy(shape, axis, shift, dtype):
    x = (np.arange(int(np.prod(shape))).reshape(shape) % 3).astype(dtype)
    want = np.roll(x, shift, axis=axis)
    got = stablejit.jit(lambda t, s: snp.roll(t, s, axis=axis))(snp.asarray(x),
                                                              snp.asarray(shift))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


def test_vmap_over_the_shift_rolls_each_row_by_its_own():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    s = np.array([1, -1, 4, 0], np.int32)
    got = stablejit.vmap(lambda r, k: snp.roll(r, k))(snp.asarray(x), snp.asarray(s))
    np.testing.assert_array_equal(np.asarray(got),
                                  np.stack([np.roll(r, k) for r, k in zip(x, s, strict=True)]))


def test_grad_through_a_traced_roll_is_jaxs():
    x = np.linspace(-1, 1, 6, dtype=np.float32)
    w = np.arange(6, dtype=np.float32)

    def loss(ns):
        return lambda t, k: ns.sum(ns.roll(t, k) * w)
    for k in (0, 2, -5):
        got = stablejit.jit(stablejit.grad(loss(snp)))(snp.asarray(x), snp.asarray(k))
        want = jax.jit(jax.grad(loss(jnp)))(jnp.asarray(x), jnp.asarray(k))
        np.testing.assert_allclose(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("shift, error", [(np.float32(1.5), TypeError),
                                          (np.ones((2, 2), np.int32), TypeError),
                                          (np.ones(3, np.int32), ValueError)])
def test_a_traced_shift_of_the_wrong_kind_is_a_clear_error(shift, error):
    with pytest.raises(error, match="roll: "):
        stablejit.jit(lambda t, s: snp.roll(t, s, axis=(0, 1)))(snp.zeros((2, 3)),
                                                                snp.asarray(shift))
