"""optimizers: first-order optimizers over pytrees, as jax.example_libraries.optimizers.

Each optimizer is a triple (init_fun, update_fun, get_params):

    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    state = opt_init(params)
    state = opt_update(step, grads, state)   # step: the iteration number i
    params = get_params(state)

`optimizer` turns a definition on one array into one on pytrees; step sizes are numbers
or schedules (functions of i). The updates are jax's formulas, so the same gradients
give the same parameters.
"""

from __future__ import annotations

import functools
from collections import namedtuple
from collections.abc import Callable

from .. import numpy as snp
from .. import tree
from ..tree import register_pytree_node

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
# (its tree structures are metadata: a state is a pytree of its packed arrays)
register_pytree_node(OptimizerState, lambda s: ((s.packed_state,), (s.tree_def,
                                                                    s.subtree_defs)),
                     lambda aux, children: OptimizerState(children[0], *aux))

Optimizer = namedtuple("Optimizer", ["init_fn", "update_fn", "params_fn"])


def _with_zeros(n: int) -> Callable:
    """An init that keeps x0 and n zero accumulators shaped as it."""
    return lambda x0: (x0, *(snp.zeros_like(x0) for _ in range(n)))


def _first(state):
    return state[0]
Schedule = Callable  # (a step size as a function of the step number)


