"""The persistent compilation cache: serialized executables on disk.

Loading a serialized executable runs code, so the cache is trusted only when it is
ours: the directory is created 0700, and a directory that belongs to another user or
that anyone may write to is refused (checked again whenever its stat changes), as is
any entry owned by another user or writable by group or others. Anyone who can write
as the same user can still replace an entry, as with JAX's cache.

One file per entry, named by its key (a SHA-256 of everything that decides what XLA
would produce). An entry is written to a temporary file and renamed into place, so a
reader sees a whole entry or none, and concurrent writers of one key write the same
bytes. Each file carries a header with a checksum of its payload; corrupt, truncated
or foreign entries are ignored, reported once, and rebuilt by the caller. The total
size is bounded: the least recently used entries (by mtime, touched on each hit) go
first.

    entry = MAGIC | sha256(payload) (32 bytes) | len(meta) (4) | len(payload) (8)
            | meta (JSON: key, name, platform, ...) | payload (the executable)
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import struct
import tempfile
import threading
import time
import warnings

MAGIC = b"STABLEJIT-XC1\n"
_HEADER = struct.Struct("<32sIQ")
SUFFIX = ".sjx"
DEFAULT_MAX_BYTES = 1 << 30
FORMAT_VERSION = "1"


class CacheWarning(UserWarning):
    """Something in the compilation cache was ignored (and will be rebuilt)."""


def significant_xla_flags(flags: str) -> str:
    """XLA_FLAGS without the dump flags (they change what is written, not what runs)."""
    return " ".join(sorted(f for f in flags.split() if not f.startswith("--xla_dump")))


def xla_dump_requested(flags: str) -> bool:
    """Whether XLA_FLAGS asks XLA to dump: then every program must really be compiled."""
    return any(f.startswith("--xla_dump_to") for f in flags.split())


# MLIR's file location inside a named one: `loc("add"("model.py":12:5))`
_FILE_LOCATION = re.compile(r'\("(?:[^"\\]|\\.)*":\d+:\d+\)\)')


def without_locations(stablehlo: str) -> str:
    """The text with each op's file, line and column left out (its name stays)."""
    return _FILE_LOCATION.sub(")", stablehlo)


def make_key(stablehlo: str, *, locations: bool = False, platform: str,
             platform_version: str, device_kind: str, device_id: int, jaxlib_version: str,
             compile_options: bytes, xla_flags: str) -> str:
    """The entry name. The device id is part of it: a loaded executable keeps the device
    assignment it was compiled with. Source locations are not, unless `locations`: they
    only reach XLA's debug metadata, and moving a function within or between files must
    keep its entry (a caller that shows that metadata, a dump, passes locations=True)."""
    h = hashlib.sha256()
    for part in (FORMAT_VERSION, platform, platform_version, device_kind, str(device_id),
                 jaxlib_version, xla_flags):
        h.update(part.encode())
        h.update(b"\0")
    h.update(hashlib.sha256(compile_options).digest())
    text = stablehlo if locations else without_locations(stablehlo)
    h.update(hashlib.sha256(text.encode()).digest())
    return h.hexdigest()


