"""A Function built by a transformation, and run where its inputs are.

grad, vjp, jacfwd, jacrev and vmap each build their computation with a Builder callback
and run it: inside a live trace its ops go into that trace; otherwise it runs on the
inputs' backend (compiled behind the executable cache, or interpreted on the reference
backend; a lazy() block records it). A build given a key is made once per key.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from . import config
from .compiler.autodiff import inline
from .compiler.builder import Builder
from .compiler.ir import Function, Value
from .context import current_backend
from .dispatch import backend_for
from .runtime.cache import SingleFlightCache
from .spmd import runs_on
from .tensor import Tensor

# (transformation, traced Function's structural key, ...) -> the Function it built:
# a derivative is a function of the traced IR alone, so eager code that re-traces the
# same loss every step (as JAX's eager grad does) builds its backward pass once
_BUILT = SingleFlightCache(max_entries=256)


def run_built(name: str, build: Callable[[Builder, list[Value]], list[Value]],
              inputs: Sequence[Tensor], key: tuple | None = None) -> list[Tensor]:
    """Build IR with `build(builder, input values) -> result values` into a Function and
    run it on the inputs' backend (run_function). `key`, when given, says the Function
    depends on nothing else (it must hold the structural key of every Function `build`
    reads): one built before under it is reused, unless STABLEJIT_DUMP_TO asks for this
    call's source lines."""
    return run_function(built_function(name, build, inputs, key), inputs)


def built_function(name: str, build: Callable, inputs: Sequence[Tensor],
                   key: tuple | None = None) -> Function:
    """run_built's Function, without running it."""
    def make() -> Function:
        b = Builder(name)
        return b.build(build(b, [b.param(t.type) for t in inputs]))
    # (a hit skips the cache's lock and LRU order, as lazy_backend's does)
    return make() if key is None or config.dump_to() else (
        _BUILT.get(key) or _BUILT.get_or_create(key, make))


def run_function(fn: Function, inputs: Sequence[Tensor]) -> list[Tensor]:
    """Run a Function on tensors: inside a live trace its ops go into that trace;
    otherwise on the inputs' backend (a lazy() block records it too)."""
    backend = backend_for(inputs) if inputs else None
    if backend is None or (not backend.stages and current_backend().stages):
        backend = current_backend()
    return runs_on(fn, backend).run(fn, inputs)


def call_function(fn: Function, inputs: Sequence[Tensor]) -> list[Tensor]:
    """Call an IR Function on tensors: inlined into the current trace, or run."""
    return run_built(fn.name, lambda b, vals: inline(b, fn, vals), inputs)


__all__ = ["built_function", "call_function", "run_built", "run_function"]
