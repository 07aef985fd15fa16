"""Compiler passes, each `Function -> Function`, and the default pipeline."""

from __future__ import annotations

from ..ir import Function
from .cse import cse
from .dce import dce
from .fold import fold
from .fusion import fuse
from .hold import hold_operands
from .verify import verify

# fuse is not in the pipeline: XLA fuses kernels itself and nothing here runs per
# cluster (a lazy graph is compiled whole), so its clusters are a report, made where one
# is shown (explain, STABLEJIT_DUMP_TO's ir.txt)
# (hold_operands is no optimization: compilation.program_text runs it on every program)
DEFAULT_PIPELINE = (fold, cse, dce)


def optimize(fn: Function, *, check: bool = False) -> Function:
    """Run the default pipeline; with check=True verify after every pass."""
    if check:
        verify(fn)
    for p in DEFAULT_PIPELINE:
        fn = p(fn)
        if check:
            verify(fn)
    return fn


__all__ = ["verify", "dce", "cse", "fold", "fuse", "hold_operands", "optimize", "DEFAULT_PIPELINE"]
