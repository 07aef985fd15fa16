"""Pytrees passed one after another, for the C paths that check a call's tree against the
last structure they saw (recorder.c's grad tape, fastcall.c's cached jit call): each
differs from the one before it in one way, or not at all."""

from __future__ import annotations

from typing import NamedTuple

from stablejit import tree


class Pair(NamedTuple):
    first: object
    second: object


def structures(a, b, c, d) -> list[tuple[str, object]]:
    """(name, tree) of the four leaves in builtin and registered nodes: keys, node kind,
    length, depth, a None, a leaf where a list was (and back), or the same structure
    with other leaves."""
    return [
        ("list of dicts", [{"w": a, "b": b}, {"w": c, "b": d}]),
        ("the same, other leaves", [{"w": d, "b": c}, {"w": b, "b": a}]),
        ("other keys", [{"w": a, "c": b}, {"w": c, "b": d}]),
        ("a tuple for the list", ({"w": a, "b": b}, {"w": c, "b": d})),
        ("shorter", [{"w": a, "b": b}]),
        ("deeper", [{"w": a, "b": {"x": b}}]),
        ("keys not in sorted order", {"b": b, "a": a}),
        ("the same, inserted the other way", {"b": d, "a": c}),
        ("int keys", {2: a, 1: b}),
        ("a namedtuple", Pair(a, b)),
        ("a None node", [a, None, b]),
        ("a list where a leaf was", [a, [b, c]]),
        ("a leaf where a list was", [[a, b], c]),
    ]


def path_weight(path) -> float:
    """A weight of a leaf's key path, distinct enough that a leaf read at another path
    gives another value."""
    return 1.0 + sum(map(ord, tree.keystr(path))) % 7
