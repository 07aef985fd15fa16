"""StableHLO portable artifacts: the versioned bytecode an exported module is stored as.

jaxlib writes a module as StableHLO bytecode of a chosen target version
(`serialize_portable_artifact`) and reads any version inside StableHLO's compatibility
window back into the current one (`deserialize_portable_artifact`). The window is what
stablejit.export promises (docs/export_format.md): an artifact is written for TARGET,
the version jaxlib guarantees 12 weeks of forward compatibility for, and StableHLO
reads back every version since its 1.0 for five years.

Everything here runs in one MLIR context of jaxlib's bindings with the stablehlo, chlo
and sdy dialects, guarded by a lock (an MLIR context is not safe to share between
threads while it parses).
"""

from __future__ import annotations

import functools
import re
import threading

from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _stablehlo
from jaxlib.mlir.dialects import chlo, sdy, stablehlo

_LOCK = threading.RLock()

# the oldest StableHLO version a jaxlib released 12 weeks before this one can read
TARGET = _stablehlo.get_version_from_compatibility_requirement(
    _stablehlo.StablehloCompatibilityRequirement.WEEK_12)
CURRENT = _stablehlo.get_current_version()
MINIMUM = _stablehlo.get_minimum_version()


class PortableError(ValueError):
    """StableHLO bytecode that this jaxlib cannot read, or text it cannot write."""


@functools.cache
def context() -> ir.Context:
    ctx = ir.Context()
    try:
        from jaxlib.mlir._mlir_libs import _jax_mlir_ext  # noqa: PLC0415 - jaxlib layouts

        registry = ir.DialectRegistry()
        _jax_mlir_ext.register_dialects(registry)
        ctx.append_dialect_registry(registry)
    except (ImportError, AttributeError):  # other jaxlib layouts register on load
        pass
    ctx.load_all_available_dialects()
    for dialect in (stablehlo, chlo, sdy):
        dialect.register_dialect(ctx)
    return ctx


def version_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split("."))


def _parse(text: str) -> ir.Module:
    try:
        return ir.Module.parse(text, context())
    except Exception as e:  # MLIR reports parse errors as generic exceptions
        raise PortableError(f"the StableHLO text does not parse: {e}") from None


def serialize(text: str, target: str = TARGET) -> bytes:
    """StableHLO text as portable bytecode of version `target`."""
    with _LOCK, context():
        module = _parse(text)
        try:
            return bytes(_stablehlo.serialize_portable_artifact(module, target, True))
        except Exception as e:
            raise PortableError(f"StableHLO could not write the module as version "
                                f"{target}: {e}") from None


def deserialize(data: bytes, elide: int | None = None) -> str:
    """The module of portable bytecode, as StableHLO text of this jaxlib's version;
    `elide`: print constants of more elements than that as `dense_resource<__elided__>`
    (for reading, not for parsing back)."""
    with _LOCK, context():
        try:
            module = _stablehlo.deserialize_portable_artifact(context(), bytes(data))
        except Exception as e:
            raise PortableError(
                f"this jaxlib (StableHLO {CURRENT}, reads {MINIMUM} and later) cannot read "
                f"the module's bytecode: {e}") from None
        return module.operation.get_asm(enable_debug_info=False, large_elements_limit=elide)


def artifact_version(data: bytes) -> str:
    """The StableHLO version a portable artifact names in its producer string
    ("StableHLO_v1.13.7"), or '' when it names none."""
    head = bytes(data[:64])
    start = head.find(b"StableHLO_v")
    if start < 0:
        return ""
    digits = head[start + len(b"StableHLO_v"):].split(b"\0")[0]
    return digits.decode("ascii", "replace")


def private_functions(text: str, prefix: str) -> tuple[str, str]:
    """(entry symbol, text): the module's functions renamed `prefix` + name and made
    private, so that another module can hold them and call the entry (its @main)."""
    with _LOCK, context():
        module = _parse(text)
        funcs = [op for op in module.body.operations if op.operation.name == "func.func"]
        if not any(ir.StringAttr(f.attributes["sym_name"]).value == "main" for f in funcs):
            raise PortableError("the module has no @main function")
        for f in funcs:
            name = ir.StringAttr(f.attributes["sym_name"]).value
            ir.SymbolTable.replace_all_symbol_uses(name, prefix + name, module.operation)
            f.attributes["sym_name"] = ir.StringAttr.get(prefix + name)
            f.attributes["sym_visibility"] = ir.StringAttr.get("private")
        return prefix + "main", "\n".join(f.operation.get_asm(enable_debug_info=False)
                                          for f in funcs)


