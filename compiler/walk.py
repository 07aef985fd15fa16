"""The one environment-walking loop over an IR Function.

Every interpretation of the IR is this loop with its own `apply`: bind the params to
`args`, then for each op read its operands from the environment, apply the rule,
and write its results back. The reference interpreter applies reference rules to
arrays, the emitter writes StableHLO and returns SSA names, and autodiff's copies bind
ops into a Builder and return IR values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .ir import Function, Op, Value


def walk(fn: Function, args: Sequence[Any], apply: Callable[[Op, list], Sequence[Any]],
         env: dict[Value, Any] | None = None) -> list[Any]:
    """Run `apply(op, operand values) -> result values` over fn's ops in order and
    return the values of fn's results. Pass `env` to keep every value (reverse mode
    reads the forward values back)."""
    if len(args) != len(fn.params):
        raise TypeError(f"{fn.name} takes {len(fn.params)} arguments, got {len(args)}")
    env = {} if env is None else env
    env.update(zip(fn.params, args, strict=True))
    for op in fn.ops:
        outs = apply(op, [env[v] for v in op.operands])
        env.update(zip(op.results, outs, strict=True))
    return [env[r] for r in fn.results]
