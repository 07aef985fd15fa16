"""stablejit.export: ship a jitted function as a versioned artifact that runs where its
Python source does not (jax.export's names).

    exp = stablejit.export.export(stablejit.jit(f), platforms=("host", "cuda"))(
        stablejit.ShapeDtypeStruct((8, 784), "float32"))
    data = exp.serialize()                      # bytes: docs/export_format.md
    exp2 = stablejit.export.deserialize(data)   # in any process, without f's source
    y = exp2.call(x)                            # eagerly, in jit, vmap, grad (vjp_order=1)

Symbolic shapes: ShapeDtypeStruct(symbolic_shape("b, 784"), "float32") exports once for
every batch size b; each call specialises (and compiles) once per size.

See docs/shipping_a_model.md.
"""

from ._artifact import FORMAT_VERSION, ArtifactError
from ._exported import (
    CALLING_CONVENTION_VERSION,
    Exported,
    ExportWarning,
    deserialize,
    export,
)
from ._jax_interop import from_jax, to_jax
from ._symbolic import SymbolicScope, symbolic_args_specs, symbolic_shape

__all__ = ["CALLING_CONVENTION_VERSION", "FORMAT_VERSION", "ArtifactError", "ExportWarning",
           "Exported", "SymbolicScope", "deserialize", "export", "from_jax",
           "symbolic_args_specs", "symbolic_shape", "to_jax"]
