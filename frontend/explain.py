"""Seeing what the compiler made: the IR before and after our passes, the StableHLO,
XLA's HLO before and after its optimisations, its fusions, cost and memory analysis,
a Graphviz drawing, a bug-report bundle — and, for STABLEJIT_LOG_COMPILES, why a
function was traced again.

    insp = Inspection(f, ["f32[10000,784]", "f32[784,10]"])
    print(insp.report())              # what `stablejit explain` prints
    insp.write_bundle("bug/")         # what `stablejit dump --bundle` writes
"""

from __future__ import annotations

import importlib
import json
import os
import platform as py_platform
import re
import runpy
import shutil
import subprocess
import sys
from collections import Counter

import jaxlib
import numpy as np

from .backends import XlaBackend
from .compilation import compile_text, lower
from .compiler import dtypes as dt
from .compiler.ir import Function, Location, Op
from .compiler.passes.fusion import partition
from .jit import Jitted, jit
from .platforms import default_platform
from .runtime.executable import Executable, hlo_before_optimizations

_SPEC = re.compile(r"^\s*([a-z]+[0-9]*)\s*\[\s*([0-9,\s]*)\]\s*$")


# ---- arguments and targets ---------------------------------------------------------
def parse_arg(spec: str):
    """'f32[10000,784]' -> an array of that shape and dtype that takes no memory (the
    tracer only reads shape and dtype); '3', '2.5', 'True' -> that Python scalar."""
    m = _SPEC.match(spec)
    if m:
        try:
            dtype = dt.ir_dtype(m.group(1))
        except TypeError:
            raise ValueError(f"argument spec {spec!r}: unknown dtype {m.group(1)!r}; use "
                             f"f32, f64, bf16, f16, i8..i64, u8..u64, pred, c64, c128") from None
        dims = tuple(int(d) for d in m.group(2).replace(" ", "").split(",") if d)
        return np.broadcast_to(np.zeros((), dtype.np), dims)
    for conv in (int, float):
        try:
            return conv(spec)
        except ValueError:
            pass
    if spec in ("True", "False"):
        return spec == "True"
    raise ValueError(f"cannot read argument spec {spec!r}: write a tensor type like "
                     f"'f32[10000,784]' (a scalar is 'f32[]') or a Python number")


def load_target(target: str):
    """'path/to/file.py:function' (or 'module.name:function') -> (callable, label)."""
    path, sep, attr = target.rpartition(":")
    if not sep or not attr:
        raise ValueError(f"{target!r}: name the function as FILE.py:FUNCTION")
    if path.endswith(".py") or os.sep in path:
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: no such file")
        sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
        namespace = runpy.run_path(path, run_name="__stablejit_inspect__")
    else:

        namespace = vars(importlib.import_module(path))
    obj = namespace
    for part in attr.split("."):
        try:
            obj = obj[part] if isinstance(obj, dict) else getattr(obj, part)
        except (KeyError, AttributeError):
            raise ValueError(f"{path} has no function {attr!r}") from None
    if not callable(obj):
        raise ValueError(f"{target} is a {type(obj).__name__}, not a function")
    return obj, target


