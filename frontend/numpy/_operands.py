"""Operands of namespace functions: conversion to tensors (asarray, as_tensor, astype),
promotion to one dtype, broadcasting to one shape and axis checks.

Every other module of the namespace builds on these, so this module imports none of
them; asarray lives here, not with the creation functions, for that reason.
"""

from __future__ import annotations

import inspect
import itertools
import numbers
import operator
import sys
from collections.abc import Sequence

import numpy as np

from ..api import backend_copy, resolve_backend
from ..compiler import dtypes as dt
from ..compiler import symbolic as sym
from ..compiler.primitives import elementwise as ew
from ..compiler.primitives import reductions as red
from ..compiler.primitives import shape_ops as so
from ..compiler.symbolic import DimExpr
from ..dispatch import bind, bind1, current_backend
from ..errors import (
    TracerBoolConversionError,
    TracerConversionError,
    at_user_line,
    int_out_of_range,
    user_site,
)
from ..promotion import (
    DEFAULT_INT,
    check_python_int,
    default_complex,
    default_float,
    is_weak_scalar,
    operand_type,
    promote,
    python_scalar_dtype,
    result_type,
)
from ..tensor import Tensor

PY_SCALARS = (bool, int, float, complex)


def _python_scalar(x) -> bool:
    """A Python bool, int, float or complex; NumPy scalars such as np.float64 subclass
    float but keep their dtype, as in NumPy 2 and JAX."""
    return isinstance(x, PY_SCALARS) and not isinstance(x, np.generic)


_WEAK_STANDINS = {bool: False, int: 0, float: 0.0, complex: 0j}  # Python types as operands
_SEQUENCES = {list, tuple}


def _element_types(x, out: set) -> None:
    """The types of the numbers in nested lists and tuples: Python's number types, and the
    DTypes of NumPy scalars and arrays among them (one set() per level of a regular
    nesting, not per number)."""
    types = set(map(type, x))
    while types and types.issubset(_SEQUENCES):  # rows of rows: one level at a time, in C
        x = list(itertools.chain.from_iterable(x))
        types = set(map(type, x))
    if types.issubset(_WEAK_STANDINS):
        out |= types
        return
    for e in x:
        t = type(e)
        if t is list or t is tuple:
            _element_types(e, out)
        elif t in _WEAK_STANDINS:
            out.add(t)
        else:
            d = getattr(e, "dtype", None)
            out.add(dt.dtype(d) if isinstance(d, np.dtype) else t)


def _typed_elements(x) -> dt.DType | None:
    """The dtype of a list holding NumPy scalars or arrays, by jax's rule: they keep their
    dtypes, Python numbers among them are weak ([np.int32(1), 2] is int32, where NumPy's
    asarray gives the same but [np.float32(1), 2.0] would be float64 in x64 mode). None
    for Python numbers alone (they take the default dtypes) or anything else."""
    if type(x) is not list and type(x) is not tuple:
        return None
    types: set = set()
    try:
        _element_types(x, types)
    except (TypeError, KeyError):
        return None
    if types.issubset(_WEAK_STANDINS) or not all(
            isinstance(t, dt.DType) or t in _WEAK_STANDINS for t in types):
        return None
    return result_type(*(_WEAK_STANDINS.get(t, t) for t in types))


def _python_ints(x, np_dtype) -> np.ndarray:
    """np.asarray(x, np_dtype) for an integer dtype; a Python int in x beyond it raises
    the scalar's OverflowError (value, range, what to do), not NumPy's "Python int too
    large to convert to C long"."""
    try:
        return np.asarray(x, dtype=np_dtype)
    except OverflowError:
        info = np.iinfo(np_dtype)
        big = next((v for v in np.asarray(x, dtype=object).ravel().tolist()
                    if isinstance(v, int) and not info.min <= v <= info.max), None)
        if big is None:
            raise
        raise int_out_of_range(big, np.dtype(np_dtype).name, int(info.min),
                               int(info.max)) from None


