"""The artifact as a file: every kind of bad artifact is a clear ArtifactError (never a
crash), and a model exported in one process runs in a fresh one that cannot import its
source, bit-exactly, and without compiling when the executable was stored; the CLI."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import export as E
from stablejit.runtime import portable

S = stablejit.ShapeDtypeStruct


@pytest.fixture(scope="module")
def data() -> bytes:
    f = stablejit.jit(lambda x, y: {"s": snp.sin(x) @ y, "n": snp.sum(x)}, )
    return bytes(E.export(f, vjp_order=1)(S((3, 4), np.float32), S((4, 2), np.float32))
                 .serialize())


def _edit(data, change) -> bytearray:
    meta, blobs = E._artifact.unpack(data)
    change(meta, blobs)
    return E._artifact.pack(meta, blobs)


def _flip(data: bytes, at: int) -> bytes:
    b = bytearray(data)
    b[at] ^= 0x10
    return bytes(b)


def _set(meta, path, value):
    *head, last = path
    for k in head:
        meta = meta[k]
    meta[last] = value


BAD = {
    "truncated": (lambda d: d[:-7], r"truncated: its header says \d+ bytes, it has \d+"),
    "truncated-header": (lambda d: d[:30], r"truncated: 30 bytes, shorter than its"),
    "empty": (lambda d: b"", r"does not start with b'SJEXPORT'"),
    "extra-bytes": (lambda d: d + b"\0", r"longer than its header says"),
    "bit-flip-in-module": (lambda d: _flip(d, len(d) - 50), r"corrupted: its checksum"),
    "bit-flip-in-metadata": (lambda d: _flip(d, 70), r"corrupted: its checksum"),
    "wrong-magic": (lambda d: b"SJEXPORX" + d[8:], r"not a stablejit export artifact"),
    "a-text-file": (lambda d: b'{"fun_name": "f"}', r"not a stablejit export artifact"),
    "future-format": (lambda d: d[:8] + struct.pack("<I", E.FORMAT_VERSION + 1) + d[12:],
                      rf"format version {E.FORMAT_VERSION + 1}, newer .* upgrade stablejit"),
    "expired-format": (lambda d: d[:8] + struct.pack("<I", 0) + d[12:],
                       r"format version 0, which this stablejit no longer reads"),
    "newer-stablehlo": (lambda d: _edit(d, lambda m, b: _set(
        m, ("modules", "host", "stablehlo_version"), "99.0.0")),
        r"StableHLO for host is version 99.0.0, newer .* upgrade jaxlib"),
    "expired-stablehlo": (lambda d: _edit(d, lambda m, b: _set(
        m, ("modules", "host", "stablehlo_version"), "0.1.0")), r"expired; export it again"),
    "future-calling-convention": (lambda d: _edit(d, lambda m, b: _set(
        m, ("calling_convention_version",), 9)), r"calling convention 9"),
    "unknown-dtype": (lambda d: _edit(d, lambda m, b: _set(
        m["in_avals"][0], ("dtype",), "float128")), r"dtype 'float128'"),
    "missing-metadata": (lambda d: _edit(d, lambda m, b: m.pop("in_avals")),
                         r"metadata is incomplete"),
    "trees-disagree-with-types": (lambda d: _edit(d, lambda m, b: m["in_avals"].pop()),
                                  r"trees and types disagree"),
    "garbage-stablehlo": (lambda d: _edit(d, lambda m, b: b.__setitem__(
        m["modules"]["host"]["blob"], b"ML\xefR garbage")),
        r"StableHLO for host: this jaxlib .* cannot read the module's bytecode"),
    "unknown-tree-node": (lambda d: _edit(d, lambda m, b: _set(m, ("out_tree",),
                                                              {"node": "set"})),
                          r"unknown tree node"),
}


@pytest.mark.parametrize("name", sorted(BAD))
@pytest.mark.host_default
def test_bad_artifacts_are_clear_errors(data, name):
    spoil, match = BAD[name]
    with pytest.raises(E.ArtifactError, match=match):
        E.deserialize(spoil(data))


def test_not_bytes_is_a_clear_error():
    with pytest.raises(E.ArtifactError, match="expects the bytes of an artifact"):
        E.deserialize("model.sjx")


@pytest.mark.host_default
def test_the_metadata_is_json_and_holds_no_python(data):
    meta_len = struct.unpack_from("<I", data, 12)[0]
    meta = json.loads(data[56:56 + meta_len])
    assert meta["in_tree"] == {"node": "tuple", "children": [
        {"node": "tuple", "children": ["*", "*"]}, {"node": "dict", "keys": [],
                                                    "children": []}]}
    assert meta["producer"]["stablehlo_target"] == portable.TARGET  # 1.13.7, jaxlib 0.10.2
    assert b"pickle" not in data and b"\x80\x04\x95" not in data  # no pickle stream


# ---- a model in a process that cannot import its source ---------------------------------

MODEL = '''
import numpy as np
import stablejit
import stablejit.numpy as snp
from stablejit import nn

def build():
    """The digits MLP's forward pass with deterministic weights, trained for a few steps."""
    from sklearn.datasets import load_digits
    d = load_digits()
    x = (d.data[:256] / 16.0).astype(np.float32)
    y = d.target[:256].astype(np.int32)
    rng = np.random.default_rng(0)
    params = [{"w": nn.he_normal(rng, (64, 32)), "b": snp.zeros((32,), snp.float32)},
              {"w": nn.he_normal(rng, (32, 10)), "b": snp.zeros((10,), snp.float32)}]

    def forward(params, x):
        h = nn.relu(x @ params[0]["w"] + params[0]["b"])
        return h @ params[1]["w"] + params[1]["b"]

    @stablejit.jit
    def step(params, x, y):
        g = stablejit.grad(lambda p: nn.cross_entropy(forward(p, x), y))(params)
        return stablejit.tree.map(lambda p, gp: p - 0.1 * gp, params, g)

    for _ in range(20):
        params = step(params, x, y)
    return stablejit.jit(lambda x: forward(params, x)), x
