"""The lowering tier: programs for platforms this machine may not have, checked
against jax without a device.

jit(f).lower(*args, platform=...) emits StableHLO for host, cuda, rocm or tpu without
creating that platform's client. Every primitive in PRIM_TABLE, and a set of user
programs, lowered by us and by jax for each platform make the same custom calls;
DIFFERENCES lists, with a reason each, where they do not."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from jaxlib.mlir import ir as mlir_ir
from stablejit.compiler import dtypes as dt
from stablejit.compiler.builder import Builder
from stablejit.compiler.emitter import emit_module
from stablejit.compiler.errors import ShapeError
from stablejit.compiler.ir import TensorType
from stablejit.compiler.primitives import linalg
from stablejit.compiler.primitives.linalg import UnsupportedPlatformError
from stablejit.compiler.registry import ALL
from stablejit.runtime import client
from stablejit.runtime.executable import hlo_before_optimizations

from tests.support.jax_equivalents import as_jax
from tests.support.mlir_check import parse_and_verify
from tests.support.prim_table import PRIM_TABLE, PrimCase

ACCELERATORS = ("cuda", "rocm", "tpu")


@pytest.mark.parametrize("platform", ACCELERATORS)
def test_lower_for_a_platform_creates_no_client(platform):
    x = np.eye(3, dtype=np.float32) * 2
    before = set(client._clients)
    lowered = stablejit.jit(lambda a: snp.linalg.cholesky(a) + 1).lower(x, platform=platform)
    assert set(client._clients) <= before | {"host"}
    assert lowered.platform == platform
    text = lowered.as_text()
    parse_and_verify(text)
    assert "lapack_" not in text  # the host's LAPACK calls are not emitted for accelerators
    host = stablejit.jit(lambda a: snp.linalg.cholesky(a) + 1).lower(x, platform="host")
    assert host.platform == "host" and "lapack_spotrf_ffi" in host.as_text()


@pytest.mark.skipif(client.is_available("cuda"), reason="a CUDA client exists here")
def test_compiling_a_lowering_for_a_missing_platform_says_so():
    lowered = stablejit.jit(lambda a: a * 2).lower(np.ones(2), platform="cuda")
    with pytest.raises(client.PlatformError, match="platform 'cuda' is not available"):
        lowered.compile()


def test_lower_names_an_unknown_platform():
    with pytest.raises(ValueError, match="platform='gpu'.*host, cuda, rocm, tpu"):
        stablejit.jit(lambda a: a).lower(np.ones(2), platform="gpu")


# ---- every primitive against jax's lowering for the same platform -------------------------
# Each primitive's program is lowered by us and, written with jax.lax (tests/
# jax_equivalents.py), by jax for the same platform (host too, as jax's "cpu"): no device
# or plugin is needed for either. Both must make the same custom calls (targets, operand
# and result types and layouts, in-place aliases, backend config); our text must parse
# and verify.

LINALG = {p.name for p in linalg.PRIMITIVES}

# jax registers a Python callback with the client of the platform it lowers for, so
# without a GPU it lowers callbacks for the host only; its GPU call differs from the
# host's in the target alone (xla_ffi_python_{cpu,gpu}_callback: emit_python_callback
# in jax/_src/callback.py), so ours is compared with that.
CALLBACKS = {"host_callback", "pure_callback"}


# (primitive or program, platform) -> why our lowering differs from jax's: the one table.
# The tests check that each listed difference is still there: an entry that no longer
# holds must be removed.
DIFFERENCES = {
    ("svd", "tpu"): "jax's TPU SVD is a QDWH polar decomposition written in jax (Eigh and "
                    "Qr calls inside while loops); we raise UnsupportedPlatformError there",
    **{("host_callback", p): "our io callback passes its order token (a u8 scalar) "
                             "through the call as an operand and a result; jax orders its "
                             "io callbacks outside the call" for p in ("host", "cuda", "rocm")},
    **{(c, "tpu"): "host callbacks on TPU: jax lowers them only with a TPU client (through "
                   "XLA's host transfers); we raise a clear error" for c in CALLBACKS},
    ("eig", "tpu"): "jax has no TPU rule for eig (it raises NotImplementedError); we raise "
                    "UnsupportedPlatformError",
    # user programs (PROGRAMS below)
    **{(f"linalg.{f}", "tpu"): "computed through svd: see ('svd', 'tpu')"
       for f in ("svd", "pinv", "lstsq")},
}


def _svd_case(label, shape, full_matrices, compute_uv=True):
    return "svd", PrimCase(label, [np.zeros(shape, np.float32)],
                           {"full_matrices": full_matrices, "compute_uv": compute_uv}, None)


# GPU SVD paths the example table's small matrices do not reach (lowered, never run):
# gesvdj's economy mode above 32x32, gesvd above 1024 (wide: on the transpose)
SVD_PATHS = [_svd_case("gesvdj-econ", (40, 36), False),
             _svd_case("gesvd-tall", (1100, 4), False),
             _svd_case("gesvd-wide", (2, 4, 1100), True),
             _svd_case("gesvd-values-only", (1100, 4), False, compute_uv=False)]


def _tier_cases():
    """Every case of the linalg family (their calls depend on shapes and dtypes) and the
    SVD paths above, one case (float32 where there is one) of every other primitive."""
    for name, spec in PRIM_TABLE.items():
        cases = [(name, c) for c in spec.cases()]
        if name not in LINALG:
            cases = [next(((n, c) for n, c in cases if "f32" in c.label), cases[0])]
        elif name == "svd":
            cases += SVD_PATHS
        for case in cases:
            for platform in ("host", *ACCELERATORS):
                yield *case, platform


TIER = list(_tier_cases())


def _one_op(name, case):
    b = Builder(name)
    params = [b.param(TensorType(np.shape(o), dt.dtype(np.asarray(o).dtype)))
              for o in case.operands]
    return b.build(b.bind(ALL[name], params, case.attrs, regions=case.regions))


def _ours(fn, platform):
    """Our custom calls for `platform`, or the error our emitter raised."""
    try:
        text = emit_module(fn, platform=platform)
    except (UnsupportedPlatformError, ShapeError) as e:
        return f"error: {e}"
    return custom_calls(parse_and_verify(text))


_JAX_LOWERED: dict = {}  # both tier tests read one jax lowering per case and platform


def _jax_lowered(name, case, platform):
    key = (name, case.label, platform)
    if key not in _JAX_LOWERED:
        via_host = name in CALLBACKS and platform in ("cuda", "rocm")
        with jax.enable_x64(True):
            _JAX_LOWERED[key] = jax.jit(as_jax(_one_op(name, case))).trace(
                *case.operands).lower(
                lowering_platforms=("cpu" if via_host or platform == "host" else platform,))
    return _JAX_LOWERED[key]


def _jax(name, case, platform):
    """jax's custom calls for `platform`, or the error jax raised."""
    try:
        calls = custom_calls(_jax_lowered(name, case, platform).compiler_ir("stablehlo"))
    except (ValueError, NotImplementedError) as e:  # NotImplementedError: no rule there
        return f"error: {str(e).splitlines()[0]}"
    if name in CALLBACKS and platform in ("cuda", "rocm"):
        calls = [(c[0].replace("_cpu_", "_gpu_"), *c[1:]) for c in calls]
    return calls


