"""lax's reductions (reduce_* and the general `reduce`), argmax / argmin, cumulative
scans and sorting."""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable

import numpy as np

from .. import numpy as snp
from .. import tree
from ..compiler import dtypes as dt
from ..compiler.ir import Attrs
from ..compiler.primitives import reductions, sorting
from ..dispatch import bind, bind1
from ..errors import at_user_line
from ..numpy._operands import as_tensor
from ..tensor import Tensor
from ..vmap import vmap as _vmap
from . import elementwise as _ew  # lax.add ... name reduce's monoids (the fast path)
from ._operands import _same_dtype
from .higher_order import associative_scan
from .products import _concrete_scalar
from .shapes import _axis, _ints, transpose


def _reduce(prim, operand, axes) -> Tensor:
    x = as_tensor(operand)
    axes = tuple(sorted({_axis(a, x.ndim) for a in _ints(axes, "axes")}))
    return bind1(prim, x, axes=axes) if axes else x


def _reduction(name: str, what: str):
    """lax.<name>(operand, axes): `what` of operand over axes, as jax.lax's."""
    prim = getattr(reductions, name)

    def reduce(operand, axes) -> Tensor:
        return _reduce(prim, operand, axes)

    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = (f"The {what} of `operand` over `axes` (jax.lax.{name}): no promotion, "
                      f"the result has operand's dtype and its shape without `axes`.\n\n"
                      f"    Raises:\n        ValueError: if an axis is out of range.\n    ")
    return reduce


reduce_sum = _reduction("reduce_sum", "sum")
reduce_prod = _reduction("reduce_prod", "product")
reduce_max = _reduction("reduce_max", "maximum")
reduce_min = _reduction("reduce_min", "minimum")
reduce_and = _reduction("reduce_and", "logical (bitwise for integers) AND")
reduce_or = _reduction("reduce_or", "logical (bitwise for integers) OR")


# computation -> (reduction, its identity for a dtype): lax.reduce's fast path
_MONOIDS = {"add": "sum", "mul": "prod", "max": "max", "min": "min"}


def _identity(kind: str, d: dt.DType):
    if kind in ("sum", "prod"):
        return int(kind == "prod")
    big = math.inf if d.kind in "fc" else (
        True if d is dt.bool_ else int(np.iinfo(d.np).max))
    low = -math.inf if d.kind in "fc" else (
        False if d is dt.bool_ else int(np.iinfo(d.np).min))
    return low if kind == "max" else big


def _monoid(computation, x: Tensor, init) -> str | None:
    """The reduction kind when reduce(x, init, computation) is one of reduce_sum/prod/
    max/min: a lax computation and init its identity (a concrete value)."""
    kind = next((k for name, k in _MONOIDS.items() if computation is getattr(_ew, name)
                 or computation is getattr(snp, {"add": "add", "mul": "multiply",
                                                 "max": "maximum", "min": "minimum"}[name])),
                None)
    if kind is None or x.dtype.kind == "c" and kind in ("max", "min"):
        return None
    v = _concrete_scalar(init)
    return kind if v is not None and v == _identity(kind, x.dtype) else None


def _vmapped(fn: Callable, depth: int) -> Callable:
    for _ in builtins.range(depth):
        fn = _vmap(fn)
    return fn


