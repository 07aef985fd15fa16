"""exact_key: the one way to make a dictionary key of a Python value that a program
depends on (static arguments, composite settings, scalar constants).

Python's == is too coarse for programs: 0.0 == -0.0 and 1 == 1.0 == True, yet each
traces to a different program (a sign, a dtype, a weak type). So a key holds the value's
type and, for floats, its bits (and a NaN equals itself).
"""

from __future__ import annotations

import struct

import numpy as np

from .compiler.dtypes import DType

_F64 = struct.Struct("<d")
_C128 = struct.Struct("<dd")
_AS_IS = frozenset((type(None), bool, int, str, DType, type))


def exact_key(v):
    """A hashable key equal only for values of one type and the same bits, or None
    when v is none of: None, bool, int, float, complex, str, a dtype, a type, a NumPy
    scalar, or a tuple of these (a subclass of float or int keys as itself)."""
    t = type(v)
    if t in _AS_IS:
        return t, v
    if isinstance(v, float):
        return t, _F64.pack(v)
    if isinstance(v, complex):
        return t, _C128.pack(v.real, v.imag)
    if isinstance(v, (int, str)):
        return t, v
    if isinstance(v, np.generic):
        return t, v.tobytes()
    if t is np.dtype or isinstance(v, np.dtype):
        return np.dtype, v.str
    if t is tuple:
        keys = tuple(map(exact_key, v))
        return None if None in keys else (t, keys)
    return None


def key_value(key):
    """The scalar an exact_key of a number stands for (its inverse for numbers)."""
    t, payload = key
    if issubclass(t, np.generic):
        return np.frombuffer(payload, np.dtype(t))[0]
    if issubclass(t, complex):
        return complex(*_C128.unpack(payload))
    if issubclass(t, float):
        return _F64.unpack(payload)[0]
    return payload
