"""Products: matmul, dot, tensordot, einsum, vdot, vecdot, inner, outer, kron, cross —
dot_general, or multiplies and sums."""

from __future__ import annotations

import builtins

import numpy as np

from .. import precision as _precision
from ..compiler import dtypes as dt
from ..compiler.ir import Attrs
from ..compiler.primitives import products
from ..dispatch import bind
from ..errors import at_user_line
from ..precision import converted
from ..precision import pair as precision_pair
from ..tensor import Tensor
from ..tracebacks import filter_exception
from ._diagonals import diagonal
from ._elementwise import conj, multiply, not_equal, subtract
from ._manipulation import expand_dims, moveaxis, reshape, squeeze, stack, transpose
from ._operands import (
    astype,
    broadcast_shapes,
    broadcast_to,
    normalize_axis,
    promote_operands,
)
from ._reductions import any, sum  # noqa: A004

_DOT_ATTRS: dict = {}  # (contracting, batch, precision) -> dot_general's Attrs


def _dot(x: Tensor, y: Tensor, contracting, batch=((), ()), precision=None,
         preferred=None) -> Tensor:
    """dot_general; `precision` as precision_pair gives it (None: the default);
    `preferred` the result's dtype (jax's preferred_element_type), None: the operands'."""
    if preferred is not None and preferred is x.type.dtype:
        preferred = None
    if x.type.dtype is dt.bool_:  # NumPy's product of booleans: the logical or of ands
        count = _dot(astype(x, dt.int32), astype(y, dt.int32), contracting, batch, precision,
                     preferred or dt.int32)
        return not_equal(count, 0) if preferred is None else count  # (jax's: a count)
    try:
        attrs = _DOT_ATTRS.get((contracting, batch, precision, preferred))
    except TypeError:  # axes given as lists (einsum): not cached
        attrs = None
    if attrs is None:
        contracting, batch = tuple(map(tuple, contracting)), tuple(map(tuple, batch))
        attrs = {"contracting": contracting, "batch": batch}
        if precision is not None:
            attrs["precision"] = precision
        if preferred is not None:
            attrs["preferred_element_type"] = preferred
        attrs = Attrs(attrs)
        if len(_DOT_ATTRS) < 1024:
            _DOT_ATTRS[contracting, batch, precision, preferred] = attrs
    return bind(products.dot_general, (x, y), attrs)[0]


def _preferred(preferred_element_type):
    return None if preferred_element_type is None else dt.dtype(preferred_element_type)


def _operands(x, y):
    return promote_operands(x, y)[0]


def matmul(x, y, *, precision=None, preferred_element_type=None) -> Tensor:
    # (its docstring is composed in _docstrings.py, precision= included)
    try:  # an operator: a public boundary, inline (free until a raise)
        if type(x) is Tensor and type(y) is Tensor and precision is None \
                and preferred_element_type is None:
            # the common product (x @ w in a step): two strong tensors of one dtype, of
            # one or two axes that contract; the steps below, written out
            tx, ty = x.type, y.type
            xs, ys = tx.shape, ty.shape
            if tx.dtype is ty.dtype and tx.dtype.kind != "b" and not x.weak and \
                    not y.weak and 0 < len(xs) <= 2 and 0 < len(ys) <= 2 and xs[-1] == ys[0]:
                # (_dot's attrs, looked up here: one Python call less per product)
                attrs = _DOT_ATTRS.get((((len(xs) - 1,), (0,)), ((), ()), _precision.default,
                                        None))
                if attrs is not None:
                    return bind(products.dot_general, (x, y), attrs)[0]
                return _dot(x, y, ((len(xs) - 1,), (0,)), ((), ()), _precision.default)
        p = precision_pair(precision, "matmul")
        pref = _preferred(preferred_element_type)
        x, y = _operands(x, y)
        xs, ys = x.type.shape, y.type.shape
        if not xs or not ys:
            raise ValueError(at_user_line("matmul: operands must have at least one dimension; "
                                          "use multiply (*) for scalars"))
        if len(xs) <= 2 and len(ys) <= 2:  # no batch axes: one dot_general, no reshapes
            _check_inner(xs, ys, ys[0])
            return _dot(x, y, ((len(xs) - 1,), (0,)), ((), ()), p, pref)
        x1, y1 = x.ndim == 1, y.ndim == 1
        if x1:
            x = expand_dims(x, 0)
        if y1:
            y = expand_dims(y, -1)
        _check_inner(x.shape, y.shape, y.shape[-2])
        batch = broadcast_shapes(x.shape[:-2], y.shape[:-2])
        x = broadcast_to(x, batch + x.shape[-2:])
        y = broadcast_to(y, batch + y.shape[-2:])
        nb = len(batch)
        out = _dot(x, y, ((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))), p, pref)
        if x1:
            out = squeeze(out, -2)
        if y1:
            out = squeeze(out, -1)
        return out
    except Exception as e:
        filter_exception(e)
        raise


