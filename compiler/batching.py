"""Batching (vmap) as an IR transform.

`batch_into` walks a Function with the one environment-walking loop (compiler/walk.py),
carrying for every value whether it is batched (batch axis first, see
compiler/batch_rules.py). An op none of whose operands is batched is copied as it is, so
work that does not depend on the batch runs once; otherwise the op's primitive's
`batch` rule writes the batched computation.

Collectives (psum, all_gather, axis_index ...) name the vmapped axis they act over:
the walk passes its axis (name, size) to the rules through `BatchOps.axis`, and calls a
collective's rule for its own axis even when no operand is batched (axis_index has no
operand; psum of an unbatched value is n times it).

Entry points:
    batch_into(builder, fn, args, batched, axis) -> (outs, outs_batched)
    batch_function(fn, batched, size, force=None, axis=None) -> (Function, outs_batched)
        standalone, for region bodies (control flow, custom derivatives); `force` names
        results that must come out batched (loop carries, the branches of a cond); pass
        the rule's `ops.axis` on so collectives in the body see their axis.
"""

from __future__ import annotations

from collections.abc import Sequence

from .batch_rules import BatchingError, bring
from .builder import Builder
from .ir import Function, Op, TensorType, Value
from .ops import Ops
from .primitive import NO_OPERANDS
from .walk import walk

__all__ = ["BatchingError", "batch_function", "batch_into", "batched_type"]


def batched_type(t: TensorType, size: int) -> TensorType:
    return TensorType((size,) + tuple(t.shape), t.dtype)


def _rule_kwargs(op: Op) -> dict:
    kwargs = dict(op.attrs)
    if op.regions:
        kwargs["regions"] = op.regions
    return kwargs


class BatchOps(Ops):
    """The Ops of a batching rule, which also know the axis being batched."""

    def __init__(self, builder: Builder, loc, axis: tuple):
        super().__init__(builder, loc)
        self.axis = axis  # (axis name or None, size)


def _collective_here(op: Op, axis: tuple) -> bool:
    return op.prim.family == "collective" and axis[0] is not None and \
        op.attrs["axis_name"] == axis[0]


def _no_rule(op: Op) -> BatchingError:
    where = f" (used at {op.loc.file}:{op.loc.line})" if op.loc.line else ""
    return BatchingError(f"vmap: primitive {op.prim.name!r}{where} has no batching rule")


def batch_into(builder: Builder, fn: Function, args: Sequence[Value],
               batched: Sequence[bool], axis: tuple) -> tuple[list[Value], list[bool]]:
    """Build fn batched into `builder`: args[i] has a leading batch axis when
    batched[i]; `axis` is (axis name or None, batch size). Returns fn's results and
    which of them are batched."""
    def apply(op: Op, operands: list[tuple[Value, bool]]) -> list[tuple[Value, bool]]:
        vals = [v for v, _ in operands]
        flags = tuple(b for _, b in operands)
        if not any(flags) and not _collective_here(op, axis):
            outs = builder.bind(op.prim, vals, op.attrs, op.loc, op.regions,
                                out_types=op.result_types)
            return [(v, False) for v in outs]
        rule = op.prim.batch
        if rule is None or rule is NO_OPERANDS:
            raise _no_rule(op)
        outs = rule(BatchOps(builder, op.loc, axis), tuple(vals), flags, **_rule_kwargs(op))
        if len(outs) != len(op.results):
            raise AssertionError(f"batching rule of {op.prim.name} gave {len(outs)} results "
                                 f"for {len(op.results)}")
        result = []
        for v, r in zip(outs, op.results, strict=True):
            is_batched = v.type.ndim == r.type.ndim + 1
            if v.type.shape[int(is_batched):] != r.type.shape or v.type.dtype != r.type.dtype:
                raise AssertionError(f"batching rule of {op.prim.name} gave type {v.type} "
                                     f"for a result of type {r.type}")
            result.append((v, is_batched))
        return result

    pairs = walk(fn, list(zip(args, batched, strict=True)), apply)
    return [v for v, _ in pairs], [b for _, b in pairs]


def batch_function(fn: Function, batched: Sequence[bool], size: int,
                   force: Sequence[bool] | None = None, axis: tuple | None = None,
                   name: str | None = None) -> tuple[Function, list[bool]]:
    """fn with params batched where `batched` says (leading axis of `size`). Results
    named in `force` come out batched even when they do not depend on the batch."""
    b = Builder(name or f"{fn.name}_batched")
    args = [b.param(batched_type(p.type, size) if bt else p.type)
            for p, bt in zip(fn.params, batched, strict=True)]
    outs, out_b = batch_into(b, fn, args, batched, axis or (None, size))
    if force is not None:
        ops = Ops(b)
        outs = [bring(ops, v, ob, size) if f else v
                for v, ob, f in zip(outs, out_b, force, strict=True)]
        out_b = [ob or f for ob, f in zip(out_b, force, strict=True)]
    return b.build(outs), out_b
