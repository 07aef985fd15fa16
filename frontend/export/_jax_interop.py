"""Interop with jax.export: from_jax runs an artifact jax.export wrote on stablejit's
runtime; to_jax writes an Exported as an artifact jax.export.deserialize reads.

jax's deserializer (jax.export.deserialize, which needs the `flatbuffers` package) reads
the bytes; its module is StableHLO with jax's calling convention: @main may take a
platform index first (an artifact lowered for several platforms), then the arguments
it uses (`module_kept_var_idx`), reads symbolic dimensions from the arguments' shapes
itself and checks them with `shape_assertion` custom calls (refine_polymorphic_shapes
evaluates them). Here each platform gets a module whose @main has stablejit's
convention (every input leaf, in order) and calls jax's @main with the platform's index
as a constant; the result is an ordinary stablejit Exported (symbolic dimensions and
constraints included), so calls, jit, vmap and the caches work as for our own artifacts.
Artifacts with ordered effects (tokens) are refused. jax's format keeps no constraints
in its shapes (its module checks them with shape assertions), so a call of a from_jax
artifact that breaks one fails when the module is specialised, with jax's message.

to_jax: a stablejit module's @main already has the convention jax.export's calling
convention 10 gives a one-platform function without effects (the input leaves in order;
symbolic dimensions read inside with get_dimension_size), so jax's Exported is made
around it and jax serializes it. One platform per artifact; no VJP; constraints are not
carried (stablejit checks them in Python, not in the module).
"""

from __future__ import annotations

import dataclasses
import hashlib

from .. import tree
from ..callbacks import ShapeDtypeStruct
from ..compiler import dtypes as dt
from ..compiler import symbolic as sym
from ..compiler.ir import TensorType
from ..errors import at_user_line
from ..runtime import portable
from ._artifact import MAGIC, ArtifactError
from ._exported import Exported

_PLATFORMS = {"cpu": "host", "cuda": "cuda", "rocm": "rocm", "tpu": "tpu"}


def from_jax(data) -> Exported:
    """The Exported of `data`, the bytes of jax.export.Exported.serialize(). Needs jax and
    flatbuffers installed (pip install flatbuffers)."""
    if isinstance(data, (bytes, bytearray, memoryview)) and bytes(data[:8]) == MAGIC:
        raise ArtifactError("this is a stablejit artifact, not a jax.export one; load it "
                            "with stablejit.export.deserialize")
    try:
        from jax import export as jex  # noqa: PLC0415 - optional: only this function needs it
    except ImportError:
        raise ImportError("from_jax needs jax installed (pip install jax)") from None
    try:
        jexp = jex.deserialize(bytearray(data))
    except ImportError as e:
        raise ImportError(f"from_jax needs jax.export's deserializer, which needs the "
                          f"flatbuffers package: pip install flatbuffers ({e})") from None
    except Exception as e:  # noqa: BLE001 - flatbuffers reports bad bytes in many ways
        raise ArtifactError(f"not a jax.export artifact that this jax "
                            f"({jex.minimum_supported_calling_convention_version}..."
                            f"{jex.maximum_supported_calling_convention_version}) reads: "
                            f"{type(e).__name__}: {e}") from None
    return from_jax_exported(jexp)


def from_jax_exported(jexp) -> Exported:
    """The Exported of a jax.export.Exported object."""
    name = jexp.fun_name
    if jexp.ordered_effects:
        raise ValueError(at_user_line(
            f"from_jax: {name} has ordered effects ({jexp.ordered_effects}), which pass "
            f"tokens stablejit does not; export it from jax without them"))
    if jexp.nr_devices != 1:
        raise ValueError(at_user_line(
            f"from_jax: {name} was exported for {jexp.nr_devices} devices; stablejit runs "
            f"exported functions on one"))
    unknown = [p for p in jexp.platforms if p not in _PLATFORMS]
    if unknown:
        raise ValueError(at_user_line(
            f"from_jax: {name} was exported for the platform {unknown[0]!r}, which "
            f"stablejit does not run; export it for cpu, cuda, rocm or tpu"))
    scope = _scope(jexp)
    in_avals = [_aval(a, scope) for a in jexp.in_avals]
    out_avals = [_aval(a, scope) for a in jexp.out_avals]
    text = portable.deserialize(jexp.mlir_module_serialized)
    arg_types = [TensorType(a.shape, a.dtype).mlir() for a in in_avals]
    digest = hashlib.sha256(bytes(jexp.mlir_module_serialized)).hexdigest()[:16]
    modules = {}
    several = len(jexp.platforms) > 1
    for i, p in enumerate(jexp.platforms):
        wrapped = portable.wrap_main(text, f"jax_{digest}_", arg_types,
                                     list(jexp.module_kept_var_idx),
                                     [f"dense<{i}> : tensor<i32>"] if several else [])
        modules[_PLATFORMS[p]] = portable.serialize(wrapped)
    return Exported(fun_name=name, in_tree=_treedef(jexp.in_tree), in_avals=in_avals,
                    out_tree=_treedef(jexp.out_tree), out_avals=out_avals,
                    platforms=[_PLATFORMS[p] for p in jexp.platforms], modules=modules)


