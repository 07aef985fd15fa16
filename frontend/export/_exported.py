"""stablejit.export.export and Exported: a jitted function staged once, kept as StableHLO
(one module per platform), that runs without its Python source.

export(jitted, platforms=...)(*specs) stages the function through jit's lowering
(`Jitted.lower`), folds the constants it closed over into the program, and emits one
StableHLO module per platform (emission needs no device). Each module is kept as a
StableHLO portable artifact (runtime/portable.py) and read back, so the text an
Exported runs is the same whether it was just exported or loaded from a file.

Exported.call binds one `call_exported` op (compiler/primitives/exported.py) whose
attribute holds the modules' functions: eagerly it is one program behind the executable
and disk caches; inside jit it is a `func.call` in the enclosing program; vmap runs it
once per example; grad uses the VJP exported with vjp_order=1.
"""

from __future__ import annotations

import hashlib
import warnings

import jaxlib
import numpy as np

from .. import compilation, config, tree
from ..backends import XlaBackend
from ..callbacks import ShapeDtypeStruct
from ..compiler import dtypes as dt
from ..compiler.builder import Builder
from ..compiler.emitter import host_callbacks
from ..compiler.ir import Attrs, Function, Literal, Op
from ..compiler.primitives import shape_ops
from ..compiler.primitives.exported import CalledModule, call_exported
from ..context import concrete_default
from ..dispatch import bind
from ..errors import at_user_line
from ..jit import Jitted, jit
from ..runtime import client as rt_client
from ..runtime import disk_cache, portable
from ..runtime.executable import compile_options
from ..signature import PY_SCALARS
from ..tensor import Tensor
from . import _artifact as art
from . import _symbolic as symbolic
from ._artifact import ArtifactError

CALLING_CONVENTION_VERSION = 1
_SPECIALIZED = 64  # specialisations of a symbolic Exported kept (the oldest is dropped)
PLATFORMS = rt_client.PLATFORMS
_ALIASES = {"cpu": "host", "gpu": "cuda"}


class ExportWarning(UserWarning):
    """Something an artifact brought was not used (an executable built elsewhere)."""


