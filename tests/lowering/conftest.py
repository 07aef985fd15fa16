"""The lowering tier: what our IR lowers to for each platform (host, cuda, rocm, tpu),
compared with jax's lowering of the same function. Lowering needs no device of the
platform; these tests compile nothing for the platforms this machine lacks."""