# ---- one traced, lowered and compiled function -----------------------------------
class Inspection:
    """Trace `fn` for `args` (specs or arrays), run our passes, emit, compile."""

    def __init__(self, fn, args, *, platform: str | None = None, device_id: int | None = None,
                 static_argnums=()):
        self.jitted = fn if isinstance(fn, Jitted) else jit(fn, static_argnums=static_argnums)
        self.args = [parse_arg(a) if isinstance(a, str) else a for a in args]
        spec = self.jitted._backend_spec
        # (spec is what the user passed to jit(backend=...): a backend, or a name)
        if platform is not None or device_id is not None or not isinstance(spec, XlaBackend):
            self.backend = XlaBackend.for_platform(platform or default_platform(), device_id)
        else:
            self.backend = spec
        self.device = self.backend.device
        self.platform = self.backend.platform
        self.name = self.jitted.__name__
        self.ir = self.jitted.trace(self.args, {})[0]
        self.optimized_ir, self.stablehlo = lower(self.ir, platform=self.platform)
        self._exe = None
        self.cache_outcome = None
        self.compile_seconds = None

    @property
    def executable(self):
        if self._exe is None:
            self._exe, self.cache_outcome, self.compile_seconds = compile_text(
                self.stablehlo, self.device, name=self.name)
        return self._exe

    def hlo_before(self) -> str:
        return hlo_before_optimizations(self.stablehlo)

    def hlo_after(self) -> str:
        return self.executable.optimized_hlo()

    def cost(self) -> dict:
        try:
            return self.executable.cost_analysis()
        except Exception:  # not every plugin implements it
            return {}

    def memory(self) -> dict:
        try:
            return self.executable.memory_analysis()
        except Exception:
            return {}

    def fusions(self) -> list[dict]:
        return parse_fusions(self.hlo_after())

    # ---- explain --------------------------------------------------------------
    def report(self) -> str:
        before, after = _count_ops(self.ir), _count_ops(self.optimized_ir)
        lines = [f"function {self.name} on {self.platform}:{self.device.id} "
                 f"({self.device.device_kind})",
                 "arguments: " + ", ".join(str(p.type) for p in self.ir.params),
                 "results:   " + ", ".join(str(t) for t in self.optimized_ir.result_types),
                 "",
                 f"our IR: {sum(before.values())} ops before passes, {sum(after.values())} "
                 f"after (fold, cse, dce)"]
        for prim in sorted(set(before) | set(after)):
            lines.append(f"  {prim:<24} {before.get(prim, 0):>5} -> {after.get(prim, 0)}")
        hlo = self.hlo_after()
        fusions = parse_fusions(hlo)
        kernels = parse_entry_opcodes(hlo)
        lines += ["", f"XLA ({self.cache_outcome}, {1e3 * self.compile_seconds:.1f} ms): "
                      f"{len(fusions)} fusion(s); entry computation runs "
                      f"{sum(kernels.values())} instruction(s): "
                      + ", ".join(f"{k} x{v}" for k, v in kernels.most_common())]
        for f in fusions:
            ops = Counter(f["ops"])
            lines.append(f"  {f['name']} ({f['kind']}): " + ", ".join(
                f"{k}" + (f" x{v}" if v > 1 else "") for k, v in ops.most_common()))
        lines += [""] + self.cluster_comparison()
        cost = self.cost()
        if cost:
            lines += ["", "cost analysis (XLA's estimate):",
                      f"  flops              {cost.get('flops', 0):,.0f}",
                      f"  transcendentals    {cost.get('transcendentals', 0):,.0f}",
                      f"  bytes accessed     {cost.get('bytes accessed', 0):,.0f}"]
            flops, nbytes = cost.get("flops", 0), cost.get("bytes accessed", 0)
            if nbytes:
                lines.append(f"  arithmetic intensity {flops / nbytes:.2f} flops/byte")
        mem = self.memory()
        if mem:
            lines += ["", "memory analysis (bytes):"] + [
                f"  {k.replace('_bytes', ''):<18} {v:,}" for k, v in mem.items()]
        return "\n".join(lines)

    # ---- dot ------------------------------------------------------------------
    def dot(self) -> str:
        """Graphviz of our optimised IR, with XLA's fusions drawn as clusters."""
        clusters = self._clusters()
        fn = self.optimized_ir
        names: dict = {}
        out = [f'digraph "{self.name}" {{', "  rankdir=TB;",
               '  node [shape=box, fontname="Helvetica", fontsize=10];']
        for i, p in enumerate(fn.params):
            names[p] = f"p{i}"
            out.append(f'  p{i} [label="arg{i}\\n{p.type}", shape=ellipse];')
        by_cluster: dict[int, list[str]] = {}
        for i, op in enumerate(fn.ops):
            for r in op.results:
                names[r] = f"n{i}"
            loc = f"\\n{os.path.basename(op.loc.file)}:{op.loc.line}" if op.loc.line else ""
            label = f"{op.prim.name}\\n{', '.join(map(str, op.result_types))}{loc}"
            node = f'n{i} [label="{label}"];'
            if i in clusters:
                by_cluster.setdefault(clusters[i][0], []).append(node)
            else:
                out.append("  " + node)
        kinds = {c: k for c, k in clusters.values()}
        for c, nodes in by_cluster.items():
            out.append(f"  subgraph cluster_{c} {{")
            out.append(f'    label="XLA fusion {c} ({kinds[c]})"; style=filled; '
                       f'color="#dde8f7";')
            out += ["    " + n for n in nodes]
            out.append("  }")
        for i, op in enumerate(fn.ops):
            for v in op.operands:
                if v in names:
                    out.append(f"  {names[v]} -> n{i};")
        for j, r in enumerate(fn.results):
            out.append(f'  out{j} [label="result{j}\\n{r.type}", shape=ellipse];')
            if r in names:
                out.append(f"  {names[r]} -> out{j};")
        out.append("}")
        return "\n".join(out) + "\n"

    def cluster_comparison(self) -> list[str]:
        """Our fusion pass's clusters beside the fusions XLA made, and where they differ
        (an XLA fusion spanning several of our clusters, or one of ours split)."""
        fn = self.optimized_ir
        ours = fn.clusters if fn.clusters is not None else partition(fn)
        xla = self._clusters()
        lines = [f"our fusion pass: {len(set(ours))} cluster(s)"]
        spans: dict[int, set[int]] = {}
        for c in sorted(set(ours)):
            members = [i for i, k in enumerate(ours) if k == c]
            prims = Counter(fn.ops[i].prim.name for i in members)
            fused = sorted({xla[i][0] for i in members if i in xla})
            for n in fused:
                spans.setdefault(n, set()).add(c)
            where = ", ".join(f"XLA fusion {n}" for n in fused) or "no XLA fusion"
            lines.append(f"  cluster {c}: " + ", ".join(
                k + (f" x{v}" if v > 1 else "") for k, v in prims.most_common())
                + f"  -> {where}")
            if len(fused) > 1:
                lines.append(f"    differs: XLA split cluster {c} into {len(fused)} fusions")
        for n, cs in sorted(spans.items()):
            if len(cs) > 1:
                lines.append(f"  differs: XLA fusion {n} joins our clusters "
                             f"{', '.join(map(str, sorted(cs)))}")
        return lines

    def _clusters(self) -> dict[int, tuple[int, str]]:
        """op index -> (fusion number, kind). Compiles a copy of the program whose op i
        is located at line i+1 of a pseudo-file, then reads which fusion each line's
        instructions ended up in."""
        fn = self.optimized_ir
        marked = Function(fn.name, fn.params, [
            Op(op.prim, op.operands, op.attrs, op.results, Location("stablejit-op", i + 1),
               op.regions) for i, op in enumerate(fn.ops)], fn.results)
        _, text = lower(marked, optimize=False, platform=self.platform)
        hlo = Executable.compile(text, self.device).optimized_hlo()
        lines = _stack_frame_lines(hlo)
        out = {}
        for n, f in enumerate(parse_fusions(hlo)):
            for frame in f["frames"]:
                line = lines.get(frame)
                if line is not None:
                    out.setdefault(line - 1, (n, f["kind"]))
        return out

    # ---- bundle ---------------------------------------------------------------
    def write_bundle(self, directory: str) -> list[str]:
        """A directory to attach to a bug report: what we generated, what XLA made of
        it, the flags and versions, and a script that recompiles the StableHLO."""
        os.makedirs(directory, exist_ok=True)
        files = {
            "ir-before.txt": str(self.ir), "ir-after.txt": str(self.optimized_ir),
            "stablehlo.mlir": self.stablehlo, "hlo-before-optimizations.txt": self.hlo_before(),
            "hlo-after-optimizations.txt": self.hlo_after(),
            "flags.json": json.dumps(
                {k: v for k, v in os.environ.items()
                 if k.startswith(("XLA_", "STABLEJIT_", "JAX_", "TF_CPP"))}, indent=2),
            "versions.json": json.dumps(versions(self.device), indent=2),
            "explain.txt": self.report(),
            "recompile.py": _RECOMPILE.format(platform=self.platform),
        }
        written = []
        for name, text in files.items():
            path = os.path.join(directory, name)
            with open(path, "w") as f:
                f.write(text)
            written.append(path)
        return written


