"""What the linear-algebra primitives (linalg.py) share: the dtype / shape checks, the
emission helpers for LAPACK / cuSOLVER / hipSOLVER typed-FFI custom calls and TPU custom
calls (layouts, solver names, NaN on failure, triangles), and the matrix helpers their
derivative rules are written with."""

from __future__ import annotations

import numpy as np

from .. import dtypes as dt
from ..errors import ShapeError
from ..ir import TensorType, scalar_type

LAPACK_TYPES = {dt.float32: "s", dt.float64: "d", dt.complex64: "c", dt.complex128: "z"}


class UnsupportedPlatformError(NotImplementedError):
    """A linalg primitive has no implementation on the platform compiled for."""


def _check_matrix(opname: str, t: TensorType, which: str = "operand", square=False) -> None:
    if t.dtype not in LAPACK_TYPES:
        raise ShapeError(f"{opname}: {which} has dtype {t.dtype.name}; it needs float32, "
                         f"float64, complex64 or complex128 (convert integers first)")
    if t.ndim < 2:
        raise ShapeError(f"{opname}: {which} has shape {t.shape}; it needs a matrix or a "
                         f"batch of matrices (rank >= 2)")
    if square and t.shape[-1] != t.shape[-2]:
        raise ShapeError(f"{opname}: {which} has shape {t.shape}; its last two axes must be "
                         f"square")


# ---- emission helpers ---------------------------------------------------------------------


def _layout(rank: int, matrix: bool) -> str:
    dims = ((rank - 2, rank - 1) + tuple(range(rank - 3, -1, -1))) if matrix else tuple(
        range(rank - 1, -1, -1))
    return f"dense<{list(dims) if dims else ''}> : tensor<{rank}xindex>"


def _ffi(ctx, target: str, operands, operand_types, result_types, config: dict,
         alias: tuple[int, int] | None = None, column_major: bool = True) -> list[str]:
    """One typed-FFI custom call. Matrices (the operands and results of the highest
    operand rank) are column-major unless `column_major` is False; `config` maps attribute
    names to their text (see _char, _flag); `alias` = (result index, operand index) lets
    the solver work in place."""
    top = max(t.ndim for t in operand_types)
    ol = ", ".join(_layout(t.ndim, column_major and t.ndim == top) for t in operand_types)
    rl = ", ".join(_layout(t.ndim, column_major and t.ndim == top) for t in result_types)
    cfg = ", ".join(f"{k} = {v}" for k, v in config.items())
    attrs = (f'call_target_name = "{target}", api_version = 4 : i32, '
             f"backend_config = {{{cfg}}}, operand_layouts = [{ol}], result_layouts = [{rl}]")
    if alias is not None:
        ri = f"[{alias[0]}]" if len(result_types) > 1 else "[]"
        attrs += (f", output_operand_aliases = [#stablehlo.output_operand_alias<"
                  f"output_tuple_indices = {ri}, operand_index = {alias[1]}, "
                  f"operand_tuple_indices = []>]")
    return ctx.op("stablehlo.custom_call", list(operands), list(result_types), attrs,
                  operand_types=list(operand_types))


def _tpu_call(ctx, target: str, operands, operand_types, result_types, config: str = "",
              api_version: int = 1) -> list[str]:
    """One of XLA's TPU decompositions, called as jax calls it (a string config)."""
    attrs = (f'call_target_name = "{target}", api_version = {api_version} : i32, '
             f'backend_config = "{config}"')
    return ctx.op("stablehlo.custom_call", list(operands), list(result_types), attrs,
                  operand_types=list(operand_types))


def _char(c: str) -> str:
    """A LAPACK character option as the host's FFI handlers take it."""
    return f"{ord(c)} : ui8"


def _flag(v: bool) -> str:
    return "true" if v else "false"


_GPU_PREFIX = {"cuda": "cu", "rocm": "hip"}


