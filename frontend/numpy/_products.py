"""Products: matmul, dot, tensordot, einsum, vdot, vecdot, inner, outer — all dot_general
(or a multiply and a sum)."""

from __future__ import annotations

from ..compiler.primitives import products
from ..dispatch import bind1
from ..errors import at_user_line
from ..tensor import Tensor
from ._elementwise import conj, multiply
from ._manipulation import expand_dims, moveaxis, reshape, squeeze, transpose
from ._operands import broadcast_shapes, broadcast_to, normalize_axis, promote_operands
from ._reductions import sum


def _dot(x: Tensor, y: Tensor, contracting, batch=((), ())) -> Tensor:
    return bind1(products.dot_general, x, y, contracting=tuple(map(tuple, contracting)),
                 batch=tuple(map(tuple, batch)))


def _operands(x, y):
    (x, y), dtype = promote_operands(x, y)
    if dtype.kind == "b":
        raise TypeError(at_user_line("matrix products of boolean tensors are not supported; "
                                     "convert them to an integer dtype first"))
    return x, y


def matmul(x, y) -> Tensor:
    x, y = _operands(x, y)
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError(at_user_line("matmul: operands must have at least one dimension; "
                                      "use multiply (*) for scalars"))
    x1, y1 = x.ndim == 1, y.ndim == 1
    if x1:
        x = expand_dims(x, 0)
    if y1:
        y = expand_dims(y, -1)
    if x.shape[-1] != y.shape[-2]:
        raise ValueError(at_user_line(
            f"matmul: the last axis of the left operand (shape {x.shape}, size "
            f"{x.shape[-1]}) must match the second-to-last axis of the right operand "
            f"(shape {y.shape}, size {y.shape[-2]})"))
    batch = broadcast_shapes(x.shape[:-2], y.shape[:-2])
    x = broadcast_to(x, batch + x.shape[-2:])
    y = broadcast_to(y, batch + y.shape[-2:])
    nb = len(batch)
    out = _dot(x, y, ((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))))
    if x1:
        out = squeeze(out, -2)
    if y1:
        out = squeeze(out, -1)
    return out


def dot(x, y) -> Tensor:
    x, y = _operands(x, y)
    if x.ndim == 0 or y.ndim == 0:
        return multiply(x, y)
    if y.ndim == 1 or x.ndim == 1 and y.ndim <= 2:
        return matmul(x, y) if y.ndim <= 2 else tensordot(x, y, ((x.ndim - 1,), (y.ndim - 2,)))
    return tensordot(x, y, ((x.ndim - 1,), (y.ndim - 2,)))


def tensordot(x, y, axes=2) -> Tensor:
    x, y = _operands(x, y)
    if isinstance(axes, int):
        xa = tuple(range(x.ndim - axes, x.ndim))
        ya = tuple(range(axes))
    else:
        xa, ya = axes
        xa = (xa,) if isinstance(xa, int) else tuple(xa)
        ya = (ya,) if isinstance(ya, int) else tuple(ya)
    xa = tuple(normalize_axis(a, x.ndim) for a in xa)
    ya = tuple(normalize_axis(a, y.ndim) for a in ya)
    for a, b in zip(xa, ya, strict=True):
        if x.shape[a] != y.shape[b]:
            raise ValueError(at_user_line(
                f"tensordot: axis {a} of the left operand (shape {x.shape}) has size "
                f"{x.shape[a]} but axis {b} of the right operand (shape {y.shape}) has size "
                f"{y.shape[b]}"))
    return _dot(x, y, (xa, ya))


def vdot(x, y) -> Tensor:
    x, y = _operands(x, y)
    return _dot(reshape(conj(x), (-1,)), reshape(y, (-1,)), ((0,), (0,)))


