"""Newton's method and a Hessian-based BFGS method with a Wolfe line search.

Port of examples/newton_method.py and examples/bfgs_method.py (jax-ml/jax), run on the
examples' test function (Freudenstein and Roth's, in four variables) from their starting
point: eager `jax.grad` and `jax.hessian` of a Python lambda indexing `x[0]..x[3]`,
`jax.numpy.linalg.inv` and `norm`, `.dot`, `.T`, `reshape(1, -1)`, in-place `+=` on
arrays, and Python `while` loops and `if`s on concrete array values. The verbose printing
becomes a returned trace of iterates; both loops are capped at three iterations.
"""

from collections.abc import Callable, Iterable

import jax

is_float = lambda x: isinstance(x, (float, int))

ini = [1., -1., 1., -1.]

# Jitted here (a plain lambda in the examples): eager grad and hessian of the polynomial
# would compile each of its operations separately, here and in stablejit.
g = jax.jit(lambda x: ((-13 + x[0] + ((5 - x[1])*x[1] - 2)*x[1])**2
               + (-29 + x[0] + ((x[1] + 1)*x[1] - 14)*x[1])**2
               + (-13 + x[2] + ((5 - x[3])*x[3] - 2)*x[3])**2
               + (-29 + x[2] + ((x[3] + 1)*x[3] - 14)*x[3])**2))


def wolfe(fun: Callable,
          res0,
          x_0: Iterable,
          dk,
          c1: float = 0.3,
          c2: float = 0.5,
          alphas: float = 0.,
          alphae: float = 2.,
          eps: float = 1e-3) -> float:
    '''
    Step size finder.
    '''
    assert 0 < c1 < c2 < 1
    assert 0 <= alphas < alphae
    assert eps > 0
    alpha = 1
    f0 = fun(x_0)
    while alphas < alphae:
        x = x_0 + (alpha*dk)[0]
        f1 = fun(x)
        if f1 <= f0 + c1*alpha*res0.dot(dk.T):
            res1 = jax.grad(fun)(x)
            if res1.dot(dk.T) >= c2*res0.dot(dk.T):
                break
            else:
                alphas = alpha
                alpha = 0.5 * (alphas + alphae)
        else:
            alphae = alpha
            alpha = 0.5 * (alphas + alphae)
        if jax.numpy.abs(alphas - alphae) < eps:
            break
    return alpha


def newton(fun: Callable,
           x_0: Iterable,
           epsilon: float = 1e-6,
           k: int = 0,
           max_iter: int = 3):
    assert all(list(map(is_float, x_0)))
    x_0 = jax.numpy.array(x_0)
    trace = []
    while k < max_iter:
        gradient = jax.grad(fun)(x_0)
        hessian = jax.hessian(fun)(x_0)
        dk = -jax.numpy.linalg.inv(hessian).dot(gradient.T).reshape(1, -1)
        trace.append((x_0, fun(x_0), k))
        if jax.numpy.linalg.norm(dk) >= epsilon:
            alpha = wolfe(fun, gradient, x_0, dk)
            x_0 += alpha * dk[0]
            k += 1
        else:
            break
    return x_0, trace


def bfgs(fun: Callable,
         x_0: Iterable,
         epsilon: float = 1e-6,
         k: int = 0,
         max_iter: int = 3):
    '''
    Hessian-based BFGS Method.
    '''
    assert all(list(map(is_float, x_0)))
    x_0 = jax.numpy.array(x_0)
    trace = []
    while k < max_iter:
        gradient = jax.grad(fun)(x_0)
        hessian = jax.hessian(fun)(x_0)
        dk = -jax.numpy.linalg.inv(hessian).dot(gradient.T).reshape(1, -1)
        trace.append((x_0, fun(x_0), k))
        if jax.numpy.linalg.norm(dk) >= epsilon:
            alpha = wolfe(fun, gradient, x_0, dk)
            delta = alpha * dk  # sk
            x_0 += delta[0]
            yk = jax.grad(fun)(x_0) - gradient
            hess_delta = hessian.dot(delta.T)
            if yk.all != 0:
                hessian += ((yk.T).dot(yk) / delta.dot(yk.T)
                            - (hess_delta).dot(hess_delta.T) / delta.dot(hess_delta))
            k += 1
        else:
            break
    return x_0, trace


def main():
    x_newton, newton_trace = newton(g, ini)
    x_bfgs, bfgs_trace = bfgs(g, ini)
    return {"newton": x_newton, "newton_trace": newton_trace,
            "bfgs": x_bfgs, "bfgs_trace": bfgs_trace}
