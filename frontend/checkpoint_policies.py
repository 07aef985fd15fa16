"""stablejit.checkpoint_policies: jax.checkpoint_policies' names, for `checkpoint(f,
policy=...)` in ported code.

stablejit's checkpoint recomputes everything inside f whatever the policy (JAX's
default, nothing_saveable): the results and gradients are the same under every policy,
only memory and compute differ. Each policy is a real predicate with JAX's signature,
policy(prim, *avals, **params) -> bool (whether prim's result may be saved), answered
for stablejit's primitives, so that code which builds or combines policies runs.
"""

from __future__ import annotations

from collections.abc import Callable


def _is_dot(prim) -> bool:
    return getattr(prim, "name", prim) == "dot_general"


def everything_saveable(prim, *avals, **params) -> bool:
    """Save every intermediate (no recomputation, in JAX)."""
    return True


def nothing_saveable(prim, *avals, **params) -> bool:
    """Save nothing: recompute the whole function (what stablejit always does)."""
    return False


def dots_saveable(prim, *avals, **params) -> bool:
    """Save the results of matrix products."""
    return _is_dot(prim)


checkpoint_dots = dots_saveable


def dots_with_no_batch_dims_saveable(prim, *avals, **params) -> bool:
    """Save the results of matrix products that have no batch dimensions (dot_general's
    `batch` attribute: (lhs dims, rhs dims))."""
    return _is_dot(prim) and not any(params.get("batch", ((), ())))


checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


def save_anything_except_these_names(*names: str) -> Callable:
    """Save everything but the values tagged with these names (stablejit has no name
    tags, so: everything)."""
    return everything_saveable


save_any_names_but_these = save_anything_except_these_names


def save_only_these_names(*names: str) -> Callable:
    """Save only the values tagged with these names (stablejit has no name tags, so:
    nothing)."""
    return nothing_saveable


def save_from_both_policies(policy_1: Callable, policy_2: Callable) -> Callable:
    """Save what either policy saves."""
    def policy(prim, *avals, **params) -> bool:
        return bool(policy_1(prim, *avals, **params) or policy_2(prim, *avals, **params))
    return policy


def offload_dot_with_no_batch_dims(offload_src: str, offload_dst: str) -> Callable:
    """JAX's host-offloading policy; stablejit saves (and offloads) nothing."""
    return nothing_saveable


def save_and_offload_only_these_names(*, names_which_can_be_saved=(),
                                      names_which_can_be_offloaded=(), offload_src="device",
                                      offload_dst="pinned_host") -> Callable:
    """JAX's host-offloading policy by names; stablejit saves (and offloads) nothing."""
    return nothing_saveable


__all__ = ["checkpoint_dots", "checkpoint_dots_with_no_batch_dims", "dots_saveable",
           "dots_with_no_batch_dims_saveable", "everything_saveable", "nothing_saveable",
           "offload_dot_with_no_batch_dims", "save_and_offload_only_these_names",
           "save_any_names_but_these", "save_anything_except_these_names",
           "save_from_both_policies", "save_only_these_names"]


def __dir__() -> list[str]:  # dir(), help() and tab completion show the public names only
    return sorted(__all__)