def _from_python(x, dtype: dt.DType | None = None) -> np.ndarray:
    """Nested Python lists of numbers -> array of `dtype`, else of the default dtypes
    (NumPy scalars and arrays among them keep their dtypes, as in jax).

    Converted straight to the dtype asked for (never through float32), and Python ints
    out of its range raise OverflowError (as in jax) instead of wrapping."""
    if dtype is None:
        dtype = _typed_elements(x)
    if dtype is not None:
        return _python_ints(x, dtype.np) if dtype.is_integer else np.asarray(x, dtype=dtype.np)
    a = np.asarray(x)
    if a.dtype.kind == "f":
        return a.astype(default_float().np)
    if a.dtype.kind in "iuO":  # uint64 or object: Python ints beyond int64, or not numbers
        try:
            return _python_ints(x, DEFAULT_INT.np)
        except (TypeError, ValueError):
            return a
    if a.dtype.kind == "c":
        return a.astype(default_complex().np)
    return a


def _contains_tensor(x) -> bool:
    return isinstance(x, Tensor) or isinstance(x, (list, tuple)) and any(
        _contains_tensor(e) for e in x)


def asarray(obj, /, dtype=None, *, device=None, copy=None) -> Tensor:
    """A Tensor from a Tensor, NumPy array, Python scalar, nested sequence or buffer.

    Python data gets the default dtypes (float32, int64); NumPy data keeps its dtype.
    `device` is a backend (or "reference"/"xla[:platform[:id]]") to place it on.
    copy=None copies only when needed; copy=True always gives a new tensor; copy=False
    raises ValueError when a copy cannot be avoided (host data must always be copied to
    a device, and a dtype or device change copies).
    """
    if copy is False:
        if not isinstance(obj, Tensor):
            raise ValueError(at_user_line(
                f"asarray(copy=False): a {type(obj).__name__} must be copied to become a "
                f"tensor; use copy=None to allow it"))
        if dtype is not None and dt.dtype(dtype) is not obj.dtype or (
                device is not None and resolve_backend(device) is not obj._backend):
            raise ValueError(at_user_line(
                "asarray(copy=False): changing the dtype or device needs a copy; use "
                "copy=None to allow it"))
    out = _convert(obj, dtype, device)
    return copy_of(obj) if copy and out is obj else out


def has_value(t: Tensor) -> bool:
    """Whether t's value can be read, so a shape may depend on it (x[x > 0], nonzero):
    a concrete tensor, or one that a transformation's valued trace computes beside its
    IR (grad outside jit following Python on values, as jax's eager grad); not a value
    traced by jit or vmap."""
    if t._backend.concrete:
        return True
    try:
        t.numpy()
    except (TracerBoolConversionError, TracerConversionError):
        return False
    return True


def copy_of(t: Tensor) -> Tensor:
    """A new Tensor with t's value: a writable copy (x[i] = v rebinds only the tensor
    written to). Inside a trace it shares t's IR value, which is never written."""
    if t._backend.concrete:
        return backend_copy(t, t._backend)
    return Tensor(t._data, t._backend, t.type, t.weak)


def _short(x) -> str:
    """x's repr, cut to 60 characters, for an error message."""
    r = repr(x)
    return r if len(r) <= 60 else r[:57] + "..."


def _convert(x, dtype, device) -> Tensor:
    """asarray without the copy rules: x itself when it already fits."""
    backend = resolve_backend(device) if device is not None else None
    d = None if dtype is None else dt.dtype(dtype)
    if isinstance(x, Tensor):
        t = x
        if backend is not None and t._backend is not backend:
            t = backend_copy(t, backend)
        return t if d is None else astype(t, d)
    if backend is None:
        backend = current_backend()
    if _python_scalar(x):  # weak without a dtype, as jax.numpy.asarray(3)
        if d is not None:
            check_python_int(x, d)  # 2**63 as int64: the range, not "C long"
        return backend.scalar(x, d or python_scalar_dtype(x), weak=d is None and is_weak_scalar(x))
    if isinstance(x, (list, tuple)) and _contains_tensor(x):
        rows = _stack_rows([_convert(e, None, None) for e in x])
        return rows if d is None else astype(rows, d)
    if isinstance(x, np.ndarray) or isinstance(x, np.generic) or hasattr(x, "__array__"):
        a = np.asarray(x)
    elif type(x) is DimExpr:
        return _dimension_value(x, d, backend)
    else:
        a = _from_python(x, d)
    if a.dtype.kind not in "biufcV" and a.dtype not in (dt.bfloat16.np,):
        raise TypeError(f"Value {_short(x)} ({type(x).__name__}, NumPy dtype {a.dtype}) "
                        f"cannot be a tensor: stablejit tensors hold numbers and booleans; convert "
                        f"it to numbers first")
    if d is not None:
        a = a.astype(d.np)
    else:
        dt.dtype(a.dtype)  # raises a clear error for unsupported NumPy dtypes
    return backend.from_numpy(a)


