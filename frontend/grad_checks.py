"""What grad and its friends accept, with the messages that say so: floating-point (or,
holomorphic, complex) inputs, and a function returning one scalar, or a pair
(value, auxiliary data) with has_aux=True; argnums naming each argument once."""

from __future__ import annotations

import operator

import numpy as np

from .errors import at_user_line


def dtype_message(what, i, j, td, t, kinds) -> str:
    where = "" if td.kind is None else f" (leaf {j} of its pytree)"
    if kinds == "c":
        return (f"{what} with holomorphic=True requires inputs with a complex dtype, but "
                f"argument {i}{where} has dtype {t.dtype.name}; convert it with "
                f".astype(stablejit.numpy.complex64)")
    return (f"{what} requires floating-point inputs, but argument {i}{where} has dtype "
            f"{t.dtype.name}. Integer and boolean inputs carry no gradient: convert it "
            f"with .astype(stablejit.numpy.float32), or leave it out of argnums (it then "
            f"reaches the function as the value it is).")


def check_scalar_output(t, what: str, holomorphic: bool = False) -> None:
    """`t`: the type of the function's (first) output."""
    if t.shape != ():
        raise TypeError(at_user_line(
            f"{what} requires a function with a scalar output, but it returned shape "
            f"{t.shape}. Reduce it (e.g. .sum()), or use stablejit.vjp / jacrev for "
            f"non-scalar outputs."))
    if holomorphic and t.dtype.kind != "c":
        raise TypeError(at_user_line(
            f"{what} with holomorphic=True requires a complex output, but the function "
            f"returned dtype {t.dtype.name}"))
    if not holomorphic and t.dtype.kind != "f":
        hint = (" For holomorphic differentiation pass holomorphic=True; for a "
                "non-holomorphic function with complex outputs use stablejit.vjp."
                if t.dtype.kind == "c" else "")
        raise TypeError(at_user_line(
            f"{what} requires a real floating-point output, but the function returned "
            f"dtype {t.dtype.name}.{hint}"))


def split_aux(out_tree, has_aux: bool, what: str, scalar: bool = True):
    if not has_aux:
        if out_tree.num_leaves != 1 or out_tree.kind is not None:
            raise TypeError(at_user_line(
                f"{what} requires a function returning one scalar tensor, got a pytree "
                f"{out_tree}; if the extra outputs are auxiliary data, pass has_aux=True"))
        return None
    if out_tree.kind not in (tuple, list) or len(out_tree.children) != 2 or \
            (scalar and out_tree.children[0].kind is not None):
        main = "scalar output" if scalar else "output"
        raise TypeError(at_user_line(
            f"{what}(has_aux=True) requires a function returning a pair ({main}, "
            f"auxiliary data), got a pytree {out_tree}"))
    return out_tree.children[1]


def argnums_tuple(argnums, nargs: int, what: str) -> tuple[int, ...]:
    """argnums (an int or ints, negative ones from the end) as non-negative ints."""
    if type(argnums) is int and 0 <= argnums < nargs:  # grad(f)(x): the common call
        return (argnums,)
    try:
        nums = tuple(operator.index(i) for i in (
            (argnums,) if isinstance(argnums, (int, np.integer)) else argnums))
    except TypeError:
        raise TypeError(at_user_line(
            f"{what}: argnums must be an int or a sequence of ints, got {argnums!r}")) from None
    for i in nums:
        if not -nargs <= i < nargs:
            raise ValueError(at_user_line(
                f"{what}: argnums {argnums} is out of range for a call with {nargs} "
                f"positional argument(s)"))
    nums = tuple(i % nargs for i in nums)
    if len(set(nums)) != len(nums):  # (one gradient each would be ambiguous; jax refuses)
        twice = next(i for i in nums if nums.count(i) > 1)
        raise ValueError(at_user_line(
            f"{what}: argnums {argnums} names argument {twice} more than once; list each "
            f"argument once"))
    return nums
