"""Running code three ways — under stablejit.jit (XLA), eagerly on the XLA backend and on
the reference backend — and comparing every path with NumPy.

    PATHS = ("jit", "eager", "reference")
    to_backend(x, path) -> Tensor on the XLA backend ("jit"/"eager") or the reference one.
    run_three_ways(fn, *args) -> {path: pytree of numpy arrays}
        fn(*args) with array arguments made Tensors, on every path. Non-array args
        (Python scalars, None, strings ...) are passed through unchanged (as jit arguments
        they are dynamic weak scalars when they are numbers; wrap fn in a closure to make
        them static).
    check_three_ways(fn, np_fn, *args, rtol=None, atol=None, dtype=None, check_dtype=True)
        run_three_ways, then compare every path with np_fn(*args) (NumPy args).
    run_primitive(prim, operands, attrs, path) -> tuple of numpy results
        one primitive applied via a compiled one-op jit program, the eager XLA backend,
        or the reference backend.
    run_primitive_jit_batch(prim, [(operands, attrs), ...]) -> [tuple of numpy results]
        the jit path for many cases of one primitive in one compiled program.
"""

from __future__ import annotations

import numpy as np
import stablejit
from stablejit.compiler import dtypes as dt
from stablejit.compiler.ir import Attrs
from stablejit.dispatch import bind
from stablejit.tensor import Tensor

from tests.support.compare import assert_close

PATHS = ("jit", "eager", "reference")


def xla_backend():
    return stablejit.XlaBackend.for_platform("host")


def to_backend(x, path: str):
    """NumPy arrays (and NumPy scalars) become Tensors on the path's backend; anything
    else passes through."""
    if isinstance(x, (np.ndarray, np.generic)):
        backend = stablejit.REFERENCE if path == "reference" else xla_backend()
        return backend.from_numpy(np.asarray(x))
    if isinstance(x, (list, tuple)) and x and all(isinstance(e, np.ndarray) for e in x):
        return type(x)(to_backend(e, path) for e in x)
    return x


def _to_numpy_tree(out):
    if isinstance(out, Tensor):
        return out.numpy()
    if isinstance(out, (list, tuple)):
        return type(out)(_to_numpy_tree(o) for o in out)
    if isinstance(out, dict):
        return {k: _to_numpy_tree(v) for k, v in out.items()}
    return out


def run_three_ways(fn, *args, paths=PATHS) -> dict:
    """{path: fn(*args) as NumPy} for jit (XLA), eager XLA and reference."""
    results = {}
    for path in paths:
        targs = [to_backend(a, path) for a in args]
        if path == "jit":
            out = stablejit.jit(fn)(*targs)
        elif path == "reference":
            with stablejit.default_backend("reference"):
                out = fn(*targs)
        else:
            out = fn(*targs)
        results[path] = _to_numpy_tree(out)
    return results


def _leaves(x):
    if isinstance(x, (list, tuple)):
        return [leaf for e in x for leaf in _leaves(e)]
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in _leaves(x[k])]
    return [x]


def check_three_ways(fn, np_fn, *args, rtol=None, atol=None, dtype=None,
                     check_dtype: bool = True, paths=PATHS, signed_zeros: bool = False):
    """Run fn on every path and compare with np_fn(*args). `dtype` is the dtype the
    result must have (default: NumPy's result dtype when check_dtype). Returns the
    results dict."""
    expected = np_fn(*args)
    results = run_three_ways(fn, *args, paths=paths)
    exp_leaves = _leaves(expected)
    for path, out in results.items():
        leaves = _leaves(out)
        assert len(leaves) == len(exp_leaves), f"{path}: {len(leaves)} outputs, " \
                                               f"expected {len(exp_leaves)}"
        for i, (a, e) in enumerate(zip(leaves, exp_leaves, strict=True)):
            e = np.asarray(e)
            a = np.asarray(a)
            if dtype is not None:
                want = dt.dtype(dtype).np
                assert a.dtype == want, f"{path} output {i}: dtype {a.dtype}, expected {want}"
                e = e.astype(want) if e.dtype != want else e
            assert_close(a, e, rtol=rtol, atol=atol, check_dtype=check_dtype,
                         signed_zeros=signed_zeros,
                         msg=f"{getattr(fn, '__name__', fn)} via {path}, output {i}")
    return results


# ---- one primitive, three ways ---------------------------------------------------------

def run_primitive(prim, operands, attrs, path: str, regions=()) -> tuple[np.ndarray, ...]:
    """Apply one primitive to NumPy operands via `path`: "jit" (a compiled one-op
    program), "eager" (the XLA backend) or "reference". `regions`: the op's region
    Functions (control flow, custom derivative calls)."""
    attrs = Attrs(attrs)
    regions = tuple(regions)
    tensors = [to_backend(np.asarray(o), path) for o in operands]
    if path == "jit":
        fn = stablejit.jit(lambda *xs: bind(prim, xs, attrs, regions=regions))
        if not tensors:  # zero-operand primitives (iota, constant) run on the default backend
            with stablejit.default_backend(xla_backend()):
                out = fn()
        else:
            out = fn(*tensors)
    elif path == "eager":
        out = bind(prim, tensors, attrs, backend=xla_backend(), regions=regions)
    else:
        out = bind(prim, tensors, attrs, backend=stablejit.REFERENCE, regions=regions)
    return tuple(t.numpy() for t in out)


def run_primitive_jit_batch(prim, cases) -> list[tuple[np.ndarray, ...]]:
    """Like run_primitive(..., "jit") for many (operands, attrs[, regions]) cases of one
    primitive at once: one compiled program holding one independent op per case (one XLA
    compile instead of one per case). Returns one tuple of results per case."""
    cases = [(list(ops), Attrs(attrs), tuple(*regions)) for ops, attrs, *regions in cases]

    def program(operand_lists):
        return [bind(prim, tuple(xs), attrs, regions=regions)
                for xs, (_, attrs, regions) in zip(operand_lists, cases, strict=True)]

    args = [[to_backend(np.asarray(o), "jit") for o in ops] for ops, _, _ in cases]
    with stablejit.default_backend(xla_backend()):
        out = stablejit.jit(program)(args)
    return [tuple(t.numpy() for t in res) for res in out]


def outcomes_of_script(path: str, timeout: int) -> dict:
    """Run a test module as a script in a child process with SCIPY_ARRAY_API=1 (SciPy
    reads it once, when first imported, which this process may have done already) and
    return the JSON object its last line prints: the outcome of each case."""
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, SCIPY_ARRAY_API="1")
    proc = subprocess.run([sys.executable, path], env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])