class DiskCache:
    """A directory of serialized executables. Thread- and process-safe."""

    def __init__(self, directory: str, max_bytes: int | None = None):
        self.directory = os.path.abspath(os.path.expanduser(directory))
        self.max_bytes = DEFAULT_MAX_BYTES if max_bytes is None else int(max_bytes)
        self._reported: set = set()
        self._lock = threading.Lock()
        self._usable: bool | None = None
        self._checked: tuple | None = None  # the directory's stat when it was trusted
        self._approx: int | None = None  # estimated total size, refreshed by evict()
        self.hits = self.misses = self.writes = self.rejected = 0

    # ---- trust --------------------------------------------------------------------
    def usable(self) -> bool:
        """Create the directory (0700) if needed; False (reported once) if it cannot be
        trusted or written. Checked again when the directory's stat changes (it was
        replaced, chmod-ed or chown-ed since)."""
        now = _dir_stat(self.directory)
        if self._usable is None or now != self._checked:
            self._usable = self._check_dir()
            self._checked = _dir_stat(self.directory)
        return self._usable

    def _check_dir(self) -> bool:
        try:
            os.makedirs(self.directory, mode=0o700, exist_ok=True)
            st = os.stat(self.directory)
        except OSError as e:
            self._report("dir", f"stablejit: compilation cache disabled: cannot create "
                                f"{self.directory} ({e})")
            return False
        if hasattr(os, "getuid") and st.st_uid != os.getuid():
            self._report("dir", f"stablejit: compilation cache disabled: {self.directory} "
                                f"belongs to another user (uid {st.st_uid}); loading a cached "
                                f"executable runs code, so only your own directory is used. "
                                f"Set STABLEJIT_CACHE_DIR to a directory of yours.")
            return False
        if st.st_mode & (stat.S_IWOTH | stat.S_IWGRP):
            self._report("dir", f"stablejit: compilation cache disabled: {self.directory} "
                                f"is writable by others (mode {stat.S_IMODE(st.st_mode):o}); "
                                f"fix it with `chmod 700 {self.directory}` or set "
                                f"STABLEJIT_CACHE_DIR")
            return False
        return True

    def _report(self, what, message: str) -> None:
        with self._lock:
            if what in self._reported:
                return
            self._reported.add(what)
        warnings.warn(message, CacheWarning, stacklevel=3)

    # ---- entries ------------------------------------------------------------------
    def path(self, key: str) -> str:
        return os.path.join(self.directory, key + SUFFIX)

    def get(self, key: str) -> bytes | None:
        """The payload stored under `key`, or None (missing, untrusted or damaged)."""
        if not self.usable():
            return None
        path = self.path(key)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_NONBLOCK", 0))  # a FIFO planted here must not block
        except OSError:
            self.misses += 1
            return None
        try:
            st = os.fstat(fd)
            if hasattr(os, "getuid") and st.st_uid != os.getuid():
                self.rejected += 1
                self._report(key, f"stablejit: ignored cache entry {path}: it belongs to "
                                  f"another user (uid {st.st_uid})")
                return None
            if not stat.S_ISREG(st.st_mode) or st.st_mode & (stat.S_IWOTH | stat.S_IWGRP):
                self.rejected += 1
                self._report(key, f"stablejit: ignored cache entry {path}: it is not a "
                                  f"regular file or is writable by others (mode "
                                  f"{stat.S_IMODE(st.st_mode):o}); it will be rebuilt")
                return None
            with os.fdopen(fd, "rb", closefd=False) as f:
                data = f.read()
        except OSError:
            self.misses += 1
            return None
        finally:
            os.close(fd)
        payload, problem = _decode(data, key)
        if problem:
            self.rejected += 1
            self._report(key, f"stablejit: ignored {problem} cache entry {path}; it will be "
                              f"rebuilt")
            return None
        try:
            os.utime(path)  # least recently used goes first
        except OSError:
            pass
        self.hits += 1
        return payload

    def put(self, key: str, payload: bytes, meta: dict | None = None) -> bool:
        """Store atomically; then evict down to max_bytes. False if the cache is unusable."""
        if not self.usable():
            return False
        meta_bytes = json.dumps({"key": key, "created": time.time(), **(meta or {})},
                                default=str).encode()
        blob = (MAGIC + _HEADER.pack(hashlib.sha256(payload).digest(), len(meta_bytes),
                                     len(payload)) + meta_bytes + payload)
        try:
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=SUFFIX, dir=self.directory)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(blob)
                os.replace(tmp, self.path(key))
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except OSError as e:
            self._report("write", f"stablejit: could not write to the compilation cache "
                                  f"{self.directory} ({e})")
            return False
        self.writes += 1
        if self.max_bytes > 0:
            # A full scan costs a stat per entry: do it when our running estimate passes
            # the limit, and every 64 writes (other processes write here too). Past the
            # limit it evicts down to 80% of it, so that the next scan is ~20% of writes
            # away (evicting down to the limit itself rescanned a full cache every write).
            self._approx = (self._approx or 0) + len(blob)
            if self._approx > self.max_bytes:
                self.evict(int(self.max_bytes * 0.8))
            elif self.writes % 64 == 1:
                self.evict(self.max_bytes)
        return True

    # ---- inspection and housekeeping ----------------------------------------------
    def entries(self) -> list[dict]:
        """One dict per entry (key, path, size, last_used, and the stored metadata),
        most recently used first."""
        out = []
        try:
            names = os.listdir(self.directory)
        except OSError:
            return out
        for n in names:
            if not n.endswith(SUFFIX) or n.startswith("."):
                continue
            p = os.path.join(self.directory, n)
            try:
                st = os.stat(p)
                with open(p, "rb") as f:
                    head = f.read(len(MAGIC) + _HEADER.size)
                    meta = {}
                    if head.startswith(MAGIC):
                        _, mlen, _ = _HEADER.unpack(head[len(MAGIC):])
                        meta = json.loads(f.read(mlen) or b"{}")
                if not isinstance(meta, dict):
                    meta = {"damaged": True}
            except (OSError, ValueError, struct.error):
                meta = {"damaged": True}
            out.append({**meta, "key": n[:-len(SUFFIX)], "path": p, "size": st.st_size,
                        "last_used": st.st_mtime})
        out.sort(key=lambda e: -e["last_used"])
        return out

    def size(self) -> int:
        return sum(e["size"] for e in self.entries())

    def evict(self, max_bytes: int) -> int:
        """Delete least recently used entries until the total is at most max_bytes;
        returns how many were deleted. Also removes temporary files left by crashed
        writers (older than a minute)."""
        entries = []
        total = 0
        now = time.time()
        try:
            names = os.listdir(self.directory)
        except OSError:
            return 0
        for n in names:
            p = os.path.join(self.directory, n)
            try:
                st = os.stat(p)
            except OSError:
                continue
            if n.startswith(".tmp-"):
                if now - st.st_mtime > 60:
                    _unlink(p)
                continue
            if n.endswith(SUFFIX):
                entries.append((st.st_mtime, st.st_size, p))
                total += st.st_size
        removed = 0
        for _, size, p in sorted(entries):
            if total <= max_bytes:
                break
            if _unlink(p):
                removed += 1
            total -= size
        self._approx = total
        return removed

    def clear(self) -> int:
        n = 0
        for e in self.entries():
            n += _unlink(e["path"])
        return n

    def __repr__(self) -> str:
        return f"<DiskCache {self.directory} max {self.max_bytes} bytes>"


