"""Parsing and verifying emitted StableHLO with jaxlib's MLIR bindings (an independent
check of the emitter: the same parser and verifier XLA's frontends use)."""

from __future__ import annotations

import functools

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import chlo, stablehlo


@functools.cache
def mlir_context():
    """A jaxlib.mlir Context with the stablehlo and chlo dialects (jaxlib 0.10 and 0.11)."""
    ctx = ir.Context()
    try:
        from jaxlib.mlir._mlir_libs import _jax_mlir_ext as jme

        reg = ir.DialectRegistry()
        jme.register_dialects(reg)
        ctx.append_dialect_registry(reg)
    except (ImportError, AttributeError):  # other jaxlib layouts register on load
        pass
    ctx.load_all_available_dialects()
    stablehlo.register_dialect(ctx)
    chlo.register_dialect(ctx)
    return ctx


def parse_and_verify(text: str):
    """Parse StableHLO text with jaxlib's MLIR bindings and run the verifier; returns the
    module (raises with the text on failure)."""
    ctx = mlir_context()
    with ctx:
        try:
            m = ir.Module.parse(text, ctx)
        except Exception as e:
            raise AssertionError(f"MLIR could not parse the module: {e}\n{text}") from None
        assert m.operation.verify(), f"module does not verify:\n{text}"
    return m
