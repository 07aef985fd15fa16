"""stablejit.jit: trace a function once per signature, compile it, call the executable.

The signature of a call is its pytree structure, each dynamic leaf's type (shape,
dtype, weakness; Python scalars by their Python type only), the static arguments'
values, the backend and x64 mode (the default float, which Python floats and zeros(3)
take). A new signature traces and compiles again; a known one goes
straight to the executable. On the reference backend a jitted function runs its traced
IR op by op with NumPy (the debug mode).
"""

from __future__ import annotations

import functools
import inspect
import logging
import operator
import time
import warnings
import weakref

import numpy as np

from . import config, debugging, fastcall, precision, promotion, tree, views, writes
from .aot import Lowered
from .api import resolve_backend
from .backends import XlaBackend
from .compiler.ir import Function, TensorType
from .context import concrete_default, meeting_place
from .errors import at_user_line, user_location
from .platforms import default_platform
from .promotion import is_weak_scalar, python_scalar_dtype
from .retrace import describe_retrace
from .runtime.cache import SingleFlightCache
from .signature import (
    PY_SCALARS,
    Entry,
    leaf_signature,
    static_key,
)
from .spmd import (
    backend_for,
    jit_program,
    program_mesh,
    with_sharding_constraint,
)
from .staging import Spec, stage
from .tensor import Tensor
from .tracebacks import api_boundary, filter_exception
from .tracing import Trace, escaped_error

log = logging.getLogger("stablejit")
_data_of = operator.attrgetter("_data")
_is_tensor = Tensor.__instancecheck__
# a leaf's part of the fast-path key: only non-weak tensors of the entry's backend
# were entered, so any other leaf misses (or raises AttributeError: not a tensor)
# (and _view: a view leaf traces differently and is never entered, so it misses)
_fast_leaf = operator.attrgetter("type", "weak", "_backend", "_view")
_ALL_JITTED: weakref.WeakSet = weakref.WeakSet()


def _argnums(fn, static_argnums, static_argnames, donate_argnums):
    """Normalise and check jit's argument numbers and names against fn's signature, as
    jax does: negative numbers count from the last positional parameter, numbers out of
    range raise at once, and a static parameter is static whether it is passed by
    position or by keyword (each of static_argnums / static_argnames gets the other)."""
    name = getattr(fn, "__name__", "the function")

    def as_tuple(x, what, kind):
        items = (x,) if isinstance(x, kind) else tuple(x)
        for i in items:
            if not isinstance(i, kind) or isinstance(i, bool):
                raise TypeError(at_user_line(
                    f"jit({name}, {what}=...): expected {kind.__name__}s, got {i!r}"))
        return items

    nums = as_tuple(static_argnums, "static_argnums", int)
    names = as_tuple(static_argnames, "static_argnames", str)
    donate = as_tuple(donate_argnums, "donate_argnums", int)
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # builtins and some C callables have no signature
        return tuple(sorted(set(nums))), names, donate
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                       p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return tuple(sorted(set(nums))), names, donate  # checked per call
    n = len(positional)

    def check(items, what):
        out = []
        for i in items:
            if not -n <= i < n:
                raise ValueError(at_user_line(
                    f"jit({name}, {what}={i}): {name} takes {n} positional argument(s), so "
                    f"{what} must be in range({-n}, {n})"))
            out.append(i % n)
        return out

    nums = check(nums, "static_argnums")
    donate = tuple(check(donate, "donate_argnums"))
    keyword = {p.name for p in params if p.kind is not p.VAR_POSITIONAL}
    has_kwargs = any(p.kind is p.VAR_KEYWORD for p in params)
    for k in names:
        if k not in keyword and not has_kwargs:
            raise ValueError(at_user_line(
                f"jit({name}, static_argnames={k!r}): {name} has no parameter {k!r}"))
        if k in positional:
            nums.append(positional.index(k))
    names = tuple(dict.fromkeys(names + tuple(positional[i] for i in nums)))
    both = set(nums) & set(donate)
    if both:
        raise ValueError(at_user_line(
            f"jit({name}): argument {min(both)} is both static and donated; a static "
            f"argument has no buffer to donate"))
    return tuple(sorted(set(nums))), names, donate