# recorder_native makes matmul and Tensor.__matmul__ C operators (recorder.c's
# fastop_matmul): the first branch above, which finds its attrs in _DOT_ATTRS
matmul._native_op, matmul._dot_attrs = (products.dot_general, "iufc", False), _DOT_ATTRS


def _check_inner(xshape, yshape, inner: int) -> None:
    if xshape[-1] != inner:
        raise ValueError(at_user_line(
            f"matmul: the last axis of the left operand (shape {xshape}, size "
            f"{xshape[-1]}) must match the {'only' if len(yshape) == 1 else 'second-to-last'} "
            f"axis of the right operand (shape {yshape}, size {inner})"))


def dot(x, y, *, precision=None, preferred_element_type=None) -> Tensor:
    x, y = _operands(x, y)
    kw = {"precision": precision, "preferred_element_type": preferred_element_type}
    if x.ndim == 0 or y.ndim == 0:
        out = multiply(x, y)
        return out if preferred_element_type is None else out.astype(preferred_element_type)
    if y.ndim <= 2 and (y.ndim == 1 or x.ndim == 1):
        return matmul(x, y, **kw)
    return tensordot(x, y, ((x.ndim - 1,), (y.ndim - 2,)), **kw)


def tensordot(x, y, axes=2, *, precision=None, preferred_element_type=None) -> Tensor:
    p = precision_pair(precision, "tensordot")
    pref = _preferred(preferred_element_type)
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
    return _dot(x, y, (xa, ya), ((), ()), p, pref)


def vdot(x, y, *, precision=None, preferred_element_type=None) -> Tensor:
    p = precision_pair(precision, "vdot")
    x, y = _operands(x, y)
    return _dot(reshape(conj(x), (-1,)), reshape(y, (-1,)), ((0,), (0,)), ((), ()), p,
                _preferred(preferred_element_type))


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


def matvec(x1, x2, /) -> Tensor:
    """Matrix-vector products over the last axes: x1 (..., m, n) times x2 (..., n) gives
    (..., m); the leading axes broadcast."""
    (a, b), _ = promote_operands(x1, x2)
    if a.ndim < 2 or b.ndim < 1 or a.shape[-1] != b.shape[-1]:
        raise ValueError(at_user_line(
            f"matvec: needs x1 of shape (..., m, n) and x2 of shape (..., n), got {a.shape} "
            f"and {b.shape}"))
    return matmul(a, expand_dims(b, -1))[..., 0]


def vecmat(x1, x2, /) -> Tensor:
    """Vector-matrix products over the last axes: conj(x1) (..., n) times x2 (..., n, m)
    gives (..., m); the leading axes broadcast."""
    (a, b), _ = promote_operands(x1, x2)
    if a.ndim < 1 or b.ndim < 2 or a.shape[-1] != b.shape[-2]:
        raise ValueError(at_user_line(
            f"vecmat: needs x1 of shape (..., n) and x2 of shape (..., n, m), got {a.shape} "
            f"and {b.shape}"))
    return matmul(expand_dims(conj(a), -2), b)[..., 0, :]


def inner(x, y, *, precision=None, preferred_element_type=None) -> Tensor:
    x, y = _operands(x, y)
    if x.ndim == 0 or y.ndim == 0:
        out = multiply(x, y)
        return out if preferred_element_type is None else out.astype(preferred_element_type)
    return tensordot(x, y, ((x.ndim - 1,), (y.ndim - 1,)), precision=precision,
                     preferred_element_type=preferred_element_type)


