"""Automatic differentiation: grad, value_and_grad, jvp, vjp, Jacobians and Hessians.

Port of docs/automatic-differentiation.md and docs/advanced-autodiff.md (jax-ml/jax):
`grad` of `jnp.tanh` stacked three times, the derivatives of a cubic, logistic
regression (`grad` with `argnums`, a dict of parameters, `value_and_grad`, a finite
difference check, `jvp` and `vjp` of the loss), Jacobians with `jacfwd` and `jacrev`,
the Hessian as `jacfwd(jacrev(f))`, Hessian-vector products by forward-over-reverse, and
the TD(0) update whose target goes through `jax.lax.stop_gradient`. All of it runs
under one `jax.jit`, so that the test compiles one program rather than one per operation.
"""

import jax
import jax.numpy as jnp
from jax import grad, jacfwd, jacrev, jvp, random, vjp


def sigmoid(x):
    return 0.5 * (jnp.tanh(x / 2) + 1)


# Outputs probability of a label being true.
def predict(W, b, inputs):
    return sigmoid(jnp.dot(inputs, W) + b)


def hessian(f):
    return jacfwd(jacrev(f))


def hvp(f, x, v):
    return jvp(grad(f), (x,), (v,))[1]


# Value function and initial parameters
value_fn = lambda theta, state: jnp.dot(theta, state)


def td_loss(theta, s_tm1, r_t, s_t):
    v_tm1 = value_fn(theta, s_tm1)
    target = r_t + value_fn(theta, s_t)
    return -0.5 * ((jax.lax.stop_gradient(target) - v_tm1) ** 2)


def examples():
    key = random.key(0)
    grad_tanh = grad(jnp.tanh)
    tanh_derivatives = (grad_tanh(2.0), grad(grad(jnp.tanh))(2.0),
                        grad(grad(grad(jnp.tanh)))(2.0))

    f = lambda x: x**3 + 2*x**2 - 3*x + 1
    dfdx = jax.grad(f)
    d2fdx = jax.grad(dfdx)
    d3fdx = jax.grad(d2fdx)
    d4fdx = jax.grad(d3fdx)
    cubic = (dfdx(1.), d2fdx(1.), d3fdx(1.), d4fdx(1.))

    # Build a toy dataset.
    inputs = jnp.array([[0.52, 1.12, 0.77],
                        [0.88, -1.08, 0.15],
                        [0.52, 0.06, -1.30],
                        [0.74, -2.49, 1.39]])
    targets = jnp.array([True, True, False, True])

    # Training loss is the negative log-likelihood of the training examples.
    def loss(W, b):
        preds = predict(W, b, inputs)
        label_probs = preds * targets + (1 - preds) * (1 - targets)
        return -jnp.sum(jnp.log(label_probs))

    # Initialize random model coefficients
    key, W_key, b_key = random.split(key, 3)
    W = random.normal(W_key, (3,))
    b = random.normal(b_key, ())

    # Differentiate `loss` with respect to the first positional argument:
    W_grad = grad(loss, argnums=0)(W, b)
    # Since argnums=0 is the default, this does the same thing:
    W_grad_default = grad(loss)(W, b)
    b_grad = grad(loss, 1)(W, b)
    W_grad2, b_grad2 = grad(loss, (0, 1))(W, b)

    def loss2(params_dict):
        preds = predict(params_dict['W'], params_dict['b'], inputs)
        label_probs = preds * targets + (1 - preds) * (1 - targets)
        return -jnp.sum(jnp.log(label_probs))

    dict_grads = grad(loss2)({'W': W, 'b': b})
    loss_value, Wb_grad = jax.value_and_grad(loss, (0, 1))(W, b)

    # Set a step size for finite differences calculations
    eps = 1e-4
    b_grad_numerical = (loss(W, b + eps / 2.) - loss(W, b - eps / 2.)) / eps

    # Directional derivatives: jvp along a random direction, and vjp of a unit cotangent.
    key, subkey = random.split(key)
    v = random.normal(subkey, W.shape)
    loss_at_W, directional = jvp(lambda W: loss(W, b), (W,), (v,))
    _, f_vjp = vjp(lambda W: loss(W, b), W)

    f_vec = lambda W: predict(W, b, inputs)
    J_fwd = jacfwd(f_vec)(W)
    J_rev = jacrev(f_vec)(W)

    def quad(x):
        return jnp.dot(x, x) + jnp.sum(jnp.sin(x) * x[0])

    x = jnp.array([1., 2., 3.])
    theta = jnp.array([0.1, -0.1, 0.])
    s_tm1 = jnp.array([1., 2., -1.])
    r_t = jnp.array(1.)
    s_t = jnp.array([2., 1., 0.])
    return {
        "tanh_derivatives": tanh_derivatives, "cubic": cubic,
        "W_grad": W_grad, "W_grad_default": W_grad_default, "b_grad": b_grad,
        "Wb_grads": (W_grad2, b_grad2), "dict_grads": dict_grads,
        "value_and_grad": (loss_value, Wb_grad),
        "b_grad_numerical": b_grad_numerical,
        "jvp": (loss_at_W, directional), "vjp": f_vjp(1.0),
        "jacfwd": J_fwd, "jacrev": J_rev,
        "hessian": hessian(quad)(x), "hvp": hvp(quad, x, jnp.array([1., 0., -1.])),
        "td_grad": jax.grad(td_loss)(theta, s_tm1, r_t, s_t),
    }


def main():
    # The notebook runs these eagerly; one jit keeps the number of compilations small.
    return jax.jit(examples)()
