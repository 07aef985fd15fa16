"""What lax's functions share: the enums (Precision, RoundingMethod) and the operand rules
(one dtype, weak Python scalars, 0-d broadcasting) behind the generated elementwise ops."""

from __future__ import annotations

import builtins
import enum
from collections.abc import Callable

import numpy as np

from .. import numpy as snp
from ..dispatch import bind1
from ..errors import at_user_line
from ..numpy._operands import as_tensor
from ..tensor import Tensor


class Precision(enum.Enum):
    """`precision=` of products and convolutions, as jax's (frontend/precision.py): the
    host computes float32 in full precision whatever it says; GPUs take float32 products
    as TF32 under DEFAULT (jax's default too) and in full float32 under HIGHEST."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2




class RoundingMethod(enum.IntEnum):
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


# (lax.complex below shadows the builtin in this module)
_PY_SCALARS = (bool, int, float, builtins.complex)


def _is_weak(x) -> bool:
    """A Python scalar, or a weakly typed tensor (a Python scalar passed to jit)."""
    return (isinstance(x, _PY_SCALARS) and not isinstance(x, np.generic)
            ) or isinstance(x, Tensor) and x.weak


# the kinds of weak operands that may take a strong operand's dtype, by its kind
_WEAK_FITS = {"b": "b", "i": "i", "u": "i", "f": "if", "c": "ifc"}


def _same_dtype(name: str, *xs) -> list[Tensor]:
    """lax's operand rule: one dtype for all; weak operands take the strong one's dtype."""
    ts = [as_tensor(x) for x in xs]
    weak = [_is_weak(x) for x in xs]
    target = next((t for t, w in zip(ts, weak, strict=True) if not w), ts[0]).dtype
    out = []
    for i, (t, w) in enumerate(zip(ts, weak, strict=True)):
        if w and t.dtype is not target:
            if t.dtype.kind not in _WEAK_FITS[target.kind]:
                raise TypeError(at_user_line(
                    f"lax.{name}: operand {i} is a weak {t.dtype.name} scalar, which does not "
                    f"fit dtype {target.name}; convert it with lax.convert_element_type"))
            t = snp.astype(t, target)
        if t.dtype is not target:
            raise TypeError(at_user_line(
                f"lax.{name} requires arguments to have the same dtypes, got "
                f"{', '.join(u.dtype.name for u in ts)}; convert one with "
                f"lax.convert_element_type, or use stablejit.numpy, which promotes"))
        out.append(t)
    return out


def _same_shape(name: str, ts: list[Tensor]) -> list[Tensor]:
    """Equal shapes; a 0-d operand broadcasts to the others' shape."""
    shapes = {t.shape for t in ts if t.ndim}
    if len(shapes) > 1:
        raise TypeError(at_user_line(
            f"lax.{name}: operand shapes {[t.shape for t in ts]} differ; lax does not "
            f"broadcast (only 0-d operands do): use lax.broadcast_in_dim, or "
            f"stablejit.numpy, which broadcasts"))
    if not shapes:
        return ts
    (shape,) = shapes
    return [t if t.shape == shape else snp.broadcast_to(t, shape) for t in ts]


def _nary(name: str, prim, *xs) -> Tensor:
    return bind1(prim, *_same_shape(name, _same_dtype(name, *xs)))


def _binary_op(name: str, prim, doc: str) -> Callable:
    def op(x, y) -> Tensor:
        return _nary(name, prim, x, y)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


def _unary_op(name: str, prim, doc: str) -> Callable:
    def op(x) -> Tensor:
        return bind1(prim, as_tensor(x))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op
