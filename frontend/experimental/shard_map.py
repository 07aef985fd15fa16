"""`from stablejit.experimental.shard_map import shard_map`, as jax.experimental spells it
(the same function as stablejit.shard_map)."""

from ..shard_map import shard_map

__all__ = ["shard_map"]
