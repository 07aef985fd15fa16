"""Calling an exported StableHLO module: `call_exported` (jax.export's call_exported_p).

An exported function (stablejit.export) is StableHLO text, not IR: after an artifact is
loaded there is no IR to inline. The op's `module` attribute is a CalledModule holding,
per platform, the module's functions renamed to private symbols unique to it; the
emitter writes them beside @main once per module (Emitter.functions) and the op becomes
a `func.call` of the entry function, so an exported function runs eagerly, inside jit
and inside other transformations as one op.

    call_exported(*args)   attr module: CalledModule. Results: module.out_types.

The reference rule calls `module.reference` (the frontend gives one that runs the
module with XLA on the host: the IR of the module is gone). vmap loops over the batch
with a scan whose body calls the module once per example (the module's shapes are
fixed). Reverse mode calls the module's exported VJP (`module.vjp`, a CalledModule
taking primals then output cotangents and returning the cotangents of the float
inputs); without one, differentiating is an error that says how to export one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..builder import Builder
from ..errors import ShapeError
from ..ir import TensorType
from ..primitive import Primitive
from .control_flow import scan


class CalledModule:
    """A StableHLO module an op calls. Compared by `digest` (a hash of every platform's
    text and the types), so equal modules share compiled programs across loads.

    functions: platform -> the module's functions as private `func.func` text, the entry
    named `symbol`. reference: NumPy arrays -> tuple of arrays (the module's semantics).
    vjp: the CalledModule of the exported VJP, or None. float_inputs: which inputs the
    VJP returns cotangents for."""

    __slots__ = ("name", "symbol", "functions", "in_types", "out_types", "digest",
                 "reference", "vjp", "float_inputs", "derivative_of")

    def __init__(self, name: str, symbol: str, functions: Mapping[str, str],
                 in_types: tuple[TensorType, ...], out_types: tuple[TensorType, ...],
                 digest: str, reference: Callable | None = None,
                 vjp: CalledModule | None = None):
        self.name, self.symbol, self.functions = name, symbol, dict(functions)
        self.in_types, self.out_types = tuple(in_types), tuple(out_types)
        self.digest, self.reference, self.vjp = digest, reference, vjp
        self.float_inputs = tuple(i for i, t in enumerate(self.in_types)
                                  if t.dtype.kind in "fc")
        self.derivative_of: str | None = None  # (the function this is the VJP of)

    def __eq__(self, other) -> bool:
        return isinstance(other, CalledModule) and self.digest == other.digest

    def __hash__(self) -> int:
        return hash(self.digest)

    def __repr__(self) -> str:
        return f"<exported {self.name} {self.digest[:12]}>"


def _rule(*xs, module):
    if not isinstance(module, CalledModule):
        raise ShapeError("call_exported: the module attribute must be a CalledModule")
    if tuple(xs) != module.in_types:
        bad = next((i for i, (x, t) in enumerate(zip(xs, module.in_types, strict=False))
                    if x != t),
                   min(len(xs), len(module.in_types)))
        got = xs[bad] if bad < len(xs) else "nothing"
        want = module.in_types[bad] if bad < len(module.in_types) else "nothing"
        raise ShapeError(f"call_exported: {module.name} takes {len(module.in_types)} "
                         f"operands; operand {bad} is {got}, expected {want}")
    return module.out_types


def _emit(ctx, *xs):
    module = ctx.attrs["module"]
    platform = ctx.emitter.platform
    text = module.functions.get(platform)
    if text is None:
        raise ShapeError(
            f"call_exported: {module.name} was exported for "
            f"{', '.join(sorted(module.functions))}, not for {platform}; export it again "
            f"with platforms=(..., {platform!r})")
    ctx.emitter.functions.setdefault(module.symbol, text)
    return ctx.op("func.call", list(xs), list(ctx.out_types),
                  f"callee = @{module.symbol}")


def _reference(*xs, module):
    if module.reference is None:
        raise ShapeError(f"call_exported: {module.name} has no reference implementation")
    return tuple(module.reference(*xs))


def _vjp(ops, cts, primals, outs, *, module):
    if module.vjp is None and module.derivative_of is not None:
        raise TypeError(
            f"cannot differentiate the exported function {module.derivative_of} twice: "
            f"grad of grad, and forward mode (jvp, jacfwd, hessian), which an artifact "
            f"gets from its VJP, need the VJP's own VJP, and export holds one order "
            f"(vjp_order=1). Export the derivative you need instead, e.g. "
            f"export.export(stablejit.jit(stablejit.grad(f)), vjp_order=1)")
    if module.vjp is None:
        raise TypeError(
            f"cannot differentiate the exported function {module.name}: its artifact holds "
            f"no VJP. Export it with stablejit.export.export(f, vjp_order=1) to call it "
            f"under grad")
    if all(c is None for c in cts) or not module.float_inputs:
        return (None,) * len(primals)
    cts = [c if c is not None else ops.zeros_like(o) for c, o in zip(cts, outs, strict=True)]
    grads = ops.bind_many(call_exported, *primals, *cts, module=module.vjp)
    result: list = [None] * len(primals)
    for i, g in zip(module.float_inputs, grads, strict=True):
        result[i] = g
    return tuple(result)


def _batch(ops, xs, batched, *, module):
    """One call per example, in a scan over the batch: unbatched operands are the scan's
    constants, batched ones its scanned operands (the batch axis is axis 0)."""
    n = ops.axis[1]
    consts = [i for i, b in enumerate(batched) if not b]
    scanned = [i for i, b in enumerate(batched) if b]
    body = Builder(f"{module.name}_step")
    params = {i: body.param(module.in_types[i]) for i in consts + scanned}
    outs = body.bind(call_exported, [params[i] for i in range(len(xs))],
                     {"module": module})
    step = body.build(outs)
    return ops.bind_many(scan, *[xs[i] for i in consts], *[xs[i] for i in scanned],
                         num_consts=len(consts), num_carry=0, length=n, reverse=False,
                         regions=(step,))


call_exported = Primitive("call_exported", _rule, _emit, _reference, vjp=_vjp,
                          batch=_batch, multiple_results=True, family="exported")

PRIMITIVES = [call_exported]
