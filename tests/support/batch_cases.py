"""Batched cases of every primitive, built from the example table (tests/support/prim_table/).

A batched case stacks three examples of one table case (drawn with seeds 0, 1, 2, so
each example is a valid input: an SPD matrix stays SPD, indices stay in range) along
the batch axis, for a choice of which operands are batched: all of them, and each one
alone (the others shared by every example). Its expectation is a Python loop of the
unbatched primitive over the examples, on the reference interpreter.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from stablejit.compiler import dtypes as dt
from stablejit.compiler.builder import Builder
from stablejit.compiler.interpreter import interpret
from stablejit.compiler.ir import Attrs, Function, TensorType
from stablejit.compiler.registry import ALL

from tests.support.prim_table import PRIM_TABLE

SIZE = 3
SEEDS = (0, 1, 2)


@dataclass
class BatchCase:
    name: str
    label: str
    examples: list      # SIZE lists of operands (NumPy), one per example
    attrs: dict
    regions: tuple
    batched: tuple      # which operands carry the batch axis

    @property
    def prim(self):
        return ALL[self.name]

    def operands(self, axis: int = 0) -> list[np.ndarray]:
        """The operands: batched ones stacked along `axis`, the others example 0's."""
        out = []
        for i, b in enumerate(self.batched):
            if b:
                out.append(np.stack([np.asarray(e[i]) for e in self.examples], axis=axis))
            else:
                out.append(np.asarray(self.examples[0][i]))
        return out

    def one_op(self) -> Function:
        """The unbatched primitive as a one-op Function."""
        b = Builder(self.name)
        params = [b.param(TensorType(np.shape(o), _dtype(o))) for o in self.examples[0]]
        outs = b.bind(self.prim, params, Attrs(self.attrs), regions=self.regions)
        return b.build(list(outs))

    def expected(self) -> list[np.ndarray]:
        """A loop of the unbatched primitive: per result, the examples' results stacked."""
        fn = self.one_op()
        per = []
        for e in self.examples:
            ops = [np.asarray(e[i]) if b else np.asarray(self.examples[0][i])
                   for i, b in enumerate(self.batched)]
            per.append(interpret(fn, ops))
        return [np.stack([p[k] for p in per]) for k in range(len(per[0]))]


def _dtype(o):
    return dt.dtype(np.asarray(o).dtype)


def _same_structure(cases) -> bool:
    first = cases[0]
    for c in cases[1:]:
        if c.attrs != first.attrs or len(c.operands) != len(first.operands):
            return False
        if any(np.shape(a) != np.shape(b) or np.asarray(a).dtype != np.asarray(b).dtype
               for a, b in zip(c.operands, first.operands, strict=True)):
            return False
    return True


def batch_cases(name: str, max_cases: int | None = None) -> list[BatchCase]:
    """The batched cases of one primitive (per dtype case of its table entry)."""
    spec = PRIM_TABLE[name]
    per_seed = [list(spec.cases(seed)) for seed in SEEDS]
    out = []
    for group in zip(*per_seed, strict=True):
        first = group[0]
        n = len(first.operands)
        if n == 0:
            continue
        # examples that differ only where the table's generator draws values; when a
        # case is fixed (no seeded draw) the examples are equal, which still checks shapes
        examples = [list(c.operands) for c in group] if _same_structure(group) else \
            [list(first.operands)] * SIZE
        choices = [(True,) * n] + ([tuple(i == j for j in range(n)) for i in range(n)]
                                   if n > 1 else [])
        for batched in choices:
            tag = "".join("b" if x else "u" for x in batched)
            out.append(BatchCase(name, f"{first.label}-{tag}", examples, first.attrs,
                                 first.regions, batched))
        if max_cases is not None and len(out) >= max_cases:
            break
    return out


ALL_BATCH_CASES = [c for name in sorted(PRIM_TABLE) for c in batch_cases(name)]
