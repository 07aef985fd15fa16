"""stablejit.example_libraries: jax.example_libraries' two small libraries, `stax` (a
neural-network layer library of (init_fun, apply_fun) pairs) and `optimizers` (pytree
optimizers as (init_fun, update_fun, get_params) triples), with their names, signatures
and numbers, so that JAX programs written against them (JAX's own mnist_classifier.py,
mnist_vae.py ...) port by changing the import."""

from . import optimizers, stax

__all__ = ["optimizers", "stax"]
