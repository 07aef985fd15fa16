"""Writes into tensors: x[index] = v and x += y.

A Tensor's data is never written in place. `x[index] = v` computes x.at[index].set(v)
and writes it into the Tensor object through views.write, so every reference to x, and
every view of the same memory (x[1:], x.T ...), sees the new value, as in NumPy.

`x += y` computes x + y in x's shape and dtype (the array API's rule). On a view it is
written through, as NumPy's (`covariances[k] += reg` regularises the base, which
scikit-learn relies on). On any other tensor it binds the *name* x to the new tensor, as
JAX's immutable arrays do: another name for the old tensor keeps the old value, so a
JAX program that kept `x` in a list before `x += step` keeps its numbers. (The array API
leaves aliasing under in-place operators to the library.) Inside jit the Tensor's IR
value is rebound, and a write into an argument reaches the caller (see jit.py).

A tensor can only be rebound to a result of its own backend: writing a traced value
into a tensor from outside the trace (a global, a closure, the enclosing function of a
control-flow body) would be a side effect the compiled program cannot have.
"""

from __future__ import annotations

import numpy as np

from .. import views
from ..compiler import dtypes as dt
from ..errors import at_user_line
from ..tensor import Tensor
from ..tracebacks import filter_exception
from ._dtypes import astype
from ._elementwise import select
from ._indexing import _update
from ._manipulation import reshape
from ._operands import as_tensor, values_in

# x op= y: the method's name -> (the namespace function computing x op y, the operator)
INPLACE = {
    "iadd": ("add", "+="), "isub": ("subtract", "-="), "imul": ("multiply", "*="),
    "itruediv": ("divide", "/="), "ifloordiv": ("floor_divide", "//="),
    "imod": ("remainder", "%="), "ipow": ("power", "**="), "imatmul": ("matmul", "@="),
    "iand": ("bitwise_and", "&="), "ior": ("bitwise_or", "|="),
    "ixor": ("bitwise_xor", "^="), "ilshift": ("left_shift", "<<="),
    "irshift": ("right_shift", ">>="),
}


def _can_rebind(x: Tensor, new: Tensor) -> bool:
    if new._backend is x._backend:
        return True
    # grad's tape: grad stages the function, whose trace says what is wrong
    new._backend.needs_staging("a write into a tensor from outside the function")
    return new._backend.concrete  # a traced value cannot go into an outer tensor


def write(x: Tensor, new: Tensor, what: str, seen=views.ANY) -> bool:
    """x's value becomes new (x's shape and dtype), seen through every alias of x: the
    one way a namespace function writes into a tensor (x[i] = v, x op= y, put,
    place, fill_diagonal, put_along_axis); `what` names the write in errors. `seen`: the
    data of x's base that new was computed from; False where another thread's write
    replaced it meanwhile (nothing written: compute again, see `written`)."""
    b = new._backend
    if b is not x._backend and x._backend.concrete and not b.concrete and \
            b.write_outer(views.base_of(x)):  # a closed-over tensor: jit writes it back
        return views.write(x, new)
    if not _can_rebind(x, new):
        if b.records_all:  # a control-flow body (x may be an argument of jit around it)
            raise TypeError(at_user_line(
                f"{what} inside a control-flow body (of fori_loop, while_loop, scan, cond "
                f"or switch) would write into a {x.type} tensor from outside the body, "
                f"which a compiled loop or branch cannot do; carry the tensor in the "
                f"construct's state (fori_loop's init_val, while_loop's or scan's carry, "
                f"cond's operands) and return its new value from the body, or compute the "
                f"update functionally "
                f"(x2 = x.at[index].set(value))"))
        raise TypeError(at_user_line(
            f"{what} would write a traced value into a {x.type} tensor created outside "
            f"this jit trace (or outside this control-flow body); compute the update "
            f"functionally (x2 = x.at[index].set(value), x2 = x + y) and return x2, or "
            f"pass x to the jitted function as an argument (writes into arguments reach "
            f"the caller)"))
    return views.write(x, new, seen)


def written(x: Tensor, compute, what: str) -> Tensor:
    """Write compute() (x's new value, computed from x as it is) into x, again from the
    value that won where another thread wrote into x's memory meanwhile (views.write):
    two threads filling disjoint parts of one tensor both land. The new value."""
    base = views.base_of(x)
    while True:
        seen = base._data
        views.fresh(x, seen)
        new = compute()
        if write(x, new, what, seen):
            return new


