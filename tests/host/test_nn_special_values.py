"""stablejit.nn against jax.nn on special values (signed zeros, large values, infinities,
NaN).

Found as regressions (issue 9): each test failed before its fix."""


import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

_NN_SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 20.0, -20.0, 100.0, -100.0, np.inf, -np.inf,
                        np.nan, 1e-30, 6.0, 3.0], np.float32).reshape(2, 7)


# every function both nn namespaces have, by what it takes: one array, or more than that
# (test_every_shared_nn_function_is_listed keeps these lists complete)
ONE_ARRAY = ["celu", "elu", "gelu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
             "identity", "leaky_relu", "log1mexp", "log_sigmoid", "log_softmax", "logsumexp",
             "mish", "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign", "softmax",
             "softplus", "sparse_plus", "sparse_sigmoid", "squareplus", "standardize",
             "swish", "tanh"]
TAKES_MORE = ["dot_product_attention", "glu", "one_hot"]  # (glu: an even axis)


def test_every_shared_nn_function_is_listed():
    import jax
    shared = {n for n in set(dir(jax.nn)) & set(dir(stablejit.nn)) if not n.startswith("_")
              and callable(getattr(jax.nn, n)) and not isinstance(getattr(jax.nn, n), type)}
    assert shared == set(ONE_ARRAY) | set(TAKES_MORE), shared ^ (set(ONE_ARRAY) |
                                                                 set(TAKES_MORE))


@pytest.mark.parametrize("name", ONE_ARRAY)
def test_nn_functions_on_special_values_match_jax(name):
    """Every stablejit.nn function that takes one array, on zeros of both signs, large
    values, infinities and NaN, against jax.nn: relu(NaN) was 0 (a where on x > 0)."""
    import jax
    want = np.asarray(getattr(jax.nn, name)(_NN_SPECIAL))
    got = np.asarray(getattr(stablejit.nn, name)(snp.asarray(_NN_SPECIAL)))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=3e-6, atol=1e-30)
    same_sign = (np.signbit(got) == np.signbit(want)) | np.isnan(want)
    assert same_sign.all(), (got, want)
