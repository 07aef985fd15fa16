"""What a primitive's example table entry is (PrimSpec, JoinedSpec yielding PrimCases)
and the operand makers the family tables share."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from stablejit.compiler import dtypes as dt
from stablejit.compiler.builder import Builder
from stablejit.compiler.ir import Attrs, Function, TensorType
from stablejit.compiler.ops import Ops

from tests.support.compare import widen


@dataclass
class PrimCase:
    label: str
    operands: list
    attrs: dict
    expected: object  # callable(*operands, **attrs) -> ndarray or tuple
    regions: tuple = ()  # IR Functions of ops with bodies (cond, while, scan, custom calls)


@dataclass
class PrimSpec:
    """How to build example operands for one primitive, per dtype. `make` returns
    (operands, attrs) or, for ops with regions, (operands, attrs, region Functions) (build
    them with `region`); an `extra` entry is (label, operands, attrs[, regions]). The
    expectation never sees the regions: it computes the answer on its own."""

    dtypes: tuple
    make: object  # (dtype, rng) -> (operands, attrs[, regions])
    expected: object  # (*operands, **attrs) -> ndarray, NumPy semantics per StableHLO
    upcast: bool = True  # compute the expectation for f16/bf16 in float32
    extra: list = field(default_factory=list)  # additional (label, operands, attrs[, regions])

    def cases(self, seed: int = 0):
        for d in self.dtypes:
            rng = np.random.default_rng(seed)
            ops, attrs, *regions = self.make(d, rng)
            yield PrimCase(d.short, ops, attrs, self._expect, tuple(*regions))
        for label, ops, attrs, *regions in self.extra:
            yield PrimCase(label, ops, attrs, self._expect, tuple(*regions))

    def _expect(self, *ops, **attrs):
        if self.upcast:
            ops = [widen(np.asarray(o)) for o in ops]
        with np.errstate(all="ignore"):
            return self.expected(*ops, **attrs)


class JoinedSpec:
    """Several PrimSpecs of one primitive, each with its own expectation; case labels are
    prefixed with the part's name."""

    def __init__(self, **parts: PrimSpec):
        self.parts = parts

    def cases(self, seed: int = 0):
        for part, spec in self.parts.items():
            for case in spec.cases(seed):
                case.label = f"{part}-{case.label}"
                yield case


def result_dtype_of(case: PrimCase, prim) -> list:
    """The result dtypes the primitive's shape rule gives for a case."""
    types = tuple(TensorType(np.shape(o), dt.dtype(np.asarray(o).dtype))
                  for o in case.operands)
    return [t.dtype for t in prim.infer(types, Attrs(case.attrs), case.regions)]


# ---- operand makers ------------------------------------------------------------------------

def values(d, rng, shape=(2, 3), *, low=None, high=None, positive=False) -> np.ndarray:
    """Random example values of dtype d: small integers, normal floats (positive, or in
    [low, high), when asked), complex with both parts random."""
    d = dt.dtype(d)
    if d.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if d.kind in "iu":
        lo = 0 if (d.kind == "u" or positive) else -5 if low is None else low
        hi = 6 if high is None else high
        return rng.integers(max(lo, 1) if positive else lo, hi, shape).astype(d.np)
    if low is not None or positive:
        lo = 0.25 if low is None else low
        hi = 2.0 if high is None else high
        re = rng.uniform(lo, hi, shape)
    else:
        re = rng.normal(0, 1.5, shape)
    if d.kind == "c":
        return (re + 1j * rng.normal(0, 1.5, shape)).astype(d.np)
    return re.astype(d.np)


def small_ints(d, rng, shape, lo=-3, hi=4):
    """Integer-valued entries: sums and products of a few of them are exact in every dtype."""
    d = dt.dtype(d)
    if d.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    lo = 0 if d.kind == "u" else lo
    v = rng.integers(lo, hi, shape)
    if d.kind == "c":
        v = v + 1j * rng.integers(lo, hi, shape)
    return v.astype(d.np)


def scalar(d, v):
    return np.asarray(v, dtype=dt.dtype(d).np)


def region(name: str, param_types, body) -> Function:
    """An IR Function for an op's region: body(ops, *params) returns its result Values."""
    b = Builder(name)
    params = [b.param(t) for t in param_types]
    return b.build(list(body(Ops(b), *params)))


def tensor_type(a) -> TensorType:
    """The IR type of a NumPy array (a region parameter that takes it)."""
    a = np.asarray(a)
    return TensorType(a.shape, dt.dtype(a.dtype))
