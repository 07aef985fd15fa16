"""Working with pytrees: tree utilities and an MLP whose parameters are a pytree.

Port of docs/working-with-pytrees.md (jax-ml/jax): `jax.tree.leaves` over the notebook's
example trees, `jax.tree.map` with one and several trees, the MLP example (a list of
dicts of weights and biases, `*hidden, last = params`, `jax.nn.relu`, an SGD update
mapped over the parameter tree under `jax.jit`), `jax.tree.leaves(..., is_leaf=...)` for
None, and transposing a list of trees with `jax.tree.map` and `jax.tree.transpose`.
"""

import jax
import jax.numpy as jnp
import numpy as np


def init_mlp_params(layer_widths):
    params = []
    for n_in, n_out in zip(layer_widths[:-1], layer_widths[1:]):
        params.append(
            dict(weights=np.random.normal(size=(n_in, n_out)) * np.sqrt(2/n_in),
                 biases=np.ones(shape=(n_out,))))
    return params


# Define the forward pass.
def forward(params, x):
    *hidden, last = params
    for layer in hidden:
        x = jax.nn.relu(x @ layer['weights'] + layer['biases'])
    return x @ last['weights'] + last['biases']


# Define the loss function.
def loss_fn(params, x, y):
    return jnp.mean((forward(params, x) - y) ** 2)


# Set the learning rate.
LEARNING_RATE = 0.0001


@jax.jit
def update(params, x, y):
    # Calculate the gradients with `jax.grad`; they are a pytree shaped like `params`.
    grads = jax.grad(loss_fn)(params, x, y)
    return jax.tree.map(
        lambda p, g: p - LEARNING_RATE * g, params, grads)


def tree_transpose(list_of_trees):
    """Converts a list of trees of identical structure into a single tree of lists."""
    return jax.tree.map(lambda *xs: list(xs), *list_of_trees)


def main():
    np.random.seed(0)
    example_trees = [
        [1, 'a', 3.5],
        (1, (2, 3), ()),
        [1, {'k1': 2, 'k2': (3, 4)}, 5],
        {'a': 2, 'b': (2, 3)},
        jnp.array([1, 2, 3]),
    ]
    leaf_counts = [len(jax.tree.leaves(pytree)) for pytree in example_trees]

    list_of_lists = [[1, 2, 3], [1, 2], [1, 2, 3, 4]]
    doubled = jax.tree.map(lambda x: x*2, list_of_lists)
    summed = jax.tree.map(lambda x, y: x+y, list_of_lists, list_of_lists)

    params = init_mlp_params([1, 32, 32, 1])
    shapes = jax.tree.map(lambda x: x.shape, params)

    xs = np.random.normal(size=(128, 1))
    ys = xs ** 2
    for _ in range(100):
        params = update(params, xs, ys)

    episode_steps = [dict(t=1, obs=3), dict(t=2, obs=4)]
    transposed = jax.tree.transpose(
        outer_treedef=jax.tree.structure([0 for e in episode_steps]),
        inner_treedef=jax.tree.structure(episode_steps[0]),
        pytree_to_transpose=episode_steps)
    return {"leaf_counts": leaf_counts, "doubled": doubled, "summed": summed,
            "shapes": shapes, "params": params, "loss": loss_fn(params, xs, ys),
            "none_leaves": len(jax.tree.leaves([None, None, None])),
            "none_as_leaves": len(jax.tree.leaves([None, None, None],
                                                  is_leaf=lambda x: x is None)),
            "tree_transpose": tree_transpose(episode_steps), "jax_tree_transpose": transposed}
