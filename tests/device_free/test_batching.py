"""Batching rules (vmap) of every primitive, on the reference interpreter: the batched
op equals a loop of the unbatched op over the examples (tests/support/batch_cases.py)."""

import numpy as np
import pytest
from stablejit.compiler.batching import batch_function
from stablejit.compiler.interpreter import interpret
from stablejit.compiler.primitive import NO_OPERANDS
from stablejit.compiler.registry import ALL

from tests.support.batch_cases import ALL_BATCH_CASES, SIZE
from tests.support.compare import assert_close
from tests.support.prim_table import PRIM_TABLE


def test_every_primitive_has_a_batching_rule():
    """A rule, or NO_OPERANDS for a primitive that takes no operands (never batched)."""
    missing = sorted(n for n, p in ALL.items() if not callable(p.batch)
                     and p.batch is not NO_OPERANDS)
    assert not missing, f"primitives without a batching rule: {missing}"
    for name, p in ALL.items():
        if p.batch is NO_OPERANDS:
            assert all(not c.operands for c in PRIM_TABLE[name].cases()), (
                f"{name} is marked NO_OPERANDS but its examples have operands")


@pytest.mark.parametrize("case", ALL_BATCH_CASES,
                         ids=[f"{c.name}-{c.label}" for c in ALL_BATCH_CASES])
def test_batched_primitive_matches_a_loop(case):
    fn, out_batched = batch_function(case.one_op(), case.batched, SIZE)
    got = interpret(fn, case.operands())
    for g, e, b, t in zip(got, case.expected(), out_batched, case.one_op().result_types,
                          strict=True):
        if not b:  # the rule kept this result unbatched: every example has the same
            g = np.broadcast_to(g, (SIZE,) + g.shape)
        assert_close(g, e, t.dtype, msg=f"{case.name} {case.label}")
