"""The one path from an IR Function to a loaded executable, and the one in-memory
executable cache in front of the disk cache. jit, eager ops, control flow, autodiff and
streams all get their executables here (through XlaBackend.program).

    IR --passes--> IR --emit--> StableHLO --disk cache--> XLA compile
     \\__ structural key + device: the executable cache (bounded, LRU, single-flight)

The executable cache is keyed by the IR's structural key (names and source locations
left out) and the device, so eight jit objects of one program, or a function retraced
to the same IR, compile once. It is bounded by entries and bytes
(STABLEJIT_EXECUTABLE_CACHE_ENTRIES / _BYTES); an evicted Program drops its executable
and gets it back, from the disk cache or by compiling, the next time it runs. The disk
cache (runtime/disk_cache.py) is keyed by the StableHLO text without source locations
and everything else that decides what XLA produces; a run that asks XLA for a dump
always compiles, so the dump is never silently skipped, and one that asks for ours
(STABLEJIT_DUMP_TO) keys on the locations too, so the dumped HLO names current lines.
"""

from __future__ import annotations

import hashlib
import logging
import time

import jaxlib

from . import config
from .compiler import passes
from .compiler.emitter import emit_module, host_callbacks
from .compiler.ir import Function
from .runtime import client as rt_client
from .runtime import disk_cache, dump
from .runtime.cache import SingleFlightCache
from .runtime.client import platform_of
from .runtime.executable import Executable, compile_options

log = logging.getLogger("stablejit")

stats = {"memory": 0, "disk": 0, "compiled": 0, "artifact": 0}  # outcomes in this process
_options_cache: dict = {}
# Executables an exported artifact brought along (stablejit.export, which checks that
# jaxlib, platform and flags match): (platform, device id, sha256 of the StableHLO text
# without locations) -> serialized executable, loaded by compile_text instead of compiling
_SUPPLIED: dict = {}


def supply_executable(text: str, platform: str, device_id: int, payload: bytes) -> None:
    """Let the program `text` load `payload` rather than compile (on that device)."""
    _SUPPLIED[(platform, device_id, _digest(text))] = payload


def _digest(text: str) -> str:
    return hashlib.sha256(disk_cache.without_locations(text).encode()).hexdigest()


def lower(fn: Function, *, optimize: bool = True, donated=(),
          platform: str = "host") -> tuple[Function, str]:
    """Run the passes (verifying when STABLEJIT_VERIFY=1) and emit StableHLO text for
    `platform` (some emission rules depend on it)."""
    if optimize:
        fn = passes.optimize(fn, check=config.verify())
    return fn, program_text(fn, module_name=fn.name, donated=donated, platform=platform)


def program_text(fn: Function, **emit_options) -> str:
    """The StableHLO text XLA gets for `fn`: every program (jit, an eager op, a lazy
    graph, an export, a partitioned one) is written here, its operands held where XLA
    would compute other bits than the ops give on buffers (compiler/passes/hold.py)."""
    return emit_module(passes.hold_operands(fn), **emit_options)


class Program:
    """An IR Function compiled for one device: what every caller holds. `run` executes
    it; when the executable cache has evicted it, `run` loads it again first."""

    __slots__ = ("fn", "device", "name", "optimize", "donated", "disk", "key",
                 "result_types", "exe", "execute", "handlers")

    def __init__(self, fn: Function, device, *, name: str, optimize: bool, donated: tuple,
                 disk):
        self.fn, self.device, self.name = fn, device, name
        self.optimize, self.donated, self.disk = optimize, donated, disk
        self.key = (fn.key(), device, optimize, donated)
        self.result_types = fn.result_types
        self.exe: Executable | None = None
        # execute(buffers).consume_with_handlers(handlers) is a run: jit's fast path
        # calls them itself (None while the program is not loaded; `run` loads it)
        self.execute = self.handlers = None

    @property
    def executable(self) -> Executable:
        exe = self.exe
        return exe if exe is not None else self._revive()[0]

    @property
    def stablehlo(self) -> str:
        return self.executable.stablehlo

    def run(self, buffers) -> list:
        """Execute on device buffers; the output buffers come back at once (async)."""
        execute, handlers = self.execute, self.handlers
        if execute is None or handlers is None:
            _, execute, handlers = self._revive()
        return execute(buffers).consume_with_handlers(handlers)

    def _load(self) -> Program:
        self.exe, self.execute, self.handlers = self._loaded()
        return self

    def _loaded(self) -> tuple:
        """(executable, launcher, result handlers), compiled or loaded from disk."""
        exe = _compile_program(self)
        return exe, exe.launcher(host_callbacks(self.fn)), self._handlers_of(exe)

    def _handlers_of(self, exe: Executable):
        return exe.result_handlers([(t.shape, t.dtype.np) for t in self.result_types])

    def _new_handlers(self) -> None:
        self.handlers = self._handlers_of(self.exe)

    def _drop(self) -> None:
        self.exe = self.execute = self.handlers = None

    def _revive(self) -> tuple:
        """The program loaded again after an eviction: (executable, launcher, handlers),
        which the caller runs with (another thread may evict it again at any time)."""
        live = _EXECUTABLES.get_or_create(self.key, self._load)
        loaded = live.exe, live.execute, live.handlers
        if None in loaded:  # evicted again meanwhile: loaded outside the cache
            loaded = self._loaded()
        self.exe, self.execute, self.handlers = loaded
        return loaded

    @property
    def nbytes(self) -> int:
        """What the cache counts for this program: its code and its StableHLO text."""
        exe = self.exe
        if exe is None:
            return 0
        return exe.code_bytes + len(exe.stablehlo)


