"""The persistent compilation cache: entries, damage, trust, eviction (in process), and
loading across processes, concurrent writers, jit's cache= option (in subprocesses)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit.runtime import disk_cache
from stablejit.runtime.disk_cache import CacheWarning, DiskCache


def key(i) -> str:
    return f"{i:064x}"


# ---- entries, in process ------------------------------------------------------------
def test_roundtrip_atomic_and_private(tmp_path):
    c = DiskCache(str(tmp_path / "c"))
    assert c.get(key(1)) is None
    assert c.put(key(1), b"payload-1", {"name": "f"})
    assert c.get(key(1)) == b"payload-1"
    assert stat.S_IMODE(os.stat(c.directory).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(c.path(key(1))).st_mode) == 0o600
    assert [n for n in os.listdir(c.directory) if n.startswith(".tmp")] == []
    (e,) = c.entries()
    assert e["name"] == "f" and e["key"] == key(1) and e["size"] > len(b"payload-1")


@pytest.mark.parametrize("damage", ["flip", "truncate", "foreign", "renamed"])
def test_damaged_entries_are_ignored_reported_once_and_rebuilt(tmp_path, damage):
    c = DiskCache(str(tmp_path))
    c.put(key(1), b"x" * 100)
    c.put(key(2), b"y" * 100)
    path = c.path(key(1))
    data = bytearray(open(path, "rb").read())
    if damage == "flip":
        data[-1] ^= 0xFF
    elif damage == "truncate":
        data = data[:-10]
    elif damage == "foreign":
        data = bytearray(b"\x7fELF not ours" * 10)
    else:  # a valid entry stored under another key's name
        data = bytearray(open(c.path(key(2)), "rb").read())
    open(path, "wb").write(bytes(data))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert c.get(key(1)) is None
        assert c.get(key(1)) is None
    msgs = [str(x.message) for x in w if issubclass(x.category, CacheWarning)]
    assert len(msgs) == 1 and "ignored" in msgs[0] and path in msgs[0]
    assert c.rejected == 2
    c.put(key(1), b"x" * 100)  # rebuilt
    assert c.get(key(1)) == b"x" * 100


def test_lru_eviction_keeps_the_recently_used(tmp_path):
    c = DiskCache(str(tmp_path), max_bytes=10_000)
    size = None
    for i in range(4):
        c.put(key(i), bytes([i]) * 2000)
        os.utime(c.path(key(i)), (1000 + i, 1000 + i))  # distinct, ordered ages
        size = size or os.path.getsize(c.path(key(i)))
    assert c.get(key(0)) is not None  # touch: now the most recently used
    c.put(key(4), b"z" * 2000)  # over the limit: evict the least recently used (key 1,
    left = {e["key"] for e in c.entries()}  # then key 2: down to 80% of the limit)
    assert key(0) in left and key(4) in left and key(1) not in left and key(2) not in left
    assert c.size() <= 8_000 and len(left) == 8_000 // size


def test_a_full_cache_is_not_scanned_on_every_write(tmp_path):
    """Eviction goes down to 80% of the limit, so a cache that stays full is scanned
    once per ~20% of the limit written (it was scanned on every write)."""
    c = DiskCache(str(tmp_path), max_bytes=10_000)
    scans = []
    evict = c.evict
    c.evict = lambda max_bytes: scans.append(max_bytes) or evict(max_bytes)
    for i in range(300):
        c.put(key(i), bytes([i % 256]) * 100)
    assert c.size() <= 10_000
    assert len(scans) < 40, len(scans)


def test_world_writable_or_foreign_directory_is_refused(tmp_path):
    d = tmp_path / "shared"
    d.mkdir()
    os.chmod(d, 0o777)
    c = DiskCache(str(d))
    with pytest.warns(CacheWarning, match="writable by others"):
        assert not c.usable()
    assert not c.put(key(1), b"p") and c.get(key(1)) is None


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="needs root to give a file to another user")
def test_entry_owned_by_another_user_is_refused(tmp_path):
    c = DiskCache(str(tmp_path / "c"))
    c.put(key(1), b"payload")
    os.chown(c.path(key(1)), 12345, -1)
    with pytest.warns(CacheWarning, match="another user"):
        assert c.get(key(1)) is None
    os.chown(c.directory, 12345, -1)
    with pytest.warns(CacheWarning, match="belongs to another user"):
        assert not DiskCache(c.directory).usable()


def test_key_covers_flags_but_not_dump_flags():
    base = dict(platform="host", platform_version="cpu", device_kind="cpu", device_id=0,
                jaxlib_version="0.10.2", compile_options=b"o")
    k = lambda text, flags: disk_cache.make_key(  # noqa: E731
        text, xla_flags=disk_cache.significant_xla_flags(flags), **base)
    assert k("m", "") == k("m", "--xla_dump_to=/tmp/x --xla_dump_hlo_as_text")
    assert k("m", "") != k("m", "--xla_cpu_enable_fast_math=true")
    assert k("m", "") != k("m2", "")
    assert disk_cache.make_key("m", xla_flags="", **{**base, "device_id": 1}) != k("m", "")
    assert disk_cache.xla_dump_requested("--xla_dump_to=/tmp/x")
    assert not disk_cache.xla_dump_requested("--xla_cpu_enable_fast_math=true")


def test_jit_cache_option(tmp_path):
    x = np.arange(6, dtype=np.float32)
    mine = tmp_path / "mine"
    f = stablejit.jit(lambda a: snp.sin(a) * 3.25 + 0.5, cache=str(mine))
    np.testing.assert_allclose(f(x), np.sin(x) * 3.25 + 0.5, rtol=1e-6)
    assert len(DiskCache(str(mine)).entries()) == 1
    off = tmp_path / "off"
    g = stablejit.jit(lambda a: snp.cos(a) * 1.75, cache=False)
    os.environ["STABLEJIT_CACHE_DIR"] = str(off)
    try:
        np.testing.assert_allclose(g(x), np.cos(x) * 1.75, rtol=1e-6)
    finally:
        del os.environ["STABLEJIT_CACHE_DIR"]
    assert not off.exists() or DiskCache(str(off)).entries() == []
    with pytest.raises(TypeError, match="cache= must be"):
        stablejit.jit(lambda a: a + 1, cache=3)(x)


# ---- across processes -------------------------------------------------------------
PROG = textwrap.dedent("""\
    import json, sys
    import numpy as np
    import stablejit, stablejit.numpy as snp
    from stablejit import compilation

    def make(layers):
        def mlp(x, w):
            for _ in range(layers):
                x = snp.tanh(x @ w)
            return x
        return mlp

    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)
    w = np.eye(8, dtype=np.float32) * 0.5
    outs = {}
    for n in map(int, sys.argv[1].split(",")):
        outs[n] = np.asarray(stablejit.jit(make(n))(x, w)).tolist()
    print(json.dumps({"out": outs, "stats": compilation.stats}))
    """)


def run_prog(tmp_path, cache_dir, layers=(3,), extra_env=None, wait=True):
    path = tmp_path / "prog.py"
    path.write_text(PROG)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "1", "STABLEJIT_CACHE_DIR": str(cache_dir),
           **(extra_env or {})}
    p = subprocess.Popen([sys.executable, str(path), ",".join(map(str, layers))],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if not wait:
        return p
    return finish(p)


def finish(p):
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    res = json.loads(out.splitlines()[-1])
    res["out"] = {int(k): v for k, v in res["out"].items()}
    return res, err


def expected(layers):
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)
    for _ in range(layers):
        x = np.tanh(x @ (np.eye(8, dtype=np.float32) * 0.5))
    return x


def test_second_process_loads_from_disk(tmp_path):
    cache = tmp_path / "cache"
    first, _ = run_prog(tmp_path, cache)
    second, _ = run_prog(tmp_path, cache)
    assert first["stats"]["compiled"] >= 1 and first["stats"]["disk"] == 0
    assert second["stats"]["compiled"] == 0 and second["stats"]["disk"] == first["stats"][
        "compiled"]
    np.testing.assert_allclose(second["out"][3], expected(3), rtol=1e-6)
    assert second["out"] == first["out"]


def test_corrupt_entry_in_another_process_is_rebuilt(tmp_path):
    cache = tmp_path / "cache"
    run_prog(tmp_path, cache)
    for e in DiskCache(str(cache)).entries():
        data = bytearray(open(e["path"], "rb").read())
        data[len(data) // 2] ^= 0x55
        open(e["path"], "wb").write(bytes(data))
    res, err = run_prog(tmp_path, cache)
    assert err.count("ignored corrupt (checksum mismatch) cache entry") == res["stats"][
        "compiled"] >= 1
    np.testing.assert_allclose(res["out"][3], expected(3), rtol=1e-6)
    again, err = run_prog(tmp_path, cache)
    assert again["stats"]["compiled"] == 0 and "ignored" not in err


def test_concurrent_writers_lose_nothing(tmp_path):
    cache = tmp_path / "cache"
    orders = [(1, 2, 3), (3, 2, 1), (2, 3, 1), (1, 3, 2)]  # same keys, racing
    procs = [run_prog(tmp_path, cache, layers=o, wait=False) for o in orders]
    for p in procs:
        finish(p)
    c = DiskCache(str(cache))
    assert all(c.get(e["key"]) is not None for e in c.entries())  # every entry is whole
    assert [n for n in os.listdir(cache) if n.startswith(".tmp")] == []
    res, _ = run_prog(tmp_path, cache, layers=(1, 2, 3))  # every program is in the cache
    assert res["stats"]["compiled"] == 0
    for n in (1, 2, 3):
        np.testing.assert_allclose(res["out"][n], expected(n), rtol=1e-6)


def test_bounded_size_in_use(tmp_path):
    cache = tmp_path / "cache"
    limit = {"STABLEJIT_CACHE_MAX_BYTES": "30000"}
    first, _ = run_prog(tmp_path, cache, layers=(1, 2, 3, 4, 5, 6), extra_env=limit)
    c = DiskCache(str(cache))
    assert c.size() <= 30000 and len(c.entries()) < first["stats"]["compiled"]
    res, _ = run_prog(tmp_path, cache, layers=(6,), extra_env=limit)  # the newest survived
    assert res["stats"]["compiled"] == 0


# ---- failing open: wrong-shaped metadata, loose permissions, a changed directory -----
def _write_entry(c: DiskCache, k: str, meta, payload: bytes = b"payload") -> None:
    """An entry with a valid header and checksum but the given (JSON) metadata."""
    meta_bytes = json.dumps(meta).encode()
    blob = (disk_cache.MAGIC + disk_cache._HEADER.pack(
        __import__("hashlib").sha256(payload).digest(), len(meta_bytes), len(payload))
        + meta_bytes + payload)
    with open(c.path(k), "wb") as f:
        f.write(blob)
    os.chmod(c.path(k), 0o600)


@pytest.mark.parametrize("meta", [[1, 2], "text", 3, None, {"name": "f"},
                                  {"key": 7}, {"key": key(1), "platform": [1], "name": {}}])
def test_wrong_shaped_metadata_is_reported_once_and_rebuilt(tmp_path, meta, capsys):
    c = DiskCache(str(tmp_path / "c"))
    c.usable()
    _write_entry(c, key(1), meta)
    well_formed = isinstance(meta, dict) and meta.get("key") == key(1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = [c.get(key(1)), c.get(key(1))]
    if well_formed:  # odd field types, but its own key: usable
        assert got == [b"payload"] * 2
    else:
        assert got == [None, None]
        msgs = [str(x.message) for x in w if issubclass(x.category, CacheWarning)]
        assert len(msgs) == 1 and "ignored" in msgs[0]
    (e,) = c.entries()
    assert e["key"] == key(1) and e["size"] > 0
    from stablejit import cli

    assert cli.main(["cache", "list", "--dir", c.directory]) == 0
    assert key(1)[:16] in capsys.readouterr().out
    if not well_formed:
        c.put(key(1), b"rebuilt")
        assert c.get(key(1)) == b"rebuilt"
    assert cli.main(["cache", "clear", "--dir", c.directory]) == 0
    assert c.entries() == []


@pytest.mark.parametrize("mode", [0o620, 0o602, 0o666])
def test_entry_writable_by_others_is_refused_and_rebuilt(tmp_path, mode):
    c = DiskCache(str(tmp_path / "c"))
    c.put(key(1), b"payload")
    os.chmod(c.path(key(1)), mode)
    with pytest.warns(CacheWarning, match="writable by others"):
        assert c.get(key(1)) is None
    assert c.put(key(1), b"payload")
    assert stat.S_IMODE(os.stat(c.path(key(1))).st_mode) == 0o600
    assert c.get(key(1)) == b"payload"


def test_directory_trust_is_checked_again_when_it_changes(tmp_path):
    c = DiskCache(str(tmp_path / "c"))
    assert c.put(key(1), b"payload") and c.get(key(1)) == b"payload"
    os.chmod(c.directory, 0o777)
    with pytest.warns(CacheWarning, match="writable by others"):
        assert c.get(key(1)) is None
    assert not c.put(key(2), b"other")
    os.chmod(c.directory, 0o700)
    assert c.get(key(1)) == b"payload"
    # replaced by another directory at the same path
    os.rename(c.directory, str(tmp_path / "old"))
    os.mkdir(c.directory, 0o777)
    os.chmod(c.directory, 0o777)
    assert c.get(key(1)) is None and not c.put(key(1), b"p")


def test_moving_a_function_down_its_file_keeps_its_entry(tmp_path):
    """The key leaves source locations out; a dump compiles afresh and names the new line."""
    cache = tmp_path / "cache"
    first, _ = run_prog(tmp_path, cache)
    moved = "\n\n\n\n\n" + PROG  # every line five lower
    (tmp_path / "prog.py").write_text(moved)
    path = tmp_path / "prog.py"
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "1", "STABLEJIT_CACHE_DIR": str(cache)}
    again = finish(subprocess.Popen([sys.executable, str(path), "3"], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, env=env))[0]
    assert again["stats"]["compiled"] == 0 and again["out"] == first["out"]
    dumps = tmp_path / "dumps"
    dumped = finish(subprocess.Popen(
        [sys.executable, str(path), "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env={**env, "STABLEJIT_DUMP_TO": str(dumps)}))[0]
    assert dumped["stats"]["disk"] == 0 and dumped["stats"]["compiled"] >= 1
    line = moved.splitlines().index("            x = snp.tanh(x @ w)") + 1
    hlo = "".join(p.read_text() for p in dumps.glob("*.mlp.hlo.txt"))
    assert f" line={line} " in hlo and f" line={line - 5} " not in hlo  # FileLocations
