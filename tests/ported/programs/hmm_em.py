"""Expectation-maximisation for a hidden Markov model, the E step by autodiff.

Port of examples/hmm_em.py (jax-ml/jax): the forward algorithm as `lax.scan` with
`logsumexp`, the E step as `grad` of the log normalizer (expected counts), EM iterations
under `lax.fori_loop` with a traced trip count inside `jit`, and sampling with
`random.categorical` inside a scan over split keys. The training text is a short
built-in sentence instead of jax's own source file.
"""

from collections import defaultdict
from functools import partial
from itertools import count

import jax.numpy as jnp
from jax import grad, jit, lax, random
from jax.scipy.special import logsumexp


def log_normalizer(params, seq):
    log_pi, log_A, log_B = params

    def marginalize(log_alpha, obs):
        log_alpha = logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, obs]
        return log_alpha, None

    log_alpha, _ = lax.scan(marginalize, log_pi, seq)
    return logsumexp(log_alpha)


@jit
def EM(params, seq, num_steps):
    def update(i, params):
        moments = grad(log_normalizer)(params, seq)                       # E step
        return [jnp.log(x / x.sum(-1, keepdims=True)) for x in moments]  # M step
    return lax.fori_loop(0, num_steps, update, params)


@partial(jit, static_argnums=(2,))
def sample(key, params, length):
    log_pi, log_A, log_B = params

    def sample_one(state, key):
        k1, k2 = random.split(key)
        obs = random.categorical(k1, log_B[state])
        state = random.categorical(k2, log_A[state])
        return state, obs

    k1, k2 = random.split(key)
    init_state = random.categorical(k1, log_pi)
    _, seq = lax.scan(sample_one, init_state, random.split(k2, length))
    return seq


def build_dataset(string):
    encodings = defaultdict(partial(next, count()))
    data = jnp.array([encodings[c] for c in string])
    decodings = {i: c for c, i in encodings.items()}
    return data, decodings


def main():
    text = "the quick brown fox jumps over the lazy dog; " * 3
    seq, decodings = build_dataset(text)

    num_states = 6
    num_obs = len(decodings)

    keys = map(random.PRNGKey, count())
    log_pi = random.normal(next(keys), (num_states,))
    log_A = random.normal(next(keys), (num_states, num_states))
    log_B = random.normal(next(keys), (num_states, num_obs))
    params = [log_pi, log_A, log_B]

    new_params = EM(params, seq, 10)

    sampled_seq = sample(next(keys), new_params, 40)
    return {"log_likelihood_before": jit(log_normalizer)(params, seq),
            "log_likelihood_after": jit(log_normalizer)(new_params, seq),
            "params": new_params,
            "sample": sampled_seq,
            "sample_text": "".join(decodings[int(i)] for i in sampled_seq)}
