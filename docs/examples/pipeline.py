"""The program the guide "How it works" follows through every stage (its outputs are
made by running this file when the site is built)."""

import stablejit
import stablejit.numpy as snp


def predict(w, x):
    h = snp.tanh(x @ w + 1.0)
    return snp.sum(h * 1.0 + snp.tanh(x @ w + 1.0), axis=1)  # the passes simplify this


w, x = snp.ones((3, 2)), snp.ones((4, 3))
lowered = stablejit.jit(predict).lower(w, x)
STAGES = {
    "ir": str(lowered.ir),                     # our IR, as traced
    "optimized_ir": str(lowered.optimized_ir),        # after the passes
    "stablehlo": lowered.as_text(),                # what XLA is given
    "hlo": lowered.compile().as_text(),            # what XLA made of it
}

if __name__ == "__main__":
    for name, text in STAGES.items():
        print(f"--- {name}\n{text}")