def vecdot(x, y, axis: int = -1) -> Tensor:
    """sum(conj(x) * y) over `axis` of each operand (as NumPy's gufunc); the other axes
    broadcast, the contracted one must match. The result keeps the promoted dtype."""
    (x, y), dtype = promote_operands(x, y)
    ax, ay = normalize_axis(axis, x.ndim), normalize_axis(axis, y.ndim)
    if x.shape[ax] != y.shape[ay]:
        raise ValueError(at_user_line(
            f"vecdot: axis {axis} has size {x.shape[ax]} in the left operand (shape "
            f"{x.shape}) but {y.shape[ay]} in the right operand (shape {y.shape}); the "
            f"contracted axis does not broadcast"))
    x, y = moveaxis(x, ax, -1), moveaxis(y, ay, -1)
    return sum(multiply(conj(x), y), axis=-1, dtype=dtype)


def inner(x, y) -> Tensor:
    x, y = _operands(x, y)
    if x.ndim == 0 or y.ndim == 0:
        return multiply(x, y)
    return tensordot(x, y, ((x.ndim - 1,), (y.ndim - 1,)))


def outer(x, y) -> Tensor:
    x, y = _operands(x, y)
    return multiply(reshape(x, (-1, 1)), reshape(y, (1, -1)))


def einsum(subscripts: str, *operands) -> Tensor:
    """Einstein summation for explicit and implicit subscripts, contracted pairwise
    left to right with dot_general. Repeated indices within one operand (traces,
    diagonals) are not supported yet."""
    ops = list(promote_operands(*operands)[0])
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        lhs, out = subscripts.split("->")
    else:
        lhs = subscripts
        letters = lhs.replace(",", "")
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    terms = lhs.split(",")
    if len(terms) != len(ops):
        raise ValueError(at_user_line(f"einsum: {len(terms)} operand subscripts for "
                                      f"{len(ops)} operands"))
    if "." in subscripts:
        raise NotImplementedError(at_user_line("einsum: ellipsis subscripts are not "
                                               "supported yet; write the axes out"))
    for t, x in zip(terms, ops, strict=True):
        if len(t) != x.ndim:
            raise ValueError(at_user_line(f"einsum: subscripts {t!r} name {len(t)} axes but "
                                          f"the operand has shape {x.shape}"))
        if len(set(t)) != len(t):
            raise NotImplementedError(at_user_line(
                f"einsum: repeated index in {t!r} (trace/diagonal) is not supported yet"))

    def needed_after(i):
        rest = "".join(terms[i + 1:]) + out
        return set(rest)

    # sum out indices used by one operand only and absent elsewhere
    def reduce_private(term, x, keep):
        axes = tuple(i for i, c in enumerate(term) if c not in keep)
        if axes:
            x = sum(x, axis=axes)
            term = "".join(c for c in term if c in keep)
        return term, x

    cur_t, cur = terms[0], ops[0]
    cur_t, cur = reduce_private(cur_t, cur, needed_after(0) | set(terms[1] if len(terms) > 1
                                                                   else ""))
    for i in range(1, len(ops)):
        t, x = terms[i], ops[i]
        keep = needed_after(i)
        t, x = reduce_private(t, x, keep | set(cur_t))
        shared = [c for c in cur_t if c in t]
        batch = [c for c in shared if c in keep]
        contract = [c for c in shared if c not in keep]
        cur = _dot(cur, x, ([cur_t.index(c) for c in contract], [t.index(c) for c in contract]),
                   ([cur_t.index(c) for c in batch], [t.index(c) for c in batch]))
        cur_t = ("".join(batch) + "".join(c for c in cur_t if c not in shared)
                 + "".join(c for c in t if c not in shared))
    cur_t, cur = reduce_private(cur_t, cur, set(out))
    if sorted(cur_t) != sorted(out):
        raise ValueError(at_user_line(f"einsum: output subscripts {out!r} name an index "
                                      f"that is not in the inputs"))
    return transpose(cur, [cur_t.index(c) for c in out]) if cur_t != out else cur
