"""Example cases of the host-callback primitives: a Python function of NumPy arrays
(module-level, so every case and run shares one callback per primitive and dtype)."""

from __future__ import annotations

import numpy as np
from stablejit.compiler.ir import TensorType
from stablejit.compiler.primitives.callbacks import HostCallback

from tests.support.dtype_groups import FLOAT
from tests.support.prim_table.spec import PrimSpec, values

_SHAPE = (2, 3)
_CALLBACKS: dict = {}


def _callback(kind: str, d, chained: bool) -> HostCallback:
    """f(x, y) = (x * 2 + y, sum of x) computed in Python."""
    key = (kind, d, chained)
    if key not in _CALLBACKS:
        t = TensorType(_SHAPE, d)
        _CALLBACKS[key] = HostCallback(
            lambda x, y: ((x * 2 + y).astype(d.np), np.asarray(x.sum(), d.np)),
            (t, TensorType((), d)), kind, "sequential", f"{kind}_example", chained)
    return _CALLBACKS[key]


def _expected(*ops, callback):
    x, y = ops[-2:]
    out = ((x * 2 + y).astype(x.dtype), np.asarray(x.sum(), x.dtype))
    return out + ((np.asarray(ops[0]),) if callback.chained else ())


def _make(kind: str, chained: bool):
    def make(d, rng):
        x, y = values(d, rng, _SHAPE), values(d, rng, _SHAPE)
        token = [np.zeros((), np.uint8)] if chained else []
        return token + [x, y], {"callback": _callback(kind, d, chained)}
    return make


TABLE = {
    "host_callback": PrimSpec(FLOAT, _make("io", True), _expected, upcast=False),
    "pure_callback": PrimSpec(FLOAT, _make("pure", False), _expected, upcast=False),
}
