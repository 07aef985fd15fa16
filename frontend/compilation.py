"""The one path from an IR Function to a loaded executable, shared by jit and the
eager backend: passes, emission, STABLEJIT_DUMP_TO dumps, compile-time logging."""

from __future__ import annotations

import logging
import os
import time

from .compiler import passes
from .compiler.emitter import emit_module
from .compiler.ir import Function
from .runtime import dump
from .runtime.client import platform_of
from .runtime.executable import Executable

log = logging.getLogger("stablejit")


def lower(fn: Function, *, optimize: bool = True, donated=(),
          platform: str = "host") -> tuple[Function, str]:
    """Run the passes (verifying when STABLEJIT_VERIFY=1) and emit StableHLO text."""
    if optimize:
        fn = passes.optimize(fn, check=os.environ.get("STABLEJIT_VERIFY") == "1")
    return fn, emit_module(fn, module_name=fn.name, donated=donated, platform=platform)


def compile_function(fn: Function, device, *, name: str | None = None, optimize: bool = True,
                     donated=()) -> Executable:
    t0 = time.perf_counter()
    fn, text = lower(fn, optimize=optimize, donated=donated, platform=platform_of(device))
    t1 = time.perf_counter()
    exe = Executable.compile(text, device)
    if os.environ.get("STABLEJIT_LOG_COMPILES"):
        log.warning("stablejit: compiled %s for %s in %.1f ms (emit %.1f ms)", name or fn.name,
                    platform_of(device), 1e3 * (time.perf_counter() - t1), 1e3 * (t1 - t0))
    directory = dump.dump_dir()
    if directory:
        dump.write_dump(directory, name or fn.name, ir=str(fn), stablehlo=text,
                        hlo=exe.optimized_hlo(),
                        metadata={"name": name or fn.name, "platform": platform_of(device),
                                  "device": str(device), "compile_seconds": exe.compile_seconds,
                                  "ops": len(fn.ops), "structural_hash": fn.structural_hash()})
    return exe
