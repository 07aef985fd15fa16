"""Training steps written the way a new user writes them, in lazy(), eagerly and under
stablejit.jit, in the same process (issue 30: "tried as a new user would").

    python benchmarks/lazy_new_steps.py

Three steps that benchmarks/lazy.py's MLP and digits steps do not cover:
  - linear regression with hand-written momentum (grad over two arguments, `mean`,
    `** 2`, a list of velocities);
  - logistic regression on a slice of the data chosen by a Python int (`sigmoid`,
    `clip`, `log`, value_and_grad);
  - a two-layer net with dict parameters (`one_hot`, `log_softmax`, an update by
    tree_map).
Each step's three results are compared first, to float tolerance: lazy() and jit
compile a step's ops together, and XLA may fuse and fold them differently from one op
at a time (the dict net's update differs from eager's in the last bit). Medians per call in
alternating batches; lazy / eager is the issue's "never slower than plain eager".
"""

from __future__ import annotations

import numpy as np
import stablejit
import stablejit.numpy as snp
from common import paired_per_call
from stablejit import nn
from stablejit.tree_util import tree_leaves, tree_map

rng = np.random.default_rng(0)
X = snp.asarray(rng.standard_normal((256, 16)).astype(np.float32))
Y = snp.asarray(rng.standard_normal((256, 1)).astype(np.float32))
XC = snp.asarray(rng.standard_normal((512, 32)).astype(np.float32))
YC = snp.asarray((rng.random(512) > 0.5).astype(np.float32))
LABELS = snp.asarray(rng.integers(0, 4, 512).astype(np.int32))


def linreg(w, b, v):
    def loss(w, b):
        r = X @ w + b - Y
        return snp.mean(r ** 2)
    gw, gb = stablejit.grad(loss, argnums=(0, 1))(w, b)
    v = [0.9 * v[0] + gw, 0.9 * v[1] + gb]
    return w - 0.01 * v[0], b - 0.01 * v[1], v


def logreg(w, i):
    xb, yb = XC[i * 64:(i + 1) * 64], YC[i * 64:(i + 1) * 64]

    def loss(w):
        p = snp.clip(nn.sigmoid(xb @ w), 1e-6, 1 - 1e-6)
        return -snp.mean(yb * snp.log(p) + (1 - yb) * snp.log(1 - p))
    value, g = stablejit.value_and_grad(loss)(w)
    return w - 0.1 * g, value


def dict_net(params):
    def loss(p):
        h = snp.tanh(XC @ p["w1"] + p["b1"])
        logits = h @ p["w2"] + p["b2"]
        return -snp.mean(snp.sum(nn.one_hot(LABELS, 4) * nn.log_softmax(logits), axis=-1))
    g = stablejit.grad(loss)(params)
    return tree_map(lambda p, d: p - 0.05 * d, params, g)


def _cases():
    params = {"w1": snp.asarray(rng.standard_normal((32, 64)).astype(np.float32) * 0.1),
              "b1": snp.zeros(64),
              "w2": snp.asarray(rng.standard_normal((64, 4)).astype(np.float32) * 0.1),
              "b2": snp.zeros(4)}
    return [("linear regression, momentum", linreg,
             (snp.zeros((16, 1)), snp.zeros((1,)), [snp.zeros((16, 1)), snp.zeros((1,))]),
             stablejit.jit(linreg)),
            ("logistic regression, a slice", logreg, (snp.zeros(32), 3),
             stablejit.jit(logreg, static_argnums=1)),
            ("dict params, tree_map update", dict_net, (params,), stablejit.jit(dict_net))]


def main() -> None:
    print(f"{'step':32s} {'lazy':>9s} {'eager':>9s} {'jit':>9s} {'lazy/eager':>11s} "
          f"{'lazy/jit':>9s}   (us, medians)")
    for name, step, args, jitted in _cases():
        def lazy(step=step, args=args):
            with stablejit.lazy():
                out = step(*args)
            return out

        outs = [tree_leaves(lazy()), tree_leaves(step(*args)), tree_leaves(jitted(*args))]
        for a, b, c in zip(*outs, strict=True):
            for other in (a, c):
                np.testing.assert_allclose(np.asarray(other), np.asarray(b), rtol=2e-5,
                                           atol=1e-6)
        t_lazy, t_eager, t_jit = paired_per_call(
            [lambda f=f: tree_leaves(f())[0].block_until_ready()
             for f in (lazy, lambda s=step, a=args: s(*a),
                       lambda j=jitted, a=args: j(*a))], inner=10)
        print(f"{name:32s} {t_lazy * 1e6:9.1f} {t_eager * 1e6:9.1f} {t_jit * 1e6:9.1f} "
              f"{t_lazy / t_eager:10.2f}x {t_lazy / t_jit:8.2f}x")


if __name__ == "__main__":
    main()
