"""The per-primitive example table: PRIM_TABLE maps every primitive's name to a PrimSpec
(or JoinedSpec) whose cases() yield PrimCase(label, operands, attrs, expected, regions)
with concrete NumPy operands and an independent NumPy expectation. Device-free tests read
only the operand types; host tests run each case three ways.

One module per primitive family, named as in compiler/primitives/; a new primitive gets
its entry in its family's TABLE (test_example_table_covers_every_primitive fails until it
does).
"""

from tests.support.prim_table import (
    bits,
    callbacks,
    control_flow,
    convolution,
    custom_ad,
    elementwise,
    exported,
    fft,
    indexing,
    linalg,
    reductions,
    shape_ops,
    sorting,
    windows,
)
from tests.support.prim_table.spec import PrimCase, PrimSpec, result_dtype_of

_FAMILIES = (elementwise, bits, shape_ops, reductions, windows, convolution, fft, linalg, indexing,
             sorting, custom_ad, control_flow, callbacks, exported)

PRIM_TABLE: dict[str, PrimSpec] = {}
for _family in _FAMILIES:
    _twice = sorted(set(PRIM_TABLE) & set(_family.TABLE))
    assert not _twice, f"{_family.__name__} repeats table entries for {_twice}"
    PRIM_TABLE.update(_family.TABLE)

__all__ = ["PRIM_TABLE", "PrimCase", "PrimSpec", "result_dtype_of"]
