"""Lazy eager mode for users: the counterpart of TensorFlow's `--tf_xla_auto_jit`.

    with stablejit.lazy():          # or STABLEJIT_LAZY=1 for a whole program,
        y = x * 2.0 + 1.0           # or stablejit.default_backend("lazy")
        z = snp.sum(snp.tanh(y))    # nothing has run yet
    print(z)                        # the graph ran when the block ended: one program

How the pending graph is kept and run: frontend/lazy_backend.py.
"""

from __future__ import annotations

import contextlib

from .backends import XlaBackend
from .context import concrete_default, using_backend
from .lazy_backend import LazyBackend


def lazy_backend(target: XlaBackend | None = None) -> LazyBackend:
    """The lazy backend of a device backend (default: the current concrete default)."""
    if target is None:
        target = concrete_default()
        if isinstance(target, LazyBackend):
            return target
        if not isinstance(target, XlaBackend):
            raise TypeError(f"lazy mode records for an XLA device; the default backend is "
                            f"{target!r}")
    return LazyBackend.for_target(target)


@contextlib.contextmanager
def lazy(target: XlaBackend | None = None):
    """Run the block's eager ops lazily (see the module docstring); the pending graph
    runs when the block ends."""
    backend = lazy_backend(target)
    with using_backend(backend):
        try:
            yield backend
        finally:
            backend.flush()
