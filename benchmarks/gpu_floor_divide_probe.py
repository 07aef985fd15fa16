"""Where float32 floor_divide on cuda leaves NumPy's bits (6 of 256 elements of
tests/host/test_integer_division.py, docs/devices.md): each step of its formula on the
default device against NumPy's, and the program XLA compiled. Run on a GPU machine:
    STABLEJIT_PLATFORM=cuda python benchmarks/gpu_floor_divide_probe.py
"""

import numpy as np
import stablejit
import stablejit.numpy as snp

specials = [0.0, -0.0, 1.0, -1.0, 0.1, -0.1, 2.5, -2.5, 3.0, 7.5, 1e30, -1e30, 3e-9,
            np.inf, -np.inf, np.nan]
vals = np.array(specials, np.float32)
x, y = (a.ravel() for a in np.meshgrid(vals, vals, indexing="ij"))
with np.errstate(all="ignore"):
    want = np.floor_divide(x, y)
    # the array API standard's special cases where an operand is infinite (as the test)
    special = np.isinf(x) | np.isinf(y)
    want = np.where(special, (x / y).astype(np.float32), want)
    steps_np = {"remainder": np.fmod(x, y), "divide": x / y}
    steps_np["x - mod"] = x - steps_np["remainder"]
    steps_np["(x - mod) / y"] = steps_np["x - mod"] / y

print("default platform:", stablejit.default_platform())
f = stablejit.jit(snp.floor_divide)
for name, got in [("eager", snp.floor_divide(snp.asarray(x), snp.asarray(y))),
                  ("jit", f(x, y))]:
    got = np.asarray(got)
    bad = np.flatnonzero((got.view(np.int32) != want.view(np.int32)) &
                         ~(np.isnan(got) & np.isnan(want)))
    print(name, "mismatches at", bad.tolist())
    for i in bad[:6]:
        print(f"  x={x[i]!r} y={y[i]!r} ours={got[i]!r} numpy={want[i]!r}")
xs, ys = snp.asarray(x), snp.asarray(y)
ours = {"remainder": np.asarray(snp.fmod(xs, ys)), "divide": np.asarray(xs / ys)}
ours["x - mod"] = np.asarray(xs - snp.asarray(steps_np["remainder"]))
ours["(x - mod) / y"] = np.asarray(snp.asarray(steps_np["x - mod"]) / ys)
for k, v in ours.items():
    same = (v.view(np.int32) == steps_np[k].view(np.int32)) | (np.isnan(v) & np.isnan(steps_np[k]))
    print(f"step {k}: {int((~same).sum())} differ", np.flatnonzero(~same).tolist()[:8])
lowered = f.lower(x, y)
print("---- our StableHLO ----")
print(lowered.as_text())
print("---- XLA's compiled program ----")
print(lowered.compile().as_text())