class Jitted:
    """A function compiled by `stablejit.jit`: call it as the function it wraps.

    `lower(*args)` traces without running (our IR and StableHLO, also for another
    platform with `platform=`), `is_cached(*args)` says whether a call would reuse a
    compiled program, and `clear_cache()` forgets its traces."""

    def __init__(self, fn, *, static_argnums=(), static_argnames=(), donate_argnums=(),
                 backend=None, cache=None, in_shardings=None, out_shardings=None):
        if not callable(fn):
            raise TypeError(at_user_line(
                f"jit expects a function, got {type(fn).__name__} {fn!r}; use @jit or "
                f"jit(f, static_argnums=...)"))
        self.fn = fn
        self._disk = cache  # persistent-cache choice (see runtime/disk_cache.resolve)
        self.static_argnums, self.static_argnames, self.donate_argnums = _argnums(
            fn, static_argnums, static_argnames, donate_argnums)
        self._backend_spec = backend
        self.in_shardings, self.out_shardings = in_shardings, out_shardings  # see spmd.py
        if in_shardings is not None or out_shardings is not None:
            self._backend_spec = backend_for(in_shardings, out_shardings)
        self._cache = SingleFlightCache()
        self._fast: dict = {}
        # the last pytree structure entered in _fast: (registry, TreeDef, the key's
        # PyTreeDef); fastcall.c checks a call's arguments against it before jaxlib
        # flattens them, and its key then compares that PyTreeDef by identity
        self._structure = None
        self._epoch = writes.epoch  # see writes.py: a tensor a trace read was written,
        self._written = writes.written  # or (epoch alone) x64 mode changed
        self._simple = not (self.static_argnums or self.static_argnames or self.donate_argnums
                            or backend is not None)
        self.traces = 0  # how many times fn was traced (one per new signature)
        # library-internal jits (random samplers) compile once per shape by design
        self.warn_recompiles = True
        # name and docs only: merging fn's __dict__ would copy another Jitted's state
        # (fn, caches) over this one's when fn wraps a jitted function (vmap(jit(f)))
        functools.update_wrapper(self, fn, updated=())
        if not hasattr(self, "__name__"):  # functools.partial, callable objects
            self.__name__ = getattr(getattr(fn, "func", fn), "__name__", type(fn).__name__)
        _ALL_JITTED.add(self)

    # ---- calling ---------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if not kwargs and self._epoch == writes.epoch and not debugging.active():
            # Fast path: tensors of types seen before, as positional arguments or in any
            # pytree (flattened in C++). Only simple, cacheable calls are entered in
            # _fast (see _enter_fast). This is the one place where a Python call costs,
            # so the entry's work is inlined here; frontend/_native/fastcall.c does the
            # same steps in C (docs/native.md): change both, tests/host/test_native.py
            # compares them.
            try:
                if all(map(_is_tensor, args)):
                    leaves = args
                    entry = self._fast.get(tuple(map(_fast_leaf, args)))
                else:
                    leaves, structure = tree.fast_flatten(args)
                    entry = self._fast.get((structure, *map(_fast_leaf, leaves)))
            except (AttributeError, TypeError, RecursionError, SystemError):
                # a leaf is no tensor; unhashable aux data; a tree too deep for C++
                # (the general path says so clearly)
                entry = None
            if entry is not None:
                if entry.lazy:  # one tape entry of the lazy graph (see _enter_fast)
                    return entry.record(leaves)
                prog = entry.prog
                try:
                    results = prog.execute(list(map(_data_of, leaves)))
                except TypeError:  # a deleted tensor, or an evicted program: not run
                    return self._call(args, kwargs)
                outs = results.consume_with_handlers(prog.handlers)
                if entry._single:
                    return Tensor(outs[0], entry.backend, entry.out_types[0],
                                  entry.out_weak[0])
                return entry.outputs(outs)
        try:
            return self._call(args, kwargs)
        except Exception as e:  # a public boundary (free until something is raised)
            filter_exception(e)
            raise

    def _call(self, args, kwargs):
        """The general path: checks, signature, tracing and compiling when new."""
        if debugging.active():  # disable_jit() or a NaN/Inf check
            return debugging.call_jitted(self, args, kwargs)
        if self._epoch != writes.epoch:
            if self._written != writes.written:
                self.clear_cache()
            else:  # x64 mode changed: the traces of either mode stay (the key says which)
                self._fast.clear()
            self._epoch, self._written = writes.epoch, writes.written
        key, leaves, backend = self._signature(args, kwargs)
        if backend is None:  # called while tracing another function: trace inline
            return self._inline(args, kwargs)
        entry = self._entry(key, args, kwargs, backend)
        if self._simple and not kwargs and entry.fast_eligible:
            self._enter_fast(entry, args, leaves)
        return entry.run(leaves)

    def _inline(self, args, kwargs):
        """fn traced into the enclosing trace (or grad's tape); its shardings become
        constraints there, so a transformed sharded jit keeps jax's layouts."""
        if self.in_shardings is not None and not kwargs:
            spec = self.in_shardings
            if type(spec) not in (tuple, list):
                spec = (spec,) * len(args)
            args = tuple(a if s is None else with_sharding_constraint(a, s)
                         for a, s in zip(args, spec, strict=True))
        out = self.fn(*args, **kwargs)
        if self.out_shardings is not None:
            out = with_sharding_constraint(out, self.out_shardings)
        return out

    def _enter_fast(self, entry, args, leaves) -> None:
        """Let calls like this one take the fast path, if every leaf is a non-weak
        tensor of the entry's backend and the C++ flattener sees the same leaves. Keys:
        positional tensors by their (type, weak, backend) alone; other pytrees by their
        jaxlib structure too."""
        backend = entry.backend
        # a lazy entry also takes tensors of the device it records for (the lazy block's
        # ops adopt them): the key holds each leaf's backend, so a call whose tensors
        # are all on the device still misses here and runs eagerly, as _signature says
        ok = (backend,) if not entry.lazy else (backend, backend.target)
        if not all(type(x) is Tensor and not x.weak and x._backend in ok and x._view is None
                   for x in leaves):
            return
        if len(args) == len(leaves) and all(a is b for a, b in zip(args, leaves,
                                                                    strict=True)):
            self._fast[tuple(map(_fast_leaf, args))] = entry
            return
        registry = tree._cpp_registry
        try:
            fast_leaves, structure = tree.fast_flatten(args)
        except (RecursionError, SystemError):  # too deep for C++: the general path only
            return
        if len(fast_leaves) != len(leaves) or not all(
                a is b for a, b in zip(fast_leaves, leaves, strict=True)):
            return
        try:
            self._fast[(structure, *map(_fast_leaf, leaves))] = entry
        except TypeError:  # unhashable aux data in the structure
            return
        try:
            ours, td = tree.flatten(args)
        except ValueError:  # too deep for Python's recursion limit: no structure kept
            return
        if len(ours) == len(leaves) and all(a is b for a, b in zip(ours, leaves, strict=True)):
            self._structure = (registry, td, structure)

    def _split(self, args, kwargs):
        """(static part, dynamic part) of the arguments."""
        n = len(args)
        # negative numbers remain only for functions with *args: count from this call's end
        static_pos = tuple(sorted({i % n for i in self.static_argnums if -n <= i < n}))
        static = tuple((i, args[i]) for i in static_pos) + tuple(
            sorted((k, v) for k, v in kwargs.items() if k in self.static_argnames))
        dyn_args = tuple(a for i, a in enumerate(args) if i not in static_pos)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        for k, v in static:
            try:
                hash(v)
            except TypeError:
                raise TypeError(at_user_line(
                    f"static argument {k!r} of {self.__name__} has unhashable type "
                    f"{type(v).__name__}; static arguments are part of the cache key, so pass "
                    f"a hashable value (a tuple instead of a list, say)")) from None
        return static, dyn_args, dyn_kwargs

    def _signature(self, args, kwargs):
        static, dyn_args, dyn_kwargs = self._split(args, kwargs)
        leaves, treedef = tree.flatten((dyn_args, dyn_kwargs))
        backend = None
        sig = []
        for x in leaves:
            sig.append(leaf_signature(x))
            if isinstance(x, Tensor):
                b = x._backend
                if not b.concrete:
                    if not b.alive:
                        raise escaped_error()
                    return None, leaves, None  # inside another trace
                if b.inlines_calls:  # grad's tape (in lazy()): inlined, as in a trace
                    return None, leaves, None
                if backend is None or b.sharded:
                    backend = b
                elif b is not backend and not backend.sharded:
                    backend = meeting_place(backend, b)  # as an eager op's operands
        if self._backend_spec is not None:
            backend = resolve_backend(self._backend_spec)
        elif backend is None:
            backend = concrete_default()
        return (treedef, tuple(sig), static_key(static), backend, promotion.x64,
                precision.default), leaves, \
            backend

    def _entry(self, key, args, kwargs, backend) -> Entry:
        entry = self._cache.get(key)
        if entry is None:
            entry = self._cache.get_or_create(key, lambda: self._build(key, args, kwargs,
                                                                       backend))
        return entry

    # ---- tracing and compiling --------------------------------------------------------
    def trace(self, args, kwargs) -> tuple[Function, object, list, tuple[bool, ...],
                                           tuple[int, ...]]:
        """Trace fn on abstract versions of the arguments; returns the IR, the output
        structure, the concrete tensors it captured, which outputs are weakly typed, and
        what fn wrote into: argument leaf indices and closed-over tensors, whose new
        values are the IR's last results."""
        static, dyn_args, dyn_kwargs = self._split(args, kwargs)
        leaves, treedef = tree.flatten((dyn_args, dyn_kwargs))
        name = getattr(self.fn, "__name__", "fn").replace("<", "").replace(">", "")
        specs = []
        for x in leaves:
            if isinstance(x, Tensor):  # a view: `x += y` writes through it, as eagerly
                specs.append(Spec(x.type, x.weak, pinned=None if x._view is None else
                                  views.layout_of(x).strides))
            elif type(x) in PY_SCALARS:
                specs.append(Spec(TensorType((), python_scalar_dtype(x)), is_weak_scalar(x)))
            else:
                specs.append(Spec(leaf_signature(x)))

        def call(t_args, t_kwargs):
            full_args = list(t_args)
            for i, v in static:
                if isinstance(i, int):
                    full_args.insert(i, v)
            full_kwargs = dict(t_kwargs)
            full_kwargs.update({k: v for k, v in static if isinstance(k, str)})
            return self.fn(*full_args, **full_kwargs)

        self.traces += 1
        s = stage(call, treedef, specs, Trace(name), output=self._output_tensor,
                  return_writes=True)
        return s.fn, s.out_tree, s.captured, s.out_weak, s.written

    def _output_tensor(self, leaf, trace: Trace) -> Tensor:
        """A returned Python scalar or NumPy array as a constant of the program."""
        if isinstance(leaf, Tensor):
            return leaf
        if type(leaf) in PY_SCALARS:
            return trace.scalar(leaf, python_scalar_dtype(leaf), weak=is_weak_scalar(leaf))
        if isinstance(leaf, (np.ndarray, np.generic)):
            return trace.from_numpy(np.asarray(leaf))
        raise TypeError(at_user_line(
            f"{self.__name__} returned a {type(leaf).__name__}; a jitted function returns "
            f"tensors, arrays, Python numbers or pytrees of them"))

    def _build(self, key, args, kwargs, backend) -> Entry:
        t0 = time.perf_counter()
        fn, out_tree, captured, out_weak, mutated = self.trace(args, kwargs)
        logging_on = config.log_compiles()
        if logging_on or self.traces in _RECOMPILE_WARN_AT:
            _report_trace(self, key, logging_on, time.perf_counter() - t0)
        donate = self._donation(key)
        # a program over several devices (also called in lazy(): it runs at once, on its
        # mesh, as docs/backends.md says, where a tape entry would compile for one device)
        if backend.sharded or (backend.device_buffers or backend.batches_ops) and \
                program_mesh(fn) is not None:
            prog = jit_program(fn, key[0], out_tree, self.in_shardings, self.out_shardings,
                               backend, self.__name__)
            return Entry(fn, prog, out_tree, captured, prog.backend, out_weak=out_weak,
                          mutated=mutated)
        if not backend.device_buffers:
            return Entry(fn, backend.program(fn), out_tree, captured, backend,
                          out_weak=out_weak, mutated=mutated)
        aliases = tuple(self._aliases(fn, donate, mutated))
        prog = backend.program(fn, name=self.__name__, donated=aliases, disk=self._disk)
        return Entry(fn, prog, out_tree, captured, backend,
                      tuple(i for i, a in enumerate(aliases) if a is not None), out_weak,
                      mutated)

    def _donation(self, key) -> set[int]:
        """Leaf indices of the donated positional arguments."""
        if not self.donate_argnums:
            return set()
        treedef = key[0]
        args_td = treedef.children[0]
        static_pos = set(self.static_argnums)
        out, leaf = set(), 0
        positions = [i for i in range(len(args_td.children) + len(static_pos))
                     if i not in static_pos]
        for child, pos in zip(args_td.children, positions, strict=True):
            if pos in self.donate_argnums:
                out.update(range(leaf, leaf + child.num_leaves))
            leaf += child.num_leaves
        return out

    def _aliases(self, fn: Function, donate: set[int], mutated=()) -> list:
        """For each param, the output index that may reuse its buffer, or None; a
        donated argument fn writes into reuses its buffer for its own new value."""
        aliases: list = [None] * len(fn.params)
        free = list(range(len(fn.results)))
        first_written = len(fn.results) - len(mutated)
        own = {i: first_written + k for k, i in enumerate(mutated) if type(i) is int}
        for i in sorted(donate):
            t = fn.params[i].type
            match = own.get(i) if own.get(i) in free else next(
                (o for o in free if fn.results[o].type == t), None)
            if match is None:
                _warn_at_user(f"{self.__name__}: donated argument leaf {i} ({t}) matches no "
                              f"output of the same shape and dtype, so its buffer could not "
                              f"be reused (it stays valid)", UserWarning)
                continue
            free.remove(match)
            aliases[i] = match
        return aliases

    # ---- AOT and introspection --------------------------------------------------------
    def is_cached(self, *args, **kwargs) -> bool:
        """Whether a call with these arguments would reuse a compiled executable."""
        key, _, backend = self._signature(args, kwargs)
        return backend is not None and key in self._cache

    @api_boundary
    def lower(self, *args, platform: str | None = None, **kwargs) -> Lowered:
        """Trace and emit StableHLO without compiling. `platform` (host, cuda, rocm, tpu)
        emits for that platform without creating its client, so any machine can lower
        for any platform; by default, the platform the call would run on."""
        key, _, backend = self._signature(args, kwargs)
        if backend is None:
            raise TypeError("lower() needs concrete arguments, not traced ones")
        fn, out_tree, captured, out_weak, mutated = self.trace(args, kwargs)
        return Lowered(self, key, fn, out_tree, captured, backend, out_weak, platform,
                       mutated)

    def clear_cache(self) -> None:
        self._cache.clear()
        self._fast.clear()

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __repr__(self) -> str:
        return f"<stablejit.jit {self.__name__}>"


