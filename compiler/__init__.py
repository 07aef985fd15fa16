"""stablejit.compiler: the IR, primitives, passes, StableHLO emitter and reference
interpreter. Knows nothing of devices."""

from . import dtypes, ir, passes, primitives, registry
from .builder import Builder
from .emitter import emit_module
from .interpreter import interpret

__all__ = ["dtypes", "ir", "passes", "primitives", "registry", "Builder", "emit_module",
           "interpret"]
