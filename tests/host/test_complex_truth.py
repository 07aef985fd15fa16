"""The truth of a complex number is `z != 0`, its imaginary part included (NumPy's and
jax's rule): astype(bool) and every function that reads truth (all, any, count_nonzero,
logical ops, where's condition), eagerly, under jit and on the reference backend. A
purely imaginary number was False when only the real part was read."""

from __future__ import annotations

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

Z = np.array([1j, -1j, 0j, -0.0 + 0j, 1 + 0j, 0.5 + 2j, complex(np.nan, 0),
              complex(0, np.nan), complex(0, np.inf), 1e-30j], np.complex128)

FUNCTIONS = {
    "astype(bool)": (lambda xp, z: xp.astype(z, xp.bool), lambda z: z.astype(bool)),
    "all": (lambda xp, z: xp.all(z[:, None], axis=1), lambda z: np.all(z[:, None], axis=1)),
    "any": (lambda xp, z: xp.any(z[:, None], axis=1), lambda z: np.any(z[:, None], axis=1)),
    "count_nonzero": (lambda xp, z: xp.count_nonzero(z), np.count_nonzero),
    "logical_not": (lambda xp, z: xp.logical_not(z), np.logical_not),
    "logical_and": (lambda xp, z: xp.logical_and(z, z), lambda z: np.logical_and(z, z)),
    "where": (lambda xp, z: xp.where(z, 1, 0), lambda z: np.where(z, 1, 0)),
}


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", list(FUNCTIONS))
@pytest.mark.parametrize("way", ["eager", "jit", "reference"])
def test_complex_truth_matches_numpy(name, dtype, way):
    ours, theirs = FUNCTIONS[name]
    z = Z.astype(dtype)
    want = theirs(z)
    if way == "jit":
        got = stablejit.jit(lambda t: ours(snp, t))(snp.asarray(z))
    elif way == "reference":
        with stablejit.default_backend("reference"):
            got = ours(snp, snp.asarray(z))
    else:
        got = ours(snp, snp.asarray(z))
    np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"{name} {way}")