# __call__'s cached case in C where the extension was built (STABLEJIT_NATIVE=0: not)
fastcall.install(Jitted)

_RECOMPILE_WARN_AT = frozenset(8 * 2 ** i for i in range(20))  # 8th, 16th, 32nd ... trace


def _report_trace(jitted, key, logging_on: bool, seconds: float) -> None:
    """STABLEJIT_LOG_COMPILES: say that (and why) fn was traced; and warn, even without
    logging, when one function keeps being retraced."""
    why = describe_retrace(jitted.fn, key, [k for k in jitted._cache.keys() if k != key])
    if logging_on:
        log.warning("stablejit: traced %s (trace #%d) for %s at %s in %.1f ms: %s",
                    jitted.__name__, jitted.traces, _describe_sig(key), user_location(),
                    1e3 * seconds, why)
    if jitted.traces in _RECOMPILE_WARN_AT and jitted.warn_recompiles:
        _warn_at_user(
            f"stablejit: {jitted.__name__} has been traced and compiled {jitted.traces} times; "
            f"the latest because {why}. Each new shape, dtype or static value compiles "
            f"again: pad inputs to a few fixed shapes, or pass settings as static arguments "
            f"that take few values", RecompileWarning)


def _warn_at_user(message: str, category) -> None:
    """A warning reported at the user's line rather than inside stablejit."""
    loc = user_location()
    warnings.warn_explicit(message, category, loc.file, loc.line or 0)