class Exported:
    """A function exported with static shapes: its signature (in_tree, in_avals,
    out_tree, out_avals), one StableHLO module per platform, and optionally compiled
    executables and an exported VJP. Run it with `call`; write it with `serialize`."""

    def __init__(self, *, fun_name: str, in_tree, out_tree, in_avals, out_avals,
                 platforms, modules: dict[str, bytes], donated=(), vjp: Exported | None = None,
                 executables=(), calling_convention_version: int = CALLING_CONVENTION_VERSION,
                 producer: dict | None = None):
        self.fun_name = fun_name
        self.in_tree, self.out_tree = in_tree, out_tree
        self.in_avals, self.out_avals = tuple(in_avals), tuple(out_avals)
        self.platforms = tuple(platforms)
        self.calling_convention_version = calling_convention_version
        self.donated = tuple(donated)  # input leaves the exported function donated
        self.nr_devices = 1
        self.producer = producer or _producer()
        self._modules = dict(modules)  # platform -> portable artifact bytes
        self._texts: dict[str, str] = {}
        self._vjp = vjp
        self._executables = list(executables)  # [(key dict, payload)]
        self._called: CalledModule | None = None
        self._supplied = False
        # symbolic dimensions: one static Exported per concrete binding of the variables
        self.symbolic = symbolic.has_symbolic(self.in_avals)
        self._specialized: dict[tuple, Exported] = {}

    # ---- what it is ----------------------------------------------------------------------
    def mlir_module(self, platform: str | None = None) -> str:
        """The StableHLO text of the module for `platform` (the first one by default)."""
        return self._text(self._platform_arg(platform))

    def mlir_module_serialized(self, platform: str | None = None) -> bytes:
        """The module as the StableHLO portable artifact the serialized form holds."""
        return self._modules[self._platform_arg(platform)]

    def has_vjp(self) -> bool:
        return self._vjp is not None

    def vjp(self) -> Exported:
        """The exported VJP: (*primal leaves, *output cotangents) -> the cotangents of
        the floating-point inputs."""
        if self._vjp is None:
            raise ValueError(at_user_line(
                f"{self.fun_name} was exported without its VJP; export it with "
                f"vjp_order=1"))
        return self._vjp

    def signature(self) -> str:
        def text(avals):
            return ", ".join(f"{a.dtype.name}[{','.join(map(str, a.shape))}]" for a in avals)
        return f"{self.fun_name}({text(self.in_avals)}) -> ({text(self.out_avals)})"

    def __repr__(self) -> str:
        return f"<Exported {self.signature()} for {', '.join(self.platforms)}>"

    def _platform_arg(self, platform: str | None) -> str:
        if platform is None:
            return self.platforms[0]
        p = _ALIASES.get(platform, platform)
        if p not in self._modules:
            raise ValueError(at_user_line(
                f"{self.fun_name} was exported for {', '.join(self.platforms)}, not for "
                f"{platform!r}"))
        return p

    def _text(self, platform: str) -> str:
        text = self._texts.get(platform)
        if text is None:
            text = self._texts[platform] = portable.deserialize(self._modules[platform])
        return text

    def called_module(self) -> CalledModule:
        """The attribute of the call_exported op that runs this function."""
        if self._called is None:
            digest = hashlib.sha256()
            for p in self.platforms:
                digest.update(p.encode() + b"\0" + self._text(p).encode() + b"\0")
            for a in self.in_avals + self.out_avals:
                digest.update(repr((a.shape, a.dtype.name)).encode())
            # the VJP too: modules compare by digest, so one forward with two VJPs (a
            # custom_vjp), or with and without one, would share a derivative
            vjp = self._vjp.called_module() if self._vjp is not None else None
            if vjp is not None:
                vjp.derivative_of = self.fun_name
            digest.update(b"vjp\0" + (vjp.digest.encode() if vjp is not None else b"none"))
            hexd = digest.hexdigest()
            prefix = f"sjx_{hexd[:16]}_"
            functions = {}
            symbol = prefix + "main"
            for p in self.platforms:
                symbol, functions[p] = portable.private_functions(self._text(p), prefix)
            self._called = CalledModule(
                self.fun_name, symbol, functions, _types(self.in_avals),
                _types(self.out_avals), hexd, _reference_runner(self), vjp)
        return self._called

    # ---- running -------------------------------------------------------------------------
    def call(self, *args, **kwargs):
        """Run the exported function: eagerly, inside jit, under vmap (once per example)
        and under grad (with an exported VJP). Arguments must have the exported
        structure, shapes and dtypes; Python scalars take the exported dtype."""
        leaves, treedef = tree.flatten((args, kwargs))
        if treedef is not self.in_tree and not art.same_structure(treedef, self.in_tree):
            raise TypeError(at_user_line(
                f"{self.fun_name} was exported for arguments of structure "
                f"{_args_text(self.in_tree)}, and was called with {_args_text(treedef)}; "
                f"pass the same tuples, lists, dicts and None as at export"))
        paths = self.in_tree.leaf_paths()
        if self.symbolic:
            shapes = [tuple(x.shape) if hasattr(x, "shape") else () for x in leaves]
            env = symbolic.bind(self.in_avals, shapes, [_path_text(p) for p in paths],
                                self.fun_name)
            return self.specialize(env).call(*args, **kwargs)
        tensors = [_argument(leaf, aval, self.fun_name, _path_text(path))
                   for leaf, aval, path in zip(leaves, self.in_avals, paths, strict=True)]
        backend = next((t._backend for t in tensors if t._backend.concrete), None) \
            if tensors else None
        platform = getattr(backend or concrete_default(), "platform", None)
        if platform is not None and platform not in self._modules:
            raise ValueError(at_user_line(
                f"{self.fun_name} was exported for {', '.join(self.platforms)}, and this call "
                f"runs on {platform}; export it again with platforms=(..., {platform!r}), or "
                f"run it where one of those platforms is available "
                f"(stablejit.set_default_platform)"))
        if platform is not None and not self._supplied:
            self._supply_executables(platform)
        module = self.called_module()
        outs = bind(call_exported, tensors, Attrs({"module": module}))
        for o, aval in zip(outs, self.out_avals, strict=True):
            o.weak = aval.weak_type
        return tree.unflatten(self.out_tree, list(outs))

    def specialize(self, env: dict[str, int]) -> Exported:
        """This function with its dimension variables bound to `env` ({'b': 7}): a
        static Exported whose modules jaxlib's refine_polymorphic_shapes made static
        (cached: each binding is specialised, and compiled, once)."""
        key = tuple(sorted(env.items()))
        spec = self._specialized.get(key)
        if spec is not None:
            return spec
        in_avals = symbolic.concrete(self.in_avals, env)
        out_avals = symbolic.concrete(self.out_avals, env)
        arg_types = [t.mlir() for t in _types(in_avals)]
        modules, texts = {}, {}
        for p in self.platforms:
            try:
                text, results = portable.refine(self._text(p), arg_types)
            except portable.PortableError as e:
                raise ValueError(at_user_line(
                    f"{self.fun_name} with {', '.join(f'{k} = {v}' for k, v in key)}: {e}"))\
                    from None
            want = [t.mlir() for t in _types(out_avals)]
            if results != want:  # the shape rules and StableHLO's disagree: a bug here
                raise ValueError(f"{self.fun_name}: specialised to {dict(key)}, the module "
                                 f"returns {results}, and its exported types say {want}")
            modules[p], texts[p] = portable.serialize(text), text
        vjp = self._vjp.specialize(env) if self._vjp is not None else None
        spec = Exported(fun_name=self.fun_name, in_tree=self.in_tree, out_tree=self.out_tree,
                        in_avals=in_avals, out_avals=out_avals, platforms=self.platforms,
                        modules=modules, donated=self.donated, vjp=vjp,
                        calling_convention_version=self.calling_convention_version,
                        producer=self.producer)
        spec._texts.update(texts)
        if len(self._specialized) >= _SPECIALIZED:  # each holds its modules' text
            del self._specialized[next(iter(self._specialized))]
        self._specialized[key] = spec
        return spec

    def _supply_executables(self, platform: str) -> None:
        """Hand the compiled executables this artifact brought for `platform` to the
        compiler, if they were built by this jaxlib with these flags for this device."""
        self._supplied = True
        device = rt_client.default_device(platform)
        here = _executable_key(platform, device)
        for key, payload in self._executables:
            if key.get("platform") != platform:
                continue
            differ = [k for k in here if k != "program" and key.get(k) != here[k]]
            if differ:
                warnings.warn(
                    f"{self.fun_name}: the artifact's compiled executable for {platform} was "
                    f"built with a different {', '.join(differ)} ("
                    + "; ".join(f"{k}: {key.get(k)!r} there, {here[k]!r} here"
                                for k in differ)
                    + "); compiling the StableHLO instead", ExportWarning, stacklevel=3)
                continue
            compilation.supply_executable(key["program"], platform, device.id, payload)

    # ---- writing -------------------------------------------------------------------------
    def serialize(self, executables: bool = False) -> bytearray:
        """The artifact's bytes (docs/export_format.md). executables=True also stores the
        compiled executable for each exported platform this machine can compile for, so
        a process with the same jaxlib, platform and XLA flags runs it without compiling
        (its call, eagerly)."""
        blobs: list[bytes] = []
        meta = self._meta(blobs, top=True)
        if executables and self.symbolic:
            raise ValueError(at_user_line(
                f"{self.fun_name}: serialize(executables=True) needs static shapes, and this "
                f"function has symbolic dimensions ({self.signature()}); serialize it "
                f"without executables (each shape compiles once where it runs), or export "
                f"it for a concrete shape"))
        if executables:
            meta["executables"] = [dict(key, blob=_add(blobs, payload))
                                   for key, payload in self._compile_all()]
        return art.pack(meta, blobs)

    def _meta(self, blobs: list[bytes], top: bool) -> dict:
        meta = {
            "fun_name": self.fun_name,
            "calling_convention_version": self.calling_convention_version,
            "in_avals": art.encode_avals(self.in_avals),
            "out_avals": art.encode_avals(self.out_avals),
            "platforms": list(self.platforms),
            "modules": {p: {"blob": _add(blobs, self._modules[p]),
                            "stablehlo_version": portable.artifact_version(self._modules[p])}
                        for p in self.platforms},
            "donated": list(self.donated),
            "constraints": list(getattr(symbolic.scope_of(self.in_avals), "constraints", ())),
            "vjp": self._vjp._meta(blobs, top=False) if self._vjp is not None else None,
        }
        if top:
            meta.update({
                "in_tree": art.encode_tree(self.in_tree),
                "out_tree": art.encode_tree(self.out_tree),
                "producer": self.producer, "shardings": None, "effects": [],
                "nr_devices": 1, "executables": []})
        return meta

    def _compile_all(self) -> list[tuple[dict, bytes]]:
        out = []
        for p in self.platforms:
            if not rt_client.is_available(p):
                continue
            backend = XlaBackend.for_platform(p)
            b = Builder(call_exported.name)  # the program an eager call compiles
            params = [b.param(t) for t in _types(self.in_avals)]
            fn = b.build(b.bind(call_exported, params, {"module": self.called_module()}))
            prog = backend.program(fn, name=call_exported.name, optimize=False)
            key = _executable_key(p, backend.device)
            key["program"] = prog.stablehlo
            out.append((key, prog.executable.serialize()))
        return out


