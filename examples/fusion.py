"""The XLA documentation's fusion example: reduce_sum(x + y * z), jitted.

Prints our StableHLO (three separate operations plus the reduction) and XLA's
optimised HLO, in which the multiply, the add and the reduction run as one fusion.
"""

import re

import numpy as np
import stablejit
import stablejit.numpy as snp


@stablejit.jit
def model_fn(x, y, z):
    return snp.sum(x + y * z)


def main():
    rng = np.random.default_rng(0)
    x, y, z = (snp.asarray(rng.standard_normal(10_000, dtype=np.float32)) for _ in range(3))
    result = model_fn(x, y, z)
    expected = np.sum(np.asarray(x) + np.asarray(y) * np.asarray(z))
    print(f"reduce_sum(x + y*z) = {result.item():.4f} (NumPy: {expected:.4f})")

    lowered = model_fn.lower(x, y, z)
    print("\n--- our StableHLO ---")
    print(lowered.as_text())
    hlo = lowered.compile().as_text()
    print("--- XLA's optimised HLO ---")
    print(hlo)
    fusions = [line for line in hlo.splitlines() if re.search(r"\sfusion\(", line)]
    print(f"fusion instructions in the optimised HLO: {len(fusions)}")
    for line in fusions:
        print("  " + line.strip()[:120])


if __name__ == "__main__":
    main()
