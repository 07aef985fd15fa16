"""Every `>>>` example in the docstrings of the public namespaces runs, and shows its
real output, three ways (EXLA's pattern: the same examples on every backend):

- eagerly, compared exactly with the docstring;
- inside `stablejit.lazy()`, where the same values must come out of one pending graph;
- under `stablejit.jit`: an example whose output is a tensor (or a tuple of them) is
  evaluated as `jit(lambda: <example>)()`, so every namespace call in it is traced and
  compiled. Examples whose result has a data-dependent shape (nonzero, unique ...) must
  raise MustCompileError under jit, as their docstrings say; they are then run eagerly.

Under lazy and jit the backend named in a tensor's repr differs ('lazy:xla:host:0,
pending'), so the comparison there reads `Tensor<f32[3] ...>` as `Tensor<f32[3]>`.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import re
import types

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit.errors import MustCompileError

from tests.device_free.test_public_api import all_namespaces

# The examples whose output shape depends on the data: jit refuses them (no size=).
DATA_DEPENDENT = {"nonzero", "flatnonzero", "argwhere", "unique_values", "unique_counts",
                  "unique_inverse", "unique_all"}


def _docstring_tests() -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder(recurse=False)
    seen, tests = set(), []
    for modname in all_namespaces():
        mod = importlib.import_module(modname)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if isinstance(obj, types.ModuleType) or id(obj) in seen or not callable(obj):
                continue
            seen.add(id(obj))
            target = obj if (isinstance(obj, type) or hasattr(obj, "__code__")
                             or hasattr(obj, "__wrapped__")) else type(obj)
            for t in finder.find(target, f"{modname}.{name}", globs={}):
                if t.examples:
                    tests.append(t)
    return tests


TESTS = _docstring_tests()


class _AnyBackend(doctest.OutputChecker):
    """Compares outputs with the backend part of tensor reprs left out."""

    _BACKEND = re.compile(r"Tensor<(\S+) [^>]*>")

    def check_output(self, want, got, optionflags):
        return super().check_output(self._BACKEND.sub(r"Tensor<\1>", want),
                                    self._BACKEND.sub(r"Tensor<\1>", got), optionflags)


class _OnDefaultPlatform(doctest.OutputChecker):
    """The examples print host tensors (`xla:host:0`); run with another default platform
    (STABLEJIT_PLATFORM=cuda on a GPU), its devices print instead."""

    def check_output(self, want, got, optionflags):
        platform = stablejit.default_platform()
        if platform != "host":
            want = want.replace("xla:host:", f"xla:{platform}:")
        return super().check_output(want, got, optionflags)


def _globals() -> dict:
    return {"np": np, "stablejit": stablejit, "snp": snp}


def _run(test: doctest.DocTest, checker=None, globs=None) -> doctest.TestResults:
    test = doctest.DocTest([*test.examples], globs or _globals(), test.name, test.filename,
                           test.lineno, test.docstring)
    runner = doctest.DocTestRunner(checker=checker or _OnDefaultPlatform(),
                                   optionflags=doctest.ELLIPSIS)
    out = []
    result = runner.run(test, out=out.append, clear_globs=True)
    assert result.failed == 0, "".join(out)
    return result


# The most used names, which must keep their examples (the numpy functions have theirs
# from the numpy docstring tables).
MOST_USED = {
    "stablejit": "grad value_and_grad vjp jvp jacrev jacfwd hessian checkpoint cond switch "
                 "while_loop fori_loop scan custom_vjp custom_jvp eval_shape make_jaxpr "
                 "device_put jit vmap lazy",
    "stablejit.tree": "map flatten unflatten leaves",
    "stablejit.random": "key split normal uniform randint categorical permutation",
    "stablejit.nn": "relu softmax log_softmax gelu one_hot logsumexp",
    "stablejit.nn.initializers": "glorot_normal he_normal zeros",
    "stablejit.lax": "add dot_general conv_general_dilated reduce scan dynamic_slice "
                     "dynamic_update_slice",
    "stablejit.numpy.linalg": "solve inv cholesky qr svd eigh norm det",
    "stablejit.numpy.fft": "fft ifft rfft",
    "stablejit.scipy.special": "erf gammaln logsumexp expit",
    "stablejit.export": "export deserialize symbolic_shape",
}


def test_the_namespaces_have_examples():
    names = {t.name.rsplit(".", 1)[1] for t in TESTS}
    # (215: stablejit.tree_map is tree.map again, one function with one example)
    assert len(TESTS) >= 215, f"{len(TESTS)} docstrings with examples; there were 215"
    assert DATA_DEPENDENT <= names
    documented = {id(getattr(importlib.import_module(mod), name))
                  for mod, name in (t.name.rsplit(".", 1) for t in TESTS)}
    missing = [f"{mod}.{name}" for mod, names in MOST_USED.items() for name in names.split()
               if id(getattr(importlib.import_module(mod), name)) not in documented]
    assert not missing, f"no docstring example: {missing}"


@pytest.mark.parametrize("test", TESTS, ids=[t.name for t in TESTS])
def test_example_eagerly(test):
    _run(test)


@pytest.mark.parametrize("test", TESTS, ids=[t.name for t in TESTS])
def test_example_lazily(test):
    with stablejit.lazy():
        _run(test, _AnyBackend())


_TENSORS = re.compile(r"\(?(Tensor<|\w+Result\(\w+=Tensor<)")  # a tensor, a tuple of them


def _is_expression(source: str) -> bool:
    try:
        ast.parse(source, mode="eval")
    except SyntaxError:
        return False
    return True


@pytest.mark.parametrize("test", TESTS, ids=[t.name for t in TESTS])
def test_example_under_jit(test):
    refused = []

    def under_jit(fn):
        try:
            return stablejit.jit(fn)()
        except MustCompileError:
            refused.append(test.name)
            return fn()

    examples = []
    for ex in test.examples:
        if _TENSORS.match(ex.want) and _is_expression(ex.source):
            # the newline ends a trailing comment of the example
            ex = doctest.Example(f"__under_jit(lambda: ({ex.source.strip()}\n))\n", ex.want,
                                 ex.exc_msg, ex.lineno, ex.indent, ex.options)
        examples.append(ex)
    jitted = doctest.DocTest(examples, {}, test.name, test.filename, test.lineno,
                             test.docstring)
    _run(jitted, _AnyBackend(), {**_globals(), "__under_jit": under_jit})
    data_dependent = test.name.rsplit(".", 1)[1] in DATA_DEPENDENT
    assert bool(refused) == data_dependent, (
        f"{test.name}: under jit the example " + ("compiled, but the function is listed as "
                                                  "data-dependent" if not refused else
                                                  "raised MustCompileError"))
