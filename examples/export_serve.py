"""Train the digits MLP, export it as an artifact, and serve it from a second process that
has neither this file nor the training code: only stablejit and the artifact.

    python examples/export_serve.py      # trains (a few seconds), exports, serves, checks

The artifact (model.sjx) holds the forward pass with the trained weights as constants,
as StableHLO bytecode, plus the executable compiled here, so the server process runs
it without compiling (same jaxlib, platform and XLA flags; otherwise it compiles the
StableHLO, with a warning). See docs/shipping_a_model.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import stablejit
from stablejit import export, nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from digits_mlp import forward, init_params, load, make_train_step  # noqa: E402

SERVER = """
import sys, numpy as np
from stablejit import compilation, export
model = export.deserialize(open(sys.argv[1], "rb").read())
print("server: loaded", model)
x = np.load(sys.argv[2])
logits = np.asarray(model.call(x))
np.save(sys.argv[3], logits)
print(f"server: served {len(x)} images, compiled {compilation.stats['compiled']} programs")
"""


def train(epochs: int = 8, batch_size: int = 32, seed: int = 0):
    x_train, y_train, x_test, y_test = load(seed)
    rng = np.random.default_rng(seed)
    params = init_params(rng, (64, 128, 10))
    optimizer = nn.adam(2e-3)
    opt_state = optimizer.init(params)
    step = make_train_step(optimizer)
    for _ in range(epochs):
        order = rng.permutation(len(x_train))
        for i in range(len(x_train) // batch_size):
            idx = order[i * batch_size:(i + 1) * batch_size]
            params, opt_state, _ = step(params, opt_state, x_train[idx], y_train[idx])
    return params, x_test, y_test


def main() -> float:
    t0 = time.perf_counter()
    params, x_test, y_test = train()
    logits = stablejit.jit(lambda x: forward(params, x))  # weights closed over: constants
    exported = export.export(logits)(stablejit.ShapeDtypeStruct(x_test.shape, np.float32))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.sjx")
        with open(path, "wb") as f:
            f.write(exported.serialize(executables=True))
        print(f"exported {exported} to {path} ({os.path.getsize(path):,} bytes)")
        np.save(os.path.join(d, "x.npy"), x_test)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        subprocess.run([sys.executable, "-c", SERVER, path, os.path.join(d, "x.npy"),
                        os.path.join(d, "out.npy")], cwd=d, env=env, check=True)
        served = np.load(os.path.join(d, "out.npy"))
    here = np.asarray(logits(x_test))
    assert np.array_equal(served.view(np.uint32), here.view(np.uint32)), \
        "the served logits differ from this process's"
    accuracy = float(np.mean(np.argmax(served, -1) == y_test))
    print(f"served logits equal this process's bit for bit; test accuracy {accuracy:.4f}; "
          f"{time.perf_counter() - t0:.1f} s in all")
    return accuracy


if __name__ == "__main__":
    main()
