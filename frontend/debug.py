"""stablejit.debug: jax.debug's print and callback, from compiled code too
(`import stablejit.debug` works as a module import). Both are the callbacks of
frontend/callbacks.py."""

from .callbacks import debug as _debug

print = _debug.print  # jax.debug.print (shadows the builtin in this module only)
callback = _debug.callback

__all__ = ["callback", "print"]
