"""Custom-call targets that a program may name, made ready before XLA compiles or
loads it.

The compiler emits the host's dense linear algebra (cholesky, triangular_solve, lu,
qr, eigh, svd) as LAPACK typed-FFI custom calls (`lapack_<t><routine>_ffi`). jaxlib
has the handlers, but they are registered with XLA by jax's import (which stablejit no
longer needs) and call LAPACK symbols that jaxlib only loads when asked: `prepare`
does both, once. Executable.compile and Executable.deserialize call `prepare`
first, so emission stays free of side effects.

The GPU solver calls (cusolver_*_ffi, hipsolver_*_ffi, <cu|hip>_lu_pivots_to_permutation)
need nothing here: importing jax, which the runtime does to create any client,
registers them with the GPU plugin (jax._src.lax.linalg); eig's hybrid kernels
(<cu|hip>hybrid_eig_*) also need their LAPACK loaded, which `prepare` asks for. TPU's
decompositions are built into XLA's TPU compiler.
"""

from __future__ import annotations

import sys

from jaxlib import lapack

# generic form (our emitter) and pretty form (MLIR's printer: exported modules)
_LAPACK_TARGETS = ('call_target_name = "lapack_', "stablehlo.custom_call @lapack_")
_lapack_loaded = False


_hybrid_loaded = False


def prepare(stablehlo: str, platform: str) -> None:
    """Load what the custom calls in `stablehlo` need on `platform` (once per process)."""
    global _lapack_loaded, _hybrid_loaded
    if platform in ("cuda", "rocm") and not _hybrid_loaded and "hybrid_eig_" in stablehlo:
        # eig's hybrid kernels (registered with the plugin by jax's import) call the
        # host's LAPACK, which jaxlib loads only when asked (as jax does when it lowers)
        from jaxlib import gpu_solver  # noqa: PLC0415 - GPU programs with eig only

        gpu_solver.initialize_hybrid_kernels()
        _hybrid_loaded = True
    if _lapack_loaded or platform != "host" or not any(t in stablehlo
                                                       for t in _LAPACK_TARGETS):
        return
    lapack._lapack.initialize()  # idempotent, so two threads racing here is harmless
    if "jax._src.lax.linalg" not in sys.modules:  # jax registers the handlers on import
        from jaxlib import xla_client  # noqa: PLC0415 - only for programs that need LAPACK

        for platform_name, targets in lapack.registrations().items():
            for name, handler, api_version in targets:
                xla_client.register_custom_call_target(name, handler, platform_name,
                                                       api_version)
    _lapack_loaded = True
