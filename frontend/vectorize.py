"""Functions of arrays built from functions of smaller pieces, on stablejit.vmap (as JAX
builds them): vectorize, apply_along_axis, apply_over_axes and fromfunction. They are
stablejit.numpy names, but vmap imports the namespace, so they live above both and the
package installs them into the namespace (numpy_composed.py).

The function is traced once per call with batched values, not called once per element
as NumPy does, so it must be written with stablejit operations (no Python `if` on its
arguments' values: use where or stablejit.cond).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from .errors import at_user_line
from .numpy._creation import arange
from .numpy._manipulation import expand_dims, squeeze
from .numpy._operands import as_shape, as_tensor, broadcast_shapes, normalize_axis
from .tensor import Tensor
from .vmap import vmap as _vmap


def apply_along_axis(func1d: Callable, axis: int, arr, *args, **kwargs) -> Tensor:
    """func1d applied to every 1-D slice of arr along `axis` (extra arguments passed
    along); its result's axes replace that axis."""
    a = as_tensor(arr)
    n = a.ndim
    ax = normalize_axis(axis, n)

    def func(x):
        return func1d(x, *args, **kwargs)
    for i in range(1, n - ax):  # the axes after `axis`: mapped, their results put last
        func = _vmap(func, in_axes=i, out_axes=-1)
    for _ in range(ax):  # the axes before it: mapped in front
        func = _vmap(func, in_axes=0, out_axes=0)
    return func(a)


def apply_over_axes(func: Callable, a, axes) -> Tensor:
    """func(a, axis) applied for each axis in turn, each result the next input; a
    result with one axis fewer gets it back (size 1), as a reduction with keepdims."""
    x = as_tensor(a)
    for axis in ([axes] if isinstance(axes, int) else axes):
        b = as_tensor(func(x, axis))
        if b.ndim == x.ndim:
            x = b
        elif b.ndim == x.ndim - 1:
            x = expand_dims(b, axis)
        else:
            raise ValueError(at_user_line(
                f"apply_over_axes: func(a, {axis}) returned shape {b.shape} for an input of "
                f"shape {x.shape}; it must keep the number of axes or remove one"))
    return x


def fromfunction(function: Callable, shape, *, dtype=float, **kwargs) -> Tensor:
    """function called with one index tensor per axis of `shape` (each entry's
    coordinates, in `dtype`: the default float by default), through vmap."""
    dims = as_shape(shape)
    f = functools.partial(function, **kwargs) if kwargs else function
    for i in range(len(dims)):
        f = _vmap(f, in_axes=tuple(0 if j == i else None for j in range(len(dims)))[::-1])
    return f(*(arange(n, dtype=dtype) for n in dims))


# ---- vectorize -------------------------------------------------------------------------

_DIM = r"\w+"
_CORE = rf"(?:{_DIM}(?:,{_DIM})*)?"
_ARG = rf"\({_CORE}\)"
_ARGS = rf"{_ARG}(?:,{_ARG})*"
_SIGNATURE = re.compile(rf"^{_ARGS}->{_ARGS}$")


def _parse_signature(signature: str):
    """'(m,n),(n)->(m)' -> ([('m', 'n'), ('n',)], [('m',)])."""
    s = signature.replace(" ", "")
    if not _SIGNATURE.match(s):
        raise ValueError(at_user_line(
            f"vectorize: not a valid gufunc signature: {signature!r}; write it as "
            f"'(m,n),(n)->(m)'"))
    ins, outs = s.split("->")

    def args(part):
        return [tuple(d for d in re.findall(_DIM, a)) for a in re.findall(_ARG, part)]
    return args(ins), args(outs)


def _core_sizes(sizes: dict, shape, core, what: str) -> None:
    if len(shape) < len(core):
        raise ValueError(at_user_line(
            f"vectorize: {what} has shape {shape}, fewer axes than its core dimensions "
            f"{core} in the signature"))
    for name, n in zip(core, shape[len(shape) - len(core):], strict=True):
        if sizes.setdefault(name, n) != n:
            raise ValueError(at_user_line(
                f"vectorize: core dimension {name!r} has size {n} in {what} but "
                f"{sizes[name]} elsewhere; arguments must agree on it"))


