"""stablejit.scipy: the parts of SciPy's API that stablejit implements (as jax.scipy)."""

from . import integrate, linalg, signal, special, stats

__all__ = ["integrate", "linalg", "signal", "special", "stats"]
