"""Lazy eager mode for users: the counterpart of TensorFlow's `--tf_xla_auto_jit`.

    with stablejit.lazy():          # or STABLEJIT_LAZY=1 for a whole program,
        y = x * 2.0 + 1.0           # or stablejit.default_backend("lazy")
        z = snp.sum(snp.tanh(y))    # nothing has run yet
    print(z)                        # the graph ran when the block ended: one program

How the pending graph is kept and run: frontend/lazy_backend.py.
"""

from __future__ import annotations

from . import context
from .backends import XlaBackend
from .context import _state, concrete_default, stack
from .lazy_backend import LazyBackend


def lazy_backend(target: XlaBackend | None = None) -> LazyBackend:
    """The lazy backend of a device backend (default: the current concrete default)."""
    global _for_default
    if target is None:
        target = concrete_default()
        if target.deferred:
            return target
        if not target.device_buffers:
            raise TypeError(f"lazy mode records for an XLA device; the default backend is "
                            f"{target!r}")
        if target is context._global_default:
            b = LazyBackend.for_target(target)
            _for_default = target, b
            return b
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
    # context manager cost ~3 us. The common block (no target, no enclosing backend)
    # reuses the answer for the process-wide default: an empty block was 15,400
    # instructions (13 Python frames), now ~7,000 (benchmarks/recorder_instructions.py's
    # way of counting).
    __slots__ = ("backend", "_stack")

    def __init__(self, target: XlaBackend | None = None):
        if target is None and not getattr(_state, "stack", None):
            last = _for_default  # (read once: another thread may replace it)
            if last[0] is context._global_default is not None:
                self.backend = last[1]
                return
        self.backend = lazy_backend(target)

    def __enter__(self) -> LazyBackend:
        s = getattr(_state, "stack", None)
        if s is None:
            s = stack()
        self._stack = s
        s.append(self.backend)
        return self.backend

    def __exit__(self, typ, value, tb) -> None:
        try:
            if self.backend._tape:  # (flush's own first test, without its frame)
                self.backend.flush()
        finally:
            self._stack.pop()


# (the process-wide default backend and its lazy backend, which a block with no target
# records on while no other backend is entered): set by lazy_backend
_for_default: tuple = (None, None)
