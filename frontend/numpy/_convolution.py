"""One-dimensional convolution and correlation: convolve and correlate.

Both are one XLA convolution of the 1-D operands (as a batch of one, one feature),
padded for the 'full' result and sliced for 'same' and 'valid' as NumPy does.
correlate conjugates its second operand, as NumPy and JAX.
"""

from __future__ import annotations

import builtins

from ..compiler import dtypes as dt
from ..compiler.primitives import convolution as cv
from ..dispatch import bind1
from ..errors import at_user_line
from ..precision import converted
from ..precision import pair as precision_pair
from ..promotion import DEFAULT_INT
from ..tensor import Tensor
from ._elementwise import conj
from ._manipulation import flip, reshape
from ._operands import promote_operands

_MODES = ("full", "same", "valid")


def _full_correlation(a: Tensor, v: Tensor, precision=None) -> Tensor:
    """c[k] = sum_n a[n + k] * v[n] for k from -(len(v) - 1) to len(a) - 1."""
    n, m = a.shape[0], v.shape[0]
    extra = {} if precision is None else {"precision": precision}
    out = bind1(cv.convolution, reshape(a, (1, 1, n)), reshape(v, (1, 1, m)),
                window_strides=(1,), padding=((m - 1, m - 1),), lhs_dilation=(1,),
                rhs_dilation=(1,), feature_group_count=1, batch_group_count=1,
                dimension_numbers=((0, 1, 2), (0, 1, 2), (0, 1, 2)), **extra)
    return reshape(out, (n + m - 1,))


def _operands(name: str, a, v, mode: str) -> tuple[Tensor, Tensor]:
    if mode not in _MODES:
        raise ValueError(at_user_line(f"{name}: mode must be 'full', 'same' or 'valid', got "
                                      f"{mode!r}"))
    (a, v), d = promote_operands(a, v)
    for what, t in (("a", a), ("v", v)):
        if t.ndim != 1 or t.shape[0] == 0:
            raise ValueError(at_user_line(f"{name}: {what} must be a non-empty 1-D tensor, "
                                          f"got shape {t.shape}"))
    if d is dt.bool_:
        a, v = a.astype(DEFAULT_INT), v.astype(DEFAULT_INT)
    return a, v


def _cut(full: Tensor, n: int, m: int, mode: str) -> Tensor:
    """NumPy's 'same' (length max(n, m)) and 'valid' (length max - min + 1) parts."""
    if mode == "full":
        return full
    lo, hi = builtins.min(n, m), builtins.max(n, m)
    start = (lo - 1) // 2 if mode == "same" else lo - 1
    return full[start: start + (hi if mode == "same" else hi - lo + 1)]


def _in(operands, preferred_element_type, p):
    """(the operands in preferred_element_type, the products' precision: HIGHEST for
    integers made floats)."""
    if preferred_element_type is None:
        return operands, p
    target = dt.dtype(preferred_element_type)
    return tuple(x.astype(target) for x in operands), converted(p, operands, target)


def convolve(a, v, mode: str = "full", *, precision=None,
             preferred_element_type=None) -> Tensor:
    """The discrete linear convolution of two 1-D tensors (precision= and
    preferred_element_type= as jax's: the operands are computed in that dtype)."""
    p = precision_pair(precision, "convolve")
    (a, v), p = _in(_operands("convolve", a, v, mode), preferred_element_type, p)
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    return _cut(_full_correlation(a, flip(v), p), a.shape[0], v.shape[0], mode)


def correlate(a, v, mode: str = "valid", *, precision=None,
              preferred_element_type=None) -> Tensor:
    """The cross-correlation sum_n a[n + k] * conj(v[n]) of two 1-D tensors (precision=
    and preferred_element_type= as convolve's)."""
    p = precision_pair(precision, "correlate")
    (a, v), p = _in(_operands("correlate", a, v, mode), preferred_element_type, p)
    n, m = a.shape[0], v.shape[0]
    if m > n:  # NumPy's order: the reversed correlation of the swapped operands
        return flip(conj(_cut(_full_correlation(v, conj(a), p), m, n, mode)))
    return _cut(_full_correlation(a, conj(v), p), n, m, mode)
