"""Our primitives written with jax: `as_jax(fn)` turns an IR Function into a Python
function of jax arrays that computes the same thing with jax.lax, so jax can lower it
(for any platform) beside our own lowering. Ops with regions (cond, while, scan, the
custom-derivative calls) run their regions through the same translation.

RULES maps a primitive's name to `rule(*operands, regions=..., **attrs)`; a primitive
without a rule raises KeyError, which the lowering tier reports.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax._src.lax import windowed_reductions
from stablejit.compiler.walk import walk


def jax_on_the_host():
    """jax's answers from the host: where a GPU run of the suite (tests/conftest.py) meets
    XLA's GPU backend getting it wrong (repeated or out-of-range scatter indices, integer
    products), jax's GPU answer is no oracle; the host's defines the semantics."""
    return jax.default_device(jax.devices("cpu")[0])


def as_jax(fn):
    """fn (an IR Function) as a function of jax arrays returning a list."""
    def run(*args):
        return walk(fn, args, _apply)
    return run


def _apply(op, args):
    kwargs = dict(op.attrs)
    if op.regions:
        kwargs["regions"] = tuple(as_jax(r) for r in op.regions)
    out = RULES[op.prim.name](*args, **kwargs)
    return list(out) if op.prim.multiple_results else [out]


def _np(d):
    return np.dtype(d.np)


_UNARY = {n: getattr(lax, n) for n in (
    "neg abs sign exp expm1 log log1p sqrt rsqrt cbrt sin cos tan tanh logistic erf erfc "
    "asin acos atan asinh acosh atanh sinh cosh floor ceil is_finite stop_gradient").split()}
_BINARY = {n: getattr(lax, j) for n, j in {
    "add": "add", "subtract": "sub", "multiply": "mul", "divide": "div", "remainder": "rem",
    "power": "pow", "maximum": "max", "minimum": "min", "atan2": "atan2",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "shift_left": "shift_left", "nextafter": "nextafter", "eq": "eq", "ne": "ne",
    "lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "complex": "complex"}.items()}


def _shift_right(x, y):
    kind = np.dtype(x.dtype).kind
    return (lax.shift_right_arithmetic if kind == "i" else lax.shift_right_logical)(x, y)


def _reduce(monoid, init):
    def rule(x, *, axes):
        return lax.reduce(x, np.asarray(init(x.dtype), x.dtype), monoid, tuple(axes))
    return rule


def _lowest(d):
    d = np.dtype(d)
    return -np.inf if d.kind == "f" else False if d.kind == "b" else np.iinfo(d).min


def _highest(d):
    d = np.dtype(d)
    return np.inf if d.kind == "f" else True if d.kind == "b" else np.iinfo(d).max


def _window(monoid, init):
    def rule(x, *, window_dimensions, window_strides, padding, base_dilations,
             window_dilations):
        return lax.reduce_window(x, np.asarray(init(x.dtype), x.dtype), monoid,
                                 window_dimensions, window_strides, padding, base_dilations,
                                 window_dilations)
    return rule


def _select_prim(select):
    return lax.ge_p if select == "ge" else lax.le_p


def _select_and_scatter_add(source, x, init, *, select, window_dimensions, window_strides,
                            padding):
    del init  # jax's version starts from zeros, as every case here does
    return windowed_reductions._select_and_scatter_add(
        source, x, _select_prim(select), window_dimensions, window_strides, padding)


def _select_and_gather_add(tangent, x, *, select, window_dimensions, window_strides, padding,
                           base_dilations, window_dilations):
    return windowed_reductions._select_and_gather_add(
        tangent, x, _select_prim(select), window_dimensions, window_strides, padding,
        base_dilations, window_dilations)


def _convolution(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                 feature_group_count, batch_group_count, dimension_numbers):
    return lax.conv_general_dilated(
        lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
        lax.ConvDimensionNumbers(*dimension_numbers), feature_group_count,
        batch_group_count)


def _last_index_axis(indices, index_vector_dim):
    """jax's gather and scatter keep the index vector in the last axis of indices."""
    if index_vector_dim == indices.ndim:
        return indices[..., None]
    return jnp.moveaxis(indices, index_vector_dim, -1)


