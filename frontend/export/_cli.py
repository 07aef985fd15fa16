"""The export subcommands of the `stablejit` command (frontend/cli.py registers them).

    stablejit export FILE.py:FUNC --args 'f32[8,64]' ... --out model.sjx [--platforms
        host,cuda] [--executables] [--vjp]
    stablejit export FILE.py:FUNC --args 'f32[b,64]' --constraints 'b <= 4096' ...
        (symbolic dimensions: one artifact for every batch size)
    stablejit inspect model.sjx [--platform cuda] [--no-stablehlo]
    stablejit run model.sjx --inputs in.npz --out out.npz

`run` reads the inputs from an .npz: by leaf path as `inspect` prints them (args[0],
args[1]['b'], kwargs['scale']) or, as np.savez(path, x, y) writes them, arr_0, arr_1 ...
in leaf order. It writes one array per output leaf, named by its path (out, out[0],
out['logits']).
"""

from __future__ import annotations

import os
import re

import numpy as np

from .. import tree
from ..callbacks import ShapeDtypeStruct
from ..compiler import dtypes as dt
from ..compiler import symbolic as sym
from ..runtime import portable
from ._exported import Exported, _path_text, deserialize, export
from ._symbolic import scope_of, symbolic_shape


def add_parsers(sub, add_target) -> None:
    e = sub.add_parser("export", help="export a function as a versioned artifact (.sjx)")
    add_target(e)
    e.add_argument("--out", required=True, help="the artifact file to write")
    e.add_argument("--platforms", default=None,
                   help="comma-separated: host,cuda,rocm,tpu (default: the default platform)")
    e.add_argument("--executables", action="store_true",
                   help="also store the compiled executable for the platforms this machine "
                        "has, so the same jaxlib loads it without compiling")
    e.add_argument("--vjp", action="store_true", help="also export the VJP (for grad)")
    e.add_argument("--constraints", nargs="*", default=[],
                   help="constraints of the symbolic dimensions named in --args "
                        "(f32[b,784]): 'b >= 1', 'b <= 4096', 'b % 8 == 0'")
    e.set_defaults(run=cmd_export)
    i = sub.add_parser("inspect", help="signature, platforms, versions, size and StableHLO "
                                       "of an artifact")
    i.add_argument("artifact")
    i.add_argument("--platform", default=None, help="whose StableHLO to print")
    i.add_argument("--no-stablehlo", action="store_true", help="leave the StableHLO out")
    i.add_argument("--full", action="store_true",
                   help="print large constants (weights) in full, not elided")
    i.set_defaults(run=cmd_inspect)
    r = sub.add_parser("run", help="run an artifact on inputs from an .npz file")
    r.add_argument("artifact")
    r.add_argument("--inputs", required=True, help=".npz with one array per input leaf")
    r.add_argument("--out", required=True, help=".npz to write the outputs to")
    r.set_defaults(run=cmd_run)


def cmd_export(ns) -> int:
    from ..explain import load_target, parse_arg  # noqa: PLC0415 - CLI only

    fn, _ = load_target(ns.target)
    platforms = tuple(p.strip() for p in ns.platforms.split(",")) if ns.platforms else None
    scope = sym.Scope()
    for c in ns.constraints:
        scope.add_constraint(c)
    exp = export(fn, platforms=platforms, vjp_order=int(ns.vjp))(
        *[_symbolic_arg(a, scope) or parse_arg(a) for a in ns.args])
    data = exp.serialize(executables=ns.executables)
    with open(ns.out, "wb") as f:
        f.write(data)
    print(f"wrote {ns.out} ({len(data):,} bytes): {exp.signature()} for "
          f"{', '.join(exp.platforms)}")
    return 0


def _symbolic_arg(spec: str, scope: sym.Scope):
    """'f32[b,784]' (a dimension that is not a number) -> a ShapeDtypeStruct of symbolic
    dimensions; None for other specs (explain.parse_arg reads them)."""
    m = re.match(r"^\s*([a-z]+[0-9]*)\s*\[(.*)\]\s*$", spec)
    if m is None or re.fullmatch(r"[0-9,\s]*", m.group(2)):
        return None
    return ShapeDtypeStruct(symbolic_shape(m.group(2), scope=scope), dt.ir_dtype(m.group(1)))