def outer(x, y) -> Tensor:
    x, y = _operands(x, y)
    return multiply(reshape(x, (-1, 1)), reshape(y, (1, -1)))


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _expand_ellipses(terms: list[str], out: str | None, ops) -> tuple[list[str], str | None]:
    """Each '...' replaced by letters of its own, the broadcast axes aligned from the
    right (as NumPy); in an implicit output they come first."""
    free = [c for c in _LETTERS if c not in "".join(terms) + (out or "")]
    ranks = []
    for t, x in zip(terms, ops, strict=True):
        named = len(t.replace("...", ""))
        ranks.append(x.ndim - named if "..." in t else 0)
        if "..." in t and ranks[-1] < 0:
            raise ValueError(at_user_line(f"einsum: subscripts {t!r} name more axes than the "
                                          f"operand of shape {x.shape} has"))
    width = builtins.max(ranks, default=0)
    batch = "".join(free[:width])
    terms = [t.replace("...", batch[width - r:]) for t, r in zip(terms, ranks, strict=True)]
    if out is not None:
        out = out.replace("...", batch)
    elif width:
        letters = "".join(terms).translate({ord(c): None for c in batch})
        out = batch + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return terms, out


def _take_diagonals(term: str, x: Tensor) -> tuple[str, Tensor]:
    """An operand whose subscripts repeat a letter ('ii', 'iji') reduced to the diagonal
    of those axes, so each letter names one axis."""
    while len(set(term)) != len(term):
        c = next(c for c in term if term.count(c) > 1)
        i = term.index(c)
        j = term.index(c, i + 1)
        if x.shape[i] != x.shape[j]:
            raise ValueError(at_user_line(f"einsum: index {c!r} repeats in {term!r} over axes "
                                          f"of sizes {x.shape[i]} and {x.shape[j]}"))
        x = diagonal(x, 0, i, j)
        term = "".join(t for k, t in enumerate(term) if k not in (i, j)) + c
    return term, x


def _squeeze_broadcast(terms: list[str], ops: list[Tensor]) -> tuple[list[str], list[Tensor]]:
    """Size-1 axes whose letter has a larger size in another operand broadcast: they
    are dropped from their operand."""
    sizes: dict[str, int] = {}
    for t, x in zip(terms, ops, strict=True):
        for c, n in zip(t, x.shape, strict=True):
            if n != 1:
                if sizes.get(c, n) != n:
                    raise ValueError(at_user_line(
                        f"einsum: index {c!r} has sizes {sizes[c]} and {n} in different "
                        f"operands"))
                sizes[c] = n
    new_terms, new_ops = [], []
    for t, x in zip(terms, ops, strict=True):
        drop = tuple(k for k, c in enumerate(t) if x.shape[k] == 1 and sizes.get(c, 1) != 1)
        if drop:
            x = squeeze(x, drop)
            t = "".join(c for k, c in enumerate(t) if k not in drop)
        new_terms.append(t)
        new_ops.append(x)
    return new_terms, new_ops