def numpy_form(name: str, arg: str, arr, inplace: bool, compute) -> Tensor | None:
    """The two forms of NumPy's in-place functions (put, place, fill_diagonal,
    put_along_axis), given `compute(x)`, x's new value as a tensor. NumPy's form
    (inplace=True, the default): `arr` itself changes, through every view of it and,
    under jit, back in the caller; the result is None. JAX's form (inplace=False): arr
    stays as it is and the new tensor is the result. (jax raises for inplace=True; a
    NumPy caller ignores the None result, so a copy there would be a silent wrong
    answer.) `arg` is arr's parameter name, for errors."""
    if inplace and not isinstance(arr, Tensor):
        raise TypeError(at_user_line(
            f"{name} writes into {arg} in place (NumPy's default, inplace=True), but {arg} "
            f"is a {type(arr).__name__}, which stablejit cannot change: pass a stablejit "
            f"tensor, or inplace=False and use the returned tensor"))
    x = as_tensor(arr)
    if not inplace:
        return compute(x)
    base = views.base_of(arr)
    while True:
        seen = base._data
        views.fresh(x, seen)
        new = compute(x)
        # (nothing to write, an empty selection, leaves arr as it is)
        if new is x or write(arr, new, f"{name}({arg}, ...)", seen):
            return None


def setitem(x: Tensor, index, value) -> None:
    """x[index] = value: NumPy's indexing forms; the value broadcasts to the indexed
    shape and is cast to x's dtype (as NumPy does, e.g. 2.7 into an int tensor is 2)."""
    try:  # x[i] = v is this function: a public boundary, inline (free until a raise)
        _check_python_scalar(x, value)

        def compute():
            new = _masked_set(x, index, value)
            return _update(x, index, value, "set", last_wins=True) if new is None else new
        written(x, compute, "x[...] = value")
    except Exception as e:
        filter_exception(e)
        raise


def _check_python_scalar(x: Tensor, value) -> None:
    """What NumPy refuses when it stores a Python scalar: a complex into a real tensor,
    NaN or infinity into an integer one, an integer outside the dtype's range."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, complex)):
        return
    d = x.dtype
    if isinstance(value, complex) and not d.is_complex and d is not dt.bool_:  # (bool:
        # NumPy stores value != 0)
        raise TypeError(at_user_line(
            f"cannot store the complex value {value!r} in a {d} tensor; store its real "
            f"part (value.real) or make the tensor complex"))
    if d.is_integer and isinstance(value, float) and not np.isfinite(value):
        error = ValueError if np.isnan(value) else OverflowError  # NumPy's (Python's) types
        raise error(at_user_line(f"cannot store {value!r} in a {d} tensor"))
    if d.is_integer and isinstance(value, int):
        info = np.iinfo(d.np)
        if not info.min <= value <= info.max:
            raise OverflowError(at_user_line(
                f"Python integer {value} is out of bounds for {d} (range {info.min} to "
                f"{info.max})"))


def _masked_set(x: Tensor, index, value) -> Tensor | None:
    """x[mask] = scalar as where(mask, scalar, x): no data-dependent shape, so it also
    compiles inside jit. None when the index is not one mask over x's leading axes or
    the value has more than one element."""
    if isinstance(index, tuple) and len(index) == 1:
        index = index[0]
    if not isinstance(index, (Tensor, np.ndarray)) or dt.dtype(index.dtype) is not dt.bool_:
        return None
    if index.ndim == 0 or index.shape != x.shape[:index.ndim]:
        return None
    v = values_in(x, value)
    if v.size != 1:
        return None
    mask = as_tensor(index, like=x)
    mask = reshape(mask, mask.shape + (1,) * (x.ndim - mask.ndim))
    return select(mask, reshape(v, ()), x)


def inplace(name: str, f, symbol: str):
    """The Tensor method for `x <name>= y`: f(x, y) as a new tensor with x's shape and
    dtype (the array API's rule; NumPy's same_kind casting: `int_tensor += 1.5` raises,
    `float32_tensor += float64_tensor` stays float32): written through when x is a view,
    else bound to the name x (see the module docstring)."""
    def compute(self: Tensor, other) -> Tensor:
        new = f(self, other)
        if new.shape != self.shape:
            raise ValueError(at_user_line(
                f"x {symbol} y: the result has shape {new.shape}, but x has shape "
                f"{self.shape}; an in-place operator cannot change x's shape. Write "
                f"x = x {symbol[:-1]} y to make a new tensor"))
        if new.dtype is not self.dtype:
            if not np.can_cast(new.dtype.np, self.dtype.np, "same_kind"):
                raise TypeError(at_user_line(
                    f"x {symbol} y: the result is {new.dtype}, which cannot be stored in "
                    f"x's dtype {self.dtype} (NumPy's same_kind rule); write "
                    f"x = x {symbol[:-1]} y to get a {new.dtype} tensor, or cast y first"))
            new = astype(new, self.dtype)
        return new

    def op(self: Tensor, other) -> Tensor:
        try:  # a public boundary, inline (free until something is raised)
            if not views.writes_in_place(self):
                return compute(self, other)
            written(self, lambda: compute(self, other), f"x {symbol} y")
            return self
        except Exception as e:
            filter_exception(e)
            raise

    op.__name__ = f"__{name}__"
    return op