def custom_calls(module) -> list[tuple]:
    """What XLA needs to agree on for each stablehlo.custom_call of a module, sorted."""
    out = []

    def visit(op):
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    inner = inner.operation
                    if inner.name == "stablehlo.custom_call":
                        out.append(_call_summary(inner))
                    visit(inner)

    visit(module.operation)
    return sorted(out)


def _layouts(attrs, name, values):
    if name in attrs:
        return tuple(tuple(mlir_ir.DenseIntElementsAttr(a)) for a in mlir_ir.ArrayAttr(attrs[name]))
    ranks = [mlir_ir.RankedTensorType(v.type).rank for v in values]
    return tuple(tuple(range(r - 1, -1, -1)) for r in ranks)  # the default: row-major


def _config(attrs):
    """The backend config: a typed-FFI attribute dictionary (jax writes it as
    mhlo.backend_config beside api_version 1, we as backend_config with api_version 4:
    XLA reads both as the same FFI call), or a string with its api_version."""
    for key in ("mhlo.backend_config", "backend_config"):
        if key in attrs and isinstance(attrs[key], mlir_ir.DictAttr):
            d = attrs[key]
            return ("ffi", tuple(sorted((d[i].name, str(d[i].attr)) for i in range(len(d)))))
    text = mlir_ir.StringAttr(attrs["backend_config"]).value if "backend_config" in attrs else ""
    version = mlir_ir.IntegerAttr(attrs["api_version"]).value if "api_version" in attrs else 1
    return ("string", text, f"api_version {version}")