def _add(blobs: list[bytes], data: bytes) -> int:
    blobs.append(bytes(data))
    return len(blobs) - 1


def _producer() -> dict:
    from .. import __version__  # noqa: PLC0415 - the package's own version

    return {"stablejit": __version__, "jaxlib": jaxlib.__version__,
            "stablehlo": portable.CURRENT, "stablehlo_target": portable.TARGET}


def _executable_key(platform: str, device) -> dict:
    """What must match for a serialized executable to be loaded instead of compiled."""
    client = device.client
    return {"platform": platform, "jaxlib": jaxlib.__version__,
            "platform_version": str(client.platform_version),
            "device_kind": str(device.device_kind), "device_id": int(device.id),
            "xla_flags": disk_cache.significant_xla_flags(config.xla_flags()),
            "compile_options": hashlib.sha256(
                compile_options(device).SerializeAsString()).hexdigest()}


def _types(avals):
    from ..compiler.ir import TensorType  # noqa: PLC0415 - cheap; keeps imports short

    return tuple(TensorType(a.shape, a.dtype) for a in avals)


def _reference_runner(exp: Exported):
    """The reference rule of the module: run the host module with XLA (the reference
    backend has no IR for it)."""
    def run(*arrays):
        if "host" not in exp._modules:
            raise ValueError(f"{exp.fun_name} was exported without a host module, so the "
                             f"reference backend cannot run it; export with 'host' among "
                             f"the platforms")
        host = XlaBackend.for_platform("host")
        outs = host.apply(call_exported, [host.from_numpy(np.asarray(a)) for a in arrays],
                          Attrs({"module": exp.called_module()}))
        return tuple(o.numpy() for o in outs)
    return run


