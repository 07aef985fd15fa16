"""PCA from scratch: SVD under jit with a static argument, batched with vmap.

Port of examples/pca_from_scratch.py (jax-ml/jax): `partial(jit, static_argnames=[...])`
with a keyword default, `jnp.linalg.svd(full_matrices=False)`, slicing by a static
count, explained variance ratios, data with a hidden structure made by
`jax.random.normal` and a random rotation from `jnp.linalg.qr`, `.block_until_ready()`,
and `jit(vmap(pca, in_axes=(0, None)), static_argnames=...)` over a batch of data sets.
Sizes are shrunk and the timing and plotting are dropped.
"""

from functools import partial

import jax
import jax.numpy as jnp
from jax import jit, vmap


@partial(jit, static_argnames=['n_components'])
def pca(X: jnp.ndarray, n_components: int = 2):
    """PCA: the projected data, the components and their explained variance ratios."""
    mean = jnp.mean(X, axis=0)
    X_centered = X - mean

    # SVD via XLA
    U, S, Vt = jnp.linalg.svd(X_centered, full_matrices=False)

    # Truncate components
    components = Vt[:n_components]

    # Project data
    X_projected = X_centered @ components.T

    # Calculate explained variance
    explained_variance = S**2 / (X.shape[0] - 1)
    explained_variance_ratio = explained_variance[:n_components] / jnp.sum(explained_variance)

    return X_projected, components, explained_variance_ratio


# Vectorizing over a batch of distinct datasets
batched_pca = jit(vmap(pca, in_axes=(0, None)), static_argnames=['n_components'])


def main():
    key = jax.random.PRNGKey(42)
    n_samples, n_features = 200, 6

    # Structured data: the first two features have large variance, then a random rotation
    base_data = jax.random.normal(key, (n_samples, n_features))
    scales = jnp.array([10.0, 5.0] + [1.0] * (n_features - 2))
    scaled_data = base_data * scales

    key, subkey = jax.random.split(key)
    random_matrix = jax.random.normal(subkey, (n_features, n_features))
    rotation, _ = jnp.linalg.qr(random_matrix)  # Get an orthogonal matrix

    X = scaled_data @ rotation
    X_proj, comp, evr = pca(X, n_components=2)
    X_proj.block_until_ready()

    batch_size = 3
    key, subkey = jax.random.split(key)
    base_batch = jax.random.normal(subkey, (batch_size, 100, n_features))
    X_batch = (base_batch * scales) @ rotation
    X_proj_batch, comp_batch, evr_batch = batched_pca(X_batch, 2)
    return {"rotation": rotation, "X_proj": X_proj, "components": comp, "evr": evr,
            "X_proj_batch": X_proj_batch, "components_batch": comp_batch,
            "evr_batch": evr_batch}