def _svd(a, *, full_matrices, compute_uv):
    if not compute_uv:
        return [lax.linalg.svd(a, full_matrices=full_matrices, compute_uv=False)]
    u, s, vt = lax.linalg.svd(a, full_matrices=full_matrices, compute_uv=True)
    return [s, u, vt]


def _gather(x, indices, *, offset_dims, collapsed_slice_dims, start_index_map,
            index_vector_dim, slice_sizes, **_):
    dn = lax.GatherDimensionNumbers(tuple(offset_dims), tuple(collapsed_slice_dims),
                                    tuple(start_index_map))
    return lax.gather(x, _last_index_axis(indices, index_vector_dim), dn, tuple(slice_sizes),
                      mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)


_SCATTER = {"add": lax.scatter_add, "mul": lax.scatter_mul, "min": lax.scatter_min,
            "max": lax.scatter_max, "replace": lax.scatter}


def _scatter(x, indices, updates, *, update_window_dims, inserted_window_dims,
             scatter_dims_to_operand_dims, index_vector_dim, kind, **_):
    dn = lax.ScatterDimensionNumbers(tuple(update_window_dims), tuple(inserted_window_dims),
                                     tuple(scatter_dims_to_operand_dims))
    return _SCATTER[kind](x, _last_index_axis(indices, index_vector_dim), updates, dn,
                          mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)


