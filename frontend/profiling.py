"""Where the time of a jitted function goes, stage by stage: what `stablejit profile`
prints.

    prof = Profile(f, ["f32[128,64]", "f32[64,10]"], runs=100)
    print(prof.report())

The stages are timed one after another, each with the functions jit itself uses: trace
(the function on abstract arguments), passes, emit (StableHLO text), compile or load
(XLA, or the persistent cache), first run, and the steady state of the run alone
(PJRT execute and wait) and of the whole jitted call (dispatch, run and wait).
Arguments given as specs ('f32[128,64]') are zeros placed on the device beforehand, so
no run counts a transfer.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from . import config, tree
from .backends import XlaBackend
from .compilation import compile_text, program_text
from .compiler import passes
from .compiler.emitter import host_callbacks
from .explain import parse_arg
from .jit import Jitted, jit
from .platforms import default_platform
from .signature import to_tensor as _to_tensor
from .tensor import Tensor


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _median(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _wait(outputs) -> None:
    for leaf in tree.leaves(outputs):
        leaf.block_until_ready()


class Profile:
    """Trace, pass, emit, compile (or load) and run `fn` on `args` (specs as `stablejit
    explain` takes them, or arrays), timing each stage; `runs` steady-state calls."""

    def __init__(self, fn, args, *, platform: str | None = None,
                 device_id: int | None = None, runs: int = 100):
        if runs < 1:
            raise ValueError(f"runs must be at least 1, not {runs}")
        jitted = fn if isinstance(fn, Jitted) else jit(fn)
        backend = XlaBackend.for_platform(platform or default_platform(), device_id)
        self.name, self.device, self.runs = jitted.__name__, backend.device, runs
        self.platform = backend.platform
        args = [parse_arg(a) if isinstance(a, str) else a for a in args]
        self.args = [backend.from_numpy(np.array(a)) if isinstance(a, np.ndarray) else a
                     for a in args]
        for a in self.args:
            if isinstance(a, Tensor):
                a.block_until_ready()
        (self.ir, *_), self.trace_s = _timed(lambda: jitted.trace(self.args, {}))
        self.optimized_ir, self.passes_s = _timed(
            lambda: passes.optimize(self.ir, check=config.verify()))
        self.stablehlo, self.emit_s = _timed(lambda: program_text(
            self.optimized_ir, module_name=self.optimized_ir.name, platform=backend.platform))
        exe, self.outcome, self.compile_s = compile_text(
            self.stablehlo, self.device, name=self.name,
            host_callbacks=host_callbacks(self.optimized_ir))
        handlers = exe.result_handlers([(t.shape, t.dtype.np)
                                        for t in self.optimized_ir.result_types])
        # Python scalars are parameters too: as jit passes them, 0-d device buffers
        buffers = [_to_tensor(x, backend)._data for x in tree.leaves(self.args)]

        def run():
            for b in exe.run(buffers, handlers):
                b.block_until_ready()

        _, self.first_run_s = _timed(run)
        self.run_s = _median(run, runs)
        _wait(jitted(*self.args))  # its program is in the cache now: warm, not counted
        self.call_s = _median(lambda: _wait(jitted(*self.args)), runs)

    def report(self) -> str:
        ms = lambda s: f"{s * 1e3:9.3f} ms"  # noqa: E731
        before, after = len(self.ir.ops), len(self.optimized_ir.ops)
        what = {"compiled": "XLA compiled it", "disk hit": "loaded from the disk cache"}
        lines = [
            f"profile of {self.name} on {self.platform}:{self.device.id} "
            f"({', '.join(str(p.type) for p in self.ir.params)})",
            f"  trace             {ms(self.trace_s)}  {before} ops",
            f"  passes            {ms(self.passes_s)}  {before} -> {after} ops",
            f"  emit              {ms(self.emit_s)}  {len(self.stablehlo):,} characters "
            f"of StableHLO",
            f"  compile or load   {ms(self.compile_s)}  "
            f"{what.get(self.outcome, self.outcome)}",
            f"  first run         {ms(self.first_run_s)}",
            f"  steady-state run  {ms(self.run_s)}  median of {self.runs}: PJRT execute "
            f"and wait",
            f"  jit call          {ms(self.call_s)}  median of {self.runs}: dispatch, run "
            f"and wait"]
        return "\n".join(lines)