def _path_text(path) -> str:
    return "args" + tree.keystr(path[1:]) if path and getattr(path[0], "idx", 1) == 0 \
        else "kwargs" + tree.keystr(path[1:])


def _args_text(td) -> str:
    args, kwargs = td.children if td.kind is tuple and len(td.children) == 2 else (td, None)
    text = repr(args)
    if kwargs is not None and kwargs.children:
        text += f" with keyword arguments {kwargs!r}"
    return text


def _argument(x, aval: ShapeDtypeStruct, name: str, where: str) -> Tensor:
    """A call's argument leaf as a tensor of the exported type, or a TypeError."""
    from .. import numpy as snp  # noqa: PLC0415 - the namespace sits above this module

    if type(x) in PY_SCALARS:
        if aval.shape != ():
            raise TypeError(at_user_line(
                f"{name}: argument {where} is the Python {type(x).__name__} {x!r}, but the "
                f"function was exported for {_aval_text(aval)}"))
        return snp.asarray(x, dtype=aval.dtype)
    if isinstance(x, Tensor):
        shape, dtype = tuple(x.shape), x.dtype
    elif hasattr(x, "shape") and hasattr(x, "dtype"):
        shape, dtype = tuple(np.shape(x)), dt.dtype(x.dtype)
    else:
        raise TypeError(at_user_line(
            f"{name}: argument {where} is a {type(x).__name__}, not a tensor or array"))
    if shape != aval.shape or dtype is not aval.dtype:
        raise TypeError(at_user_line(
            f"{name}: argument {where} has type {dtype.name}{list(shape)}, but the function "
            f"was exported for {_aval_text(aval)}; pass an array of that shape and dtype "
            f"(or export the function again for this one)"))
    return x if isinstance(x, Tensor) else snp.asarray(x)


def _aval_text(a: ShapeDtypeStruct) -> str:
    return f"{a.dtype.name}{list(a.shape)}"


# ---- export ------------------------------------------------------------------------------