class RecompileWarning(UserWarning):
    """A jitted function keeps being traced and compiled again."""


def _describe_sig(key) -> str:
    return ", ".join(str(s[0] if isinstance(s, tuple) else getattr(s, "__name__", s))
                     for s in key[1])


def jit(fn=None, *, static_argnums=(), static_argnames=(), donate_argnums=(), backend=None,
        platform: str | None = None, device_id: int | None = None, cache=None,
        in_shardings=None, out_shardings=None):
    """Compile `fn` with XLA: traced once per signature, then run as one program.
    Usable as `@jit` or `@jit(static_argnums=...)`.

    The signature of a call is its pytree structure, each tensor leaf's shape, dtype and
    weakness, Python scalars' types and the static arguments' values; a new signature
    traces and compiles again (STABLEJIT_LOG_COMPILES=1 says why), a known one runs the
    cached executable. Python control flow on traced values raises an error naming the
    line (use stablejit.numpy.where, cond, switch or the loops).

    Args:
        fn: the function: pytrees of tensors (and Python values) in and out.
        static_argnums: positions of arguments passed to `fn` as the Python values they
            are (settings, shapes, flags): each distinct value (by hash and equality)
            gets its own trace. They must be hashable.
        static_argnames: the same, by keyword.
        donate_argnums: positions of tensor arguments whose buffers the results may
            reuse; a donated tensor is deleted after the call (using it raises
            DeletedTensorError), and a donation that cannot be used warns.
        backend: run on this backend ("xla:host:0", "reference" ...) instead of where
            the tensor arguments live (the default).
        platform: run on this platform ("host", "cuda", "rocm", "tpu").
        device_id: run on this device of the platform.
        cache: the persistent compilation cache: None or True the default
            (STABLEJIT_CACHE_DIR or the per-user cache directory), False none, or a
            directory path.
        in_shardings: a sharding, or one per positional argument, to run over several
            devices (partitioned by XLA).
        out_shardings: the results' shardings: one, or a pytree prefix of the results.

    Returns:
        A Jitted function: call it like `fn`; `.lower(*args)` gives the IR and StableHLO
        text, `.lower(*args).compile()` XLA's optimised HLO and cost analysis,
        `.is_cached(*args)` whether a call would compile.

    Raises:
        TypeError: if `fn` is not callable; when called, TracerBoolConversionError for a
            Python `if` on a traced value, and MustCompileError for a result whose shape
            depends on the data.

    Example:
        >>> def power_sum(x, n):
        ...     return snp.sum(x ** n)
        >>> f = stablejit.jit(power_sum, static_argnums=1)
        >>> x = snp.asarray([1.0, 2.0, 3.0])
        >>> f(x, 2)
        Tensor<f32[] xla:host:0>
        14.
        >>> f.is_cached(x, 3)
        False
    """
    if platform is not None or device_id is not None:
        backend = XlaBackend.for_platform(platform or default_platform(), device_id)
    if fn is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames,
                                 donate_argnums=donate_argnums, backend=backend, cache=cache,
                                 in_shardings=in_shardings, out_shardings=out_shardings)
    return Jitted(fn, static_argnums=static_argnums, static_argnames=static_argnames,
                  donate_argnums=donate_argnums, backend=backend, cache=cache,
                  in_shardings=in_shardings, out_shardings=out_shardings)
