"""The precision of matrix products (dot_general's `precision` attribute), as jax's:
`precision=` of matmul, dot, tensordot, inner, vdot, einsum and lax.dot_general / dot /
batch_matmul, and the process-wide default for products that pass none
(`config.update("jax_default_matmul_precision", "highest")`, or
STABLEJIT_DEFAULT_MATMUL_PRECISION / JAX_DEFAULT_MATMUL_PRECISION at start-up).

The host computes float32 in full precision whatever it says; GPUs take float32 products
as TF32 under the default (jax's default too) and in full float32 under "highest". The
default is part of what a traced program depends on: jit's and composites' keys hold it,
and changing it sends jitted calls through the Python path once (writes.new_mode), as x64
mode does.
"""

from __future__ import annotations

from . import config, writes
from .errors import at_user_line

default: tuple[str, str] | None = None  # the attribute of products that pass no precision


def pair(precision, what: str) -> tuple[str, str] | None:
    """jax's precision= (None, a Precision, its name or dtype spelling, or a pair of
    them) as dot_general's attribute; None (the default) gives the process default."""
    if precision is None:
        return default
    return _canonical(precision, what)


def converted(p: tuple[str, str] | None, operands, target) -> tuple[str, str] | None:
    """The precision for products of `operands` converted to `target` first (einsum's and
    convolve's preferred_element_type): integers made floats multiply at HIGHEST, since
    they are exact numbers (a GPU's default TF32 would round 127 * 127); else `p`."""
    if target is not None and target.kind in "fc" and any(
            x.dtype.kind in "biu" for x in operands):
        return ("HIGHEST", "HIGHEST")
    return p


def _canonical(precision, what: str) -> tuple[str, str] | None:
    both = tuple(precision) if isinstance(precision, (tuple, list)) else (precision,) * 2
    if len(both) != 2:
        raise ValueError(at_user_line(f"{what}: precision= takes one value or a pair "
                                      f"(lhs, rhs), got {precision!r}"))
    out = []
    for p in both:
        if p is None:
            out.append("DEFAULT")
        elif type(p).__name__ == "Precision":  # lax.Precision, or jax's
            out.append(p.name)
        elif isinstance(p, str) and p in config.PRECISION_NAMES:  # lower case, as jax
            out.append(config.PRECISION_NAMES[p])
        else:
            raise ValueError(at_user_line(
                f"{what}: precision {p!r} is not one of lax.Precision.DEFAULT, HIGH, "
                f"HIGHEST or their names ({', '.join(sorted(config.PRECISION_NAMES))})"))
    return None if out == ["DEFAULT", "DEFAULT"] else tuple(out)


def set_default(name) -> None:
    """The default_matmul_precision setting's applier (a name, or None)."""
    global default
    new = None if name is None else _canonical(name, "default_matmul_precision")
    if new != default:
        default = new
        writes.new_mode()


config.on_update("default_matmul_precision", set_default)
set_default(config.default_matmul_precision)  # the environment's, read at start-up

__all__ = ["pair", "set_default"]