def _spec_leaf(x):
    """An argument leaf as jit's lowering takes it: ShapeDtypeStructs (and other objects
    with .shape and .dtype) become zero-strided NumPy arrays of their type; those with
    symbolic dimensions stay as they are (symbolic.stage_symbolic stages them)."""
    if isinstance(x, (Tensor, np.ndarray, np.generic)) or type(x) in PY_SCALARS \
            or symbolic.is_symbolic_spec(x):
        return x
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return np.broadcast_to(np.zeros((), dt.dtype(x.dtype).np), tuple(x.shape))
    raise TypeError(f"is a {type(x).__name__}; pass ShapeDtypeStructs, tensors, arrays or "
                    f"Python scalars (make settings static with jit's static_argnums)")


def _specs(args, kwargs, name: str):
    """The arguments with every leaf made a spec, naming the path of a bad leaf."""
    def leaf(path, x):
        try:
            return _spec_leaf(x)
        except TypeError as e:
            raise TypeError(at_user_line(
                f"export({name}): the argument {_path_text(path)} {e}")) from None
    typed = tree.map_with_path(leaf, (tuple(args), dict(kwargs)))
    return typed[0], typed[1]


def _closed(fn: Function, n_args: int, captured) -> Function:
    """fn with the tensors it closed over (its params past the arguments) as constants:
    an artifact holds its weights."""
    if len(fn.params) == n_args:
        return fn
    consts = [Op(shape_ops.constant, (), Attrs({"value": Literal(np.asarray(t.numpy()))}),
                 (p,)) for p, t in zip(fn.params[n_args:], captured, strict=True)]
    return Function(fn.name, fn.params[:n_args], consts + list(fn.ops), fn.results)


def _platform_list(platforms, fun_name: str) -> tuple[str, ...]:
    if platforms is None:
        from ..platforms import default_platform  # noqa: PLC0415

        return (default_platform(),)
    if isinstance(platforms, str):
        platforms = (platforms,)
    out = []
    for p in platforms:
        q = _ALIASES.get(p, p)
        if q not in PLATFORMS:
            raise ValueError(at_user_line(
                f"export({fun_name}, platforms=...): unknown platform {p!r}; use "
                f"{', '.join(PLATFORMS)}"))
        if q in out:
            raise ValueError(at_user_line(
                f"export({fun_name}, platforms=...): {p!r} is listed twice"))
        out.append(q)
    if not out:
        raise ValueError(at_user_line(f"export({fun_name}): platforms is empty"))
    return tuple(out)