def _call_summary(op) -> tuple:
    a = op.attributes
    return (mlir_ir.StringAttr(a["call_target_name"]).value,
            tuple(str(v.type) for v in op.operands), tuple(str(r.type) for r in op.results),
            _layouts(a, "operand_layouts", op.operands),
            _layouts(a, "result_layouts", op.results), _config(a),
            str(a["output_operand_aliases"]) if "output_operand_aliases" in a else "[]")


@pytest.mark.parametrize("name,case,platform", TIER,
                         ids=[f"{n}-{c.label}-{p}" for n, c, p in TIER])
def test_custom_calls_match_jax_for_the_platform(name, case, platform):
    fn = _one_op(name, case)
    ours, theirs = _ours(fn, platform), _jax(name, case, platform)
    why = DIFFERENCES.get((name, platform))
    if why is not None:
        assert ours != theirs, (f"{name} on {platform} now lowers as jax does: remove its "
                                f"DIFFERENCES entry ({why})")
        return
    assert ours == theirs, (f"{name} ({case.label}) on {platform}:\n ours: {ours}\n jax:  "
                            f"{theirs}")


# XLA's view: the solver calls after StableHLO -> HLO conversion (which needs no device),
# where our api_version 4 + backend_config and jax's mhlo.backend_config must both become
# the same typed-FFI call. Cases in DIFFERENCES are checked by the test above.
HLO_KEYS = ("custom_call_target", "operand_layout_constraints", "output_to_operand_aliasing",
            "api_version", "backend_config", "custom_call_has_side_effect")
LINALG_TIER = [(n, c, p) for n, c, p in TIER if n in LINALG and (n, p) not in DIFFERENCES]


def _top_level_fields(text: str) -> list[str]:
    """Split `a={x, y}, b=z` at the commas outside braces and quotes."""
    fields, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(text):
        if ch == '"' and text[i - 1] != "\\":
            quoted = not quoted
        elif not quoted and ch in "{(":
            depth += 1
        elif not quoted and ch in "})":
            depth -= 1
        elif not quoted and depth == 0 and text.startswith(", ", i):
            fields.append(text[start:i])
            start = i + 2
    return [*fields, text[start:]]


def hlo_custom_calls(stablehlo: str) -> list[tuple]:
    """Each HLO custom call's result shape (with layouts) and the attributes XLA acts on."""
    out = []
    for line in hlo_before_optimizations(stablehlo).splitlines():
        if " custom-call(" not in line:
            continue
        rhs = line.split(" = ", 1)[1]
        shape, rest = rhs.split(" custom-call(", 1)
        attrs = _top_level_fields(rest.split("), ", 1)[1]) if "), " in rest else []
        keep = tuple(sorted(a for a in attrs if a.split("=", 1)[0] in HLO_KEYS))
        out.append((shape, keep))
    return sorted(out)


@pytest.mark.parametrize("name,case,platform", LINALG_TIER,
                         ids=[f"{n}-{c.label}-{p}" for n, c, p in LINALG_TIER])