def reduce(operands, init_values, computation: Callable, dimensions):
    """Reduce `operands` (an array or a pytree of arrays of one shape) over
    `dimensions` with `computation(x, y)`, a function of two scalars (or two pytrees of
    scalars, like operands) starting from `init_values` (jax.lax.reduce). lax.add, mul,
    max and min with their identity as init run as reduce_sum, prod, max, min; any
    other computation is applied pairwise in a tree of log2(n) vectorised steps, init
    combined once at the end, so it should be associative and commutative (XLA's
    order of reduction is unspecified too).

    Example:
        >>> x = snp.asarray([[1.0, 2.0], [3.0, 4.0]])
        >>> stablejit.lax.reduce(x, 0.0, stablejit.lax.add, (0,))
        Tensor<f32[2] xla:host:0>
        [4., 6.]
        >>> stablejit.lax.reduce(snp.asarray([1, 5, 3]), -100, lambda a, b: snp.maximum(a, b), (0,))
        Tensor<i64[] xla:host:0>
        5
    """
    xs, td = tree.flatten(operands)
    inits, init_td = tree.flatten(init_values)
    if init_td != td:
        raise ValueError(at_user_line(
            f"lax.reduce: operands have structure {td!r} but init_values {init_td!r}; give "
            f"one init value per operand"))
    if not xs:
        raise ValueError(at_user_line("lax.reduce: needs at least one operand"))
    pairs = [_same_dtype("reduce", x, v) for x, v in zip(xs, inits, strict=True)]
    xs, inits = [p[0] for p in pairs], [p[1] for p in pairs]
    if any(v.ndim for v in inits):
        raise TypeError(at_user_line(
            f"lax.reduce: init_values must be scalars, got shapes {[v.shape for v in inits]}"))
    shape = xs[0].shape
    if any(x.shape != shape for x in xs):
        raise ValueError(at_user_line(
            f"lax.reduce: operands have different shapes {[x.shape for x in xs]}; they "
            f"need one shape"))
    dims = [_axis(a, len(shape)) for a in _ints(dimensions, "dimensions")]
    if len(set(dims)) != len(dims):
        raise ValueError(at_user_line(f"lax.reduce: dimensions {tuple(dimensions)} repeat "
                                      f"an axis"))
    if len(xs) == 1:
        kind = _monoid(computation, xs[0], init_values if not isinstance(
            init_values, (tuple, list)) else inits[0])
        if kind is not None:
            out = _reduce(getattr(reductions, f"reduce_{kind}"), xs[0], dims)
            return tree.unflatten(td, [out])
    kept = [a for a in builtins.range(len(shape)) if a not in dims]
    kept_shape = tuple(shape[a] for a in kept)
    n = math.prod(shape[a] for a in dims)
    # the reduced axes as one leading axis: (n, *kept)
    xs = [snp.reshape(transpose(x, (*dims, *kept)), (n, *kept_shape)) for x in xs]

    def combine(a: list, b: list) -> list:
        out, out_td = tree.flatten(computation(tree.unflatten(td, a), tree.unflatten(td, b)))
        if out_td != td:
            raise TypeError(at_user_line(
                f"lax.reduce: computation returned structure {out_td!r}; it must return "
                f"the operands' structure {td!r}"))
        out = [as_tensor(o) for o in out]
        for o, x in zip(out, a, strict=True):
            if o.dtype is not x.dtype or o.ndim:
                raise TypeError(at_user_line(
                    f"lax.reduce: computation returned a {o.dtype.name}{list(o.shape)} for "
                    f"a {x.dtype.name} operand; it must return a scalar of the operand's "
                    f"dtype"))
        return out

    pairwise = _vmapped(combine, 1 + len(kept_shape))
    while n > 1:  # halves combined elementwise; an odd last row waits for the next step
        half = n // 2
        merged = pairwise([x[:half] for x in xs], [x[half:2 * half] for x in xs])
        xs = [snp.concatenate([m, x[2 * half:]]) if n % 2 else m
              for m, x in zip(merged, xs, strict=True)]
        n = half + n % 2
    start = [snp.broadcast_to(v, kept_shape) for v in inits]
    out = start if n == 0 else _vmapped(combine, len(kept_shape))(start, [x[0] for x in xs])
    return tree.unflatten(td, out)


def argmax(operand, axis: int, index_dtype) -> Tensor:
    """Index of the maximum along `axis` (NaN counts as the maximum; ties: first)."""
    x = as_tensor(operand)
    return bind1(reductions.argmax, x, axis=_axis(axis, x.ndim),
                 index_dtype=dt.dtype(index_dtype))


def argmin(operand, axis: int, index_dtype) -> Tensor:
    """The index of the smallest element of `operand` along `axis`, in `index_dtype`
    (jax.lax.argmin; the first one when several are equal).
    """
    x = as_tensor(operand)
    return bind1(reductions.argmin, x, axis=_axis(axis, x.ndim),
                 index_dtype=dt.dtype(index_dtype))


def _cumulative(prim, operand, axis: int, reverse: bool) -> Tensor:
    x = as_tensor(operand)
    axis = _axis(axis, x.ndim)
    if x.shape[axis] == 0:
        return x
    return bind1(prim, x, axis=axis, reverse=bool(reverse))


def cumsum(operand, axis: int = 0, reverse: bool = False) -> Tensor:
    """Running sum along `axis` (from the end when reverse), in operand's dtype."""
    return _cumulative(sorting.cumsum, operand, axis, reverse)