def export(fun_jit, *, platforms=None, vjp_order: int = 0):
    """export(jitted, platforms=("host", "cuda"), vjp_order=0)(*arg_specs, **kw) ->
    Exported (jax.export.export's form). Arguments are ShapeDtypeStructs, tensors, arrays
    or Python scalars, in pytrees; static arguments of the jit are fixed at their value
    here and are not arguments of Exported.call. vjp_order=1 also exports the VJP, so
    the exported function can be differentiated where it is called.

    Example:
        >>> spec = stablejit.ShapeDtypeStruct(stablejit.export.symbolic_shape('b'), snp.float32)
        >>> exp = stablejit.export.export(stablejit.jit(lambda x: x * 2.0 + 1.0))(spec)
        >>> exp.in_avals
        (ShapeDtypeStruct(shape=(b,), dtype=float32),)
        >>> exp.call(snp.asarray([1.0, 2.0, 3.0]))     # any b
        Tensor<f32[3] xla:host:0>
        [3., 5., 7.]
    """
    if not isinstance(fun_jit, Jitted):
        if not callable(fun_jit):
            raise TypeError(at_user_line(
                f"export expects a jitted function, got {type(fun_jit).__name__}"))
        fun_jit = jit(fun_jit)
    if vjp_order not in (0, 1):
        raise ValueError(at_user_line(
            f"export: vjp_order={vjp_order!r}; 0 and 1 are supported (the exported VJP is "
            f"not itself differentiable)"))
    name = fun_jit.__name__
    plats = _platform_list(platforms, name)

    def do_export(*args, **kwargs) -> Exported:
        args, kwargs = _specs(args, kwargs, name)
        _, dyn_args, dyn_kwargs = fun_jit._split(args, kwargs)
        leaves, in_tree = tree.flatten((dyn_args, dyn_kwargs))
        try:
            for label, sub in zip(("args", "kwargs"), in_tree.children, strict=True):
                art.encode_tree(sub, label)
        except TypeError as e:
            raise TypeError(at_user_line(f"export({name}): the arguments: {e}")) from None
        if any(symbolic.is_symbolic_spec(x) for x in leaves):
            lowered = symbolic.stage_symbolic(fun_jit, args, kwargs)
        else:
            lowered = fun_jit.lower(*args, platform=plats[0], **kwargs)
        if lowered._mutated:
            raise TypeError(at_user_line(
                f"export({name}): the function writes into its arguments or into tensors "
                f"it closes over; an exported function must return new values instead"))
        fn = _closed(lowered.ir, len(leaves), lowered._captured)
        spans = _multi_device(fn, fun_jit)
        if spans:
            raise TypeError(at_user_line(
                f"export({name}): the function spans several devices ({spans}); an artifact "
                f"holds a program for one device: export the function without shardings "
                f"(a plain jit of the per-device computation) and place its inputs and "
                f"outputs after loading it"))
        callbacks = host_callbacks(fn)
        if callbacks:
            raise TypeError(at_user_line(
                f"export({name}): the function calls the Python function "
                f"{callbacks[0].name!r} (a callback or debug print), which an artifact "
                f"cannot hold; remove it before exporting"))
        out_tree = lowered._out_tree
        try:
            art.encode_tree(out_tree, "out")
        except TypeError as e:
            raise TypeError(at_user_line(f"export({name}): the outputs: {e}")) from None
        in_avals = [ShapeDtypeStruct(t.shape, t.dtype, weak_type=_is_weak(x))
                    for t, x in zip(fn.param_types, leaves, strict=True)]
        symbolic.check_variables(in_avals, name)
        out_weak = lowered._out_weak or (False,) * len(fn.results)
        out_avals = [ShapeDtypeStruct(t.shape, t.dtype, weak_type=w)
                     for t, w in zip(fn.result_types, out_weak, strict=True)]
        modules = {p: _portable(fn, p, name) for p in plats}
        donated = sorted(fun_jit._donation(lowered._key))
        vjp = _export_vjp(fun_jit, args, kwargs, in_avals, out_avals, plats) \
            if vjp_order else None
        return Exported(fun_name=name, in_tree=in_tree, out_tree=out_tree,
                        in_avals=in_avals, out_avals=out_avals, platforms=plats,
                        modules=modules, donated=donated, vjp=vjp)

    return do_export


def _multi_device(fn: Function, fun_jit) -> str:
    """What makes fn a program over several devices (empty if nothing): the jit's
    in_shardings/out_shardings, or a shard_map, sharding constraint or collective op,
    which the artifact format (one device's module) would lose or not parse."""
    if fun_jit.in_shardings is not None or fun_jit.out_shardings is not None:
        return "jit's in_shardings/out_shardings"

    def visit(f: Function) -> str:
        for op in f.ops:
            if op.prim.family in ("sharding", "collective"):
                return f"its {op.prim.name} op"
            for r in op.regions:
                found = visit(r)
                if found:
                    return found
        return ""
    return visit(fn)


def _is_weak(x) -> bool:
    if type(x) in PY_SCALARS:
        from ..promotion import is_weak_scalar  # noqa: PLC0415

        return bool(is_weak_scalar(x))
    return isinstance(x, Tensor) and bool(x.weak)


def _portable(fn: Function, platform: str, name: str) -> bytes:
    _, text = compilation.lower(fn, platform=platform)
    try:
        return portable.serialize(text)
    except portable.PortableError as e:
        raise ValueError(at_user_line(f"export({name}) for {platform}: {e}")) from None


def _export_vjp(fun_jit: Jitted, args, kwargs, in_avals, out_avals, plats) -> Exported:
    """The VJP as an exported function of flat leaves: (*primals, *output cotangents)
    -> cotangents of the floating-point primals."""
    from ..autodiff import vjp  # noqa: PLC0415 - autodiff sits beside jit

    static, dyn_args, dyn_kwargs = fun_jit._split(args, kwargs)
    _, in_tree = tree.flatten((dyn_args, dyn_kwargs))
    n = len(in_avals)
    floats = [i for i, a in enumerate(in_avals) if a.dtype.kind in "fc"]

    def full_call(*leaves):
        d_args, d_kwargs = tree.unflatten(in_tree, leaves)
        full = list(d_args)
        for i, v in static:
            if isinstance(i, int):
                full.insert(i, v)
        kw = dict(d_kwargs, **{k: v for k, v in static if isinstance(k, str)})
        return tuple(tree.leaves(fun_jit.fn(*full, **kw)))

    def bwd(*flat):
        _, pullback = vjp(full_call, *flat[:n])
        grads = pullback(tuple(flat[n:]))
        return tuple(grads[i] for i in floats)

    bwd.__name__ = f"{fun_jit.__name__}_vjp"
    specs = [ShapeDtypeStruct(a.shape, a.dtype) for a in in_avals + out_avals]
    return export(jit(bwd), platforms=plats)(*specs)


