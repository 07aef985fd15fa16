"""jax.experimental's paths, for code ported from jax: stablejit.experimental.shard_map."""
