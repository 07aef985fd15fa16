"""stablejit.scipy: the parts of SciPy's API that stablejit implements (as jax.scipy)."""

from . import special

__all__ = ["special"]
