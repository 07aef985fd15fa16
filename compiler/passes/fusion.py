"""Fusion: partition a Function's ops into clusters that can run as one kernel.

The pass does not change what is computed: it returns the same ops with a cluster
number per op (`Function.clusters`), which `format_function` (`stablejit dump --stage
ir`) prints next to each op, and which the lazy mode and `stablejit explain` read.

It walks the ops backwards, as XLA's instruction fusion does: every op is either the
root of a new cluster or joins the one cluster that all of its users belong to. The
decision is `_joins`, below, with its cases listed; everything else is a cluster of its
own.
"""

from __future__ import annotations

from ..ir import Function, Op

# kinds of cluster root
ELEMENTWISE = "elementwise"  # a chain of elementwise ops (and what feeds them cheaply)
REDUCTION = "reduction"      # a reduction and the elementwise chain that feeds it
OPAQUE = "opaque"            # one op that runs as its own kernel (dot, conv, sort, ...)

# shape ops that cost nothing inside a kernel: an index computation, not a copy
_CHEAP_SHAPE = frozenset({"broadcast_in_dim", "reshape", "constant", "iota", "convert"})
_REDUCTIONS = frozenset({"reduce_sum", "reduce_prod", "reduce_max", "reduce_min",
                         "reduce_and", "reduce_or", "argmax", "argmin"})


def root_kind(op: Op) -> str:
    """What kind of cluster an op starts when it joins none."""
    if op.regions:
        return OPAQUE
    if op.prim.name in _REDUCTIONS:
        return REDUCTION
    if op.prim.family == "elementwise" or op.prim.name in _CHEAP_SHAPE:
        return ELEMENTWISE
    return OPAQUE


def _joins(producer: Op, consumer_kind: str) -> bool:
    """May `producer` run inside the kernel of a cluster rooted by `consumer_kind`?

    1. Elementwise ops join an elementwise chain or the chain feeding a reduction
       (producer-consumer fusion: the intermediate never reaches memory).
    2. broadcast_in_dim, reshape, convert, constant and iota join likewise: inside a
       kernel they are index arithmetic.
    3. A reduction never joins its consumers: it closes its chain (its result must be
       complete before an elementwise consumer reads it).
    4. Nothing joins an opaque op (dot_general, convolution, sort, gather, scatter, linalg,
       fft, control flow, custom calls): those are library calls or loops of their own.
    5. Ops with regions are opaque and never join.
    """
    if consumer_kind == OPAQUE or producer.regions:
        return False
    return root_kind(producer) == ELEMENTWISE


def partition(fn: Function) -> list[int]:
    """One cluster number per op of fn (numbered in program order from 0)."""
    users: dict[int, set[int]] = {i: set() for i in range(len(fn.ops))}
    producer_of = {}
    for i, op in enumerate(fn.ops):
        for r in op.results:
            producer_of[r] = i
    for i, op in enumerate(fn.ops):
        for v in op.operands:
            j = producer_of.get(v)
            if j is not None:
                users[j].add(i)
    escapes = {producer_of[r] for r in fn.results if r in producer_of}

    cluster: dict[int, int] = {}
    kind: dict[int, str] = {}
    next_id = 0
    for i in range(len(fn.ops) - 1, -1, -1):
        op = fn.ops[i]
        targets = {cluster[u] for u in users[i]}
        # a result of fn is written to memory anyway: it roots its own cluster
        if len(targets) == 1 and i not in escapes:
            (c,) = targets
            if _joins(op, kind[c]):
                cluster[i] = c
                continue
        cluster[i] = next_id
        kind[next_id] = root_kind(op)
        next_id += 1
    # renumber in program order
    order: dict[int, int] = {}
    for i in range(len(fn.ops)):
        order.setdefault(cluster[i], len(order))
    return [order[cluster[i]] for i in range(len(fn.ops))]


def fuse(fn: Function) -> Function:
    """fn with its clusters recorded (the ops are unchanged)."""
    out = Function(fn.name, fn.params, fn.ops, fn.results)
    out.clusters = tuple(partition(fn))
    return out


def cluster_count(fn: Function) -> int:
    clusters = fn.clusters if fn.clusters is not None else partition(fn)
    return len(set(clusters))
