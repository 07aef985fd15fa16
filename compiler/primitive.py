"""The Primitive record: everything one operation needs, defined in one place.

Each family module (primitives/elementwise.py, reductions.py, ...) creates its
primitives with `Primitive(...)`, putting the shape rule, the StableHLO emission
rule, the NumPy reference rule and the derivative rules side by side.
`compiler.registry.ALL` collects them; a test checks that none lacks a rule.
"""

from __future__ import annotations

from collections.abc import Callable

from .errors import ShapeError
from .ir import Attrs, TensorType
from .symbolic import DimExpr


class _NotDifferentiable:
    def __repr__(self) -> str:
        return "NOT_DIFFERENTIABLE"


# Mark for a primitive whose outputs carry no gradient (integer/boolean results,
# comparisons, iota ...). Differentiating through it gives zeros.
NOT_DIFFERENTIABLE = _NotDifferentiable()


class _NoOperands:
    def __repr__(self) -> str:
        return "NO_OPERANDS"


# Batching mark for a primitive with no operands (constant, iota): no operand can be
# batched, so the batching transform copies it and never needs a rule.
NO_OPERANDS = _NoOperands()


# What handles symbolic dimensions (stablejit.export's shape polymorphism): shape rules
# that only compare, add and multiply dims, and emission that StableHLO's dynamic ops
# and refine_polymorphic_shapes cover (emitter.py). Every other primitive refuses a
# symbolic dim in `infer`, the one place shape rules run (docs/shipping_a_model.md).
SYMBOLIC_FAMILIES = frozenset({"elementwise", "reduction", "products", "convolution"})
SYMBOLIC_PRIMITIVES = frozenset({
    "constant", "iota", "broadcast_in_dim", "reshape", "transpose", "slice", "concatenate",
    "reverse", "reduce_window_sum", "reduce_window_max", "reduce_window_min",
    "reduce_window_prod", "select_and_scatter_add", "select_and_gather_add", "pad",
    "gather", "stop_gradient", "optimization_barrier", "cond", "while", "scan",
    "dynamic_slice", "dynamic_update_slice"})


def _symbolic(in_types: tuple[TensorType, ...], attrs: Attrs) -> bool:
    """Whether an operand or a shape attribute (iota's, broadcast_in_dim's) is symbolic."""
    if any(t.symbolic for t in in_types):
        return True
    return any(type(v) is DimExpr or (type(v) is tuple and any(type(d) is DimExpr for d in v))
               for v in attrs.values())


_INFERRED_SIZE = 4096  # per primitive; a program of ever-new shapes stops adding


class Primitive:
    """One operation of the IR.

    shape_rule(*in_types, **attrs) -> TensorType | tuple[TensorType, ...]
        Checks operands (raising compiler.errors.ShapeError that names the bad
        operand) and returns the result type(s).
    emit(ctx, *operand_names) -> str | list[str]
        Writes StableHLO through `ctx` (see emitter.EmitContext), returns result names.
    reference(*arrays, **attrs) -> ndarray | tuple[ndarray, ...]
        The NumPy semantics, matching StableHLO's (not NumPy's where they differ).
    vjp / jvp
        Derivative rules, NOT_DIFFERENTIABLE, or None while not yet written.
    batch(ops, operands, batched, **attrs) -> tuple[Value, ...]
        The batching (vmap) rule: see compiler/batch_rules.py. NO_OPERANDS for
        primitives without operands.
    effectful
        True for ops with a side effect (host callbacks): cse and dce keep every one.
    """

    __slots__ = ("name", "shape_rule", "emit", "reference", "vjp", "jvp", "batch",
                 "multiple_results", "family", "effectful", "_inferred")

    def __init__(self, name: str, shape_rule: Callable, emit: Callable, reference: Callable,
                 *, vjp=None, jvp=None, batch=None, multiple_results: bool = False,
                 family: str = "", effectful: bool = False):
        self.name = name
        self.shape_rule = shape_rule
        self.emit = emit
        self.reference = reference
        self.vjp = vjp
        self.jvp = jvp
        self.batch = batch
        self.multiple_results = multiple_results
        self.family = family
        self.effectful = effectful  # has a side effect: passes never drop or merge it
        # result types by (operand types, attributes): shape rules are pure, and every
        # traced or recorded op asks (types are interned, so the lookup is cheap)
        self._inferred: dict = {}

    def infer(self, in_types: tuple[TensorType, ...], attrs: Attrs,
              regions: tuple = ()) -> tuple[TensorType, ...]:
        """Result types, always as a tuple. Ops with regions (control flow) pass their
        region Functions to the shape rule as `regions=`."""
        if regions:
            self._check_symbolic(in_types, attrs)
            out = self.shape_rule(*in_types, regions=tuple(regions), **attrs)
            return out if self.multiple_results else (out,)
        key = (in_types, attrs)
        known = self._inferred.get(key)
        if known is not None:
            return known
        self._check_symbolic(in_types, attrs)  # on a miss only: the hit path stays as it was
        out = self.shape_rule(*in_types, **attrs)  # raises ShapeError: never cached
        out = out if self.multiple_results else (out,)
        if len(self._inferred) < _INFERRED_SIZE:
            self._inferred[key] = out
        return out

    def _check_symbolic(self, in_types: tuple[TensorType, ...], attrs: Attrs) -> None:
        if (self.family not in SYMBOLIC_FAMILIES and self.name not in SYMBOLIC_PRIMITIVES
                and _symbolic(in_types, attrs)):
            raise ShapeError(
                f"{self.name} does not support symbolic dimensions yet (operand types "
                f"{', '.join(map(str, in_types)) or 'none'}); export this function with "
                f"concrete sizes, or keep the symbolic dimension away from {self.name}")

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"
