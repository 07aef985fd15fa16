"""Errors the compiler raises. The frontend adds the user's source line to them."""


class ShapeError(TypeError):
    """An operation was given operands whose shapes or dtypes it cannot take."""


class VerifyError(AssertionError):
    """An IR function broke SSA form or disagrees with its primitives' shape rules."""