def _dimension_value(n: DimExpr, d: dt.DType | None, backend) -> Tensor:
    """A symbolic size (export) used as a value, `x / x.shape[0]`: computed in the program
    as the sum of n ones in the default int (exact), weakly typed as a Python int is."""
    ones = bind1(so.broadcast_in_dim, backend.scalar(1, DEFAULT_INT), shape=(n,),
                 broadcast_dimensions=())
    out = bind1(red.reduce_sum, ones, axes=(0,))
    out.weak = d is None
    return out if d is None else astype(out, d)


def _stack_rows(rows: list[Tensor]) -> Tensor:
    """A sequence holding tensors: its elements stacked along a new first axis (what
    stack(rows) does; written here on the primitives so that conversion needs no
    module above this one)."""
    shape = rows[0].shape
    for i, t in enumerate(rows):
        if t.shape != shape:
            raise ValueError(at_user_line(
                f"asarray of a sequence of tensors: all elements need the same shape; "
                f"element {i} has {t.shape}, element 0 has {shape}"))
    ts, _ = promote_operands(*(bind1(so.reshape, t, shape=(1,) + shape) for t in rows))
    return ts[0] if len(ts) == 1 else bind1(so.concatenate, *ts, dimension=0)


dt.install_constructor(lambda value, dtype: asarray(value, dtype))  # float32(1.5)


def as_tensor(x, like: Tensor | None = None, *, stack: bool = False) -> Tensor:
    """Operands of namespace functions: Tensors pass through, scalars become weak tensors
    on the backend of `like` (or the default backend). A list or tuple holding traced
    tensors raises TypeError (see _traced_sequence_error), as jax.numpy's functions do;
    asarray, stack, concatenate and the other functions that take sequences of arrays
    accept them, and so does as_tensor(x, stack=True), for the few functions that jax
    lets stack them too (array_equal, vectorize, ...)."""
    if isinstance(x, Tensor):
        return x
    if _python_scalar(x):
        backend = like._backend if like is not None else current_backend()
        return backend.scalar(x, python_scalar_dtype(x), weak=is_weak_scalar(x))
    if like is not None and isinstance(x, (np.ndarray, np.generic)):
        return asarray(x, device=like._backend if like._backend.concrete else None)
    if not stack and isinstance(x, (list, tuple)) and _contains_traced(x):
        raise _traced_sequence_error(x)
    return asarray(x)


def _contains_traced(x) -> bool:
    """Whether x holds a value of a function being transformed: a traced tensor (jit,
    vmap, a loop body), or one on an eager grad's tape (concrete, but grad's list
    argument is a list of scalars as jit's is)."""
    if isinstance(x, Tensor):
        # a trace, or an eager grad's tape while it records (GradTape.recording)
        return not x._backend.concrete or getattr(x._backend, "recording", False)
    return isinstance(x, (list, tuple)) and any(_contains_traced(e) for e in x)


def _called_function() -> str:
    """The namespace function the user called ('snp.mean', 'snp.linalg.norm'), read off
    the stack (only on the error path): the outermost stablejit frame that runs a
    function of stablejit.numpy, .linalg or .fft. Functions made by a factory share one
    code object, so their frames are told apart by the closure's values."""
    codes: dict = {}
    for prefix, module in (("snp.", sys.modules.get(__package__)),
                           ("snp.linalg.", sys.modules.get(__package__ + ".linalg")),
                           ("snp.fft.", sys.modules.get(__package__ + ".fft"))):
        for name, fn in sorted(vars(module).items() if module else ()):
            if name.startswith("_") or not callable(fn) or isinstance(fn, type) or (
                    prefix != "snp." and name not in getattr(module, "__all__", ())):
                continue
            if getattr(module, getattr(fn, "__name__", ""), None) is fn:
                name = fn.__name__  # concatenate, not its alias concat
            for g in {fn, inspect.unwrap(fn)}:
                code = getattr(g, "__code__", None)
                if code is not None:
                    codes.setdefault(code, []).append((prefix + name, g))
    site = user_site()
    user_code = site[0] if site is not None else None
    frames, f = [], sys._getframe(1)
    while f is not None and f.f_code is not user_code:  # stablejit's frames
        frames.append(f)
        f = f.f_back
    for frame in reversed(frames):  # from the user's call inward
        for name, g in codes.get(frame.f_code, ()):
            cells = g.__closure__ or ()
            try:
                if all(frame.f_locals.get(v) is c.cell_contents
                       for v, c in zip(frame.f_code.co_freevars, cells, strict=True)):
                    return name
            except ValueError:  # an empty cell
                continue
    return "a stablejit.numpy function"