def _load(path: str) -> tuple[Exported, int]:
    with open(path, "rb") as f:
        data = f.read()
    return deserialize(data), len(data)


def _leaf_lines(td, avals, head: str) -> list[str]:
    return [f"  {_path_text(p) if head == 'in' else _out_path(p)}: "
            f"{a.dtype.name}[{','.join(map(str, a.shape))}]" + (" (weak)" if a.weak_type else "")
            for p, a in zip(td.leaf_paths(), avals, strict=True)]


def _out_path(path) -> str:
    return "out" + tree.keystr(path)


def cmd_inspect(ns) -> int:
    exp, size = _load(ns.artifact)
    prod = exp.producer or {}
    constraints = getattr(scope_of(exp.in_avals), "constraints", ())
    lines = [f"function:    {exp.fun_name}",
             f"signature:   {exp.signature()}",
             "inputs:", *_leaf_lines(exp.in_tree, exp.in_avals, "in"),
             "outputs:", *_leaf_lines(exp.out_tree, exp.out_avals, "out"),
             f"platforms:   {', '.join(exp.platforms)}",
             f"size:        {size:,} bytes ("
             + ", ".join(f"{p} StableHLO {len(exp.mlir_module_serialized(p)):,}"
                         for p in exp.platforms) + ")",
             f"written by:  stablejit {prod.get('stablejit', '?')}, jaxlib "
             f"{prod.get('jaxlib', '?')}, StableHLO {prod.get('stablehlo', '?')} (bytecode "
             f"for {prod.get('stablehlo_target', '?')})",
             f"calling convention: {exp.calling_convention_version}",
             f"constraints: {', '.join(constraints) or 'none'}",
             f"VJP:         {'exported' if exp.has_vjp() else 'not exported'}"]
    for key, payload in exp._executables:
        lines.append(f"executable:  {key['platform']} {key['device_kind']}, jaxlib "
                     f"{key['jaxlib']}, {len(payload):,} bytes"
                     + (f", XLA_FLAGS {key['xla_flags']!r}" if key["xla_flags"] else ""))
    print("\n".join(lines))
    if not ns.no_stablehlo:
        platform = ns.platform or exp.platforms[0]
        print(f"// ===== StableHLO for {platform} =====")
        data = exp.mlir_module_serialized(platform)
        print(portable.deserialize(data, None if ns.full else 16).rstrip("\n"))
    return 0


def cmd_run(ns) -> int:
    exp, _ = _load(ns.artifact)
    with np.load(ns.inputs) as f:
        stored = {k: f[k] for k in f.files}
    paths = [_path_text(p) for p in exp.in_tree.leaf_paths()]
    if all(p in stored for p in paths):
        leaves = [stored[p] for p in paths]
    elif len(stored) == len(paths) and all(f"arr_{i}" in stored for i in range(len(paths))):
        leaves = [stored[f"arr_{i}"] for i in range(len(paths))]
    else:
        raise ValueError(f"{ns.inputs} holds {sorted(stored)}; {exp.fun_name} takes "
                         f"{', '.join(paths)}: name the arrays so, or save them in that "
                         f"order with np.savez(path, *arrays)")
    args, kwargs = tree.unflatten(exp.in_tree, leaves)
    out = exp.call(*args, **kwargs)
    out_leaves = tree.leaves(out)
    arrays = {_out_path(p): np.asarray(o)
              for p, o in zip(exp.out_tree.leaf_paths(), out_leaves, strict=True)}
    os.makedirs(os.path.dirname(os.path.abspath(ns.out)), exist_ok=True)
    np.savez(ns.out, **arrays)
    print(f"wrote {ns.out}: " + ", ".join(f"{k} {v.dtype}{list(v.shape)}"
                                         for k, v in arrays.items()))
    return 0