def cumprod(operand, axis: int = 0, reverse: bool = False) -> Tensor:
    """The cumulative product of `operand` along `axis` (jax.lax.cumprod); `reverse`
    scans from the end. The result has operand's shape and dtype.
    """
    return _cumulative(sorting.cumprod, operand, axis, reverse)


def cummax(operand, axis: int = 0, reverse: bool = False) -> Tensor:
    """The cumulative maximum of `operand` along `axis` (jax.lax.cummax); `reverse`
    scans from the end.
    """
    return _cumulative(sorting.cummax, operand, axis, reverse)


def cummin(operand, axis: int = 0, reverse: bool = False) -> Tensor:
    """The cumulative minimum of `operand` along `axis` (jax.lax.cummin); `reverse`
    scans from the end.
    """
    return _cumulative(sorting.cummin, operand, axis, reverse)


def cumlogsumexp(operand, axis: int = 0, reverse: bool = False) -> Tensor:
    """log(cumsum(exp(operand))) along `axis` (jax.lax.cumlogsumexp), without overflow
    or underflow: an associative scan of logaddexp, the scan jax differentiates, so the
    same gradient. Real floating-point operands only.
    """
    x = as_tensor(operand)
    if x.dtype.kind != "f":
        raise TypeError(at_user_line(
            f"lax.cumlogsumexp needs a real floating-point operand, got {x.dtype.name}; "
            f"convert it with lax.convert_element_type"))
    axis = _axis(axis, x.ndim)
    if x.shape[axis] == 0:
        return x
    return associative_scan(snp.logaddexp, x, reverse=bool(reverse), axis=axis)


def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """Sort along `dimension`. A sequence of operands is sorted together by its first
    `num_keys` (lexicographically) and returned as a tuple; NaNs sort last."""
    single = not isinstance(operand, (list, tuple))
    ts = [as_tensor(operand)] if single else [as_tensor(o) for o in operand]
    axis = _axis(dimension, ts[0].ndim)
    out = bind(sorting.sort, tuple(ts), Attrs({"dimension": axis, "num_keys": int(num_keys),
                                               "descending": False,
                                               "is_stable": bool(is_stable)}))
    return out[0] if single else tuple(out)


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    """(sorted keys, values in the keys' order)."""
    return sort((keys, values), dimension, is_stable, 1)


def top_k(operand, k: int) -> tuple[Tensor, Tensor]:
    """The k largest entries along the last axis (descending) and their int32 indices."""
    return snp.top_k(operand, k)


def reduce_xor(operand, axes) -> Tensor:
    """Bitwise XOR of operand over axes (parity for booleans), as jax.lax.reduce_xor."""
    x = as_tensor(operand)
    if x.dtype.kind not in "biu":
        raise TypeError(at_user_line(
            f"lax.reduce_xor needs a boolean or integer operand, got {x.dtype.name}"))
    return reduce(x, False if x.dtype is dt.bool_ else 0, _ew.bitwise_xor, axes)


def _approx_k(name: str, operand, k: int, reduction_dimension: int, largest: bool):
    x = as_tensor(operand)
    axis = _axis(reduction_dimension, x.ndim)
    k = int(k)
    if not 0 < k <= x.shape[axis]:
        raise ValueError(at_user_line(
            f"lax.{name}: k={k} is outside 1..{x.shape[axis]} (the length of axis {axis})"))
    last = snp.moveaxis(x, axis, -1)
    if largest:
        values, idx = top_k(last, k)
    else:  # ascending, stable: ties keep the lower index, NaNs come last
        idx = snp.astype(snp.argsort(last, axis=-1, stable=True)[..., :k], dt.int32)
        values = snp.take_along_axis(last, idx, axis=-1)
    return snp.moveaxis(values, -1, axis), snp.moveaxis(idx, -1, axis)


def approx_max_k(operand, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> tuple[Tensor, Tensor]:
    """The k largest entries along reduction_dimension and their int32 indices. Exact
    here (recall 1, as jax on CPU and GPU); the tuning arguments are accepted for JAX's
    signature."""
    del recall_target, reduction_input_size_override, aggregate_to_topk
    return _approx_k("approx_max_k", operand, k, reduction_dimension, True)


def approx_min_k(operand, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> tuple[Tensor, Tensor]:
    """The k smallest entries along reduction_dimension and their int32 indices. Exact
    here, as approx_max_k."""
    del recall_target, reduction_input_size_override, aggregate_to_topk
    return _approx_k("approx_min_k", operand, k, reduction_dimension, False)
