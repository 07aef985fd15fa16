"""The `stablejit` command: see what the compiler made, which devices there are, and
what the compilation cache holds.

    stablejit dump FILE.py:FUNC --args 'f32[10000,784]' 'f32[784,10]' --stage all
    stablejit dump FILE.py:FUNC --args ... --format dot --out DIR
    stablejit dump FILE.py:FUNC --args ... --bundle DIR
    stablejit explain FILE.py:FUNC --args ...
    stablejit profile FILE.py:FUNC --args ... [--runs 100]
    stablejit devices
    stablejit cache info|list|clear
    stablejit export FILE.py:FUNC --args 'f32[8,64]' --out model.sjx
    stablejit inspect model.sjx
    stablejit run model.sjx --inputs in.npz --out out.npz
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from . import config
from .errors import StablejitError
from .platforms import default_platform
from .runtime import client, disk_cache
from .runtime.client import PlatformError

STAGES = ("ir", "stablehlo", "hlo", "all")


def _inspection(ns):
    from .explain import Inspection, load_target  # noqa: PLC0415 - for dump/explain only

    fn, _ = load_target(ns.target)
    return Inspection(fn, ns.args or [], platform=ns.platform, device_id=ns.device_id)


def _stage_texts(insp, stage: str) -> dict[str, str]:
    """file name -> text for a stage."""
    out = {}
    if stage in ("ir", "all"):
        out["ir-before.txt"] = str(insp.ir)
        out["ir-after.txt"] = str(insp.optimized_ir)
    if stage in ("stablehlo", "all"):
        out["stablehlo.mlir"] = insp.stablehlo
    if stage in ("hlo", "all"):
        out["hlo-after-optimizations.txt"] = insp.hlo_after()
    if stage == "all":
        out["hlo-before-optimizations.txt"] = insp.hlo_before()
    return out


_TITLES = {"ir-before.txt": "our IR, before passes", "ir-after.txt": "our IR, after passes",
           "stablehlo.mlir": "StableHLO (what XLA is given)",
           "hlo-before-optimizations.txt": "XLA HLO, before XLA's optimisations",
           "hlo-after-optimizations.txt": "XLA HLO, after XLA's optimisations"}


def cmd_dump(ns) -> int:
    insp = _inspection(ns)
    if ns.bundle:
        files = insp.write_bundle(ns.bundle)
        print(f"wrote a bug-report bundle of {len(files)} files to {ns.bundle}:")
        for f in files:
            print(f"  {f}")
        return 0
    if ns.format == "dot":
        from .explain import write_dot  # noqa: PLC0415 - for dump only

        text = insp.dot()
        if not ns.out:
            sys.stdout.write(text)
            return 0
        os.makedirs(ns.out, exist_ok=True)
        for f in write_dot(text, os.path.join(ns.out, insp.name)):
            print(f"wrote {f}")
        return 0
    texts = _stage_texts(insp, ns.stage)
    if ns.out:
        os.makedirs(ns.out, exist_ok=True)
        for name, text in texts.items():
            path = os.path.join(ns.out, f"{insp.name}.{name}")
            with open(path, "w") as f:
                f.write(text)
            print(f"wrote {path}")
        return 0
    order = ["ir-before.txt", "ir-after.txt", "stablehlo.mlir", "hlo-before-optimizations.txt",
             "hlo-after-optimizations.txt"]
    for name in order:
        if name in texts:
            print(f"// ===== {_TITLES[name]} =====")
            print(texts[name].rstrip("\n"))
            print()
    return 0


def cmd_explain(ns) -> int:
    insp = _inspection(ns)
    insp.executable  # noqa: B018 (compile before reporting)
    print(insp.report())
    return 0


def cmd_profile(ns) -> int:
    from .explain import load_target  # noqa: PLC0415 - for profile only
    from .profiling import Profile  # noqa: PLC0415

    fn, _ = load_target(ns.target)
    print(Profile(fn, ns.args or [], platform=ns.platform, device_id=ns.device_id,
                  runs=ns.runs).report())
    return 0


def cmd_devices(ns) -> int:

    try:
        chosen = default_platform()
    except client.PlatformError as e:
        chosen = None
        print(f"no default platform: {e}")
    env = config.platform_setting()
    print(f"default platform: {chosen}" + (f" (STABLEJIT_PLATFORM={env})" if env else
                                           " (first available of tpu, cuda, rocm, host)"))
    for p in client.PLATFORMS:
        try:
            c = client.get_client(p)
        except client.PlatformError as e:
            reason = str(e).split(" (")[0]
            print(f"{p}: not available ({reason})")
            continue
        opts = client.options(p)
        default_id = opts.get("default_device_id", 0)
        print(f"{p}: PJRT platform {c.platform!r} (version {c.platform_version}), "
              f"{len(c.local_devices())} device(s)"
              + (f", options {opts}" if opts else ""))
        for d in c.local_devices():
            mark = " (default)" if p == chosen and d.id == default_id else ""
            print(f"  {p}:{d.id}  {d.device_kind}{mark}")
    return 0


def cmd_cache(ns) -> int:

    store = (disk_cache.DiskCache(ns.dir) if ns.dir else
             disk_cache.default_cache(config.cache_dir(), config.cache_max_bytes()))
    if store is None:
        print("the persistent compilation cache is disabled (STABLEJIT_CACHE_DIR is empty "
              "or STABLEJIT_CACHE=0)")
        return 0
    if ns.action == "info":
        entries = store.entries()
        total = sum(e["size"] for e in entries)
        print(f"directory: {store.directory}")
        print(f"entries:   {len(entries)}")
        print(f"size:      {total:,} bytes (limit {store.max_bytes:,}; "
              f"STABLEJIT_CACHE_MAX_BYTES)")
        print(f"usable:    {'yes' if store.usable() else 'no'}")
    elif ns.action == "list":
        for e in store.entries():
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e["last_used"]))
            print(f"{e['key'][:16]}  {e['size']:>10,}  {when}  {str(e.get('platform', '?')):<5} "
                  f"{e.get('name', '?')}")
    elif ns.action == "clear":
        n = store.clear()
        print(f"removed {n} entries from {store.directory}")
    return 0


def _add_target(p) -> None:
    p.add_argument("target", help="FILE.py:FUNCTION (or module:function)")
    p.add_argument("--args", nargs="*", default=[], metavar="SPEC",
                   help="one per argument: a tensor type like 'f32[10000,784]' or a number")
    p.add_argument("--platform", default=None, help="host, cuda, rocm or tpu")
    p.add_argument("--device-id", type=int, default=None)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="stablejit", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="print or write what was generated for a function")
    _add_target(d)
    d.add_argument("--stage", choices=STAGES, default="all")
    d.add_argument("--format", choices=("text", "dot"), default="text",
                   help="dot: Graphviz of our IR with XLA's fusions as clusters")
    d.add_argument("--out", default=None, help="write files to this directory")
    d.add_argument("--bundle", default=None, metavar="DIR",
                   help="write a bug-report bundle (StableHLO, HLO before and after "
                        "optimisation, flags, versions) to DIR")
    d.set_defaults(run=cmd_dump)
    e = sub.add_parser("explain", help="op counts, XLA's fusions, cost and memory analysis")
    _add_target(e)
    e.set_defaults(run=cmd_explain)
    p = sub.add_parser("profile", help="time each stage: trace, passes, emit, compile or "
                                       "load, first run, steady state")
    _add_target(p)
    p.add_argument("--runs", type=int, default=100,
                   help="steady-state runs to take the median of (default 100)")
    p.set_defaults(run=cmd_profile)
    v = sub.add_parser("devices", help="list platforms and devices, and the default")
    v.set_defaults(run=cmd_devices)
    c = sub.add_parser("cache", help="the persistent compilation cache")
    c.add_argument("action", choices=("info", "list", "clear"))
    c.add_argument("--dir", default=None, help="another cache directory than the default")
    c.set_defaults(run=cmd_cache)
    from .export._cli import add_parsers  # noqa: PLC0415 - export's commands live with it

    add_parsers(sub, _add_target)
    return ap


def main(argv=None) -> int:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")  # before XLA starts: no INFO lines
    ns = build_parser().parse_args(argv)

    try:
        return ns.run(ns)
    except (ValueError, FileNotFoundError, TypeError, PlatformError, StablejitError) as e:
        print(f"stablejit {ns.command}: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `stablejit cache list | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