def einsum(subscripts: str, *operands, out=None, dtype=None, casting: str = "safe",
           optimize=True, precision=None, preferred_element_type=None) -> Tensor:
    """Einstein summation for explicit and implicit subscripts, with '...' (broadcast
    axes) and repeated indices within one operand (traces, diagonals), contracted
    pairwise left to right with dot_general. NumPy's dtype= (the operands are cast to it
    under `casting`, and it is the result's dtype) and jax's preferred_element_type= (the
    same, without the check); optimize= is accepted and ignored (the order is always left
    to right); precision= as jax's (GPUs take float32 products as TF32 unless
    "highest")."""
    if out is not None:
        raise TypeError(at_user_line("einsum: out= is not supported (tensors are immutable);"
                                     " use the result"))
    del optimize
    prec = precision_pair(precision, "einsum")
    ops = list(promote_operands(*operands)[0])
    target = dtype if dtype is not None else preferred_element_type
    if target is not None:
        target = dt.dtype(target)
        for i, x in enumerate(ops):
            if dtype is not None and not np.can_cast(x.dtype.np, target.np, casting):
                raise TypeError(at_user_line(
                    f"einsum: operand {i} ({x.dtype}) cannot be cast to dtype={target} "
                    f"under casting={casting!r}; pass casting='same_kind' or 'unsafe', "
                    f"or cast it first"))
        prec = converted(prec, ops, target)
        ops = [x.astype(target) for x in ops]
    subscripts = subscripts.replace(" ", "")
    lhs, out = subscripts.split("->") if "->" in subscripts else (subscripts, None)
    terms = lhs.split(",")
    if len(terms) != len(ops):
        raise ValueError(at_user_line(f"einsum: {len(terms)} operand subscripts for "
                                      f"{len(ops)} operands"))
    if "." in subscripts:
        terms, out = _expand_ellipses(terms, out, ops)
    if out is None:
        letters = lhs.replace(",", "")
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    for t, x in zip(terms, ops, strict=True):
        if len(t) != x.ndim or not t.isalpha():
            raise ValueError(at_user_line(f"einsum: subscripts {t!r} name {len(t)} axes but "
                                          f"the operand has shape {x.shape}"))
    terms, ops = map(list, zip(*(_take_diagonals(t, x) for t, x in zip(terms, ops,
                                                                           strict=True)),
                                strict=True))
    terms, ops = _squeeze_broadcast(terms, ops)

    def needed_after(i):
        rest = "".join(terms[i + 1:]) + out
        return set(rest)

    # sum out indices used by one operand only and absent elsewhere
    def reduce_private(term, x, keep):
        axes = tuple(i for i, c in enumerate(term) if c not in keep)
        if axes:
            # einsum keeps the operands' dtype (booleans: the logical or)
            x = any(x, axis=axes) if x.dtype is dt.bool_ else sum(x, axis=axes, dtype=x.dtype)
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
                   ([cur_t.index(c) for c in batch], [t.index(c) for c in batch]), prec)
        cur_t = ("".join(batch) + "".join(c for c in cur_t if c not in shared)
                 + "".join(c for c in t if c not in shared))
    cur_t, cur = reduce_private(cur_t, cur, set(out))
    if sorted(cur_t) != sorted(out):
        raise ValueError(at_user_line(f"einsum: output subscripts {out!r} name an index "
                                      f"that is not in the inputs"))
    return transpose(cur, [cur_t.index(c) for c in out]) if cur_t != out else cur


def kron(a, b) -> Tensor:
    """The Kronecker product: blocks a[i, j] * b (for any number of axes)."""
    x, y = promote_operands(a, b)[0]
    nd = builtins.max(x.ndim, y.ndim)
    xs, ys = (1,) * (nd - x.ndim) + x.shape, (1,) * (nd - y.ndim) + y.shape
    xr = reshape(x, tuple(d for n in xs for d in (n, 1)))
    yr = reshape(y, tuple(d for n in ys for d in (1, n)))
    return reshape(multiply(xr, yr), tuple(p * q for p, q in zip(xs, ys, strict=True)))


def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis=None) -> Tensor:
    """The cross product of 3-vectors (or 2-vectors, whose z is 0: two 2-vectors give the
    z component alone) along axisa of a and axisb of b, put on axisc of the result."""
    if axis is not None:
        axisa = axisb = axisc = axis
    (x, y), _ = promote_operands(a, b)
    x = moveaxis(x, normalize_axis(axisa, x.ndim, "axisa"), -1)
    y = moveaxis(y, normalize_axis(axisb, y.ndim, "axisb"), -1)
    if x.shape[-1] not in (2, 3) or y.shape[-1] not in (2, 3):
        raise ValueError(at_user_line(f"cross: vectors must have 2 or 3 components, got "
                                      f"{x.shape[-1]} and {y.shape[-1]}"))
    x0, x1, y0, y1 = x[..., 0], x[..., 1], y[..., 0], y[..., 1]
    z = subtract(multiply(x0, y1), multiply(x1, y0))
    if x.shape[-1] == 2 and y.shape[-1] == 2:
        return z
    zero = x._backend.scalar(0, x.dtype)
    x2 = x[..., 2] if x.shape[-1] == 3 else zero
    y2 = y[..., 2] if y.shape[-1] == 3 else zero
    parts = [subtract(multiply(x1, y2), multiply(x2, y1)),
             subtract(multiply(x2, y0), multiply(x0, y2)), z]
    shape = broadcast_shapes(*(p.shape for p in parts))
    out = stack([broadcast_to(p, shape) for p in parts], -1)
    return moveaxis(out, -1, normalize_axis(axisc, out.ndim, "axisc"))
