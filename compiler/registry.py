"""Every primitive of the IR, collected from the family modules.

This module sits at the top of compiler/: it imports every family (first-order ones,
then control flow and custom derivatives, which sit above autodiff) and nothing
imports it from below. Rules name other primitives as objects, never through here;
the table is for the frontend's lookups by name and for the completeness test
(tests/device_free/test_primitives.py), which checks every primitive's rules.
"""

from __future__ import annotations

import difflib

from .primitive import Primitive
from .primitives import (
    bits,
    callbacks,
    collectives,
    control_flow,
    convolution,
    custom_ad,
    elementwise,
    exported,
    fft,
    indexing,
    linalg,
    products,
    reductions,
    shape_ops,
    sharding,
    sorting,
    windows,
)

FAMILIES = (
    elementwise,
    bits,
    shape_ops,
    reductions,
    products,
    windows,
    convolution,
    fft,
    linalg,
    indexing,
    sorting,
    custom_ad,
    control_flow,
    collectives,
    sharding,
    callbacks,
    exported,
)


def _collect() -> dict[str, Primitive]:
    table: dict[str, Primitive] = {}
    for family in FAMILIES:
        for p in family.PRIMITIVES:
            if p.name in table:
                raise ValueError(f"primitive {p.name!r} is defined twice: in "
                                 f"{table[p.name].family} and in {family.__name__}")
            table[p.name] = p
    return table


ALL: dict[str, Primitive] = _collect()


def get(name: str) -> Primitive:
    """The primitive called `name`; a KeyError names the closest known ones."""
    try:
        return ALL[name]
    except KeyError:
        close = difflib.get_close_matches(name, ALL, n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise KeyError(f"no primitive named {name!r}{hint}") from None
