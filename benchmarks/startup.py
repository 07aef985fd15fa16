"""Start-up: a fresh Python process to its first result, stablejit against jax doing the
same work, and the `stablejit` command's quick subcommands.

    python benchmarks/startup.py [--rounds 7]

Each figure is the median wall time of --rounds fresh processes, the two sides
alternating so that a busy machine slows both alike, after one round that is not
counted. Both sides import from bytecode as an installed package does (jax's wheel
ships it; the children may write stablejit's, PYTHONDONTWRITEBYTECODE is dropped).
Neither side uses a persistent compilation cache (STABLEJIT_CACHE=0; jax has none by
default), so the first result includes compiling its ops.

    first result   import, client start, ones(3) + 1 printed   target <= 0.5x jax
    import         the import alone (stablejit does not import jax)
    devices        `stablejit devices` against `python -c "import jax; jax.devices()"`
    --help         `stablejit --help`, same peer                   target <= 0.4 s
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np

FIRST_RESULT = {"stablejit": "import stablejit.numpy as snp; print(snp.ones(3) + 1)",
                "jax": "import jax.numpy as jnp; print(jnp.ones(3) + 1)"}
IMPORT = {"stablejit": "import stablejit", "jax": "import jax"}
JAX_DEVICES = "import jax; print(jax.devices())"
CLI = [sys.executable, "-m", "stablejit.cli"]


def _seconds(argv: list[str]) -> float:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "1", "STABLEJIT_CACHE": "0"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, env=env, timeout=120)
    return time.perf_counter() - t0


def paired(ours: list[str], peer: list[str], rounds: int) -> tuple[float, float]:
    """Median seconds of each command, run alternately."""
    _seconds(ours), _seconds(peer)  # not counted: writes bytecode, warms the file cache
    a, b = [], []
    for _ in range(rounds):
        a.append(_seconds(ours))
        b.append(_seconds(peer))
    return float(np.median(a)), float(np.median(b))


def rows(rounds: int) -> list[tuple[str, float, float, float | None]]:
    """(what, stablejit seconds, jax seconds, target ratio or None)."""
    py = [sys.executable, "-c"]
    out = []
    for name, code, target in (("fresh process to first result", FIRST_RESULT, 0.5),
                               ("  of which import", IMPORT, None)):
        out.append((name, *paired(py + [code["stablejit"]], py + [code["jax"]], rounds),
                    target))
    jax_devices = py + [JAX_DEVICES]
    out.append(("stablejit devices", *paired(CLI + ["devices"], jax_devices, rounds), None))
    out.append(("stablejit --help", *paired(CLI + ["--help"], jax_devices, rounds), None))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ns = ap.parse_args()
    print(f"start-up, fresh processes, median of {ns.rounds} (lower is better)")
    print(f"{'case':<32}{'stablejit':>11}{'jax':>11}{'ratio':>8}{'target':>14}")
    for name, ours, peer, target in rows(ns.rounds):
        if target is not None:
            tgt = f"<={target:.1f}x" + ("  ok" if ours / peer <= target else "  MISS")
        elif name.startswith("stablejit "):  # the CLI's target is absolute
            tgt = "<=0.40 s" + ("  ok" if ours <= 0.4 else "  MISS")
        else:
            tgt = ""
        print(f"{name:<32}{ours:>9.3f} s{peer:>9.3f} s{ours / peer:>7.2f}x{tgt:>14}")


if __name__ == "__main__":
    main()
