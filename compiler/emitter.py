"""IR Function -> StableHLO text.

Everything is written in MLIR's generic operation form through one function,
`EmitContext.op(name, operands, result_types, attributes, regions)`, so the
emitter stays small and each primitive's rule is a line or two. Every op carries a
`loc("prim"("file":line:col))` so XLA's dumps and errors name the user's line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from . import dtypes as dt
from .dtypes import DType
from .errors import ShapeError
from .ir import UNKNOWN, Function, Location, Op, TensorType
from .symbolic import DimExpr
from .walk import walk

# Ops whose result shape StableHLO reads from a static result type: with a symbolic
# dimension they are written as their dynamic forms, with the shape as an operand
# computed from the arguments' sizes (EmitContext.dims_operand); jaxlib's
# refine_polymorphic_shapes makes them static again for each concrete call.
_DYNAMIC_FORMS = {"stablehlo.broadcast_in_dim": "stablehlo.dynamic_broadcast_in_dim",
                  "stablehlo.reshape": "stablehlo.dynamic_reshape",
                  "stablehlo.iota": "stablehlo.dynamic_iota"}
_I64 = TensorType((), dt.int64)


def i64_array(xs: Sequence[int]) -> str:
    """An `array<i64: ...>` attribute value."""
    return "array<i64" + (": " + ", ".join(str(int(x)) for x in xs) if len(xs) else "") + ">"


def i64_list(xs: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(x)) for x in xs) + "]"


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def location_text(loc: Location, name: str) -> str:
    if loc is UNKNOWN or not loc.line:
        return f"loc({_quote(name)})"
    return f"loc({_quote(name)}({_quote(loc.file)}:{loc.line}:{loc.col}))"


def dense_text(array: np.ndarray, dtype: DType) -> str:
    """A `dense<...>` literal: a splat, or raw little-endian bytes in hex."""
    a = np.ascontiguousarray(array, dtype=dtype.np)
    if not a.size:  # (of any shape: `[]` would read as shape [0])
        return "dense<>"
    if a.size == 1 or _is_splat(a):
        return "dense<" + _scalar_text(a.flat[0], dtype) + ">"
    if dtype.kind == "b":  # i1 has no byte-exact hex form; write the elements
        return "dense<" + _nested(a) + ">"
    return 'dense<"0x' + a.astype(a.dtype.newbyteorder("<")).tobytes().hex().upper() + '">'


def _is_splat(a: np.ndarray) -> bool:
    raw = a.reshape(-1).view(np.uint8).reshape(a.size, a.itemsize)  # bitwise: NaN-safe
    return bool(np.all(raw == raw[0]))


def _nested(a: np.ndarray) -> str:
    if a.ndim == 0:
        return "true" if a else "false"
    return "[" + ", ".join(_nested(x) for x in a) + "]"


def _scalar_text(x, dtype: DType) -> str:
    if dtype.kind == "b":
        return "true" if x else "false"
    if dtype.kind in "iu":
        return str(int(x))
    if dtype.kind == "c":
        return f"({_float_text(x.real, dtype)}, {_float_text(x.imag, dtype)})"
    return _float_text(x, dtype)


def _float_text(x, dtype: DType) -> str:
    x = np.asarray(x, dtype=dtype.np if dtype.kind == "f" else  # complex: its part type
                   np.float32 if dtype.bits == 64 else np.float64)
    if np.isfinite(x):
        if x.dtype.itemsize < 4:
            return f"{float(x):.8e}"
        s = repr(float(x))  # MLIR needs a '.' in a float literal: 1e-05 -> 1.0e-05
        return s.replace("e", ".0e") if "e" in s and "." not in s else s
    bits = x.view(np.dtype(f"uint{8 * x.dtype.itemsize}"))  # inf/nan as their bit pattern
    return f"0x{int(bits):0{2 * x.dtype.itemsize}X}"


class EmitContext:
    """What an emission rule sees: its operand/result types, attributes and location."""

    __slots__ = ("emitter", "in_types", "out_types", "attrs", "loc_text", "regions")

    def __init__(self, emitter: Emitter, in_types, out_types, attrs, loc_text, regions=()):
        self.emitter = emitter
        self.in_types = in_types
        self.out_types = out_types
        self.attrs = attrs
        self.loc_text = loc_text
        self.regions = regions

    def op(self, name: str, operands: Sequence[str], result_types: Sequence[TensorType],
           attributes: str = "", regions: Sequence[str] = (),
           operand_types: Sequence[TensorType] | None = None) -> list[str]:
        """Write one generic-form op and return its result names."""
        e = self.emitter
        if name in _DYNAMIC_FORMS and result_types[0].symbolic:
            shape = self.dims_operand(result_types[0].shape)
            operands, name = [*operands, shape], _DYNAMIC_FORMS[name]
            if operand_types is not None:
                operand_types = [*operand_types, e.type_of[shape]]
        if operand_types is None:
            operand_types = [e.type_of[o] for o in operands]
        n = len(result_types)
        base = e.fresh()
        results = [base] if n == 1 else [f"{base}#{i}" for i in range(n)]
        lhs = "" if n == 0 else (f"{base} = " if n == 1 else f"{base}:{n} = ")
        region_text = (" (" + ", ".join(regions) + ")") if regions else ""
        attr_text = f" {{{attributes}}}" if attributes else ""
        ins = ", ".join(t.mlir() for t in operand_types)
        outs = ", ".join(t.mlir() for t in result_types)
        outs = outs if n == 1 else f"({outs})"
        e.write(f'{lhs}"{name}"({", ".join(operands)}){region_text}{attr_text} : ({ins}) -> '
                f'{outs} {self.loc_text}')
        for r, t in zip(results, result_types, strict=True):
            e.type_of[r] = t
        return results

    def constant(self, value, dtype: DType, shape: Sequence[int] = ()) -> str:
        t = TensorType(shape, dtype)
        if t.symbolic:  # a splat whose size is known when the exported function runs
            return self.op("stablehlo.broadcast_in_dim", [self.constant(value, dtype)], [t],
                           "broadcast_dimensions = array<i64>")[0]
        array = np.broadcast_to(np.asarray(value, dtype=dtype.np), t.shape)
        return self.op("stablehlo.constant", [], [t],
                       f"value = {dense_text(array, dtype)} : {t.mlir()}")[0]

    def dim_value(self, d: DimExpr | int) -> str:
        """A tensor<i64> holding dimension d, computed from the sizes of the arguments
        that the dimension variables name (get_dimension_size of @main's arguments)."""
        if type(d) is not DimExpr:
            return self.constant(int(d), dt.int64)
        total = None
        for mono, coef in d.terms:
            factors = [self._atom_value(a) for a, power in mono for _ in range(power)]
            if coef != 1 or not factors:
                factors.append(self.constant(coef, dt.int64))
            term = factors[0]
            for f in factors[1:]:
                term = self.op("stablehlo.multiply", [term, f], [_I64])[0]
            total = term if total is None else self.op("stablehlo.add", [total, term],
                                                       [_I64])[0]
        return total

    def _atom_value(self, atom) -> str:
        if isinstance(atom, str):
            where = self.emitter.dim_args.get(atom)
            if where is None:
                raise ShapeError(
                    f"the dimension variable {atom!r} is not the size of an axis of any "
                    f"argument; every variable must be one argument dimension on its own "
                    f"(e.g. 'b', not only '2*b')")
            arg, axis = where
            size = self.op("stablehlo.get_dimension_size", [arg], [TensorType((), dt.int32)],
                           f"dimension = {axis} : i64")[0]
            return self.op("stablehlo.convert", [size], [_I64])[0]
        x, y = self.dim_value(atom[1]), self.dim_value(atom[2])
        # sizes are >= 0, so truncating division and remainder are floor division and mod
        name = {"floordiv": "stablehlo.divide", "mod": "stablehlo.remainder",
                "max": "stablehlo.maximum", "min": "stablehlo.minimum"}[atom[0]]
        return self.op(name, [x, y], [_I64])[0]

    def dynamic_slice(self, x: str, starts: Sequence[str], out: TensorType) -> str:
        """x[starts : starts + out.shape] for scalar i64 starts; a symbolic size makes it
        a real_dynamic_slice, whose bounds are operands (dynamic_slice's sizes are not)."""
        if not out.symbolic:
            return self.op("stablehlo.dynamic_slice", [x, *starts], [out],
                           "slice_sizes = " + i64_array(out.shape))[0]
        one, vector = TensorType((1,), dt.int64), TensorType((len(starts),), dt.int64)
        wide = [n if self.emitter.type_of[n].dtype is dt.int64 else
                self.op("stablehlo.convert", [n], [_I64])[0] for n in starts]
        start = self.op("stablehlo.concatenate",
                        [self.op("stablehlo.reshape", [n], [one])[0] for n in wide],
                        [vector], "dimension = 0 : i64")[0]
        # limit = start + sizes, as one add: the form refinement turns back into
        # dynamic_slice once the sizes are constants (jax writes the same)
        limit = self.op("stablehlo.add", [start, self.dims_operand(out.shape)], [vector])[0]
        return self.op("stablehlo.real_dynamic_slice",
                       [x, start, limit, self.dims_operand([1] * len(starts))], [out])[0]

    def dims_operand(self, dims: Sequence[DimExpr | int]) -> str:
        """A tensor<Nxi64> of the dims (a dynamic op's shape or bounds operand)."""
        one = TensorType((1,), dt.int64)
        parts = [self.op("stablehlo.reshape", [self.dim_value(d)], [one])[0] for d in dims]
        return self.op("stablehlo.concatenate", parts, [TensorType((len(dims),), dt.int64)],
                       "dimension = 0 : i64")[0]

    def region(self, arg_types: Sequence[TensorType], body: Callable[..., Sequence[str]]) -> str:
        """A one-block region whose block arguments have `arg_types`; `body(*args)`
        writes ops through this context and returns the names to yield."""
        e = self.emitter
        args = [e.fresh("%a") for _ in arg_types]
        for a, t in zip(args, arg_types, strict=True):
            e.type_of[a] = t
        with e.block() as lines:
            results = body(*args)
            self.op("stablehlo.return", list(results), [])
        head = ", ".join(f"{a}: {t.mlir()}" for a, t in zip(args, arg_types, strict=True))
        inner = "\n".join(lines)
        return f"{{\n{e.indent}^bb0({head}):\n{inner}\n{e.indent}}}"


def host_callbacks(fn: Function) -> list:
    """The host callbacks a Function calls, in a fixed order (ops in order, regions
    where their op is): a program's custom calls name them by position in this list,
    which is also what the compiler is given."""
    out: list = []

    def visit(f: Function) -> None:
        for op in f.ops:
            for r in op.regions:
                visit(r)
            if op.prim.family == "callback":
                cb = op.attrs["callback"]
                if not any(c is cb for c in out):
                    out.append(cb)
    visit(fn)
    return out


class Emitter:
    def __init__(self, platform: str = "host", callbacks: Sequence = ()):
        self.platform = platform  # the PJRT platform compiled for (some rules depend on it)
        self.callbacks = list(callbacks)  # host_callbacks(fn): custom calls index into it
        self.mesh = None  # the device mesh while a shard_map body is written (collectives)
        # dimension variable -> (argument name, axis) whose size it is (symbolic export)
        self.dim_args: dict[str, tuple[str, int]] = {}
        # symbol -> text of private functions written beside @main (exported modules that
        # call_exported ops call; see primitives/exported.py)
        self.functions: dict[str, str] = {}
        self.counter = 0
        self.type_of: dict[str, TensorType] = {}
        self.indent = "    "
        self._lines: list[str] = []

    def fresh(self, prefix: str = "%") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def write(self, line: str) -> None:
        self._lines.append(self.indent + line)

    def block(self):
        emitter = self

        class _Block:
            def __enter__(self):
                self.saved = (emitter._lines, emitter.indent)
                emitter._lines = []
                emitter.indent += "  "
                return emitter._lines

            def __exit__(self, *exc):
                emitter._lines, emitter.indent = self.saved

        return _Block()

    def emit_ops(self, fn: Function, arg_names: Sequence[str]) -> list[str]:
        """Write fn's ops with its params bound to arg_names; return its result names."""
        return walk(fn, arg_names, self.emit_op)

    def emit_op(self, op: Op, operand_names: Sequence[str]) -> list[str]:
        ctx = EmitContext(self, tuple(v.type for v in op.operands), op.result_types,
                          op.attrs, location_text(op.loc, op.prim.name), op.regions)
        out = op.prim.emit(ctx, *operand_names)
        return [out] if isinstance(out, str) else list(out)


def emit_module(fn: Function, *, module_name: str = "stablejit",
                donated: Sequence[int | None] = (), platform: str = "host",
                mesh=None, arg_shardings: Sequence[str | None] = (),
                result_shardings: Sequence[str | None] = ()) -> str:
    """The StableHLO module for `fn`, with `fn` as its public @main.

    donated[i], when given, is the index of the result that may reuse argument i's
    buffer (input/output aliasing for donation). A program over a device mesh (see
    primitives/sharding.py) gets `mesh`, its declaration text and partition count, and
    the `sdy.sharding` attribute of each argument and result (None: left to XLA).
    """
    e = Emitter(platform, host_callbacks(fn))
    args = [f"%arg{i}" for i in range(len(fn.params))]
    for a, p in zip(args, fn.params, strict=True):
        e.type_of[a] = p.type
        for axis, d in enumerate(p.type.shape):
            if type(d) is DimExpr and len(d.variables()) == 1 and str(d) in d.variables():
                e.dim_args.setdefault(str(d), (a, axis))
    if e.dim_args:
        _shape_assertions(EmitContext(e, (), (), None, 'loc("shape_assertion")'), fn, args)
    results = e.emit_ops(fn, args)
    body = e._lines
    e._lines = []
    ctx = EmitContext(e, (), (), None, "loc(unknown)")
    ctx.op("func.return", results, [])
    ret = e._lines[0].strip()

    def arg_text(i, a, p):
        attrs = []
        if i < len(donated) and donated[i] is not None:
            attrs.append(f"tf.aliasing_output = {donated[i]} : i32")
        if i < len(arg_shardings) and arg_shardings[i] is not None:
            attrs.append(f"sdy.sharding = {arg_shardings[i]}")
        return f"{a}: {p.type.mlir()}" + (f" {{{', '.join(attrs)}}}" if attrs else "")

    def result_text(i, t):
        if i < len(result_shardings) and result_shardings[i] is not None:
            return f"{t.mlir()} {{sdy.sharding = {result_shardings[i]}}}"
        return t.mlir()

    params = ", ".join(arg_text(i, a, p)
                       for i, (a, p) in enumerate(zip(args, fn.params, strict=True)))
    outs = ", ".join(result_text(i, t) for i, t in enumerate(fn.result_types))
    safe = "".join(c if c.isalnum() or c == "_" else "_" for c in module_name) or "stablejit"
    partitions = 1 if mesh is None else int(np.prod(mesh.axis_sizes))
    declare = "" if mesh is None else "  " + _mesh_declaration(mesh) + "\n"
    head = (f"module @{safe} attributes {{mhlo.num_partitions = {partitions} : i32, "
            f"mhlo.num_replicas = 1 : i32}} {{\n{declare}"
            f"  func.func public @main({params}) -> ({outs}) {{")
    functions = ["\n".join("  " + line for line in f.splitlines()) for f in e.functions.values()]
    return "\n".join([head, *body, "    " + ret, "  }", *functions, "}", ""])


def _shape_assertions(ctx: EmitContext, fn: Function, args: Sequence[str]) -> None:
    """What a call with symbolic dimensions must satisfy, as jax.export writes it:
    `shape_assertion` custom calls that refine_polymorphic_shapes evaluates (and
    removes) when it specialises the module, so that a caller that skips stablejit's
    own checks (jax, with export.to_jax) still gets an error: every variable is >= 1,
    every other argument dimension has the size its expression says, and the
    constraints hold. A message's {0}, {1} are the operands after the predicate."""
    scope = _scope(fn)
    zero, one = ctx.constant(0, dt.int64), ctx.constant(1, dt.int64)
    for v, (arg, axis) in ctx.emitter.dim_args.items():
        _assert(ctx, "GE", ctx.dim_value(DimExpr.var(v, scope)), one,
                f"dimension variable {v!r} (argument {arg[4:]}, axis {axis}) is {{0}}; it "
                f"must be >= 1")
    for i, (a, p) in enumerate(zip(args, fn.params, strict=True)):
        for axis, d in enumerate(p.type.shape):
            if type(d) is DimExpr and ctx.emitter.dim_args.get(str(d)) != (a, axis):
                size = ctx.op("stablehlo.get_dimension_size", [a], [TensorType((), dt.int32)],
                              f"dimension = {axis} : i64")[0]
                _assert(ctx, "EQ", ctx.op("stablehlo.convert", [size], [_I64])[0],
                        ctx.dim_value(d), f"argument {i} has size {{0}} in axis {axis}, "
                        f"where the function was exported for {d} = {{1}}")
    for text, (kind, e) in scope.checks:
        _assert(ctx, "GE" if kind == ">=" else "EQ", ctx.dim_value(e), zero,
                f"the call breaks the constraint {text!r} the function was exported with")


def _assert(ctx: EmitContext, direction: str, lhs: str, rhs: str, message: str) -> None:
    ok = ctx.op("stablehlo.compare", [lhs, rhs], [TensorType((), dt.bool_)],
                f"comparison_direction = #stablehlo<comparison_direction {direction}>")[0]
    ctx.op("stablehlo.custom_call", [ok, lhs, rhs], [],
           f'call_target_name = "shape_assertion", has_side_effect = true, '
           f'api_version = 2 : i32, error_message = {_quote(message)}')


def _scope(fn: Function):
    return next(d.scope for p in fn.params for d in p.type.shape if type(d) is DimExpr)


def _mesh_declaration(mesh) -> str:
    axes = ", ".join(f'"{n}"={s}' for n, s in zip(mesh.axis_names, mesh.axis_sizes,
                                                   strict=True))
    return f"sdy.mesh @mesh = <[{axes}]>"
