"""Custom derivative rules for JAX-transformable Python functions.

Port of docs/notebooks/Custom_derivative_rules_for_Python_code.md (jax-ml/jax): a
`custom_jvp` with `defjvp` and with `defjvps`, the numerically stable `log1pexp`, a
`custom_vjp` with `defvjp`, gradient clipping with `custom_vjp` (None cotangents for
non-differentiable arguments), and the implicit-function gradient of a fixed point
solver (`custom_vjp` with `nondiff_argnums`, `while_loop`, `vjp` of the update) used for
Newton's square root, differentiated twice.
"""

from functools import partial

import jax
import jax.numpy as jnp
from jax import custom_jvp, custom_vjp, grad, jvp, vjp


@custom_jvp
def f(x, y):
    return jnp.sin(x) * y


@f.defjvp
def f_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    primal_out = f(x, y)
    tangent_out = jnp.cos(x) * x_dot * y + jnp.sin(x) * y_dot
    return primal_out, tangent_out


@custom_jvp
def f_defjvps(x, y):
    return jnp.sin(x) * y


f_defjvps.defjvps(lambda x_dot, primal_out, x, y: jnp.cos(x) * x_dot * y,
                  lambda y_dot, primal_out, x, y: jnp.sin(x) * y_dot)


@custom_jvp
def log1pexp(x):
    return jnp.log(1. + jnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    ans = log1pexp(x)
    ans_dot = (1 - 1/(1 + jnp.exp(x))) * x_dot
    return ans, ans_dot


@custom_vjp
def g(x, y):
    return jnp.sin(x) * y


def g_fwd(x, y):
    # Returns primal output and residuals to be used in backward pass by g_bwd.
    return g(x, y), (jnp.cos(x), jnp.sin(x), y)


def g_bwd(res, out_bar):
    cos_x, sin_x, y = res  # Gets residuals computed in g_fwd
    return (cos_x * out_bar * y, sin_x * out_bar)


g.defvjp(g_fwd, g_bwd)


@custom_vjp
def clip_gradient(lo, hi, x):
    return x  # identity function


def clip_gradient_fwd(lo, hi, x):
    return x, (lo, hi)  # save bounds as residuals


def clip_gradient_bwd(res, g):
    lo, hi = res
    return (None, None, jnp.clip(g, lo, hi))  # use None to indicate zero cotangents for lo and hi


clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)


@partial(custom_vjp, nondiff_argnums=(0,))
def fixed_point(f, a, x_guess):
    def cond_fun(carry):
        x_prev, x = carry
        return jnp.abs(x_prev - x) > 1e-6

    def body_fun(carry):
        _, x = carry
        return x, f(a, x)

    _, x_star = jax.lax.while_loop(cond_fun, body_fun, (x_guess, f(a, x_guess)))
    return x_star


def fixed_point_fwd(f, a, x_init):
    x_star = fixed_point(f, a, x_init)
    return x_star, (a, x_star)


def fixed_point_rev(f, res, x_star_bar):
    a, x_star = res
    _, vjp_a = vjp(lambda a: f(a, x_star), a)
    a_bar, = vjp_a(fixed_point(partial(rev_iter, f),
                               (a, x_star, x_star_bar),
                               x_star_bar))
    return a_bar, jnp.zeros_like(x_star)


def rev_iter(f, packed, u):
    a, x_star, x_star_bar = packed
    _, vjp_x = vjp(lambda x: f(a, x), x_star)
    return x_star_bar + vjp_x(u)[0]


fixed_point.defvjp(fixed_point_fwd, fixed_point_rev)


def newton_sqrt(a):
    update = lambda a, x: 0.5 * (x + a / x)
    return fixed_point(update, a, a)


def main():
    y, y_dot = jvp(f, (2., 3.), (1., 0.))
    y2, y2_dot = jvp(f_defjvps, (2., 3.), (1., 0.))
    t = lambda x: clip_gradient(-0.75, 0.75, jnp.sin(x))
    xs = jnp.linspace(-3., 3., 9)
    return {
        "f": f(2., 3.), "f_jvp": (y, y_dot), "f_grad": grad(f)(2., 3.),
        "f_defjvps_jvp": (y2, y2_dot), "f_defjvps_grad": grad(f_defjvps, argnums=(0, 1))(2., 3.),
        "log1pexp_grad_at_100": grad(log1pexp)(100.),
        "log1pexp_jit_grad": jax.jit(grad(log1pexp))(3.),
        "log1pexp_vmap": jax.vmap(jax.jit(grad(log1pexp)))(jnp.arange(3.)),
        "g": g(2., 3.), "g_grad": grad(g, argnums=(0, 1))(2., 3.),
        "clipped": jax.vmap(grad(t))(xs), "unclipped": jax.vmap(grad(jnp.sin))(xs),
        "sqrt2": newton_sqrt(2.),
        "sqrt_grads": (grad(newton_sqrt)(2.), grad(grad(newton_sqrt))(2.)),
    }