def _unlink(p: str) -> bool:
    try:
        os.unlink(p)
        return True
    except OSError:
        return False


def _dir_stat(directory: str) -> tuple | None:
    """What trusting a directory depends on: which directory it is, its owner and mode."""
    try:
        st = os.stat(directory)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_uid, st.st_mode


def _decode(data: bytes, key: str) -> tuple[bytes | None, str | None]:
    """(payload, None) or (None, what is wrong with it)."""
    if not data.startswith(MAGIC):
        return None, "foreign (not a stablejit entry)"
    head_end = len(MAGIC) + _HEADER.size
    if len(data) < head_end:
        return None, "truncated"
    digest, mlen, plen = _HEADER.unpack(data[len(MAGIC):head_end])
    if len(data) != head_end + mlen + plen:
        return None, "truncated"
    try:
        meta = json.loads(data[head_end:head_end + mlen])
    except ValueError:
        return None, "corrupt"
    if not isinstance(meta, dict):
        return None, "malformed (metadata is not a JSON object)"
    if meta.get("key") != key:
        return None, "foreign (stored under another key)"
    payload = data[head_end + mlen:]
    if hashlib.sha256(payload).digest() != digest:
        return None, "corrupt (checksum mismatch)"
    return payload, None


_default: DiskCache | None = None
_default_for: tuple | None = None


def default_cache(directory: str | None, max_bytes: int) -> DiskCache | None:
    """The default cache (None when disabled); the frontend passes its settings, so a
    changed STABLEJIT_CACHE_DIR or STABLEJIT_CACHE_MAX_BYTES takes effect."""
    global _default, _default_for
    if directory is None:
        return None
    spec = (directory, max_bytes)
    if _default is None or _default_for != spec:
        _default, _default_for = DiskCache(directory, max_bytes), spec
    return _default


def resolve(cache, directory: str | None, max_bytes: int) -> DiskCache | None:
    """A DiskCache from a jit(cache=...) value: True/None (the default cache, at
    `directory`), False (off), a directory path, or a DiskCache."""
    if cache is None or cache is True:
        return default_cache(directory, max_bytes)
    if cache is False:
        return None
    if isinstance(cache, DiskCache):
        return cache
    if isinstance(cache, (str, os.PathLike)):
        return _by_path(os.fspath(cache))
    raise TypeError(f"cache= must be True, False, a directory path or a DiskCache, "
                    f"not {type(cache).__name__}")


_by_dir: dict[str, DiskCache] = {}


def _by_path(directory: str) -> DiskCache:
    d = os.path.abspath(os.path.expanduser(directory))
    c = _by_dir.get(d)
    if c is None:
        c = _by_dir.setdefault(d, DiskCache(d))
    return c
