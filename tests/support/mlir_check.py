"""Parsing and verifying emitted StableHLO with jaxlib's MLIR bindings (an independent
check of the emitter: the same parser and verifier XLA's frontends use)."""

from __future__ import annotations

from jaxlib.mlir import ir
from stablejit.runtime import portable


def mlir_context():
    """A jaxlib.mlir Context with the stablehlo, chlo and sdy dialects: the runtime's
    own (runtime/portable.py), which export uses to read and write StableHLO."""
    return portable.context()


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
