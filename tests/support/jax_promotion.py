"""JAX's type promotion as the oracle for stablejit's (frontend/promotion.py).

JAX runs with 64-bit types enabled (its lattice then has every dtype stablejit has and
canonicalizes nothing). A weak result takes the default dtype of its kind: JAX's are
int64/float64/complex128 there, stablejit's are int64/float32/complex64 (docs/numerics.md, "Type
promotion"), so weak results are compared by kind and mapped to stablejit's defaults.
"""

from __future__ import annotations

import jax
import numpy as np
from stablejit.compiler import dtypes as dt

STABLEJIT_DEFAULT = {"i": dt.int64, "u": dt.int64, "f": dt.float32, "c": dt.complex64}


def as_jax_operand(x):
    """A stablejit dtype as a JAX dtype; Python scalars stay Python scalars."""
    return x.np if isinstance(x, dt.DType) else x


def expected(jax_dtype, weak: bool) -> tuple[dt.DType, bool]:
    """stablejit's (dtype, weak) for what JAX gave."""
    d = dt.dtype(np.dtype(jax_dtype))
    if weak and d.kind != "b":
        return STABLEJIT_DEFAULT[d.kind], True
    return d, False


def result_type(*operands) -> tuple[dt.DType, bool]:
    """jax.numpy.result_type (with its weak flag) over stablejit dtypes and Python
    scalars, as stablejit's dtype and weak flag."""
    with jax.enable_x64(True):
        d, weak = jax.dtypes.result_type(*map(as_jax_operand, operands),
                                         return_weak_type_flag=True)
    return expected(d, weak)