_RECOMPILE = '''"""Recompile stablehlo.mlir with XLA alone (no stablejit): run next to the file."""
import os
from jax._src import xla_bridge
from jaxlib import _jax

here = os.path.dirname(os.path.abspath(__file__))
text = open(os.path.join(here, "stablehlo.mlir")).read()
client = xla_bridge.get_backend("{platform}".replace("host", "cpu"))
exe = client.compile_and_load(text, _jax.DeviceList(tuple(client.local_devices()[:1])),
                              _jax.CompileOptions())
print(exe.hlo_modules()[0].to_string())
'''


def versions(device=None) -> dict:
    # for the bug report's version list only: both are slow to import
    import importlib.metadata  # noqa: PLC0415

    import jax  # noqa: PLC0415

    out = {"stablejit": importlib.metadata.version("stablejit"), "python": sys.version.split()[0],
           "numpy": np.__version__, "jax": jax.__version__, "jaxlib": jaxlib.__version__,
           "os": py_platform.platform()}
    if device is not None:
        out.update(platform=device.platform, device_kind=device.device_kind,
                   platform_version=str(device.client.platform_version))
    return out


def write_dot(dot_text: str, path_without_ext: str) -> list[str]:
    """Write NAME.dot, and NAME.svg when Graphviz's `dot` is installed."""
    out = [path_without_ext + ".dot"]
    with open(out[0], "w") as f:
        f.write(dot_text)
    exe = shutil.which("dot")
    if exe:
        r = subprocess.run([exe, "-Tsvg", out[0], "-o", path_without_ext + ".svg"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            out.append(path_without_ext + ".svg")
    return out


# ---- reading XLA's HLO text ------------------------------------------------------
_COMP = re.compile(r"^(ENTRY\s+)?%?([\w.\-]+)\s*\(.*\)\s*->\s*.*\{\s*$")
_INSTR = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(\([^=]*?\)|\S+)\s+([a-z][\w\-]*)\(")
_CALLS = re.compile(r"calls=%?([\w.\-]+)")
_KIND = re.compile(r"kind=(k\w+)")
_FRAME = re.compile(r"stack_frame_id=(\d+)")


def _computations(hlo: str) -> tuple[dict, str | None]:
    comps: dict[str, list] = {}
    entry = None
    current = None
    for line in hlo.splitlines():
        m = _COMP.match(line)
        if m:
            current = m.group(2)
            comps[current] = []
            if m.group(1):
                entry = current
            continue
        if line.strip() == "}":
            current = None
            continue
        if current is not None:
            mi = _INSTR.match(line)
            if mi:
                comps[current].append((mi.group(1), mi.group(3), line))
    return comps, entry


def parse_fusions(hlo: str) -> list[dict]:
    """XLA's fusion instructions: name, kind and the opcodes (and stack frames) fused."""
    comps, _ = _computations(hlo)
    out = []
    for comp in comps.values():
        for name, opcode, line in comp:
            if opcode != "fusion":
                continue
            called = _CALLS.search(line)
            kind = _KIND.search(line)
            body = comps.get(called.group(1), []) if called else []
            out.append({"name": name, "kind": kind.group(1) if kind else "?",
                        "ops": [o for _, o, _ in body if o not in ("parameter",)],
                        "frames": [int(m.group(1)) for _, _, ln in body
                                   for m in [_FRAME.search(ln)] if m]})
    return out


def parse_entry_opcodes(hlo: str) -> Counter:
    comps, entry = _computations(hlo)
    return Counter(o for _, o, _ in comps.get(entry, [])
                   if o not in ("parameter", "constant", "tuple", "get-tuple-element"))


def _stack_frame_lines(hlo: str) -> dict[int, int]:
    """stack frame id -> source line, from the FileLocations/StackFrames tables."""
    section, locs, frames = None, {}, {}
    for line in hlo.splitlines():
        s = line.strip()
        if s in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
            section = s
            continue
        m = re.match(r"^(\d+)\s*\{(.*)\}$", s)
        if not m or section is None:
            if s and not m:
                section = None if not s[0].isdigit() else section
            continue
        fields = dict(kv.split("=", 1) for kv in m.group(2).split() if "=" in kv)
        if section == "FileLocations" and "line" in fields:
            locs[int(m.group(1))] = int(fields["line"])
        elif section == "StackFrames" and "file_location_id" in fields:
            frames[int(m.group(1))] = int(fields["file_location_id"])
    return {f: locs[l] for f, l in frames.items() if l in locs}


def _count_ops(fn: Function) -> Counter:
    c: Counter = Counter()
    for op in fn.ops:
        c[op.prim.name] += 1
        for r in op.regions:
            c.update(_count_ops(r))
    return c


# ---- why a function was traced again ---------------------------------------------
