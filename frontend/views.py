"""Views and writes through aliases: NumPy's mutation semantics on immutable buffers.

A device buffer is never written in place, so aliasing is functionalized, as PyTorch
does for XLA: a view (what NumPy returns as a view: basic indexing, transpose, reshape
where NumPy can, real/imag ...) is a Tensor that records its *base* (the tensor that
owns the memory, never itself a view) and two functions, `forward(base) -> view` and
`backward(base, new_view) -> new_base`. A write into any alias goes through `write`:

- into a view: the new base is backward(base, new view value); the base is rebound;
- into a base: the base is rebound;

and then every live view of the base is regenerated from it (push, not pull, so that
reading a tensor costs nothing extra: only a write into a base that has live views pays,
one forward op per live view). Inside a trace the same functions record scatter /
dynamic-update-slice ops, so no Python-level aliasing survives into the IR.

NumPy's answers about memory (`x.base`, `shares_memory`, whether `reshape` can be a
view) come from a *layout*: a NumPy array with the view's shape and strides over a
one-element dummy buffer (never read or written), made by applying the same NumPy
operation to the base's layout. NumPy's own rules then decide.

This module holds the mechanism; the namespace (numpy/_views.py) says which functions
make views and with which forward/backward functions.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from . import writes
from .errors import at_user_line


class View:
    """How a view was taken from its base. Its NumPy layout is made when first asked
    for (reshape's view-or-copy decision, shares_memory): most views never need it."""

    # _make_layout: the function giving this view's layout from its parent's, and the
    # parent's View (None: the parent is the base), kept as data rather than a closure
    # src: the base's data the view's value was computed from (see `write`)
    __slots__ = ("base", "forward", "backward", "writable", "_layout", "_make_layout", "src")

    def __init__(self, base, forward, backward, make_layout, writable, src):
        self.base, self.forward, self.backward = base, forward, backward
        self._make_layout, self._layout, self.writable = make_layout, None, writable
        self.src = src

    @property
    def layout(self) -> np.ndarray:
        if self._layout is None:
            g, parent = self._make_layout
            self._layout = g(layout_of(self.base) if parent is None else parent.layout)
            self._make_layout = None
        return self._layout


class Aliases:
    """What a base knows of its views: their weak references and its own layout."""

    __slots__ = ("layout", "views", "_prune_at", "pinned")

    def __init__(self, pinned: bool = False):
        self.layout, self.views, self._prune_at = None, [], 16
        # pinned: a traced argument that is a view in the caller (see writes_in_place)
        self.pinned = pinned

    def add(self, view) -> None:
        self.views.append(weakref.ref(view))
        if len(self.views) >= self._prune_at:  # dead views leave dead references
            self.views = [r for r in self.views if r() is not None]
            self._prune_at = max(16, 2 * len(self.views))

    def live(self):
        out = []
        for r in self.views:
            v = r()
            if v is not None:
                out.append(v)
        self.views = [weakref.ref(v) for v in out]
        return out


def writes_in_place(t) -> bool:
    """Whether `t op= y` writes into t's memory (t is a view, or stands for one at a jit
    boundary) rather than binding the name to a new tensor: NumPy's semantics where
    memory is shared through a view, JAX's where it is not (see numpy/_inplace.py)."""
    return t._view is not None or t._aliases is not None and t._aliases.pinned


def base_layout(t) -> np.ndarray:
    """The layout of a tensor that owns its memory: C order, over a dummy buffer."""
    strides, step = [], t.dtype.np.itemsize
    for n in reversed(t.shape):
        strides.append(step)
        step *= max(n, 1)
    return strided_layout(t.type, tuple(reversed(strides)))


def strided_layout(type, strides: tuple[int, ...]) -> np.ndarray:
    """A layout of `type`'s shape and dtype with these strides (never read or written)."""
    return np.lib.stride_tricks.as_strided(np.empty(1, type.dtype.np), type.shape, strides,
                                           writeable=False)


def pin(t, strides: tuple[int, ...]) -> None:
    """Make t, a traced argument, stand for a view passed to jit with these strides:
    `t += y` writes through it, and reshape and shares_memory answer from its layout,
    as they do eagerly on the view."""
    t._aliases = Aliases(pinned=True)
    t._aliases.layout = strided_layout(t.type, strides)


def owns_c_layout(t) -> bool:
    """Whether t's layout is C order over memory of its own (a base, not standing for a
    view passed to jit), so that every reshape of it is a view."""
    return t._view is None and (t._aliases is None or not t._aliases.pinned)


def layout_of(t) -> np.ndarray:
    if t._view is not None:
        return t._view.layout
    if t._aliases is None:
        t._aliases = Aliases()
    if t._aliases.layout is None:
        t._aliases.layout = base_layout(t)
    return t._aliases.layout


def base_of(t):
    """The tensor owning t's memory (t itself when it is no view)."""
    return t._view.base if t._view is not None else t


def make_view(parent, result, forward, backward, layout, writable: bool = True):
    """Mark `result` (computed from `parent` as forward(parent)) as a view of parent's
    base. forward(p) recomputes it from parent p; backward(p, new) gives the parent with
    the view's elements replaced by new; layout(parent's NumPy layout) gives its own.
    Views of views are composed onto the base, so every view names the one tensor that
    owns the memory, as NumPy's `.base` does."""
    if result.type.symbolic or parent.type.symbolic:  # export's symbolic dims: no layout
        return result  # (a copy: writing through it does not reach parent; docs say so)
    if result is parent:  # NumPy makes a new array object even for a[:] or a.T of 1-d
        result = type(parent)(parent._data, parent._backend, parent.type, parent.weak)
    pv = parent._view
    if pv is None:
        base, f, b = parent, forward, backward
    else:
        base, pf, pb = pv.base, pv.forward, pv.backward
        writable = writable and pv.writable

        def f(r, pf=pf, g=forward):
            return g(pf(r))

        def b(r, new, pf=pf, pb=pb, g=backward):
            return pb(r, g(pf(r), new))
    aliases = base._aliases
    if aliases is None:
        aliases = base._aliases = Aliases()
    result._view = View(base, f, b, (layout, pv), writable,
                        base._data if pv is None else pv.src)
    aliases.add(result)
    return result


# Threads may write into one tensor at once (scikit-learn's n_jobs fills disjoint column
# slices of one result). A write computes the base's new value from its current one, on
# the device and without the GIL, so two writers could each start from the same value
# and the later store drop the earlier write. A write instead says which base value it
# started from (`seen`); the store, under this lock, happens only if the base still holds
# it, and otherwise the caller computes again from the value that won (_inplace.py). The
# lock covers attribute stores alone: no device work, nothing that could wait on a
# thread that wants it.
_STORE = threading.Lock()
ANY = object()  # (seen: store whatever the base holds now)


def write(t, new, seen=ANY) -> bool:
    """Give t (a base or a view) the value `new` (t's shape and dtype): the one way a
    write reaches memory. Every alias of t's base sees it. With `seen`, the base's data
    the new value was computed from: False (nothing written) where another write has
    replaced it since."""
    v = t._view
    if v is not None and not v.writable:
        raise ValueError(at_user_line(
            "assignment destination is read-only: this tensor is a read-only view (of "
            "diagonal or broadcast_to, as in NumPy); write into a copy (x.copy()) or into "
            "the tensor it was taken from"))
    base = t if v is None else v.base
    new_base = new if v is None else v.backward(base, new)
    with _STORE:
        if seen is not ANY and base._data is not seen:
            return False
        _set(base, new_base)
        if v is not None:
            _set(t, new)
            v.src = base._data
    refresh(base, t)
    return True


def fresh(t, seen) -> None:
    """Make view t's value the one of its base's data `seen` where it is another's (a
    write by another thread whose refresh has not reached t yet): what a write into t
    computes from must be what it will be stored over."""
    v = t._view
    if v is not None and v.src is not seen:
        _set(t, v.forward(v.base))
        v.src = seen


def _set(t, new) -> None:
    writes.note_write(t)
    t._data, t._backend, t.type = new._data, new._backend, new.type


def refresh(base, skip=None) -> None:
    """Regenerate every live view of base (but skip) from base's value."""
    aliases = base._aliases
    if aliases is None:
        return
    seen = base._data  # (what each view is computed from; a later write makes them stale)
    for view in aliases.live():
        if view is not skip:
            _set(view, view._view.forward(base))
            view._view.src = seen


def shares_memory(a, b, exact: bool = True) -> bool:
    """NumPy's shares_memory (exact) / may_share_memory (bounds) for two tensors."""
    if base_of(a) is not base_of(b):
        return False
    la, lb = layout_of(a), layout_of(b)
    return bool(np.shares_memory(la, lb) if exact else np.may_share_memory(la, lb))


def aliased_pair(leaves) -> tuple[int, int] | None:
    """Two positions of `leaves` whose tensors share memory (the same tensor twice, or
    views of one base), or None."""
    seen: dict[int, int] = {}
    for j, t in enumerate(leaves):
        if not hasattr(t, "_view"):  # not a tensor
            continue
        if t._view is None and t._aliases is None:
            if id(t) in seen:
                return seen[id(t)], j
            seen[id(t)] = j
            continue
        i = seen.setdefault(id(base_of(t)), j)
        if i != j:
            return i, j
    return None