def _scope(jexp) -> sym.Scope:
    """The constraints of jax's symbolic scope (the ones it derives itself, such as
    '2*floordiv(b, 2) == b' from 'mod(b, 2) == 0', are implied and left out)."""
    scope = sym.Scope()
    for aval in jexp.in_avals:
        for d in aval.shape:
            if not isinstance(d, int) and hasattr(d, "scope"):
                for c in getattr(d.scope, "_explicit_constraints", ()):
                    text = c.debug_str
                    if text in scope.constraints:
                        continue
                    try:
                        scope.add_constraint(text)
                    except ValueError:
                        if "floordiv" not in text:
                            raise ArtifactError(
                                f"from_jax: the constraint {text!r} of {jexp.fun_name} is "
                                f"not one stablejit reads (it reads >=, <=, 'mod(e, k) == 0'"
                                f")") from None
                return scope
    return scope


def _aval(a, scope: sym.Scope) -> ShapeDtypeStruct:
    dims = tuple(d if isinstance(d, int) else sym.parse_dim(str(d), scope) for d in a.shape)
    return ShapeDtypeStruct(dims, dt.dtype(a.dtype), weak_type=bool(a.weak_type))


def _treedef(jax_treedef) -> tree.TreeDef:
    """jax's PyTreeDef as stablejit's (tuples, lists, dicts, None and namedtuples).
    (jax.tree_util on purpose: a jax.export artifact's trees are jax's own objects, so
    reading and writing them needs jax's pytree registry; nothing else here uses jax.)"""
    import jax  # noqa: PLC0415 - optional

    example = jax.tree_util.tree_unflatten(jax_treedef, [0] * jax_treedef.num_leaves)
    return tree.flatten(example)[1]


JAX_CALLING_CONVENTION = 10  # what to_jax's artifacts declare (jax 0.10 reads 9 and 10)


def to_jax(exported: Exported, platform: str | None = None) -> bytearray:
    """The bytes of a jax.export artifact (jax.export.deserialize reads them; jax then
    calls it with its own call) holding `exported`'s module for `platform` (its first
    by default). Needs jax and flatbuffers."""
    import jax  # noqa: PLC0415 - optional
    from jax import export as jex  # noqa: PLC0415
    from jax._src import core  # noqa: PLC0415 - ShapedArray, as jax.export's avals

    p = exported._platform_arg(platform)
    if exported.donated:
        raise ValueError(at_user_line(
            f"to_jax: {exported.fun_name} donates arguments, which a jax.export artifact "
            f"does not say; export it without donate_argnums"))
    scope = jex.SymbolicScope()
    jax_platform = {v: k for k, v in _PLATFORMS.items()}[p]

    def aval(a):
        dims = tuple(_jax_dim(d, scope, jex) for d in a.shape)
        return core.ShapedArray(dims, a.dtype.np, weak_type=a.weak_type)

    def jax_tree(td):
        return jax.tree_util.tree_structure(tree.unflatten(td, [0] * td.num_leaves))

    n_in, n_out = len(exported.in_avals), len(exported.out_avals)
    fields = dict(
        fun_name=exported.fun_name, in_tree=jax_tree(exported.in_tree),
        in_avals=tuple(aval(a) for a in exported.in_avals),
        out_tree=jax_tree(exported.out_tree),
        out_avals=tuple(aval(a) for a in exported.out_avals),
        _has_named_shardings=True, _in_named_shardings=(None,) * n_in,
        _out_named_shardings=(None,) * n_out, in_shardings_hlo=(None,) * n_in,
        out_shardings_hlo=(None,) * n_out, nr_devices=1, platforms=(jax_platform,),
        ordered_effects=(), unordered_effects=(), disabled_safety_checks=(),
        mlir_module_serialized=exported.mlir_module_serialized(p),
        calling_convention_version=JAX_CALLING_CONVENTION,
        module_kept_var_idx=tuple(range(n_in)), uses_global_constants=exported.symbolic,
        _get_vjp=None)
    # the fields of this jax's Exported: 0.11 dropped _has_named_shardings (its named
    # shardings are always there); a field we do not know of is an error, not a guess
    known = {f.name for f in dataclasses.fields(jex.Exported)}
    missing = known - fields.keys()
    if missing:
        raise ArtifactError(f"to_jax: this jax ({jax.__version__}) wants Exported fields "
                            f"stablejit does not fill ({', '.join(sorted(missing))}); "
                            f"use a jax between 0.10 and 0.11")
    jexp = jex.Exported(**{k: v for k, v in fields.items() if k in known})
    return jexp.serialize()


def _jax_dim(d, scope, jex):
    """A stablejit dimension as jax's: variables by name, terms built with jax's own
    arithmetic (so jax normalises them its way)."""
    if not sym.is_symbolic(d):
        return int(d)

    def atom(a):
        if isinstance(a, str):
            return jex.symbolic_shape(a, scope=scope)[0]
        x, y = (_jax_dim(v, scope, jex) for v in a[1:])
        return {"floordiv": lambda: x // y, "mod": lambda: x % y,
                "max": lambda: jex.symbolic_shape(f"max({x}, {y})", scope=scope)[0],
                "min": lambda: jex.symbolic_shape(f"min({x}, {y})", scope=scope)[0]}[a[0]]()

    total = 0
    for mono, c in d.terms:
        term = c
        for a, p in mono:
            term = term * atom(a) ** p if p > 1 else term * atom(a)
        total = total + term
    return total
