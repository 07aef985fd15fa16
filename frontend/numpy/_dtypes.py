"""Data type functions of the array API: astype, can_cast, finfo, iinfo, isdtype,
result_type; NumPy's issubdtype with its abstract scalar types (generic, number,
integer, floating, ...: NumPy's own classes, as JAX exports them), and the predicates
isscalar, iscomplexobj and isrealobj. Promotion itself is decided in one place,
frontend/promotion.py."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..compiler import dtypes as dt
from ..errors import at_user_line
from ..promotion import promote as _promote
from ..promotion import result_type as _result_type
from ..tensor import Tensor
from ._operands import as_tensor, asarray, copy_of
from ._operands import astype as _astype


def _dtype_of(x) -> dt.DType:
    if isinstance(x, Tensor):
        return x.dtype
    if hasattr(x, "dtype") and not isinstance(x, type):
        return dt.dtype(x.dtype)
    return dt.dtype(x)


class _DTypeType(type):
    """The type of `dtype` below: isinstance/issubclass answer for stablejit's DType, and
    calling it makes one, as np.dtype(...) does."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, dt.DType)

    def __subclasscheck__(cls, sub) -> bool:
        return isinstance(sub, type) and issubclass(sub, dt.DType)

    def __call__(cls, obj, align: bool = False, copy: bool = False) -> dt.DType:
        try:
            return _dtype_of(obj)
        except (TypeError, KeyError):
            raise TypeError(at_user_line(
                f"stablejit.numpy.dtype: {obj!r} is not a dtype stablejit has; use one of "
                f"{', '.join(d.name for d in dt.ALL)}, as a name, a NumPy dtype or scalar "
                f"type")) from None


class dtype(metaclass=_DTypeType):  # noqa: N801 - NumPy's name
    """stablejit.numpy.dtype(x): the dtype a spelling names ("float32", "f4", np.float32,
    np.dtype("int64"), snp.int8) or that a tensor or array has, as np.dtype and
    jnp.dtype give one; `isinstance(snp.float32, snp.dtype)` holds. Python's float, int
    and complex name the default dtypes (float32, int64, complex64), as stablejit reads
    them in `dtype=` everywhere (jax without x64 gives float32 for float too)."""


def astype(x, dtype, /, *, copy: bool = True, device=None) -> Tensor:
    """x converted to `dtype` (and placed on `device` if given); copy=False gives back x
    itself when no conversion is needed. Complex -> real keeps the real part, as NumPy
    does (with a ComplexWarning there)."""
    x = as_tensor(x)
    out = _astype(x, dtype)
    if device is not None:
        out = asarray(out, device=device)
    return copy_of(x) if copy and out is x else out


def can_cast(from_, to, /) -> bool:
    """Whether `from_` (a dtype or tensor) converts to `to` keeping every value: NumPy's
    "safe" casting, as jax.numpy.can_cast. (This is not the promotion table: int32 with
    float32 promotes to float32, yet not every int32 is a float32.)"""
    a, b = _dtype_of(from_), dt.dtype(to)
    return bool(np.can_cast(a.np, b.np, "safe"))


# Python's int, float and complex as dtypes are weakly typed, as in JAX: like a Python
# scalar of that type (result_type(float, float16) is float16); bool is not
_WEAK_TYPES = {int: 0, float: 0.0, complex: 0j}


def _spelled(x):
    """A dtype spelling (a NumPy dtype or scalar type, a name, a Python type) as a DType
    or a Python scalar standing for a weak type; anything else unchanged."""
    if isinstance(x, type):
        return _WEAK_TYPES[x] if x in _WEAK_TYPES else dt.dtype(x)
    if isinstance(x, (np.dtype, str)):
        return dt.dtype(x)
    return x


def result_type(*arrays_and_dtypes) -> dt.DType:
    """The dtype that combining these tensors, dtypes (in any spelling: np.float32,
    np.dtype("int64"), "float32", float) and Python scalars gives."""
    if not arrays_and_dtypes:
        raise ValueError(at_user_line("result_type needs at least one tensor or dtype"))
    return _result_type(*map(_spelled, arrays_and_dtypes))


@dataclass(frozen=True)
class finfo_object:  # noqa: N801 - the array API's lower-case type names
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: dt.DType
    resolution: float
    tiny: float


@dataclass(frozen=True)
class iinfo_object:  # noqa: N801
    bits: int
    max: int
    min: int
    dtype: dt.DType


def finfo(type, /) -> finfo_object:  # noqa: A002 - the array API's parameter name
    """Machine limits of a floating-point or complex dtype (of its real parts)."""
    d = _dtype_of(type)
    if not d.is_inexact:
        raise TypeError(at_user_line(f"finfo needs a floating-point or complex dtype, got "
                                     f"{d.name}; use iinfo for integers"))
    r = dt.real_dtype(d)
    f = dt.finfo(r)
    return finfo_object(bits=r.bits, eps=float(f.eps), max=float(f.max), min=float(f.min),
                        smallest_normal=float(f.smallest_normal), dtype=r,
                        resolution=float(f.resolution), tiny=float(f.tiny))


