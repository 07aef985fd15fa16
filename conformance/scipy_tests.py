"""Run SciPy's installed test suites on array-API backends (stablejit.numpy by default)
through conformance/scipy_plugin.py, one subprocess per subpackage and backend, each
time-boxed, and print the pass/fail counts as a Markdown table (docs/scipy_consumers.md
keeps one).

    python conformance/scipy_tests.py                       (make scipy-tests)
    python conformance/scipy_tests.py special fft --xp stablejit.numpy --xp jax.numpy
    python conformance/scipy_tests.py stats --time-box 360 -- -k "not slow"

Only the tests that use SciPy's `xp` fixture run (`-m array_api_backends`), on the
backends named; a run stopped by its time box counts the tests it ran.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUBPACKAGES = ["special", "fft", "cluster", "linalg", "integrate", "optimize",
               "differentiate", "stats"]
COUNTS = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")


def run(subpackage: str, backend: str, time_box: float, extra: list[str]) -> dict:
    env = {**os.environ, "SCIPY_ARRAY_API": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE),
                                                       os.environ.get("PYTHONPATH")]))}
    cmd = [sys.executable, "-m", "pytest", "-p", "scipy_plugin", "--pyargs",
           f"scipy.{subpackage}", "-m", "array_api_backends", "--xp", backend,
           "--time-box", str(time_box), "-q", "-p", "no:cacheprovider", "-o", "addopts=",
           "-W", "ignore", *extra]
    start = time.monotonic()
    # run outside the repository, so that its pytest settings and conftest stay out
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd="/",
                         timeout=time_box + 600)
    tail = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr[-300:]
    counts = {k: 0 for k in COUNTS}
    for n, what in re.findall(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)",
                              tail):
        counts["error" if what.startswith("error") else what] += int(n)
    counts["seconds"] = round(time.monotonic() - start)
    counts["stopped"] = "time box" in out.stdout
    counts["failures"] = re.findall(r"^(?:FAILED|ERROR) (\S+)", out.stdout, re.M)
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("subpackages", nargs="*", default=SUBPACKAGES)
    ap.add_argument("--xp", action="append", help="backend (repeat); default stablejit.numpy")
    ap.add_argument("--time-box", type=float, default=360.0,
                    help="seconds per subpackage and backend (default 360)")
    ap.add_argument("--failures", action="store_true", help="list the failing tests")
    args, extra = ap.parse_known_args()
    extra = [a for a in extra if a != "--"]
    backends = args.xp or ["stablejit.numpy"]
    print("| subpackage | backend | passed | failed | errors | skipped | xfailed | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for sub in args.subpackages:
        for backend in backends:
            c = run(sub, backend, args.time_box, extra)
            print(f"| {sub}{' (time box)' if c['stopped'] else ''} | {backend} | "
                  f"{c['passed']} | {c['failed']} | {c['error']} | {c['skipped']} | "
                  f"{c['xfailed']} | {c['seconds']} |", flush=True)
            if args.failures:
                for f in c["failures"]:
                    print(f"    {f}", flush=True)


if __name__ == "__main__":
    main()
