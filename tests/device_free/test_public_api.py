"""Every public namespace: what it exports, that each public name has a docstring, and
that each has an entry in the API reference (docs/_ext/api_pages.py writes the pages).

A namespace's public names are its `__all__`. Everything else a user can see in it
(`dir()`, tab completion, `help()`) must be a submodule of it: an import such as
`at_user_line` or `np` showing up in `stablejit.lax` is a private helper exported.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

NAMESPACES = ["stablejit", "stablejit.numpy", "stablejit.numpy.linalg", "stablejit.numpy.fft",
              "stablejit.lax", "stablejit.lax.linalg", "stablejit.nn", "stablejit.nn.initializers",
              "stablejit.random",
              "stablejit.scipy", "stablejit.scipy.special", "stablejit.scipy.linalg",
              "stablejit.scipy.signal", "stablejit.scipy.integrate",
              "stablejit.scipy.stats", "stablejit.tree", "stablejit.tree_util",
              "stablejit.sharding", "stablejit.distributed", "stablejit.debug",
              "stablejit.config", "stablejit.checkpoint_policies",
              "stablejit.example_libraries.stax", "stablejit.example_libraries.optimizers"]
OPTIONAL = ["stablejit.export"]  # documented once it lands


def _api_pages():
    spec = importlib.util.spec_from_file_location("api_pages", ROOT / "docs/_ext/api_pages.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def all_namespaces() -> list[str]:
    stats = importlib.import_module("stablejit.scipy.stats")
    out = NAMESPACES + [f"stablejit.scipy.stats.{n}" for n in stats.__all__]
    for name in OPTIONAL:
        try:
            importlib.import_module(name)
        except ImportError:
            continue
        out.append(name)
    return out


def public(modname: str) -> list[tuple[str, object]]:
    mod = importlib.import_module(modname)
    return [(n, getattr(mod, n)) for n in mod.__all__]


def _own_doc(obj) -> str | None:
    """obj's docstring, not one inherited from Python's builtins (a class without a
    docstring of its own would show `object`'s or `Exception`'s)."""
    doc = inspect.getdoc(obj)
    if doc is None:
        return None
    cls = obj if inspect.isclass(obj) else type(obj)
    for base in cls.__mro__:
        if base.__module__ == "builtins" and doc == inspect.cleandoc(base.__doc__ or ""):
            return None
    return doc.strip() or None


@pytest.mark.parametrize("modname", NAMESPACES)
def test_every_namespace_declares_its_public_names(modname):
    mod = importlib.import_module(modname)
    assert isinstance(getattr(mod, "__all__", None), list | tuple), f"{modname} has no __all__"
    missing = [n for n in mod.__all__ if not hasattr(mod, n)]
    assert not missing, f"{modname}.__all__ names what it lacks: {missing}"
    assert len(set(mod.__all__)) == len(mod.__all__), f"{modname}.__all__ repeats names"


def test_no_private_helper_is_exported():
    leaks = {}
    for modname in all_namespaces():
        mod = importlib.import_module(modname)
        shown = [n for n in dir(mod) if not n.startswith("_") and n not in mod.__all__]
        bad = [n for n in shown if not (isinstance(getattr(mod, n), types.ModuleType)
                                        and getattr(mod, n).__name__ == f"{modname}.{n}")]
        if bad:
            leaks[modname] = bad
    assert not leaks, ("names a user sees in a namespace but that are not in its __all__ "
                       f"(underscore them, or hide them with __dir__): {leaks}")


def test_every_public_callable_has_a_docstring():
    total, missing = 0, []
    for modname in all_namespaces():
        for name, obj in public(modname):
            if isinstance(obj, types.ModuleType) or not callable(obj):
                continue
            total += 1
            if _own_doc(obj) is None:
                missing.append(f"{modname}.{name}")
    assert total > 800, total  # the walk found the namespaces' names
    assert not missing, f"{len(missing)} of {total} public callables have no docstring: " \
                        f"{missing}"


def test_every_public_name_has_a_reference_entry():
    api = _api_pages()
    spaces = [m for m, _ in api.namespaces()]
    assert spaces == all_namespaces(), "docs/_ext/api_pages.py documents other namespaces"
    documented = set(spaces)
    for modname, what in api.namespaces():
        text = api.page(modname, what, documented)
        for name, _ in public(modname):
            assert f":: {name}\n" in text, f"{modname}.{name} has no entry in the API pages"


@pytest.mark.parametrize("name", ["lazy", "vmap"])
def test_help_shows_the_function_and_the_module(name):
    import stablejit
    fn = getattr(stablejit, name)
    assert callable(fn) and "module docstring" not in (fn.__doc__ or "")
    assert ">>>" in fn.__doc__, f"stablejit.{name} has no example"
    module = importlib.import_module(f"stablejit.{name}")
    assert module is not fn and inspect.getdoc(module), f"the module stablejit.{name}'s " \
                                                           "docstring is unreachable"