def iinfo(type, /) -> iinfo_object:  # noqa: A002
    """Machine limits of an integer dtype."""
    d = _dtype_of(type)
    if not d.is_integer:
        raise TypeError(at_user_line(f"iinfo needs an integer dtype, got {d.name}; use finfo "
                                     f"for floating-point types"))
    i = dt.iinfo(d)
    return iinfo_object(bits=d.bits, max=int(i.max), min=int(i.min), dtype=d)


_KINDS = {
    "bool": "b",
    "signed integer": "i",
    "unsigned integer": "u",
    "integral": "iu",
    "real floating": "f",
    "complex floating": "c",
    "numeric": "iufc",
}


def isdtype(dtype, kind) -> bool:
    """Whether `dtype` is of `kind`: a dtype, one of the standard's kind names ('bool',
    'signed integer', 'unsigned integer', 'integral', 'real floating', 'complex floating',
    'numeric'), or a tuple of those."""
    # a NumPy dtype and a scalar type have .shape and .dtype too: only values are refused
    if not isinstance(dtype, (dt.DType, np.dtype, str, type)) and hasattr(dtype, "dtype"):
        raise TypeError(at_user_line(f"isdtype takes a dtype, not a {type(dtype).__name__} "
                                     f"value: use x.dtype"))
    d = dt.dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(d, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(at_user_line(f"isdtype: unknown kind {kind!r}; use a dtype or "
                                          f"one of {', '.join(map(repr, _KINDS))}"))
        return d.kind in _KINDS[kind]
    return d is dt.dtype(kind)


def promote_types(a, b) -> dt.DType:
    """The dtype both `a` and `b` convert to, by stablejit's promotion table (the one
    `a + b` uses on tensors of these dtypes)."""
    return _promote(dt.dtype(a), False, dt.dtype(b), False)[0]


# NumPy's abstract scalar types, as the dtype kinds each one covers
_ABSTRACT_KINDS = {
    np.generic: "biufc", np.number: "iufc", np.integer: "iu", np.signedinteger: "i",
    np.unsignedinteger: "u", np.inexact: "fc", np.floating: "f", np.complexfloating: "c",
    np.character: "", np.flexible: "",  # strings and bytes: no tensor dtype is one
}

# the abstract types, exported by the namespace under NumPy's names
generic, number, integer, signedinteger = np.generic, np.number, np.integer, np.signedinteger
unsignedinteger, inexact, floating = np.unsignedinteger, np.inexact, np.floating
complexfloating, character, flexible = np.complexfloating, np.character, np.flexible


def issubdtype(arg1, arg2) -> bool:
    """Whether dtype `arg1` is `arg2` or below it in NumPy's type hierarchy (np.floating,
    np.integer, np.number, ...). bfloat16 counts as a floating type, as in JAX."""
    # Python's bool, int, float and complex mean NumPy's (and JAX's) bool, int64, float64
    # and complex128 here, not the default dtypes: issubdtype(float32, float) is False
    d = dt.dtype(np.dtype(arg1)) if arg1 in _PY_TYPES else _dtype_of(arg1)
    if isinstance(arg2, type) and arg2 in _ABSTRACT_KINDS:
        return d.kind in _ABSTRACT_KINDS[arg2]
    return d is (dt.dtype(np.dtype(arg2)) if arg2 in _PY_TYPES else dt.dtype(arg2))


_PY_TYPES = (bool, int, float, complex)


float_ = dt.float64  # NumPy's and JAX's aliases of the 64-bit types
int_ = dt.int64
complex_ = dt.complex128
single, double = dt.float32, dt.float64  # NumPy's C-style names
csingle, cdouble = dt.complex64, dt.complex128


def isscalar(element) -> bool:
    """Whether element is a scalar: a Python or NumPy scalar, or a 0-d tensor or array
    (JAX's rule; NumPy says False for 0-d arrays)."""
    if np.isscalar(element):
        return True
    if isinstance(element, (Tensor, np.ndarray)):
        return element.ndim == 0
    return False


def iscomplexobj(x) -> bool:
    """Whether x has a complex dtype (whatever its values); None is not."""
    if x is None:
        return False
    if isinstance(x, Tensor):
        return x.dtype.is_complex
    d = getattr(x, "dtype", None)
    kind = np.dtype(d).kind if d is not None and not isinstance(x, type) else \
        np.asarray(x).dtype.kind
    return kind == "c"


def isrealobj(x) -> bool:
    """Whether x does not have a complex dtype."""
    return not iscomplexobj(x)