def deserialize(data) -> Exported:
    """The Exported an artifact holds (bytes from Exported.serialize). Raises ArtifactError
    for bytes that are not a whole, unchanged artifact of a format this stablejit reads.

    Example:
        >>> f = stablejit.jit(lambda x: x * 2.0 + 1.0)
        >>> spec = stablejit.ShapeDtypeStruct((2,), snp.float32)
        >>> data = stablejit.export.export(f)(spec).serialize()
        >>> stablejit.export.deserialize(data).call(snp.asarray([1.0, 2.0]))
        Tensor<f32[2] xla:host:0>
        [3., 5.]
    """
    meta, blobs = art.unpack(data)
    try:
        exp = _from_meta(meta, blobs, top=True)
    except (KeyError, IndexError, TypeError, AttributeError) as e:  # a bad writer
        raise ArtifactError(f"the artifact's metadata is incomplete ({type(e).__name__}: "
                            f"{e}); export it again") from None
    for e in (exp, exp._vjp) if exp._vjp is not None else (exp,):
        for p in e.platforms:  # read every module now: a bad one fails here, not in a call
            try:
                e._text(p)
            except portable.PortableError as err:
                raise ArtifactError(f"the artifact's StableHLO for {p}: {err}") from None
    return exp


def _from_meta(meta: dict, blobs: list[bytes], top: bool) -> Exported:
    version = meta["calling_convention_version"]
    if version != CALLING_CONVENTION_VERSION:
        raise ArtifactError(f"the artifact uses calling convention {version}; this stablejit "
                            f"runs {CALLING_CONVENTION_VERSION}; upgrade stablejit")
    modules = {}
    for p, m in meta["modules"].items():
        v = m.get("stablehlo_version") or ""
        if v and portable.version_tuple(v) > portable.version_tuple(portable.CURRENT):
            raise ArtifactError(
                f"the artifact's StableHLO for {p} is version {v}, newer than this jaxlib's "
                f"{portable.CURRENT} (jaxlib {jaxlib.__version__}); upgrade jaxlib")
        if v and portable.version_tuple(v) < portable.version_tuple(portable.MINIMUM):
            raise ArtifactError(
                f"the artifact's StableHLO for {p} is version {v}, older than the oldest this "
                f"jaxlib reads ({portable.MINIMUM}): it has expired; export it again")
        modules[p] = blobs[m["blob"]]
    scope = symbolic.sym.Scope()
    try:
        for c in meta.get("constraints", ()):
            scope.add_constraint(c)
    except ValueError as e:
        raise ArtifactError(f"the artifact's constraints do not parse ({e}); export it "
                            f"again") from None
    in_avals = art.decode_avals(meta["in_avals"], scope)
    out_avals = art.decode_avals(meta["out_avals"], scope)
    vjp = _from_meta(meta["vjp"], blobs, top=False) if meta.get("vjp") else None
    if top:
        in_tree, out_tree = art.decode_tree(meta["in_tree"]), art.decode_tree(meta["out_tree"])
        executables = [({k: v for k, v in e.items() if k != "blob"}, blobs[e["blob"]])
                       for e in meta.get("executables", [])]
    else:
        in_tree = tree.structure(((0,) * len(in_avals), {}))
        out_tree = tree.structure((0,) * len(out_avals))
        executables = []
    if in_tree.num_leaves != len(in_avals) or out_tree.num_leaves != len(out_avals):
        raise ArtifactError("the artifact's trees and types disagree; export it again")
    return Exported(fun_name=meta["fun_name"], in_tree=in_tree, out_tree=out_tree,
                    in_avals=in_avals, out_avals=out_avals, platforms=meta["platforms"],
                    modules=modules, donated=meta.get("donated", ()), vjp=vjp,
                    executables=executables, calling_convention_version=version,
                    producer=meta.get("producer"))
