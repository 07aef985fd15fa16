"""`from stablejit.experimental.shard_map import shard_map`, as jax.experimental spells it
(the same function as stablejit.shard_map)."""

# the package's public function (a traceback-filtering boundary), so that both spellings
# are one object; the package is always imported before this module
from .. import shard_map

__all__ = ["shard_map"]
