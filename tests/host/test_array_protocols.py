"""Python's protocols on a tensor answer as on NumPy's and jax's arrays: iter, len,
np.iterable (SciPy's `if not np.iterable(args): args = (args,)` took a 0-d tensor for a
sequence when iter() raised only at the first next()), reversed and unpacking."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
import stablejit.numpy as snp

VALUES = [np.float32(1.5), np.array([1.0, 2.0], np.float32), np.zeros((0,), np.float32),
          np.arange(6, dtype=np.int32).reshape(2, 3), np.array(True)]


def _outcome(f, x):
    """What f(x) gives: a value (lists of NumPy values) or the exception's type."""
    try:
        out = f(x)
    except Exception as e:  # noqa: BLE001 - the type is the answer
        return type(e)
    if isinstance(out, (list, tuple)):
        return [np.asarray(v).tolist() for v in out]
    return np.asarray(out).tolist()


PROTOCOLS = {
    "np.iterable": np.iterable,
    "iter": lambda x: list(iter(x)),
    "len": len,
    "reversed": lambda x: list(reversed(x)),
    "unpack": lambda x: [*x],
}


@pytest.mark.parametrize("value", VALUES, ids=lambda v: f"{v.dtype}{list(np.shape(v))}")
@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_protocols_answer_as_numpy_and_jax(name, value):
    f = PROTOCOLS[name]
    want = _outcome(f, np.asarray(value))
    assert _outcome(f, jnp.asarray(value)) == want  # the two peers agree on these
    assert _outcome(f, snp.asarray(value)) == want
