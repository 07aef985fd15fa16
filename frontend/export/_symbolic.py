"""Symbolic shapes for stablejit.export (jax.export's shape polymorphism).

    x = stablejit.export.symbolic_shape("b, 784", constraints=("b >= 1",))
    exp = stablejit.export.export(jit(f))(stablejit.ShapeDtypeStruct(x, "float32"))
    exp.call(batch_of_7)    # specialised to b = 7, compiled once per batch size

The function is staged once with the symbolic dimensions (compiler/symbolic.py); the
emitter writes `?` for them and computes every shape it needs from the arguments'
sizes. A call binds each dimension variable to the size it has in the arguments,
checks every argument and constraint here (an error names the argument, the axis and
the constraint), and specialises the module to those sizes with jaxlib's
refine_polymorphic_shapes: the result is an ordinary static Exported, cached per
shape, that runs behind the executable cache like any other.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import tree
from ..callbacks import ShapeDtypeStruct
from ..compiler import dtypes as dt
from ..compiler import symbolic as sym
from ..compiler.ir import TensorType
from ..errors import at_user_line
from ..signature import PY_SCALARS
from ..staging import Spec, stage
from ..tensor import Tensor
from ..tracing import Trace

__all__ = ["SymbolicScope", "symbolic_shape", "symbolic_args_specs"]

SymbolicScope = sym.Scope  # jax.export's name: SymbolicScope(["b >= 16"]), then scope=


def symbolic_shape(shape_spec: str | None, *, constraints: Sequence[str] = (),
                   scope: sym.Scope | None = None, like: Sequence[int] | None = None) -> tuple:
    """A shape of symbolic dimensions from jax.export's spelling: "b, 784", "(b, 2*b)",
    "b, ..." (with `like`: the rest of like's dimensions), "_" (like's dimension).
    constraints: "b >= 16", "b <= 4096", "b % 8 == 0". Dimensions from one call share a
    scope; pass scope= (the `.scope` of a dimension) to combine with another call's.

    Example:
        >>> stablejit.export.symbolic_shape('b, 784')
        (b, 784)
        >>> b, = stablejit.export.symbolic_shape('b', constraints=['b >= 2'])
        >>> stablejit.ShapeDtypeStruct((b, 3), snp.float32)
        ShapeDtypeStruct(shape=(b, 3), dtype=float32)
    """
    if scope is None:
        scope = sym.Scope()
    try:
        for c in constraints:
            scope.add_constraint(c)
        text = (shape_spec or "").strip()
        if like is not None:
            text = _fill(text, tuple(like))
        elif "..." in text or "_" in [p.strip() for p in text.strip("()").split(",")]:
            raise ValueError(f"the shape {shape_spec!r} uses '...' or '_', which need the "
                             f"concrete shape: pass like=")
        return sym.parse_shape(text, scope)
    except ValueError as e:
        raise ValueError(at_user_line(f"symbolic_shape: {e}")) from None


def _fill(text: str, like: tuple) -> str:
    parts = [p.strip() for p in text.strip().strip("()").split(",")] if text.strip() else []
    if parts and parts[-1] == "":
        parts.pop()
    if "..." in parts:
        if parts.index("...") != len(parts) - 1:
            raise ValueError(f"'...' must be last in {text!r}")
        n = len(parts) - 1
        if n > len(like):
            raise ValueError(f"{text!r} has more dimensions than the shape {like}")
        parts = parts[:-1] + [str(d) for d in like[n:]]
    if len(parts) != len(like):
        raise ValueError(f"{text!r} has {len(parts)} dimensions, the argument's shape {like} "
                         f"has {len(like)}")
    return ", ".join(str(d) if p == "_" else p for p, d in zip(parts, like, strict=True))


def symbolic_args_specs(args, shapes_specs, constraints: Sequence[str] = (),
                        scope: sym.Scope | None = None):
    """ShapeDtypeStructs for `args` (a pytree of arrays, tensors or ShapeDtypeStructs)
    with the shapes `shapes_specs` names: one string for every leaf, or a pytree of
    strings matching args (None keeps a leaf's concrete shape). One scope for all."""
    scope = sym.Scope(constraints) if scope is None else scope
    leaves, td = tree.flatten(args)
    if isinstance(shapes_specs, str) or shapes_specs is None:
        specs = [shapes_specs] * len(leaves)
    else:
        specs, spec_td = tree.flatten(shapes_specs, is_leaf=lambda x: x is None)
        if len(specs) != len(leaves):
            raise ValueError(at_user_line(
                f"symbolic_args_specs: shapes_specs has {len(specs)} entries and args "
                f"{len(leaves)} leaves; give one shape string per array"))
    out = []
    for x, spec in zip(leaves, specs, strict=True):
        shape, dtype = tuple(x.shape), dt.dtype(x.dtype)
        dims = shape if spec is None else symbolic_shape(spec, scope=scope, like=shape)
        out.append(ShapeDtypeStruct(dims, dtype))
    return tree.unflatten(td, out)


def has_symbolic(avals) -> bool:
    return any(sym.is_symbolic_shape(a.shape) for a in avals)


def is_symbolic_spec(x) -> bool:
    return isinstance(x, ShapeDtypeStruct) and sym.is_symbolic_shape(x.shape)


def scope_of(avals) -> sym.Scope | None:
    for a in avals:
        for d in a.shape:
            if sym.is_symbolic(d):
                return d.scope
    return None


class Staged:
    """What export needs of a staging with symbolic arguments (Lowered's fields)."""

    def __init__(self, fn, out_tree, captured, out_weak, mutated, in_tree):
        self.ir, self._out_tree, self._captured = fn, out_tree, captured
        self._out_weak, self._mutated, self._key = out_weak, mutated, (in_tree,)


def stage_symbolic(fun_jit, args, kwargs) -> Staged:
    """jit's trace with the leaves' types as given (symbolic dimensions included)."""
    static, dyn_args, dyn_kwargs = fun_jit._split(args, kwargs)
    leaves, treedef = tree.flatten((dyn_args, dyn_kwargs))
    specs = []
    for x in leaves:
        if isinstance(x, Tensor):
            specs.append(Spec(x.type, x.weak))
        elif type(x) in PY_SCALARS:
            from ..promotion import is_weak_scalar, python_scalar_dtype  # noqa: PLC0415

            specs.append(Spec(TensorType((), python_scalar_dtype(x)), is_weak_scalar(x)))
        else:
            specs.append(Spec(TensorType(tuple(x.shape), dt.dtype(x.dtype))))

    def call(t_args, t_kwargs):
        full = list(t_args)
        for i, v in static:
            if isinstance(i, int):
                full.insert(i, v)
        kw = dict(t_kwargs, **{k: v for k, v in static if isinstance(k, str)})
        return fun_jit.fn(*full, **kw)

    name = fun_jit.__name__.replace("<", "").replace(">", "")
    s = stage(call, treedef, specs, Trace(name), output=fun_jit._output_tensor,
              return_writes=True)
    return Staged(s.fn, s.out_tree, s.captured, s.out_weak, s.written, treedef)


def check_variables(avals, name: str) -> None:
    """Every dimension variable must be the whole of some argument dimension (its value
    is read from there), as jax.export requires."""
    bare, seen = set(), set()
    for a in avals:
        for d in a.shape:
            if sym.is_symbolic(d):
                seen |= d.variables()
                if str(d) in d.variables():
                    bare.add(str(d))
    missing = sorted(seen - bare)
    if missing:
        raise ValueError(at_user_line(
            f"export({name}): the dimension variable {missing[0]!r} is used only inside "
            f"expressions; make it the whole of some argument dimension (e.g. an argument "
            f"of shape ({missing[0]}, ...)), so a call can read its value"))


def bind(avals, shapes, paths: Sequence[str], name: str) -> dict[str, int]:
    """The dimension variables' values in a call with argument shapes `shapes`; a
    ValueError names the argument, the axis and what is wrong."""
    env: dict[str, int] = {}
    where: dict[str, str] = {}
    for aval, shape, path in zip(avals, shapes, paths, strict=True):
        if len(shape) != len(aval.shape):
            raise ValueError(at_user_line(
                f"{name}: argument {path} has shape {shape}, but the function was exported "
                f"for rank {len(aval.shape)}, {_shape_text(aval.shape)}"))
        for axis, (d, n) in enumerate(zip(aval.shape, shape, strict=True)):
            if sym.is_symbolic(d) and str(d) in d.variables():
                v = str(d)
                if v in env and env[v] != n:
                    raise ValueError(at_user_line(
                        f"{name}: argument {path} has size {n} in axis {axis}, which is "
                        f"{v!r}; but {where[v]} gave {v} = {env[v]}. Arguments that share a "
                        f"dimension variable need the same size there"))
                if n < 1:
                    raise ValueError(at_user_line(
                        f"{name}: argument {path} has size {n} in axis {axis}, which is "
                        f"{v!r}; dimension variables are >= 1"))
                env.setdefault(v, n)
                where.setdefault(v, f"argument {path} axis {axis}")
    for aval, shape, path in zip(avals, shapes, paths, strict=True):
        for axis, (d, n) in enumerate(zip(aval.shape, shape, strict=True)):
            want = sym.evaluate(d, env)
            if want != n:
                raise ValueError(at_user_line(
                    f"{name}: argument {path} has size {n} in axis {axis}, where the "
                    f"function was exported for {d}" + (f" = {want}" if sym.is_symbolic(d)
                                                       else "")
                    + f" (shape {_shape_text(aval.shape)}, with "
                    + ", ".join(f"{k} = {v}" for k, v in env.items()) + ")"))
    scope = scope_of(avals)
    broken = scope.violated(env) if scope is not None else []
    if broken:
        text, names = broken[0]
        named = sorted(names & set(env)) or sorted(env)
        raise ValueError(at_user_line(
            f"{name}: the call has {', '.join(f'{k} = {env[k]}' for k in named)} "
            f"({'; '.join(where[k] for k in named)}), which violates the constraint "
            f"{text!r} the function was exported with"))
    return env


def _shape_text(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def concrete(avals, env: dict[str, int]) -> list[ShapeDtypeStruct]:
    return [ShapeDtypeStruct(tuple(sym.evaluate(d, env) for d in a.shape), a.dtype,
                             weak_type=a.weak_type) for a in avals]