def refine(text: str, arg_types: list[str]) -> tuple[str, list[str]]:
    """A module with symbolic (`?`) dimensions specialised to concrete argument types
    (MLIR spellings, `tensor<7x784xf32>`): a new @main of those types calls the module's
    (made private, as jax.export's callers do: an argument's type cannot change under
    its uses) and jaxlib's refine_polymorphic_shapes (the pass jax.export runs)
    propagates them, folding the dimension computations, turning dynamic ops into static
    ones and evaluating the shape assertions. Returns the static module's text and
    @main's result types."""
    from jaxlib import _jax  # noqa: PLC0415 - jaxlib's pass (jax.export's), when needed

    wrapped = wrap_main(text, "specialised_", arg_types, list(range(len(arg_types))), [])
    with _LOCK, context():
        data = _parse(wrapped).operation.get_asm(binary=True, enable_debug_info=True)
    try:
        refined = _jax.mlir.refine_polymorphic_shapes(
            data, enable_shape_assertions=True, validate_static_shapes=True)
    except Exception as e:  # the pass reports as a generic error, with MLIR diagnostics
        found = re.search(r"error: (.*)", str(e))  # the first diagnostic says what failed
        raise PortableError(f"the module could not be specialised to {', '.join(arg_types)}: "
                            f"{found.group(1) if found else e}") from None
    with _LOCK, context():
        module = ir.Module.parse(refined, context())
        main = next(op for op in module.body.operations if op.operation.name == "func.func"
                    and ir.StringAttr(op.attributes["sym_name"]).value == "main")
        results = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value).results
        return (module.operation.get_asm(enable_debug_info=False),
                [str(t) for t in results])


def wrap_main(text: str, prefix: str, arg_types: list[str], kept: list[int],
              leading: list[str]) -> str:
    """A module whose public @main takes arguments of `arg_types` and calls the module's
    own @main (made private, its functions renamed `prefix` + name) with the constants
    `leading` first (dense<...> : type texts, e.g. a platform index), then the arguments
    listed in `kept` (the others it does not use). For modules written with another
    calling convention (jax.export's)."""
    with _LOCK, context():
        module = _parse(text)
        named = module.operation.attributes
        attrs = ", ".join(f"{k} = {named[k]}" for k in named if k != "sym_name")
        main = next(op for op in module.body.operations if op.operation.name == "func.func"
                    and ir.StringAttr(op.attributes["sym_name"]).value == "main")
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        ins, outs = [str(t) for t in ftype.inputs], [str(t) for t in ftype.results]
    if len(ins) != len(leading) + len(kept):
        raise PortableError(f"the module's @main takes {len(ins)} arguments, not "
                            f"{len(leading)} + {len(kept)}")
    symbol, functions = private_functions(text, prefix)
    params = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(arg_types))
    body, operands = [], []
    for i, value in enumerate(leading):
        body.append(f'%c{i} = "stablehlo.constant"() {{value = {value}}} : () -> {ins[i]}')
        operands.append(f"%c{i}")
    for j, k in enumerate(kept):  # a convert makes a static argument the callee's ? type
        t = ins[len(leading) + j]   # (what jax writes too); refinement makes it static
        body.append(f'%x{j} = "stablehlo.convert"(%arg{k}) : ({arg_types[k]}) -> {t}')
        operands.append(f"%x{j}")
    results = ", ".join(f"%r#{i}" for i in range(len(outs))) if len(outs) > 1 else "%r"
    lhs = f"%r:{len(outs)} = " if len(outs) > 1 else ("%r = " if outs else "")
    body.append(f'{lhs}"func.call"({", ".join(operands)}) {{callee = @{symbol}}} : '
                f'({", ".join(ins)}) -> ({", ".join(outs)})')
    body.append(f'"func.return"({results if outs else ""}) : ({", ".join(outs)}) -> ()')
    inner = "\n".join("    " + line for line in body)
    funcs = "\n".join("  " + line for line in functions.splitlines())
    return (f"module @wrapped attributes {{{attrs}}} {{\n  func.func public @main({params}) -> "
            f"({', '.join(outs)}) {{\n{inner}\n  }}\n{funcs}\n}}\n")