def _traced_sequence_error(x) -> TypeError:
    """Under jit (or grad, vmap, a loop body) a Python list of traced values is not an
    array: `x * 2` on it repeats the list, and a namespace function that stacked it
    silently would compute on whatever the list became. jax.numpy refuses it the same
    way; eagerly lists stay accepted, as in NumPy."""
    kind = type(x).__name__
    return TypeError(at_user_line(
        f"{_called_function()} got a {kind} of traced values (inside stablejit.jit, grad, "
        f"vmap or a loop body, a Python {kind} is not an array: a jitted function's list "
        f"argument is a {kind} of scalars, and list operations such as `x * 2` repeat "
        f"it). Pass an array: snp.asarray(x) or snp.stack(x), or give jit an array"))


def values_in(x: Tensor, values) -> Tensor:
    """`values` to store into x (setitem, .at[].set, fill values, inserted values) in x's
    dtype. Python and NumPy data are converted to it directly, as NumPy stores them, so
    a float64 value never rounds through float32 and an out-of-range int raises."""
    if isinstance(values, Tensor):
        return values if values.dtype is x.dtype else astype(values, x.dtype)
    return asarray(values, dtype=x.dtype, device=x._backend if x._backend.concrete else None)


def astype(x, dtype, copy: bool = True) -> Tensor:
    """x in `dtype`; a strong tensor, since the dtype was asked for (as in JAX)."""
    x = as_tensor(x)
    d = dt.dtype(dtype)
    if d is x.dtype:
        if not x.weak:
            return x
        out = copy_of(x)
        out.weak = False
        return out
    if x.dtype.is_complex and d is dt.bool_:  # nonzero, as NumPy and jax: 1j is True
        return bind1(ew.ne, x, full_like_tensor(0, x))
    if x.dtype.is_complex and not d.is_complex:
        x = bind1(ew.real, x)
        if d is x.dtype:
            return x
    return bind1(ew.convert, x, dtype=d)


# ---- broadcasting ------------------------------------------------------------------

_BROADCAST: dict = {}  # (shape, shape) -> their broadcast shape (a model has a few)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    if len(shapes) == 2 and type(shapes[0]) is tuple and type(shapes[1]) is tuple:
        out = _BROADCAST.get(shapes)
        if out is None:
            out = tuple([d if type(d) is DimExpr else int(d)  # symbolic: export
                         for d in _broadcast_shapes(shapes)])
            if len(_BROADCAST) < 4096:
                _BROADCAST[shapes] = out
        return out
    return _broadcast_shapes(shapes)


def _broadcast_shapes(shapes) -> tuple[int, ...]:
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        size = 1
        for s in shapes:
            d = s[i - ndim + len(s)] if i - ndim + len(s) >= 0 else 1
            if d != 1:
                if size not in (1, d):
                    raise ValueError(at_user_line(
                        "operands could not be broadcast together with shapes "
                        + " ".join(str(tuple(s)) for s in shapes)
                        + f" (axis {i - ndim} has sizes {size} and {d}); reshape or slice "
                          f"one of them, or add a new axis with x[..., None]"))
                size = d
        out.append(size)
    return tuple(out)


def broadcast_to(x, shape) -> Tensor:
    x = as_tensor(x)
    shape = as_shape(shape)
    if x.shape == shape:
        return x
    if len(shape) < x.ndim or broadcast_shapes(x.shape, shape) != shape:
        raise ValueError(at_user_line(f"cannot broadcast a tensor of shape {x.shape} to "
                                      f"shape {shape}"))
    return bind(so.broadcast_in_dim, (x,), so.trailing_broadcast(x.ndim, shape))[0]


def broadcast_arrays(*xs) -> tuple[Tensor, ...]:
    """The operands broadcast to one shape (a tuple: the array API 2025.12's, NumPy 2's)."""
    ts = [as_tensor(x) for x in xs]
    shape = broadcast_shapes(*(t.shape for t in ts))
    return tuple(broadcast_to(t, shape) for t in ts)


