"""Example cases of call_exported: a hand-written StableHLO module, f(x, y) = (x * y + x,
x - y), held by a CalledModule whose reference rule is the same math in NumPy (and, for
the lowering tier, in jax: _math takes either kind of array)."""

from __future__ import annotations

from stablejit.compiler.ir import TensorType
from stablejit.compiler.primitives.exported import CalledModule

from tests.support.dtype_groups import FLOAT
from tests.support.prim_table.spec import PrimSpec, values

_SHAPE = (2, 3)
_MODULES: dict = {}


def _math(x, y):
    return x * y + x, x - y


def module(d) -> CalledModule:
    """The module for dtype d (one per dtype, shared by every case and run)."""
    if d not in _MODULES:
        t = TensorType(_SHAPE, d).mlir()
        symbol = f"table_{d.short}_main"
        text = (f"func.func private @{symbol}(%arg0: {t}, %arg1: {t}) -> ({t}, {t}) {{\n"
                f"  %0 = stablehlo.multiply %arg0, %arg1 : {t}\n"
                f"  %1 = stablehlo.add %0, %arg0 : {t}\n"
                f"  %2 = stablehlo.subtract %arg0, %arg1 : {t}\n"
                f"  return %1, %2 : {t}, {t}\n}}")
        tt = TensorType(_SHAPE, d)
        _MODULES[d] = CalledModule(
            "table_module", symbol, dict.fromkeys(("host", "cuda", "rocm", "tpu"), text),
            (tt, tt), (tt, tt), f"table-{d.short}", reference=_math)
    return _MODULES[d]


def _make(d, rng):
    return [values(d, rng, _SHAPE), values(d, rng, _SHAPE)], {"module": module(d)}


def _expected(x, y, *, module):
    return _math(x, y)


TABLE = {"call_exported": PrimSpec(FLOAT, _make, _expected)}