def _solver(ctx, routine: str, d: dt.DType) -> str:
    """The FFI target of a LAPACK-style routine on the host or a GPU (cuSOLVER's and
    hipSOLVER's names carry no type letter: one handler serves every dtype)."""
    p = ctx.emitter.platform
    if p == "host":
        return f"lapack_{LAPACK_TYPES[d]}{routine}_ffi"
    return f"{_GPU_PREFIX[p]}solver_{routine}_ffi"


def _unsupported(ctx, opname: str, why: str) -> UnsupportedPlatformError:
    return UnsupportedPlatformError(
        f"{opname} is not implemented for {ctx.emitter.platform!r} ({why}). Run it on "
        f"another platform: jit(f, platform='host'), or move its operand with "
        f"stablejit.backend_transfer")


def _cmp(ctx, a, b, t: TensorType, direction: str) -> str:
    return ctx.op("stablehlo.compare", [a, b], [t.with_dtype(dt.bool_)],
                  f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
                  f"compare_type = #stablehlo<comparison_type SIGNED>")[0]


def _bcast(ctx, x, src: TensorType, dst: TensorType, dims) -> str:
    return ctx.op("stablehlo.broadcast_in_dim", [x], [dst.with_dtype(src.dtype)],
                  f"broadcast_dimensions = array<i64{': ' if dims else ''}"
                  f"{', '.join(map(str, dims))}>")[0]


def _nan_unless_ok(ctx, info: str, info_t: TensorType, x: str, t: TensorType,
                   direction: str = "EQ") -> str:
    """Replace the matrices of a batch whose LAPACK `info` is not ok with NaNs."""
    zero = ctx.constant(0, info_t.dtype, info_t.shape)
    ok = _cmp(ctx, info, zero, info_t, direction)
    ok = _bcast(ctx, ok, info_t.with_dtype(dt.bool_), t, range(info_t.ndim))
    nan = ctx.constant(np.nan, t.dtype, t.shape)
    return ctx.op("stablehlo.select", [ok, x, nan], [t])[0]


def _triangle(ctx, x: str, t: TensorType, lower: bool, k: int = 0) -> str:
    """np.tril(x, k) (lower=True) or np.triu(x, k) of each matrix."""
    m, n = t.shape[-2:]
    it = TensorType((m, n), dt.int32)
    rows = ctx.op("stablehlo.iota", [], [it], "iota_dimension = 0 : i64")[0]
    cols = ctx.op("stablehlo.iota", [], [it], "iota_dimension = 1 : i64")[0]
    if k:  # compare cols with rows + k
        rows = ctx.op("stablehlo.add", [rows, ctx.constant(k, dt.int32, (m, n))], [it])[0]
    keep = _cmp(ctx, cols, rows, it, "LE" if lower else "GE")
    keep = _bcast(ctx, keep, it.with_dtype(dt.bool_), t, (t.ndim - 2, t.ndim - 1))
    zero = ctx.constant(0, t.dtype, t.shape)
    return ctx.op("stablehlo.select", [keep, x, zero], [t])[0]


def _tri_ref(x, lower: bool, k: int = 0):
    return np.tril(x, k) if lower else np.triu(x, k)


# ---- matrix helpers for derivative rules ---------------------------------------------------


def _mm(ops, x, y):
    r = x.type.ndim
    b = tuple(range(r - 2))
    return ops.dot_general(x, y, ((r - 1,), (r - 2,)), (b, b))


def _t(ops, x):
    r = x.type.ndim
    return ops.transpose(x, (*range(r - 2), r - 1, r - 2))


def _h(ops, x):
    return ops.conj(_t(ops, x)) if x.type.dtype.is_complex else _t(ops, x)


def _tril_v(ops, x, lower=True, k=0):
    m, n = x.type.shape[-2:]
    rows = ops.iota((m, n), dt.int32, 0)
    cols = ops.iota((m, n), dt.int32, 1)
    if k:  # numpy's k: compare cols with rows + k
        rows = ops.add(rows, ops.const(k, dt.int32, (m, n)))
    keep = ops.le(cols, rows) if lower else ops.ge(cols, rows)
    keep = ops.broadcast(keep, x.type.shape, (x.type.ndim - 2, x.type.ndim - 1))
    return ops.select(keep, x, ops.zeros_like(x))