def optimizer(opt_maker: Callable) -> Callable:
    """Lift an optimizer on single arrays, opt_maker(*args) -> (init, update, get_params),
    to one on pytrees of arrays: each leaf has its own state (a pytree too)."""
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, treedef = tree.flatten(x0_tree)
            states = [tree.flatten(init(x0)) for x0 in x0_flat]
            return OptimizerState([s[0] for s in states], treedef, [s[1] for s in states])

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            packed, treedef, subtrees = opt_state
            grad_flat, grad_def = tree.flatten(grad_tree)
            if grad_def != treedef:
                raise TypeError(
                    f"optimizer update: the gradient's tree structure {grad_def} differs "
                    f"from the parameters' {treedef} given to init; pass gradients of the "
                    f"parameters as get_params returns them")
            states = [tree.unflatten(d, s) for d, s in zip(subtrees, packed, strict=True)]
            new = [tree.flatten(update(i, g, s)) for g, s in zip(grad_flat, states,
                                                                 strict=True)]
            for (_, after), before in zip(new, subtrees, strict=True):
                if after != before:
                    raise TypeError(
                        f"optimizer update: the update function changed a state's tree "
                        f"structure from {before} to {after}; it must return the structure "
                        f"init made")
            return OptimizerState([n[0] for n in new], treedef, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            packed, treedef, subtrees = opt_state
            states = [tree.unflatten(d, s) for d, s in zip(subtrees, packed, strict=True)]
            return tree.unflatten(treedef, [get_params(s) for s in states])

        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: x - step_size(i) * g."""
    step_size = make_schedule(step_size)
    return (lambda x0: x0), (lambda i, g, x: x - step_size(i) * g), (lambda x: x)


@optimizer
def momentum(step_size, mass: float):
    """Heavy-ball momentum: v = mass * v + g; x -= step_size(i) * v."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity
    return _with_zeros(1), update, _first


@optimizer
def nesterov(step_size, mass: float):
    """Nesterov momentum: v = mass * v + g; x -= step_size(i) * (mass * v + g)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity
    return _with_zeros(1), update, _first


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad with momentum on the scaled gradient."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + snp.square(g)
        inv = snp.where(g_sq > 0, 1.0 / snp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * inv) + momentum * m
        return x - step_size(i) * m, g_sq, m
    return _with_zeros(2), update, _first


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: a running mean of squared gradients scales each step."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq = state
        avg_sq = avg_sq * gamma + snp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / snp.sqrt(avg_sq + eps), avg_sq
    return _with_zeros(1), update, _first


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum on the scaled step."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq, mom = state
        avg_sq = avg_sq * gamma + snp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / snp.sqrt(avg_sq + eps)
        return x - mom, avg_sq, mom
    return _with_zeros(2), update, _first


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba), with bias-corrected moments."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * snp.square(g) + b2 * v
        m_hat = m / (1 - snp.asarray(b1, m.dtype) ** (i + 1))
        v_hat = v / (1 - snp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * m_hat / (snp.sqrt(v_hat) + eps), m, v
    return _with_zeros(2), update, _first


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax: Adam with the infinity norm of past gradients."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = snp.maximum(b2 * u, snp.abs(g))
        return x - (step_size(i) / (1 - b1 ** (i + 1))) * m / (u + eps), m, u
    return _with_zeros(2), update, _first


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al.): per-axis accumulators of squared gradients, whose minimum over
    the axes bounds each entry's, with momentum."""
    step_size = make_schedule(step_size)

    def along(ndim: int, v, axis: int):  # v laid along `axis` of an ndim array
        return snp.reshape(v, tuple(-1 if a == axis else 1 for a in range(ndim)))

    def init(x0):
        shape = snp.shape(x0)
        x0 = snp.atleast_1d(x0)
        return x0, snp.zeros_like(x0), [snp.zeros(n, dtype=x0.dtype) for n in x0.shape], shape

    def update(i, g, state):
        x, m, vs, shape = state
        g = snp.reshape(g, x.shape)
        accum = functools.reduce(snp.minimum, [along(g.ndim, v, a) for a, v in
                                               enumerate(vs)]) + snp.square(g)
        inv = snp.where(accum > 0, 1.0 / snp.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * inv) + momentum * m
        vs = [snp.max(accum, axis=tuple(b for b in range(x.ndim) if b != a))
              for a in range(x.ndim)]
        return x - step_size(i) * m, m, vs, shape
    return init, update, (lambda state: snp.reshape(state[0], state[3]))


# ---- learning-rate schedules: functions of the iteration number i ------------------------

def constant(step_size) -> Schedule:
    """The same step size at every step."""
    return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate) -> Schedule:
    """step_size * decay_rate ** (i / decay_steps)."""
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False) -> Schedule:
    """step_size / (1 + decay_rate * i / decay_steps), with i / decay_steps floored when
    staircase."""
    if staircase:
        return lambda i: step_size / (1 + decay_rate * snp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0) -> Schedule:
    """From step_size to final_step_size over decay_steps steps along (1 - i / decay_steps)
    ** power, then final_step_size."""
    def schedule(step_num):
        step_num = snp.minimum(step_num, decay_steps)
        mult = (1 - step_num / decay_steps) ** power
        return mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries, values) -> Schedule:
    """values[k] while i has passed k of the boundaries."""
    boundaries, values = snp.asarray(boundaries), snp.asarray(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("piecewise_constant: boundaries and values must be sequences")
    if boundaries.shape[0] != values.shape[0] - 1:
        raise ValueError(f"piecewise_constant: {boundaries.shape[0]} boundaries need "
                         f"{boundaries.shape[0] + 1} values, got {values.shape[0]}")
    return lambda i: values[snp.sum(i > boundaries)]


def make_schedule(scalar_or_schedule) -> Schedule:
    """A schedule as it is, a number as a constant schedule."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if snp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(f"a step size is a number or a schedule (a function of the step "
                    f"number), got {type(scalar_or_schedule).__name__}")


# ---- utilities -----------------------------------------------------------------------------

def l2_norm(pytree):
    """The L2 norm of all the leaves of a pytree together."""
    leaves = tree.leaves(pytree)
    return snp.sqrt(sum(snp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """The gradients scaled down to an L2 norm of max_norm where theirs is larger."""
    norm = l2_norm(grad_tree)
    return tree.map(lambda g: snp.where(norm < max_norm, g, g * (max_norm / norm)),
                    grad_tree)


class JoinPoint:
    """A marker in an unpacked optimizer state: the subtree of one parameter's state."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):  # (so that unpacked states can be saved and read back)
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """An OptimizerState as a pytree of plain containers (for saving, e.g. with pickle);
    pack_optimizer_state reverses it."""
    packed, treedef, subtrees = opt_state
    states = [JoinPoint(tree.unflatten(d, s)) for d, s in zip(subtrees, packed, strict=True)]
    return tree.unflatten(treedef, states)


def pack_optimizer_state(marked_pytree):
    """The OptimizerState that unpack_optimizer_state unpacked."""
    joins, treedef = tree.flatten(marked_pytree, is_leaf=lambda x: isinstance(x, JoinPoint))
    if not all(isinstance(j, JoinPoint) for j in joins):
        raise TypeError("pack_optimizer_state: expected what unpack_optimizer_state made")
    flat = [tree.flatten(j.subtree) for j in joins]
    return OptimizerState([f[0] for f in flat], treedef, [f[1] for f in flat])


__all__ = ["JoinPoint", "Optimizer", "OptimizerState", "adagrad", "adam",
           "adamax", "clip_grads", "constant", "exponential_decay", "inverse_time_decay",
           "l2_norm", "make_schedule", "momentum", "nesterov", "optimizer",
           "pack_optimizer_state", "piecewise_constant", "polynomial_decay", "rmsprop",
           "rmsprop_momentum", "sgd", "sm3", "unpack_optimizer_state"]


def __dir__() -> list[str]:  # dir(), help() and tab completion show the public names only
    return sorted(__all__)
