"""An axis out of range raises NumPy's AxisError with NumPy's words ("axis 10 is out of
bounds for array of dimension 1", jax's too), which SciPy's input-validation tests match
(stats' test_correlation checks '...axis 10 is out of bounds for array...'); the
user's line follows on its own line. Table over the functions that take an axis."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
import stablejit.numpy as snp

CALLS = {
    "sum": lambda m, x: m.sum(x, axis=10), "mean": lambda m, x: m.mean(x, axis=-5),
    "std": lambda m, x: m.std(x, axis=3), "max": lambda m, x: m.max(x, axis=2),
    "argmax": lambda m, x: m.argmax(x, axis=4), "cumsum": lambda m, x: m.cumsum(x, axis=7),
    "sort": lambda m, x: m.sort(x, axis=3), "argsort": lambda m, x: m.argsort(x, axis=-3),
    "expand_dims": lambda m, x: m.expand_dims(x, 5), "squeeze": lambda m, x: m.squeeze(
        x, axis=6), "moveaxis": lambda m, x: m.moveaxis(x, 4, 0),
    "flip": lambda m, x: m.flip(x, axis=9), "take": lambda m, x: m.take(x, m.asarray([0]),
                                                                        axis=3),
    "concatenate": lambda m, x: m.concatenate([x, x], axis=2),
    "stack": lambda m, x: m.stack([x, x], axis=4), "diff": lambda m, x: m.diff(x, axis=3),
    "median": lambda m, x: m.median(x, axis=8), "any": lambda m, x: m.any(x, axis=-9),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_an_axis_out_of_range_says_what_numpy_says(name):
    x = np.ones((2, 3))
    with pytest.raises(np.exceptions.AxisError) as want:
        CALLS[name](np, x)
    with pytest.raises(np.exceptions.AxisError) as got:
        CALLS[name](snp, snp.asarray(x))
    first = str(got.value).split("\n")[0]
    assert first == str(want.value), (first, str(want.value))
    assert "\n  (at " + __file__ in str(got.value)  # the user's line, apart
    try:
        CALLS[name](jnp, jnp.asarray(x))
    except Exception as e:  # noqa: BLE001 - jax says the same where it raises AxisError
        if isinstance(e, np.exceptions.AxisError):
            assert str(e) == str(want.value)
