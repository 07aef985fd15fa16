"""The stablejit.numpy names composed from layers above the namespace (vmap and
scipy.special), installed into it by the package (stablejit/__init__.py calls `install`
once, at import): vectorize,
apply_along_axis, apply_over_axes and fromfunction run on vmap (vectorize.py), and i0
and kaiser use scipy.special's i0 (with its derivative rule). vmap and scipy import the
namespace, so the namespace cannot import them; installing from above keeps the import
graph free of cycles, as numpy/_methods.py does for Tensor's operators.
"""

from __future__ import annotations

from . import numpy as snp
from .compiler import dtypes as dt
from .errors import at_user_line
from .numpy._creation import arange, ones
from .numpy._elementwise import abs, divide, select, sqrt, subtract
from .numpy._operands import as_tensor, astype, to_inexact
from .numpy._windows import window_length
from .promotion import default_float
from .scipy.special import i0
from .tensor import Tensor
from .vectorize import apply_along_axis, apply_over_axes, fromfunction, vectorize


def kaiser(M, beta) -> Tensor:
    """The Kaiser window: i0(beta sqrt(1 - ((n - a) / a)**2)) / i0(beta), a = (M - 1) / 2,
    in the default float dtype (beta's, when it is a float tensor); beta may be traced."""
    m = window_length(M, "kaiser")
    b = to_inexact(as_tensor(beta))
    out_dtype = default_float() if b.weak else b.dtype
    if b.dtype.is_complex:
        raise TypeError(at_user_line("kaiser: beta must be real, got a complex value"))
    if m <= 1:
        return ones((max(m, 0),), out_dtype)
    alpha = (m - 1) / 2.0
    r = divide(subtract(arange(m, dtype=dt.float64), alpha), alpha)
    arg = sqrt(select(abs(r) > 1.0, 0.0, subtract(1.0, r * r)))  # rounding: keep it real
    work = dt.float64 if out_dtype is dt.float64 else dt.float32
    bw = astype(b, work)
    return astype(divide(i0(bw * astype(arg, work)), i0(bw)), out_dtype)


NAMES = {"apply_along_axis": apply_along_axis, "apply_over_axes": apply_over_axes,
         "fromfunction": fromfunction, "vectorize": vectorize, "i0": i0, "kaiser": kaiser}


def install() -> None:
    """Put NAMES into stablejit.numpy (and its __all__)."""
    for name, f in NAMES.items():
        setattr(snp, name, f)
        if name not in snp.__all__:
            snp.__all__.append(name)
