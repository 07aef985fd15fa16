"""The one path from an IR Function to a loaded executable, shared by jit and the
eager backend: passes, emission, the caches, STABLEJIT_DUMP_TO dumps and
STABLEJIT_LOG_COMPILES logging.

    IR --passes--> IR --emit--> StableHLO --memory cache--> disk cache --> XLA compile

The memory cache is process-wide and keyed by the StableHLO text and the device, so
two traces that emit the same program share one executable. The disk cache
(runtime/disk_cache.py) is keyed by the text and everything else that decides what
XLA produces; a run that asks XLA for a dump (XLA_FLAGS=--xla_dump_to=...) always
compiles, so the dump is never silently skipped.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections import OrderedDict

from .compiler import passes
from .compiler.emitter import emit_module
from .compiler.ir import Function
from .runtime import disk_cache, dump
from .runtime.client import platform_of
from .runtime.executable import Executable

log = logging.getLogger("stablejit")

MEMORY_CACHE_SIZE = 2048
_memory: OrderedDict = OrderedDict()
_memory_lock = threading.Lock()
stats = {"memory": 0, "disk": 0, "compiled": 0}  # outcomes in this process
_options_cache: dict = {}


def log_compiles() -> bool:
    return bool(os.environ.get("STABLEJIT_LOG_COMPILES", "").strip() not in ("", "0"))


def lower(fn: Function, *, optimize: bool = True, donated=(),
          platform: str = "host") -> tuple[Function, str]:
    """Run the passes (verifying when STABLEJIT_VERIFY=1) and emit StableHLO text for
    `platform` (some emission rules depend on it)."""
    if optimize:
        fn = passes.optimize(fn, check=os.environ.get("STABLEJIT_VERIFY") == "1")
    return fn, emit_module(fn, module_name=fn.name, donated=donated, platform=platform)


def compile_function(fn: Function, device, *, name: str | None = None, optimize: bool = True,
                     donated=(), cache=None) -> Executable:
    """Lower `fn` and get its executable for `device` from the first cache that has it,
    compiling on a miss. `cache` is jit's cache= option (see disk_cache.resolve)."""
    name = name or fn.name
    t0 = time.perf_counter()
    opt, text = lower(fn, optimize=optimize, donated=donated, platform=platform_of(device))
    t_lower = time.perf_counter() - t0
    exe, outcome, seconds = compile_text(text, device, name=name, cache=cache)
    if log_compiles():
        log.warning("stablejit: %s %s for %s in %.1f ms (passes+emit %.1f ms)", outcome, name,
                    _where(device), 1e3 * seconds, 1e3 * t_lower)
    directory = dump.dump_dir()
    if directory:
        dump.write_dump(directory, name, {
            "ir-before.txt": str(fn), "ir.txt": str(opt), "stablehlo.mlir": text,
            "hlo.txt": exe.optimized_hlo(),
            "json": dump.metadata_json({
                "name": name, "platform": platform_of(device), "device": str(device),
                "cache": outcome, "seconds": seconds, "ops_before": len(fn.ops),
                "ops_after": len(opt.ops), "structural_hash": fn.structural_hash(),
                "xla_flags": os.environ.get("XLA_FLAGS", "")})})
    return exe


def compile_text(text: str, device, *, name: str = "fn", cache=None
                 ) -> tuple[Executable, str, float]:
    """(executable, outcome, seconds); outcome is 'memory hit', 'disk hit' or 'compiled'."""
    t0 = time.perf_counter()
    mkey = (hashlib.sha256(text.encode()).digest(), device)
    with _memory_lock:
        exe = _memory.get(mkey)
        if exe is not None:
            _memory.move_to_end(mkey)
    if exe is not None:
        stats["memory"] += 1
        return exe, "memory hit", time.perf_counter() - t0
    store = disk_cache.resolve(cache)
    key = None
    exe = None
    if store is not None:
        key = disk_key(text, device)
        if not disk_cache.xla_dump_requested():
            data = store.get(key)
            if data is not None:
                try:
                    exe = Executable.deserialize(data, text, device)
                except Exception as e:  # a payload XLA no longer accepts: rebuild it
                    store._report(key, f"stablejit: ignored cache entry {store.path(key)}: "
                                       f"XLA could not load it ({e}); it will be rebuilt")
                    exe = None
    outcome = "disk hit"
    if exe is None:
        exe = Executable.compile(text, device)
        outcome = "compiled"
        if store is not None:
            try:
                payload = exe.serialize()
            except Exception:  # some plugins cannot serialize; the cache is an optimisation
                payload = None
            if payload is not None:
                store.put(key, payload, {"name": name, "platform": platform_of(device),
                                         "device_kind": device.device_kind,
                                         "compile_seconds": round(exe.compile_seconds, 4)})
    stats["compiled" if outcome == "compiled" else "disk"] += 1
    with _memory_lock:
        _memory[mkey] = exe
        while len(_memory) > MEMORY_CACHE_SIZE:
            _memory.popitem(last=False)
    return exe, outcome, time.perf_counter() - t0


def disk_key(text: str, device) -> str:
    """The persistent-cache key of a program for a device."""
    import jaxlib

    client = device.client
    return disk_cache.make_key(
        text, platform=platform_of(device), platform_version=str(client.platform_version),
        device_kind=str(device.device_kind), device_id=device.id,
        jaxlib_version=jaxlib.__version__,
        compile_options=_options_bytes(device), xla_flags=disk_cache.significant_xla_flags())


def _options_bytes(device) -> bytes:
    b = _options_cache.get(device)
    if b is None:
        from .runtime.executable import compile_options

        b = _options_cache[device] = compile_options(device).SerializeAsString()
    return b


def clear_memory_cache() -> None:
    with _memory_lock:
        _memory.clear()


def _where(device) -> str:
    return f"{platform_of(device)}:{device.id}"
