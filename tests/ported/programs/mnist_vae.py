"""A variational autoencoder on binarized images, trained with stax and optimizers.

Port of examples/mnist_vae.py (jax-ml/jax): the encoder and decoder are stax networks
(serial, FanOut, parallel, Dense, Relu, Softplus), the ELBO's gradient steps run inside
`lax.fori_loop` under `jit` with jax.example_libraries' momentum optimizer (its state is
the loop's carry), and batches are binarized with `random.bernoulli` and keys made by
`random.fold_in`. MNIST is replaced by synthetic 8x8 "images" (no download) and the
sizes and epochs are shrunk; the program's own code is unchanged otherwise.
"""

import jax.numpy as jnp
import numpy.random as npr
from jax import grad, jit, lax, random
from jax.example_libraries import optimizers, stax
from jax.example_libraries.stax import Dense, FanOut, Relu, Softplus


def gaussian_kl(mu, sigmasq):
    """KL divergence from a diagonal Gaussian to the standard Gaussian."""
    return -0.5 * jnp.sum(1. + jnp.log(sigmasq) - mu**2. - sigmasq)


def gaussian_sample(rng, mu, sigmasq):
    """Sample a diagonal Gaussian."""
    return mu + jnp.sqrt(sigmasq) * random.normal(rng, mu.shape)


def bernoulli_logpdf(logits, x):
    """Bernoulli log pdf of data x given logits."""
    return -jnp.sum(jnp.logaddexp(0., jnp.where(x, -1., 1.) * logits))


def elbo(rng, params, images):
    """Monte Carlo estimate of the negative evidence lower bound."""
    enc_params, dec_params = params
    mu_z, sigmasq_z = encode(enc_params, images)
    logits_x = decode(dec_params, gaussian_sample(rng, mu_z, sigmasq_z))
    return bernoulli_logpdf(logits_x, images) - gaussian_kl(mu_z, sigmasq_z)


def image_sample(rng, params, nrow, ncol):
    """Sample images from the generative model."""
    _, dec_params = params
    code_rng, img_rng = random.split(rng)
    logits = decode(dec_params, random.normal(code_rng, (nrow * ncol, 4)))
    sampled_images = random.bernoulli(img_rng, jnp.logaddexp(0., logits))
    return sampled_images.reshape(nrow, ncol, 8, 8)


encoder_init, encode = stax.serial(
    Dense(32), Relu, Dense(32), Relu,
    FanOut(2),
    stax.parallel(Dense(4), stax.serial(Dense(4), Softplus)),
)

decoder_init, decode = stax.serial(
    Dense(32), Relu, Dense(32), Relu, Dense(64),
)


def main():
    step_size = 0.001
    num_epochs = 3
    batch_size = 8
    nrow, ncol = 2, 3

    train_images = jnp.asarray(npr.RandomState(0).rand(64, 64).astype("float32"))
    test_images = jnp.asarray(npr.RandomState(1).rand(16, 64).astype("float32"))
    num_complete_batches, leftover = divmod(train_images.shape[0], batch_size)
    num_batches = num_complete_batches + bool(leftover)

    enc_init_rng, dec_init_rng = random.split(random.PRNGKey(2))
    _, init_encoder_params = encoder_init(enc_init_rng, (batch_size, 64))
    _, init_decoder_params = decoder_init(dec_init_rng, (batch_size, 4))
    init_params = init_encoder_params, init_decoder_params

    opt_init, opt_update, get_params = optimizers.momentum(step_size, mass=0.9)

    def binarize_batch(rng, i, images):
        i = i % num_batches
        batch = lax.dynamic_slice_in_dim(images, i * batch_size, batch_size)
        return random.bernoulli(rng, batch)

    @jit
    def run_epoch(rng, opt_state, images):
        def body_fun(i, opt_state):
            elbo_rng, data_rng = random.split(random.fold_in(rng, i))
            batch = binarize_batch(data_rng, i, images)
            loss = lambda params: -elbo(elbo_rng, params, batch) / batch_size
            g = grad(loss)(get_params(opt_state))
            return opt_update(i, g, opt_state)
        return lax.fori_loop(0, num_batches, body_fun, opt_state)

    @jit
    def evaluate(opt_state, images):
        params = get_params(opt_state)
        elbo_rng, data_rng, image_rng = random.split(random.PRNGKey(3), 3)
        binarized_test = random.bernoulli(data_rng, images)
        test_elbo = elbo(elbo_rng, params, binarized_test) / images.shape[0]
        sampled_images = image_sample(image_rng, params, nrow, ncol)
        return test_elbo, sampled_images

    opt_state = opt_init(init_params)
    elbos = []
    for epoch in range(num_epochs):
        opt_state = run_epoch(random.PRNGKey(epoch), opt_state, train_images)
        test_elbo, sampled_images = evaluate(opt_state, test_images)
        elbos.append(test_elbo)
    return {"elbos": elbos, "samples": sampled_images, "params": get_params(opt_state)}