def _eye_v(ops, t: TensorType):
    n = t.shape[-1]
    eq = ops.eq(ops.iota((n, n), dt.int32, 0), ops.iota((n, n), dt.int32, 1))
    one = ops.convert(eq, t.dtype)
    return ops.broadcast(one, t.shape, (t.ndim - 2, t.ndim - 1))


def _diag_embed(ops, v, t: TensorType):
    """A batch of diagonal matrices (type t) with diagonal v[..., n]."""
    v = ops.convert(v, t.dtype)
    return ops.mul(ops.broadcast(v, t.shape, (*range(t.ndim - 2), t.ndim - 1)), _eye_v(ops, t))


def _pivots_to_permutation(ctx, piv: str, piv_t: TensorType, perm_t: TensorType) -> str:
    """Apply the row swaps i <-> piv[i] in order to 0..m-1: a stablehlo.while whose body
    swaps one column of the whole batch with one-hot selects (no gather needed)."""
    nb = perm_t.ndim - 1
    m, k = perm_t.shape[-1], piv_t.shape[-1]
    i32 = scalar_type(dt.int32)
    b = scalar_type(dt.bool_)
    col = TensorType((*perm_t.shape[:-1], 1), dt.int32)
    red = TensorType(perm_t.shape[:-1], dt.int32)
    perm0 = ctx.op("stablehlo.iota", [], [perm_t], f"iota_dimension = {nb} : i64")[0]
    i0 = ctx.constant(0, dt.int32)

    def cond(i, perm, pv):
        return [_cmp(ctx, i, ctx.constant(k, dt.int32), i32, "LT")]

    def body(i, perm, pv):
        zero = ctx.constant(0, dt.int32)
        starts = [zero] * nb + [i]
        sizes = f"slice_sizes = array<i64: {', '.join(map(str, (*perm_t.shape[:-1], 1)))}>"
        p_i = ctx.op("stablehlo.dynamic_slice", [pv, *starts], [col], sizes)[0]
        v_i = ctx.op("stablehlo.dynamic_slice", [perm, *starts], [col], sizes)[0]
        j = ctx.op("stablehlo.iota", [], [perm_t], f"iota_dimension = {nb} : i64")[0]
        dims = list(range(perm_t.ndim))
        p_b = _bcast(ctx, p_i, col, perm_t, dims)
        v_b = _bcast(ctx, v_i, col, perm_t, dims)
        i_b = _bcast(ctx, i, i32, perm_t, [])
        at_p = _cmp(ctx, j, p_b, perm_t, "EQ")
        at_i = _cmp(ctx, j, i_b, perm_t, "EQ")
        zeros = ctx.constant(0, dt.int32, perm_t.shape)
        only_p = ctx.op("stablehlo.select", [at_p, perm, zeros], [perm_t])[0]
        s = scalar_type(dt.int32)
        region = ctx.region([s, s], lambda x, y: ctx.op("stablehlo.add", [x, y], [s]))
        v_p = ctx.op("stablehlo.reduce", [only_p, zero], [red],
                     f"dimensions = array<i64: {nb}>", regions=[region])[0]
        v_p = _bcast(ctx, v_p, red, perm_t, list(range(nb)))
        new = ctx.op("stablehlo.select", [at_p, v_b, perm], [perm_t])[0]
        new = ctx.op("stablehlo.select", [at_i, v_p, new], [perm_t])[0]
        i1 = ctx.op("stablehlo.add", [i, ctx.constant(1, dt.int32)], [i32])[0]
        return [i1, new, pv]

    del b, m
    types = [i32, perm_t, piv_t]
    out = ctx.op("stablehlo.while", [i0, perm0, piv], types,
                 regions=[ctx.region(types, cond), ctx.region(types, body)])
    return out[1]
