"""The lazy backend: ops record into a pending graph that runs as one compiled program
when a value is needed (the user's side, `stablejit.lazy()`, is in lazy.py).

A lazy tensor's data is either a `Pending` value of the backend's current graph or a
device buffer. The graph runs (`flush`) when a value is read back (numpy(), print,
bool(), int(), item()), when a tensor goes to another backend or device, when the
graph passes STABLEJIT_LAZY_MAX_OPS ops, right after a large Function joins it (grad's
derivative, a jitted step: see _START_AT), and when a `lazy()` block
ends. Its results are the pending values that live tensors still hold. Results stay on
the device.

Recording is the hot path (a training loop records every op of every step), so a graph
is a tape, not IR: each value is a slot number, each op a tuple of (primitive,
attributes, operand slots) appended to a list, and that list is also the graph's
structural key. Running a graph looks the key up in `_programs`; only a graph not seen
before is replayed into an IR Function, which goes through the compiler passes and
the one executable cache (compiled whole: XLA fuses across it). So the second
iteration of a loop builds no IR and compiles nothing.

Semantics do not change: shape rules run as each op is recorded, so an error names the
user's line of the op, not the line that read the value; values and dtypes are the eager
ones (the same primitives, compiled by the same XLA).
"""

from __future__ import annotations

import logging
import threading

from . import compilation, config, recorder
from .backends import XlaBackend
from .recorder import Pending, Recorder, function_of, structural_key
from .runtime.cache import SingleFlightCache
from .tensor import Tensor

log = logging.getLogger("stablejit")

_PROGRAMS_KEPT = 256  # graph keys remembered per backend (their Programs stay cached)


class LazyBackend(Recorder):
    """Records ops for the device of `target` (an XlaBackend) and runs them in batches."""

    batches_ops = True
    # A recorded Function of _START_AT ops or more (grad's derivative, a jitted step) can
    # start the graph at once, so the device computes it while Python records what
    # follows; a backend does so where its _start_at is lowered to it (tests, and
    # benchmarks/lazy_early_start.py, which times both ways). Off by default on every
    # platform: it splits a step into two programs, each with its launch. On a GPU a
    # launch is asynchronous already (starting early overlaps nothing; each launch
    # costs the CPU 30-130 us on the H200 measured, docs/devices.md). On the host it
    # helped while recording a step cost ~50 us (digits step 141 -> 120 us, 2026-11-26);
    # with recording at ~25 us (2026-11-27), one program was faster in each of 4 runs of
    # lazy_early_start.py for the digits step (130-178 us against 136-205) and even for
    # the MLP step (150-205 against 151-205): docs/native.md, "One program per step".
    _START_AT = 64

    def __init__(self, target: XlaBackend):
        super().__init__(target)
        self._start_at = 1 << 62  # (the early start off: see _START_AT)
        self.name = f"lazy:{target.name}"
        self.flushes = 0  # how many graphs ran (for tests and the benchmark)
        # graph key -> Program: the counterpart of jit's signature cache in front of the
        # executable cache (a miss replays the tape into IR and asks compilation.program)
        self._programs = SingleFlightCache(max_entries=_PROGRAMS_KEPT)
        # Function -> its own Program, for _run_now (and fastcall.c's cached call, which
        # runs a jitted call on an empty graph as _run_now does)
        self._now: dict = {}
        self._last: tuple | None = None  # (tape, results, Program) of the last graph run

    _instances: dict = {}
    _instances_lock = threading.Lock()

    @classmethod
    def for_target(cls, target: XlaBackend) -> LazyBackend:
        b = cls._instances.get(target)
        if b is None:
            with cls._instances_lock:
                b = cls._instances.setdefault(target, cls(target))
        return b

    def _op_bound(self) -> int:
        return config.lazy_max_ops()

    # ---- running ---------------------------------------------------------------------
    def _run_now(self, fn, tensors) -> list[Tensor] | None:
        """A large Function (grad's derivative, a jitted step) on an empty graph runs as
        eager runs it: its own program, on operands that are all computed, with no tape,
        graph key or lookup around it (the digits step in lazy() was ~20 us slower than
        eager with them); its results are lazy tensors holding their buffers. None when
        an operand is not computed yet or lives elsewhere (then it is recorded)."""
        target, bufs = self.target, []
        for t in tensors:
            d = t._data
            if type(d) is Pending:
                d = d.buffer
            if d is None or (t._backend is not self and t._backend is not target):
                return None  # (a deleted tensor: recording raises the clear error)
            bufs.append(d)
        prog = self._now.get(fn)
        if prog is None:
            prog = compilation.program(fn, self.device)
            if len(self._now) >= _PROGRAMS_KEPT:
                self._now.clear()
            self._now[fn] = prog
        outs = prog.run(bufs)
        self.flushes += 1
        return [Tensor(b, self, t) for b, t in zip(outs, prog.result_types, strict=True)]

    def buffer(self, t: Tensor):
        """t's device buffer, running the pending graph first if t is in it."""
        d = t._live()
        if not isinstance(d, Pending):
            return d
        if d.buffer is None:
            # under the lock: another thread may be running d's graph (it set a new, maybe
            # empty, graph first, and gives d its buffer before it lets the lock go)
            with self._lock:
                if d.buffer is None:
                    self.flush()
        return d.buffer

    def flush(self) -> None:
        """Run the pending graph: one compiled program whose results are the pending
        values something still holds; each of them then holds its device buffer."""
        if not self._tape:  # nothing recorded (a block whose Functions ran at once)
            return
        if recorder.flush_last(self):  # a graph equal to the last one, run from C
            return
        with self._lock:
            live = recorder.live_pending(self._pending, self._graph)
            if not live:
                self._new_graph()
                return
            tape, locs, inputs = self._tape, self._locs, self._inputs
            results = tuple(p.slot for p in live)
            structural = self._holds_functions
            self._new_graph()
            prog = self._program(tape, locs, results, structural)
            outs = prog.run(inputs)
            self.flushes += 1
            for p, b in zip(live, outs, strict=True):
                p.buffer = b

    def _program(self, tape: list, locs: list, results: tuple, structural: bool
                 ) -> compilation.Program:
        # with STABLEJIT_DUMP_TO the dump must name this graph's lines: no key-only reuse
        if config.dump_to():
            return compilation.program(function_of(tape, locs, results), self.device,
                                       name="lazy")
        # A loop runs the same graph again and again: compared with the last one, entry
        # by entry (entries share their objects, so each compares by identity), it
        # needs no key hashed (2 of the 30-op chain's 3.9 us). Equal tapes are equal
        # keys: a Function in an entry compares by identity, and is one structure.
        last = self._last
        if last is not None and last[1] == results and recorder.same_tape(last[0], tape):
            prog, seen = last[2], True
        else:
            key = structural_key(tape, results, structural)
            prog = self._programs.get(key)  # (a hit: no LRU reordering, no second hash)
            seen = prog is not None
            if not seen:
                prog = self._programs.get_or_create(key, lambda: compilation.program(
                    function_of(tape, locs, results), self.device, name="lazy"))
            self._last = tape, results, prog
        if seen and config.log_compiles():  # as compilation.program logs its hits
            log.warning("stablejit: memory hit lazy for %s (a graph of %d entries seen "
                        "before: no IR built)", compilation.where(self.device), len(tape))
        return prog

__all__ = ["LazyBackend", "Pending", "function_of", "structural_key"]
