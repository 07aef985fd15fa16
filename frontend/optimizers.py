"""stablejit.nn's optimisers: sgd (with momentum, Nesterov) and adam as Optimizer(init,
update) pairs whose update is one jitted program, and apply_updates."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from . import initializers
from . import numpy as snp
from .errors import TracerBoolConversionError, TracerConversionError
from .jit import jit
from .promotion import default_float
from .tree import flatten, tree_map, unflatten

# `import stablejit.nn.initializers` finds the module here (as `import os.path` finds
# posixpath): jax.nn.initializers is a module, and stablejit.nn is one file
sys.modules[f"{__name__}.initializers"] = initializers

# ---- optimisers ----------------------------------------------------------------------------


class Optimizer(NamedTuple):
    """init(params) -> state; update(grads, state, params) -> (new params, new state)."""

    init: Callable
    update: Callable


def _schedule(learning_rate, step):
    return learning_rate(step) if callable(learning_rate) else learning_rate


def _jitted_update(update: Callable) -> Callable:
    """An optimizer's update as one jitted program: eagerly one dispatch instead of a
    dozen per parameter, in a lazy() block one graph entry, inside jit inlined. A
    learning-rate schedule that branches in Python on the step count cannot be traced;
    such an update runs as written."""
    jitted = jit(update)
    traceable = [True]

    @functools.wraps(update)
    def run(grads, state, params):
        if traceable[0]:
            try:
                return jitted(grads, state, params)
            except (TracerBoolConversionError, TracerConversionError):
                traceable[0] = False
        return update(grads, state, params)

    return run


def sgd(learning_rate=1e-2, momentum: float = 0.0, nesterov: bool = False) -> Optimizer:
    """Stochastic gradient descent, with (heavy-ball or Nesterov) momentum when
    momentum > 0. learning_rate may be a function of the step count.

    Example:
        >>> opt = stablejit.nn.sgd(learning_rate=0.1)
        >>> params = {'w': snp.asarray([1.0, 2.0])}
        >>> state = opt.init(params)
        >>> params, state = opt.update({'w': snp.asarray([1.0, -1.0])}, state, params)
        >>> params['w']
        Tensor<f32[2] xla:host:0>
        [0.9, 2.1]
    """

    def init(params):
        step = snp.asarray(np.zeros((), np.int32))
        if momentum == 0:
            return (step,)
        return (step, tree_map(snp.zeros_like, params))

    def update(grads, state, params):
        step = state[0]
        lr = _schedule(learning_rate, step)
        if momentum == 0:
            new = tree_map(lambda p, g: p - lr * g, params, grads)
            return new, (step + 1,)
        velocity = tree_map(lambda v, g: momentum * v + g, state[1], grads)
        if nesterov:
            direction = tree_map(lambda v, g: g + momentum * v, velocity, grads)
        else:
            direction = velocity
        new = tree_map(lambda p, d: p - lr * d, params, direction)
        return new, (step + 1, velocity)

    return Optimizer(init, _jitted_update(update))


def adam(learning_rate=1e-3, b1: float = 0.9, b2: float = 0.999,
         eps: float = 1e-8) -> Optimizer:
    """Adam (Kingma & Ba): state (step, first moments, second moments).

    Example:
        >>> opt = stablejit.nn.adam(learning_rate=0.1)
        >>> params = {'w': snp.asarray([1.0, 2.0])}
        >>> params, state = opt.update({'w': snp.asarray([1.0, -1.0])}, opt.init(params), params)
        >>> params['w']            # adam's first step moves each weight by the learning rate
        Tensor<f32[2] xla:host:0>
        [0.9000007, 2.0999992]
    """

    def init(params):
        zeros = tree_map(snp.zeros_like, params)
        return (snp.asarray(np.zeros((), np.int32)), zeros, tree_map(snp.zeros_like, params))

    def update(grads, state, params):
        step, m, v = state
        t = step + 1
        m = tree_map(lambda m_, g: b1 * m_ + (1 - b1) * g, m, grads)
        v = tree_map(lambda v_, g: b2 * v_ + (1 - b2) * (g * g), v, grads)
        tf = snp.astype(t, default_float())
        # bias corrections folded into the step size
        lr = _schedule(learning_rate, step)
        alpha = lr * snp.sqrt(1 - b2 ** tf) / (1 - b1 ** tf)
        leaves_p, td = flatten(params)
        leaves_m, _ = flatten(m)
        leaves_v, _ = flatten(v)
        new = [p - snp.astype(alpha, p.dtype, copy=False) * mi / (snp.sqrt(vi) + eps)
               for p, mi, vi in zip(leaves_p, leaves_m, leaves_v, strict=True)]
        return unflatten(td, new), (t, m, v)

    return Optimizer(init, _jitted_update(update))


def apply_updates(params, updates):
    """params + updates, leaf by leaf."""
    return tree_map(lambda p, u: p + u, params, updates)