def test_solver_calls_reach_xla_as_jax_s_do(name, case, platform):
    theirs = _jax_lowered(name, case, platform).as_text()
    ours = hlo_custom_calls(emit_module(_one_op(name, case), platform=platform))
    assert ours == hlo_custom_calls(theirs)
    # XLA expands these itself there: every other case calls a solver
    expanded = name == "triangular_solve" and platform != "host" or (name, platform) == (
        "cholesky", "tpu")
    assert bool(ours) != expanded, ours


# ---- user programs through jit(f).lower(*args, platform=...) ------------------------------
# The public path (passes included) for the compositions people call: linalg built on the
# primitives above, random bits (threefry in integer ops, as jax's default), fft, sort
# and scatter. name -> (our function, jax's, arguments); the same DIFFERENCES table.

_A = np.random.default_rng(0).normal(size=(4, 4)).astype(np.float32)
_B = np.ones((4, 2), np.float32)


def _both(f, *args):
    return f(snp), f(jnp), args


PROGRAMS = {
    "linalg.solve": _both(lambda n: n.linalg.solve, _A, _B),
    "linalg.inv": _both(lambda n: n.linalg.inv, _A),
    "linalg.slogdet": _both(lambda n: n.linalg.slogdet, _A),
    "linalg.eigh": _both(lambda n: n.linalg.eigh, _A),
    "linalg.eig": _both(lambda n: n.linalg.eig, _A),
    "linalg.eigvals": _both(lambda n: n.linalg.eigvals, _A.astype(np.complex64)),
    "linalg.svd": _both(lambda n: n.linalg.svd, _A),
    "linalg.pinv": _both(lambda n: n.linalg.pinv, _A),
    "linalg.lstsq": _both(lambda n: lambda a, b: n.linalg.lstsq(a, b)[0], _A, _B),
    "linalg.qr": _both(lambda n: n.linalg.qr, _A),
    "linalg.cholesky": _both(lambda n: lambda a: n.linalg.cholesky(a @ a.T + 4 * n.eye(4)),
                             _A),
    "fft.rfft": _both(lambda n: n.fft.rfft, _A),
    "argsort": _both(lambda n: lambda a: n.argsort(a, axis=0), _A),
    "scatter-add": _both(lambda n: lambda a: a.at[n.array([0, 2])].add(1.0), _A),
    "random.bits": (lambda k: stablejit.random.bits(k, (3, 5)),
                    lambda k: jax.random.bits(k, (3, 5)), (np.zeros(2, np.uint32),)),
    "random.normal": (lambda k: stablejit.random.normal(k, (3, 5)),
                      lambda k: jax.random.normal(k, (3, 5)), (np.zeros(2, np.uint32),)),
}
# (jax cannot lower eig for TPU at all: the primitive table above holds that difference)
PROGRAM_CASES = [(n, p) for n in PROGRAMS for p in ACCELERATORS
                 if not (n.startswith("linalg.eig") and n != "linalg.eigh" and p == "tpu")]


@pytest.mark.parametrize("name,platform", PROGRAM_CASES,
                         ids=[f"{n}-{p}" for n, p in PROGRAM_CASES])
def test_programs_lower_as_jax_for_the_platform(name, platform):
    ours_fn, jax_fn, args = PROGRAMS[name]
    try:
        text = stablejit.jit(ours_fn).lower(*args, platform=platform).as_text()
        ours = custom_calls(parse_and_verify(text))
    except UnsupportedPlatformError as e:
        ours = f"error: {e}"
    theirs = custom_calls(jax.jit(jax_fn).trace(*args).lower(
        lowering_platforms=(platform,)).compiler_ir("stablehlo"))
    why = DIFFERENCES.get((name, platform))
    if why is not None:
        assert ours != theirs, f"{name} on {platform} now lowers as jax does: remove ({why})"
        return
    assert ours == theirs, f"{name} on {platform}:\n ours: {ours}\n jax:  {theirs}"


def test_every_primitive_is_in_the_tier():
    assert {n for n, _, _ in TIER} == set(PRIM_TABLE)
    assert set(DIFFERENCES) <= {(n, p) for n, _, p in TIER} | set(PROGRAM_CASES)