'''

EXPORT = '''
import sys, numpy as np
sys.path.insert(0, sys.argv[1])
from digits_model import build
from stablejit import export as E, ShapeDtypeStruct as S
logits, x = build()
for n in (1, 7, 64):
    exp = E.export(logits)(S((n, 64), np.float32))
    open(f"{sys.argv[2]}/mlp{n}.sjx", "wb").write(exp.serialize(executables=True))
    np.save(f"{sys.argv[2]}/want{n}.npy", np.asarray(logits(x[:n])))
np.save(f"{sys.argv[2]}/x.npy", x)
'''

SERVE = '''
import sys, numpy as np
from stablejit import compilation
from stablejit import export as E
try:
    import digits_model
    raise SystemExit("the model's module is importable")
except ImportError:
    pass
x = np.load(f"{sys.argv[1]}/x.npy")
for n in (1, 7, 64):
    exp = E.deserialize(open(f"{sys.argv[1]}/mlp{n}.sjx", "rb").read())
    got = np.asarray(exp.call(x[:n]))
    want = np.load(f"{sys.argv[1]}/want{n}.npy")
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist(), n
print("compiled", compilation.stats["compiled"], "disk", compilation.stats["disk"],
      "artifact", compilation.stats["artifact"])
'''


def _python(code: str, *args, cwd, env=None):
    env = {**os.environ, "STABLEJIT_CACHE_DIR": "", "STABLEJIT_LOG_COMPILES": "1",
           **(env or {})}
    env.pop("PYTHONPATH", None)
    r = subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env,
                       capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    return r


def test_a_model_runs_in_a_process_without_its_source(tmp_path):
    pytest.importorskip("sklearn")
    src, out, elsewhere = tmp_path / "src", tmp_path / "out", tmp_path / "serve"
    for d in (src, out, elsewhere):
        d.mkdir()
    (src / "digits_model.py").write_text(textwrap.dedent(MODEL))
    _python(EXPORT, str(src), str(out), cwd=elsewhere)
    r = _python(SERVE, str(out), cwd=elsewhere)
    assert r.stdout.split()[-6:] == ["compiled", "0", "disk", "0", "artifact", "3"], r.stdout
    assert r.stderr.count("artifact hit") == 3, r.stderr
    # other XLA flags: the stored executables are not used; each program compiles
    r = _python(SERVE, str(out), cwd=elsewhere,
                env={"XLA_FLAGS": "--xla_cpu_enable_fast_math=false"})
    assert r.stdout.split()[-6:] == ["compiled", "3", "disk", "0", "artifact", "0"], r.stdout
    assert "built with a different xla_flags" in r.stderr


# ---- the command line -------------------------------------------------------------------

CLI_MODEL = '''
import numpy as np
import stablejit.numpy as snp
W = snp.asarray(np.linspace(-1, 1, 40, dtype=np.float32).reshape(8, 5))
def head(x, scale):
    return {"logits": x @ W * scale, "label": snp.argmax(x @ W, axis=-1)}
'''


def _cli(*args, cwd):
    env = {**os.environ, "STABLEJIT_CACHE_DIR": ""}
    return subprocess.run([sys.executable, "-m", "stablejit.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=240)


@pytest.mark.host_default
def test_cli_export_inspect_run(tmp_path):
    (tmp_path / "model.py").write_text(CLI_MODEL)
    r = _cli("export", "model.py:head", "--args", "f32[3,8]", "f32[]", "--out", "m.sjx",
             "--platforms", "host,cuda", "--executables", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "head(float32[3,8], float32[]) -> (int64[3], float32[3,5]) for host, cuda" \
        in r.stdout
    r = _cli("inspect", "m.sjx", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    for line in ("args[0]: float32[3,8]", "args[1]: float32[]\n",
                 "out['logits']: float32[3,5]", "platforms:   host, cuda",
                 f"bytecode for {portable.TARGET}", "executable:  host cpu",
                 "dense_resource<__elided__> : tensor<8x5xf32>", "func.func public @main"):
        assert line in r.stdout, (line, r.stdout)
    assert "cusolver" not in r.stdout
    x = np.arange(24, dtype=np.float32).reshape(3, 8) / 10
    np.savez(tmp_path / "in.npz", x, np.float32(2.0))
    r = _cli("run", "m.sjx", "--inputs", "in.npz", "--out", "out.npz", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with np.load(tmp_path / "out.npz") as got:
        w = np.linspace(-1, 1, 40, dtype=np.float32).reshape(8, 5)
        want = stablejit.jit(lambda x, s: x @ snp.asarray(w) * s)(x, np.float32(2.0))
        np.testing.assert_array_equal(got["out['logits']"], np.asarray(want))
        np.testing.assert_array_equal(got["out['label']"], np.argmax(x @ w, axis=-1))
    np.savez(tmp_path / "bad.npz", x)
    r = _cli("run", "m.sjx", "--inputs", "bad.npz", "--out", "o.npz", cwd=tmp_path)
    assert r.returncode == 2 and "takes args[0], args[1]" in r.stderr
    (tmp_path / "broken.sjx").write_bytes((tmp_path / "m.sjx").read_bytes()[:100])
    r = _cli("inspect", "broken.sjx", cwd=tmp_path)
    assert r.returncode == 2 and "truncated" in r.stderr and "Traceback" not in r.stderr
