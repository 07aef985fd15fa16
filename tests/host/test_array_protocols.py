"""Python's protocols on a tensor answer as on NumPy's and jax's arrays: iter, len,
np.iterable (SciPy's `if not np.iterable(args): args = (args,)` took a 0-d tensor for a
sequence when iter() raised only at the first next()), reversed, unpacking, and
copy.copy / copy.deepcopy (SciPy's find_root tests deepcopy keyword arguments holding
tensors; deepcopy failed on the PJRT device)."""

from __future__ import annotations

import copy

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
    "copy.copy": copy.copy,
    "copy.deepcopy": copy.deepcopy,
    "copy.deepcopy of a dict": lambda x: copy.deepcopy({"args": (x,), "tol": 0})["args"][0],
}


@pytest.mark.parametrize("value", VALUES, ids=lambda v: f"{v.dtype}{list(np.shape(v))}")
@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_protocols_answer_as_numpy_and_jax(name, value):
    f = PROTOCOLS[name]
    want = _outcome(f, np.asarray(value))
    assert _outcome(f, jnp.asarray(value)) == want  # the two peers agree on these
    assert _outcome(f, snp.asarray(value)) == want


@pytest.mark.parametrize("where", ["device", "reference", "view"])
@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy], ids=["copy", "deepcopy"])
def test_a_copy_is_a_new_writable_tensor(where, how):
    """As copy.copy / deepcopy of a NumPy array: a new array, writes do not reach the
    original (nor the original's base, for a view), on the original's backend."""
    base = snp.asarray([1.0, 2.0, 3.0], device="reference" if where == "reference" else None)
    x = base[1:] if where == "view" else base
    y = how(x)
    assert y is not x and y._backend is x._backend and y.dtype == x.dtype
    y[0] = -1.0
    np.testing.assert_array_equal(np.asarray(y)[0], -1.0)
    np.testing.assert_array_equal(base, [1.0, 2.0, 3.0])


# NumPy's ways to get an array from a tensor: those that copy (np.array's default
# copy=True, np.copy, asarray(copy=True), a dtype change) give a writable array of the
# caller's own, as for a NumPy or jax array; np.asarray gives the tensor's data read-only
# (a tensor is immutable: a write there would change it behind its back)
TO_NUMPY = {
    "np.array": (np.array, True),
    "np.copy": (np.copy, True),
    "np.asarray(copy=True)": (lambda t: np.asarray(t, copy=True), True),
    "np.array(dtype=float64)": (lambda t: np.array(t, dtype=np.float64), True),
    "np.asarray": (np.asarray, False),
    "np.array(copy=None)": (lambda t: np.array(t, copy=None), False),
}


@pytest.mark.parametrize("where", ["device", "reference", "view"])
@pytest.mark.parametrize("name", sorted(TO_NUMPY))
def test_numpy_copies_of_a_tensor_are_writable_and_never_alias_it(name, where):
    f, copies = TO_NUMPY[name]
    assert f(jnp.asarray([1.0, 2.0, 3.0])).flags.writeable == copies  # jax's answer
    base = snp.asarray([1.0, 2.0, 3.0], device="reference" if where == "reference" else None)
    t = base[1:] if where == "view" else base
    a = f(t)
    assert a.flags.writeable == copies
    if copies:
        a[0] = -1.0
    else:
        with pytest.raises(ValueError, match="read-only"):
            a[0] = -1.0
    np.testing.assert_array_equal(np.asarray(base), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("device", [None, "reference"], ids=["device", "reference"])
def test_a_tensor_made_from_a_numpy_array_keeps_its_value_when_the_array_changes(device):
    """asarray(ndarray) takes the array's value: later writes into the ndarray do not
    reach the tensor (the reference backend held the caller's array itself)."""
    n = np.array([1.0, 2.0, 3.0], np.float32)
    t = snp.asarray(n, device=device)
    u = snp.asarray(n[::-1], device=device)
    n[...] = -5.0
    np.testing.assert_array_equal(np.asarray(t), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(u), [3.0, 2.0, 1.0])
