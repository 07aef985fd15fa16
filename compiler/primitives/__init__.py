"""Every primitive of the IR, collected from the family modules.

Adding a primitive means adding it to its family module's PRIMITIVES list; the
completeness test (tests/device_free/test_primitives.py) checks its rules.
"""

from __future__ import annotations

from . import (
    control_flow,
    convolution,
    custom_ad,
    elementwise,
    fft,
    indexing,
    linalg,
    reductions,
    shape_ops,
    sorting,
    windows,
)

FAMILIES = (
    elementwise,
    shape_ops,
    reductions,
    windows,
    convolution,
    fft,
    linalg,
    indexing,
    sorting,
    custom_ad,
    control_flow,
)

ALL = {}
for _family in FAMILIES:
    for _p in _family.PRIMITIVES:
        assert _p.name not in ALL, f"primitive {_p.name} defined twice"
        ALL[_p.name] = _p


def get(name: str):
    return ALL[name]
