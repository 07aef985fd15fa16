"""Example cases of the primitives on bit patterns: clz and reduce_precision. The
expectations are independent of the reference rules: clz from Python's int.bit_length,
reduce_precision from NumPy's own casts to float16 (exponent 5, mantissa 10) and to
float32 (8, 23), which round to nearest even as XLA does."""

from __future__ import annotations

import numpy as np

from tests.support.dtype_groups import INT
from tests.support.prim_table.spec import PrimSpec


def _clz_operand(d, rng):
    info = np.iinfo(d.np)
    edges = [0, 1, info.max, info.min, info.max // 3, 5]
    v = rng.integers(info.min, info.max, 6, dtype=d.np, endpoint=True)
    return np.array(edges + list(v), d.np).reshape(2, 6)


def _clz(x):
    bits = 8 * x.dtype.itemsize
    return np.vectorize(lambda v: bits - (int(v) % (1 << bits)).bit_length(),
                        otypes=[x.dtype])(x)


def _rounded(x, *, exponent_bits, mantissa_bits):
    # float16's subnormals flush to zero under reduce_precision; NumPy's cast keeps them
    narrow = np.float16 if (exponent_bits, mantissa_bits) == (5, 10) else np.float32
    with np.errstate(all="ignore"):
        y = x.astype(narrow)
    y = np.where(np.abs(y) < np.finfo(narrow).smallest_normal, np.copysign(0, y), y)
    return y.astype(x.dtype)


_SPECIAL = [0.0, -0.0, 1.0, -2.5, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 65504.0, 65520.0, 1e5,
            1e-5, 6e-8, np.inf, -np.inf, 3.0e38, 1e-39, 0.1]

TABLE = {
    "clz": PrimSpec(INT, lambda d, rng: ([_clz_operand(d, rng)], {}), _clz, upcast=False),
    "reduce_precision": PrimSpec((), None, _rounded, upcast=False, extra=[
        (f"{t.__name__}-{e},{m}", [np.array(_SPECIAL, t)],
         {"exponent_bits": e, "mantissa_bits": m})
        for t in (np.float32, np.float64) for e, m in ((5, 10), (8, 23))]),
}
