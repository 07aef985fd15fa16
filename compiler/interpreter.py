"""The reference interpreter: runs an IR Function with NumPy, op by op.

It is the shared walk (compiler/walk.py) applying each primitive's reference rule.
Ops with regions get them as callables (`regions=`), which recurse into this same
interpreter.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .ir import Function
from .walk import walk


def run_op(op, args: Sequence[np.ndarray]):
    """Apply one op's reference rule; always returns a tuple of arrays."""
    kwargs = dict(op.attrs)
    if op.regions:
        kwargs["regions"] = tuple(_as_callable(f) for f in op.regions)
    out = op.prim.reference(*args, **kwargs)
    outs = tuple(out) if op.prim.multiple_results else (out,)
    return tuple(np.asarray(o, dtype=r.type.dtype.np).reshape(r.type.shape)
                 for o, r in zip(outs, op.results, strict=True))


def interpret(fn: Function, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    if len(args) != len(fn.params):
        raise TypeError(f"{fn.name} takes {len(fn.params)} arguments, got {len(args)}")
    return walk(fn, [np.asarray(a, dtype=p.type.dtype.np)
                     for p, a in zip(fn.params, args, strict=True)], run_op)


def _as_callable(fn: Function):
    def call(*args):
        return interpret(fn, args)
    call.fn = fn  # rules may need the region's types (scan's empty result)
    return call