class vectorize:  # noqa: N801 - NumPy's and JAX's name
    """pyfunc made to take arrays: its arguments broadcast together and it is mapped
    (with vmap) over every axis but the core ones of `signature` ('(n),(n)->()':
    vectors in, a scalar out; none: scalars in and out). Arguments named in `excluded`
    (positions or keyword names) are passed as they are."""

    def __init__(self, pyfunc: Callable, *, excluded=frozenset(), signature=None):
        if not callable(pyfunc):
            raise TypeError(at_user_line(f"vectorize: pyfunc must be callable, got "
                                         f"{pyfunc!r}"))
        self.pyfunc = pyfunc
        self.excluded = frozenset(excluded)
        self.signature = signature
        self._cores = _parse_signature(signature) if signature is not None else None
        functools.update_wrapper(self, pyfunc)

    def __call__(self, *args, **kwargs):
        dynamic = [k for k in kwargs if k not in self.excluded]
        if dynamic:
            raise TypeError(at_user_line(
                f"vectorize: keyword argument(s) {dynamic} are not vectorized; pass them "
                f"positionally, or list them in excluded= to pass them as they are"))
        fixed = {i: a for i, a in enumerate(args) if i in self.excluded or a is None}
        # (lists of traced values are stacked, as jax's vectorize does)
        mapped = [as_tensor(a, stack=True) for i, a in enumerate(args) if i not in fixed]
        pyfunc = self.pyfunc

        def func(*xs):
            it = iter(xs)
            full = [fixed[i] if i in fixed else next(it) for i in range(len(args))]
            return pyfunc(*full, **kwargs)

        if self._cores is None:
            in_cores, out_cores = [()] * len(mapped), None
        else:
            # as in JAX: the signature names the arguments that are not excluded, and a
            # None among them (core dimensions ()) is passed as it is
            in_cores, out_cores = self._cores
            dynamic_pos = [i for i in range(len(args)) if i not in self.excluded]
            if len(in_cores) == len(dynamic_pos):
                in_cores = [c for i, c in zip(dynamic_pos, in_cores, strict=True)
                            if args[i] is not None]
        if len(in_cores) != len(mapped):
            raise TypeError(at_user_line(
                f"vectorize: the signature {self.signature!r} has {len(in_cores)} inputs but "
                f"{len(mapped)} vectorized arguments were passed"))
        sizes: dict = {}
        loops = []
        for k, (x, core) in enumerate(zip(mapped, in_cores, strict=True)):
            _core_sizes(sizes, x.shape, core, f"argument {k}")
            loops.append(x.shape[:x.ndim - len(core)])
        shape = broadcast_shapes(*loops) if loops else ()
        if out_cores is not None:
            func = _checked(func, sizes, out_cores)
        # map each loop axis; an argument of size 1 (or missing) there is left unmapped
        squeezed, filled = [], []
        for x, loop in zip(mapped, loops, strict=True):
            ones = tuple(i for i, n in enumerate(loop) if n == 1)
            squeezed.append(squeeze(x, ones) if ones else x)
            filled.append(((1,) * (len(shape) - len(loop)) + loop)[::-1])
        expand = []
        for neg, sizes_here in enumerate(zip(*filled, strict=True)):
            in_axes = tuple(None if n == 1 else 0 for n in sizes_here)
            if all(a is None for a in in_axes):
                expand.append(len(shape) - 1 - neg)
            else:
                func = _vmap(func, in_axes=in_axes)
        out = func(*squeezed)
        if not expand:
            return out
        if isinstance(out, tuple):
            return tuple(expand_dims(o, tuple(expand)) for o in out)
        return expand_dims(out, tuple(expand))


def _checked(func: Callable, sizes: dict, out_cores) -> Callable:
    """func, its outputs checked against the signature's output core dimensions."""
    def wrapped(*xs):
        out = func(*xs)
        outs = list(out) if isinstance(out, tuple) else [out]
        if len(out_cores) > 1 and not isinstance(out, tuple):
            raise TypeError(at_user_line(
                f"vectorize: the signature names {len(out_cores)} outputs, so the function "
                f"must return a tuple of them"))
        if len(outs) != len(out_cores):
            raise TypeError(at_user_line(
                f"vectorize: the function returned {len(outs)} outputs, the signature names "
                f"{len(out_cores)}"))
        known = dict(sizes)
        for k, (o, core) in enumerate(zip(outs, out_cores, strict=True)):
            shape = tuple(o.shape) if hasattr(o, "shape") else ()
            if len(shape) != len(core):
                raise ValueError(at_user_line(
                    f"vectorize: output {k} has shape {shape} for one call, but the "
                    f"signature gives it core dimensions {core}"))
            _core_sizes(known, shape, core, f"output {k}")
        return out
    return wrapped


__all__ = ["apply_along_axis", "apply_over_axes", "fromfunction", "vectorize"]
