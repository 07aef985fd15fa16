"""Lazy eager mode for users: the counterpart of TensorFlow's `--tf_xla_auto_jit`.

    with stablejit.lazy():          # or STABLEJIT_LAZY=1 for a whole program,
        y = x * 2.0 + 1.0           # or stablejit.default_backend("lazy")
        z = snp.sum(snp.tanh(y))    # nothing has run yet
    print(z)                        # the graph ran when the block ended: one program

How the pending graph is kept and run: frontend/lazy_backend.py.
"""

from __future__ import annotations

from .backends import XlaBackend
from .context import concrete_default, using_backend
from .lazy_backend import LazyBackend


def lazy_backend(target: XlaBackend | None = None) -> LazyBackend:
    """The lazy backend of a device backend (default: the current concrete default)."""
    if target is None:
        target = concrete_default()
        if target.deferred:
            return target
        if not target.device_buffers:
            raise TypeError(f"lazy mode records for an XLA device; the default backend is "
                            f"{target!r}")
    return LazyBackend.for_target(target)


class lazy:  # noqa: N801 - a function to its users (`with stablejit.lazy():`)
    """Run the eager ops of a `with` block lazily: recorded into one pending graph that
    runs as one compiled XLA program when a value is needed or the block ends.

    Inside the block, namespace calls and operators on tensors of the block's device
    return lazy tensors at once; nothing runs. The graph runs when a value is read
    (`print`, `np.asarray`, `float`, `bool`, `if`), a tensor moves to another backend
    or device, the block ends, or the graph passes STABLEJIT_LAZY_MAX_OPS ops (4096). A
    graph seen before (the next iteration of a loop) reuses its compiled program, so a
    loop body compiles once. Values, dtypes and errors are those of eager ops; an error
    names the line of the op that failed, not of the read. As under `jit`, XLA may fold
    constants across ops, so the last bit can differ from op-by-op execution.
    `STABLEJIT_LAZY=1` makes a whole program lazy, and `default_backend("lazy")` a block.

    Args:
        target: the device backend to record for (an XlaBackend); None uses the current
            default device.

    Returns (from `with ... as`):
        The block's LazyBackend (its `flush()` runs the pending graph early).

    Raises:
        TypeError: if the default backend is not an XLA device (e.g. "reference").

    Example:
        >>> x = snp.asarray([1.0, 2.0])
        >>> with stablejit.lazy():
        ...     y = snp.tanh(x * 2.0 + 1.0)
        ...     z = snp.sum(y ** 2)
        >>> z
        Tensor<f32[] lazy:xla:host:0, materialised>
        1.9899522

    How the pending graph is kept and run is the module's (stablejit.lazy, reachable
    as `importlib.import_module("stablejit.lazy")`) and frontend/lazy_backend.py's.
    """

    # A class, not a generator: a training loop enters one per step, and a generator
    # context manager cost ~3 us where this costs well under one.
    __slots__ = ("backend", "_using")

    def __init__(self, target: XlaBackend | None = None):
        self.backend = lazy_backend(target)
        self._using = using_backend(self.backend)

    def __enter__(self) -> LazyBackend:
        self._using.__enter__()
        return self.backend

    def __exit__(self, *exc) -> None:
        try:
            self.backend.flush()
        finally:
            self._using.__exit__(*exc)