# ---- operand preparation -------------------------------------------------------------

def promote_operands(*xs, like: Tensor | None = None) -> tuple[list[Tensor], dt.DType]:
    """Tensors of one promoted dtype (Python scalars made directly in that dtype), by the
    table in promotion.py. When the result is weak, so is every converted operand (a
    bool tensor plus 2 is a weak int, as in JAX). Scalars are made on the backend of
    the first tensor operand, else of `like` (where(c, 0.0, 1.0): c's)."""
    if len(xs) == 2:  # the common case: two strong tensors of one dtype
        a, b = xs
        if type(a) is Tensor and type(b) is Tensor and a.type.dtype is b.type.dtype \
                and not a.weak and not b.weak:
            return [a, b], a.type.dtype
    like = next((x for x in xs if isinstance(x, Tensor)), like)
    dtype, weak = None, True
    for x in xs:
        d, w = operand_type(x if isinstance(x, Tensor) or _python_scalar(x) else asarray(x))
        dtype, weak = (d, w) if dtype is None else promote(dtype, weak, d, w)
    out = []
    for x in xs:
        if _python_scalar(x):
            backend = like._backend if like is not None else current_backend()
            out.append(backend.scalar(x, dtype, weak=weak))
            continue
        t = as_tensor(x, like)
        if t.dtype is not dtype:
            t = astype(t, dtype)
            t.weak = weak  # a fresh tensor: the conversion just made it
        out.append(t)
    return out, dtype


def prepare(*xs) -> tuple[list[Tensor], dt.DType]:
    """Promote to one dtype and broadcast to one shape."""
    if len(xs) == 2:
        a, b = xs
        if type(a) is Tensor and type(b) is Tensor and a.type == b.type:
            return [a, b], a.type.dtype  # the common case: nothing to do
    ts, dtype = promote_operands(*xs)
    shape = broadcast_shapes(*(t.shape for t in ts))
    return [broadcast_to(t, shape) for t in ts], dtype


def to_inexact(x: Tensor) -> Tensor:
    """Integers and booleans become the default float for float-only math; a weak int
    stays weak (sin(3) is a weak float32, as in JAX)."""
    if x.dtype.is_inexact:
        return x
    out = astype(x, default_float())
    out.weak = x.weak
    return out


def as_shape(shape) -> tuple[int, ...]:
    """A shape from an integer or a sequence of integers. As in NumPy, floats and strings
    raise TypeError (3.5 is not read as 3) and negative sizes raise ValueError."""
    try:
        if type(shape) is tuple or type(shape) is list:
            dims = tuple(map(sym.index, shape))  # ints, or symbolic dims (export)
        elif isinstance(shape, (str, bytes)):
            raise TypeError
        else:
            try:
                dims = (operator.index(shape),)
            except TypeError:
                dims = tuple(map(sym.index, shape))
    except TypeError:
        raise TypeError(at_user_line(
            f"a shape must be an integer or a sequence of integers, got {shape!r}")) from None
    if any(d < 0 for d in dims):
        raise ValueError(at_user_line(f"negative dimensions are not allowed: shape {dims}"))
    return dims


def normalize_axis(axis: int, ndim: int, name: str = "axis") -> int:
    # (an int first: the ABC's isinstance costs ~0.3 us, and reductions ask on every call)
    if type(axis) is not int and not isinstance(axis, numbers.Integral):
        try:  # (an integer scalar of NumPy, or a concrete 0-d tensor, as NumPy and jax take)
            axis = operator.index(axis)
        except TypeError:
            raise TypeError(at_user_line(
                f"{name} must be an integer, got {type(axis).__name__}")) from None
    if not -ndim <= axis < ndim:  # NumPy's words (SciPy's tests match them)
        prefix = "" if name == "axis" else f"{name}: "
        raise np.exceptions.AxisError(at_user_line(
            f"{prefix}axis {axis} is out of bounds for array of dimension {ndim}"))
    return int(axis) % ndim if ndim else 0


def normalize_axes(axis, ndim: int, name: str = "axis") -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (list, tuple)):
        axes = tuple(normalize_axis(a, ndim, name) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(at_user_line(f"repeated axis in {tuple(axis)}"))
        return axes
    return (normalize_axis(axis, ndim, name),)


def full_like_tensor(value, x: Tensor) -> Tensor:
    s = x._backend.scalar(value, x.dtype)
    return broadcast_to(s, x.shape)

