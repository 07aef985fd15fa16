"""Instructions the main thread executes to record one graph in lazy(), counted by
valgrind's callgrind: a figure that does not move with the machine's load, where the
timings of benchmarks/recorder.py move by 30-50% on a shared 2-core host
(docs/native.md, "Counting instructions").

    python benchmarks/recorder_instructions.py            # native and Python paths
    python benchmarks/recorder_instructions.py --native   # the native path only
    python benchmarks/recorder_instructions.py --native 'm[3]x10'   # named cases only

The cases: the 30-op chain, the MLP step and the digits step of benchmarks/lazy.py, and
ten calls each of x[3], y[:, None] and reshape (benchmarks/recorder.py's slow rows).

Each case records its graph SMALL and LARGE times in two processes under callgrind
(address randomisation off, one output per thread) and reports the main thread's
difference divided by LARGE - SMALL: import, compilation and warm-up cancel out. The
graph is recorded and dropped (its tape cleared), never run, so no program's run or
wait is counted. Needs valgrind and setarch; takes a few minutes.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile

SMALL, LARGE = 30, 130

# the recorded graphs: the 30-op chain of benchmarks/lazy.py, its MLP step (grad of the
# loss on a tape, then the SGD update) and its digits step (value_and_grad of
# examples/digits_mlp.py's loss, then adam's jitted update), recorded with no early start
_PRELUDE = """
import sys
import numpy as np
import stablejit, stablejit.numpy as snp
sys.path.insert(0, {bench!r})
from common import digits_setup
from lazy import chain, mlp_step
rng = np.random.default_rng(0)
X = snp.asarray(np.linspace(-1, 1, 1000, dtype=np.float32))
P = [snp.asarray(rng.standard_normal(s).astype(np.float32) * 0.1)
     for s in ((64, 128), (128,), (128, 10), (10,))]
XB = snp.asarray(rng.standard_normal((128, 64)).astype(np.float32))
YB = snp.asarray(rng.integers(0, 10, 128).astype(np.int32))

def mlp(p, x, y):
    g = stablejit.grad(mlp_step(snp, p, x, y))(p)
    return [a - 0.1 * b for a, b in zip(p, g, strict=True)]

DIGITS, DX, DY, OPT, DP, DS = digits_setup()

def adam(p, s, x, y):
    loss, grads = stablejit.value_and_grad(DIGITS.loss_fn)(p, x, y)
    return OPT.update(grads, s, p), loss

M = snp.asarray(rng.standard_normal((16, 8)).astype(np.float32))

CASES = {{"chain": lambda: chain(snp, X), "mlp": lambda: mlp(P, XB, YB),
          "digits": lambda: adam(DP, DS, DX, DY),
          # the indexing and reshape rows of benchmarks/recorder.py, ten calls a graph
          "m[3]x10": lambda: [M[3] for _ in range(10)],
          "y[:,None]x10": lambda: [YB[:, None] for _ in range(10)],
          "reshapex10": lambda: [snp.reshape(M, (8, 16)) for _ in range(10)]}}

def record(case):
    with stablejit.lazy() as b:
        b._start_at = 1 << 62  # (grad's derivative recorded, not run at once)
        CASES[case]()
        b._tape.clear()
        b._new_graph()

for _ in range(int(sys.argv[2])):
    record(sys.argv[1])
"""


def main_thread_instructions(script: str, case: str, graphs: int, native: bool) -> int:
    out = tempfile.mkdtemp(prefix="stablejit-callgrind-")
    env = dict(os.environ, PYTHONHASHSEED="0", STABLEJIT_NATIVE="1" if native else "0")
    try:
        subprocess.run(["setarch", os.uname().machine, "-R", "valgrind", "--tool=callgrind",
                        "--separate-threads=yes",
                        f"--callgrind-out-file={out}/cg", sys.executable, script, case,
                        str(graphs)], env=env, check=True, capture_output=True)
        main = sorted(glob.glob(f"{out}/cg*-01"))[0]  # (thread 1: the main thread)
        with open(main) as f:
            for line in f:
                if line.startswith(("summary:", "totals:")):
                    return int(line.split()[1])
        raise RuntimeError(f"no totals in {main}")
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    if shutil.which("valgrind") is None or shutil.which("setarch") is None:
        sys.exit("recorder_instructions.py needs valgrind and setarch (util-linux)")
    paths = [True] if "--native" in sys.argv else [True, False]
    bench = os.path.dirname(os.path.abspath(__file__))
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(_PRELUDE.format(bench=bench))
    try:
        print("main-thread instructions per recorded graph (callgrind, "
              f"{LARGE} - {SMALL} graphs)")
        chosen = [a for a in sys.argv[1:] if not a.startswith("--")]
        for case in chosen or ["chain", "mlp", "digits", "m[3]x10", "y[:,None]x10",
                               "reshapex10"]:
            for native in paths:
                small = main_thread_instructions(f.name, case, SMALL, native)
                large = main_thread_instructions(f.name, case, LARGE, native)
                path = "native" if native else "python"
                print(f"{case:12} {path:7} {(large - small) / (LARGE - SMALL):12,.0f}")
    finally:
        os.unlink(f.name)


if __name__ == "__main__":
    main()