_EXECUTABLES = SingleFlightCache(max_entries=config.executable_cache_entries(),
                                 max_bytes=config.executable_cache_bytes(),
                                 size=lambda p: p.nbytes, on_evict=Program._drop)


def _rebuild_result_handlers() -> None:
    """jax has been imported: outputs from now on carry its array metadata."""
    for key in _EXECUTABLES.keys():
        prog = _EXECUTABLES.get(key)
        if prog is not None and prog.exe is not None:
            prog._new_handlers()


rt_client.jax_loaded_hooks.append(_rebuild_result_handlers)


def program(fn: Function, device, *, name: str | None = None, optimize: bool = True,
            donated: tuple = (), disk=None) -> Program:
    """The Program for `fn` on `device`, compiled (or loaded from disk) on first use.
    `donated[i]` is the output index that may reuse param i's buffer (or None); `disk`
    is jit's cache= option (see disk_cache.resolve)."""
    t0 = time.perf_counter()
    # no donation is one key however it is spelled (jit passes a None per argument,
    # lazy() runs the same Function with ()), so they share one executable
    donated = tuple(donated) if any(d is not None for d in donated) else ()
    key = (fn.key(), device, optimize, donated)
    prog = _EXECUTABLES.get(key)
    if prog is not None:
        stats["memory"] += 1
        if config.log_compiles():
            log.warning("stablejit: memory hit %s for %s in %.1f ms (passes+emit 0.0 ms)",
                        name or fn.name, where(device), 1e3 * (time.perf_counter() - t0))
        return prog
    return _EXECUTABLES.get_or_create(key, lambda: Program(
        fn, device, name=name or fn.name, optimize=optimize, donated=donated,
        disk=disk)._load())


def _compile_program(prog: Program) -> Executable:
    fn, device = prog.fn, prog.device
    t0 = time.perf_counter()
    opt, text = lower(fn, optimize=prog.optimize, donated=prog.donated,
                      platform=platform_of(device))
    t_lower = time.perf_counter() - t0
    exe, outcome, seconds = compile_text(text, device, name=prog.name, cache=prog.disk,
                                         host_callbacks=host_callbacks(opt))
    if config.log_compiles():
        log.warning("stablejit: %s %s for %s in %.1f ms (passes+emit %.1f ms)", outcome,
                    prog.name, where(device), 1e3 * seconds, 1e3 * t_lower)
    directory = config.dump_to()
    if directory:
        dump.write_dump(directory, prog.name, {
            "ir-before.txt": str(fn), "ir.txt": str(passes.fuse(opt)), "stablehlo.mlir": text,
            "hlo.txt": exe.optimized_hlo(),
            "json": dump.metadata_json({
                "name": prog.name, "platform": platform_of(device), "device": str(device),
                "cache": outcome, "seconds": seconds, "ops_before": len(fn.ops),
                "ops_after": len(opt.ops), "structural_hash": fn.structural_hash(),
                "xla_flags": config.xla_flags()})})
    return exe


def compile_text(text: str, device, *, name: str = "fn", cache=None, host_callbacks=()
                 ) -> tuple[Executable, str, float]:
    """(executable, outcome, seconds) for StableHLO text; outcome is 'artifact hit' (an
    executable an exported artifact brought), 'disk hit' or 'compiled'. Callers keep the
    executable (Program does, through the executable cache). A program with host
    callbacks (Python functions) is never stored on disk."""
    t0 = time.perf_counter()
    if host_callbacks:
        exe = Executable.compile(text, device, host_callbacks=host_callbacks)
        stats["compiled"] += 1
        return exe, "compiled", time.perf_counter() - t0
    exe = _supplied(text, device)
    if exe is not None:
        stats["artifact"] += 1
        return exe, "artifact hit", time.perf_counter() - t0
    store = disk_cache.resolve(cache, config.cache_dir(), config.cache_max_bytes())
    key = None
    flags = config.xla_flags()
    if store is not None:
        # with STABLEJIT_DUMP_TO, the dumped HLO must name this text's lines: key on them
        key = disk_key(text, device, locations=bool(config.dump_to()))
        if not disk_cache.xla_dump_requested(flags):
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
    return exe, outcome, time.perf_counter() - t0


def _supplied(text: str, device) -> Executable | None:
    if not _SUPPLIED:
        return None
    payload = _SUPPLIED.get((platform_of(device), device.id, _digest(text)))
    if payload is None:
        return None
    try:
        return Executable.deserialize(payload, text, device)
    except Exception as e:  # XLA refused it after all: compile the StableHLO
        log.warning("stablejit: an exported executable did not load (%s); compiling the "
                    "StableHLO instead", e)
        return None


def disk_key(text: str, device, *, locations: bool = False) -> str:
    """The persistent-cache key of a program for a device (see disk_cache.make_key)."""
    client = device.client
    return disk_cache.make_key(
        text, locations=locations, platform=platform_of(device),
        platform_version=str(client.platform_version),
        device_kind=str(device.device_kind), device_id=device.id,
        jaxlib_version=jaxlib.__version__, compile_options=_options_bytes(device),
        xla_flags=disk_cache.significant_xla_flags(config.xla_flags()))


def _options_bytes(device) -> bytes:
    b = _options_cache.get(device)
    if b is None:
        b = _options_cache[device] = compile_options(device).SerializeAsString()
    return b


def clear_memory_cache() -> None:
    """Drop every cached executable (Programs held elsewhere reload on their next run)."""
    _EXECUTABLES.clear()


def where(device) -> str:
    return f"{platform_of(device)}:{device.id}"