def _sort(*xs, dimension, num_keys=1, descending=False, is_stable=True):
    out = lax.sort(xs, dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    return [lax.rev(o, (dimension,)) for o in out] if descending else out


def _cumulative(f):
    def rule(x, *, axis, reverse=False):
        return f(x, axis, reverse)
    return rule


def _cond(index, *args, regions):
    if np.dtype(index.dtype) == np.bool_:
        return lax.cond(index, lambda *a: regions[1](*a), lambda *a: regions[0](*a), *args)
    return lax.switch(index, [lambda *a, r=r: r(*a) for r in regions], *args)


def _while(*operands, num_consts, regions):
    cond, body = regions
    consts, carry = operands[:num_consts], operands[num_consts:]
    out = lax.while_loop(lambda c: cond(*consts, *c)[0],
                         lambda c: tuple(body(*consts, *c)), tuple(carry))
    return list(out)


def _scan(*operands, num_consts, num_carry, length, reverse, regions):
    (body,) = regions
    nc, nk = num_consts, num_carry
    consts, carry, xs = operands[:nc], operands[nc:nc + nk], operands[nc + nk:]

    def step(c, x):
        out = body(*consts, *c, *x)
        return tuple(out[:nk]), tuple(out[nk:])

    c, ys = lax.scan(step, tuple(carry), tuple(xs), length=length, reverse=reverse)
    return [*c, *ys]


def _region_call(*xs, regions, **_):
    return regions[0](*xs)


def _shapes(cb):
    return tuple(jax.ShapeDtypeStruct(t.shape, _np(t.dtype)) for t in cb.result_types)


def _pure_callback(*xs, callback):
    return list(jax.pure_callback(lambda *a: callback.fn(*a), _shapes(callback), *xs))


def _host_callback(*xs, callback):
    from jax.experimental import io_callback  # noqa: PLC0415 - jax's io callback

    args = xs[1:] if callback.chained else xs  # our order token; jax threads its own
    out = list(io_callback(lambda *a: callback.fn(*a), _shapes(callback), *args))
    return out + ([xs[0]] if callback.chained else [])


RULES = {
    **_UNARY,
    **_BINARY,
    "real": jnp.real,  # jnp's accept real operands, as ours do
    "imag": jnp.imag,
    "conj": jnp.conj,
    "round": lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
    "not": lax.bitwise_not,
    "shift_right": _shift_right,
    "select": lax.select,
    "clamp": lax.clamp,
    "convert": lambda x, *, dtype: lax.convert_element_type(x, _np(dtype)),
    "bitcast_convert": lambda x, *, dtype: lax.bitcast_convert_type(x, _np(dtype)),
    "clz": lax.clz,
    "reduce_precision": lambda x, *, exponent_bits, mantissa_bits: lax.reduce_precision(
        x, exponent_bits, mantissa_bits),
    "constant": lambda *, value: jnp.asarray(getattr(value, "array", value)),
    "iota": lambda *, shape, dtype, dimension: lax.broadcasted_iota(_np(dtype), shape,
                                                                    dimension),
    "broadcast_in_dim": lambda x, *, shape, broadcast_dimensions: lax.broadcast_in_dim(
        x, shape, broadcast_dimensions),
    "reshape": lambda x, *, shape: lax.reshape(x, shape),
    "transpose": lambda x, *, permutation: lax.transpose(x, permutation),
    "slice": lambda x, *, start, limit, strides: lax.slice(x, start, limit, strides),
    "dynamic_slice": lambda x, *idx, sizes: lax.dynamic_slice(x, idx, sizes),
    "dynamic_update_slice": lambda x, u, *idx: lax.dynamic_update_slice(x, u, idx),
    "concatenate": lambda *xs, dimension: lax.concatenate(xs, dimension),
    "pad": lambda x, v, *, low, high, interior: lax.pad(x, v, list(zip(low, high, interior,
                                                                       strict=True))),
    "reverse": lambda x, *, axes: lax.rev(x, axes),
    "reduce_sum": _reduce(lax.add, lambda d: 0),
    "reduce_prod": _reduce(lax.mul, lambda d: 1),
    "reduce_max": _reduce(lax.max, _lowest),
    "reduce_min": _reduce(lax.min, _highest),
    "reduce_and": _reduce(lax.bitwise_and, lambda d: True),
    "reduce_or": _reduce(lax.bitwise_or, lambda d: False),
    "argmax": lambda x, *, axis, index_dtype: lax.argmax(x, axis, _np(index_dtype)),
    "argmin": lambda x, *, axis, index_dtype: lax.argmin(x, axis, _np(index_dtype)),
    "dot_general": lambda x, y, *, contracting, batch: lax.dot_general(
        x, y, (contracting, batch)),
    "reduce_window_sum": _window(lax.add, lambda d: 0),
    "reduce_window_prod": _window(lax.mul, lambda d: 1),
    "reduce_window_max": _window(lax.max, _lowest),
    "reduce_window_min": _window(lax.min, _highest),
    "select_and_scatter_add": _select_and_scatter_add,
    "select_and_gather_add": _select_and_gather_add,
    "convolution": _convolution,
    "fft": lambda x, *, fft_type, fft_length: lax.fft(x, fft_type, fft_length),
    "cholesky": lambda a: jnp.tril(lax.linalg.cholesky(a, symmetrize_input=False)),
    "triangular_solve": lambda a, b, *, left_side, lower, transpose_a, unit_diagonal:
        lax.linalg.triangular_solve(a, b, left_side=left_side, lower=lower,
                                    transpose_a=transpose_a != "N",
                                    conjugate_a=transpose_a == "C",
                                    unit_diagonal=unit_diagonal),
    "lu": lax.linalg.lu,
    "qr": lambda a, *, full_matrices: lax.linalg.qr(a, full_matrices=full_matrices),
    "eigh": lambda a, *, lower: lax.linalg.eigh(a, lower=lower, symmetrize_input=False)[::-1],
    "eig": lambda a, **kw: lax.linalg.eig(a, **kw),
    "svd": _svd,
    "gather": _gather,
    "scatter": _scatter,
    "sort": _sort,
    "top_k": lambda x, *, k: lax.top_k(x, k),
    "cumsum": _cumulative(lax.cumsum),
    "cumprod": _cumulative(lax.cumprod),
    "cummax": _cumulative(lax.cummax),
    "cummin": _cumulative(lax.cummin),
    "custom_jvp_call": _region_call,
    "custom_vjp_call": _region_call,
    "checkpoint": lambda *xs, regions, prevent_cse: jax.checkpoint(
        lambda *a: regions[0](*a), prevent_cse=prevent_cse)(*xs),
    "optimization_barrier": lambda *xs: list(lax.optimization_barrier(xs)),
    "cond": _cond,
    "while": _while,
    "scan": _scan,
    "host_callback": _host_callback,
    "pure_callback": _pure_callback,
    # the example table's modules (tests/support/prim_table/exported.py) compute their reference
    # rule's math, written for NumPy and jax arrays alike
    "call_exported": lambda *xs, module: list(module.reference(*xs)),
}
