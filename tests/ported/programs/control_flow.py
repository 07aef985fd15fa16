"""Control flow and logical operators with jit.

Port of docs/control-flow.md (jax-ml/jax): Python loops unrolled under `jit`, `jit` with
`static_argnames` (for a Python `if` on a value, a `range(n)` loop and an array length),
`lax.cond`, `lax.switch`, `lax.select`, `jnp.where`, `lax.while_loop` and `lax.fori_loop`
on Python ints, `lax.scan` (a running sum, as in the `lax.scan` documentation), logical
operators under `jit`, and `grad` through a Python `if` without `jit`.
"""

import jax.numpy as jnp
from jax import grad, jit, lax


@jit
def f_unrolled(x):
    for _ in range(3):
        x = 2 * x
    return x


@jit
def g_unrolled(x):
    y = 0.
    for i in range(x.shape[0]):
        y = y + x[i]
    return y


def f_if(x):
    if x < 3:
        return 3. * x ** 2
    else:
        return -4 * x


def f_loop(x, n):
    y = 0.
    for i in range(n):
        y = y + x[i]
    return y


def example_fun(length, val):
    return jnp.ones((length,)) * val


def python_check_positive_even(x):
    is_even = x % 2 == 0
    # `and` short-circuits, so when `is_even` is `False`, `x > 0` is not evaluated.
    return is_even and (x > 0)


@jit
def jax_check_positive_even(x):
    is_even = x % 2 == 0
    # `logical_and` does not short circuit, so `x > 0` is always evaluated.
    return jnp.logical_and(is_even, x > 0)


def cumulative_sum(xs):
    def step(carry, x):
        carry = carry + x
        return carry, carry
    return lax.scan(step, 0., xs)


def main():
    static_if = jit(f_if, static_argnames='x')
    static_loop = jit(f_loop, static_argnames='n')
    good_example_jit = jit(example_fun, static_argnames='length')

    operand = jnp.array([0.])
    branches = [lambda x: x + 1, lambda x: x - 1, lambda x: x * 10]
    total, running = cumulative_sum(jnp.arange(5.))
    return {
        "unrolled": (f_unrolled(3), g_unrolled(jnp.array([1., 2., 3.]))),
        "static_if": static_if(2.),
        "static_loop": static_loop(jnp.array([2., 3., 4.]), 2),
        "static_length": (good_example_jit(10, 4), good_example_jit(5, 4)),
        "cond": (lax.cond(True, lambda x: x+1, lambda x: x-1, operand),
                 lax.cond(False, lambda x: x+1, lambda x: x-1, operand)),
        "switch": [lax.switch(i, branches, jnp.array(2.)) for i in range(3)],
        "select": lax.select(jnp.array([True, False]), jnp.array([1., 2.]),
                             jnp.array([3., 4.])),
        "where": jnp.where(jnp.arange(4) > 1, jnp.arange(4.), -1.),
        "while_loop": lax.while_loop(lambda x: x < 10, lambda x: x+1, 0),
        "fori_loop": lax.fori_loop(0, 10, lambda i, x: x+i, 0),
        "scan": (total, running),
        "logical": (python_check_positive_even(24), jax_check_positive_even(24),
                    jax_check_positive_even(jnp.array([-1, 2, 5]))),
        "grad_python_if": (grad(f_if)(2.), grad(f_if)(4.)),
    }
