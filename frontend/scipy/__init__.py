"""stablejit.scipy: the parts of SciPy's API that stablejit implements (as jax.scipy)."""

from . import linalg, special, stats

__all__ = ["linalg", "special", "stats"]
