"""Custom-call targets that a program may name, made ready before XLA compiles or
loads it.

The compiler emits the host's dense linear algebra (cholesky, triangular_solve, lu,
qr, eigh, svd) as LAPACK typed-FFI custom calls (`lapack_<t><routine>_ffi`). jaxlib
registers their handlers with XLA, but the handlers call LAPACK symbols that jaxlib
only loads when asked. Executable.compile and Executable.deserialize call `prepare`
first, so emission stays free of side effects.

The GPU solver calls (cusolver_*_ffi, hipsolver_*_ffi, <cu|hip>_lu_pivots_to_permutation)
need nothing here: importing jax, which the runtime does to create any client,
registers them with the GPU plugin (jax._src.lax.linalg). TPU's decompositions are
built into XLA's TPU compiler.
"""

from __future__ import annotations

from jaxlib import lapack

_LAPACK_TARGET = 'call_target_name = "lapack_'
_lapack_loaded = False


def prepare(stablehlo: str, platform: str) -> None:
    """Load what the custom calls in `stablehlo` need on `platform` (once per process)."""
    global _lapack_loaded
    if _lapack_loaded or platform != "host" or _LAPACK_TARGET not in stablehlo:
        return
    lapack._lapack.initialize()  # idempotent, so two threads racing here is harmless
    _lapack_loaded = True
