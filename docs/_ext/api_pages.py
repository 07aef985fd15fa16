"""The API reference pages, written from the namespaces' `__all__` when the site builds.

One Markdown page per public namespace: an autosummary table of every public name, then
the autodoc entry of each, so a name added to a namespace gets its page without anyone
editing docs/. tests/device_free/test_public_api.py checks that every public name of
every namespace gets an entry here.
"""

from __future__ import annotations

import importlib
import inspect
import types
from pathlib import Path

# (module, one line on what it holds); the order is the order of the reference's toctree.
NAMESPACES = [
    ("stablejit", "Transformations (jit, grad, vmap), control flow, devices and backends."),
    ("stablejit.numpy", "NumPy and the Python array API standard, on stablejit tensors."),
    ("stablejit.numpy.linalg", "Linear algebra: the array API's linalg extension and more."),
    ("stablejit.numpy.fft", "Discrete Fourier transforms: the array API's fft extension."),
    ("stablejit.lax", "JAX's low-level operations: no implicit promotion, XLA semantics."),
    ("stablejit.lax.linalg", "jax.lax.linalg's factorizations: JAX's signatures and result "
     "orders."),
    ("stablejit.nn", "Activations, normalisation, losses and optimizers."),
    ("stablejit.nn.initializers", "Parameter initialisers (jax.nn.initializers' bits)."),
    ("stablejit.random", "Counter-based random numbers with jax.random's bits."),
    ("stablejit.scipy", "SciPy's special functions, linear algebra and distributions."),
    ("stablejit.scipy.special", "Special functions (gamma, error functions, Bessel ...)."),
    ("stablejit.scipy.linalg", "SciPy's linear algebra: triangular solves, factorisations."),
    ("stablejit.scipy.signal", "Convolution and correlation (direct and by FFT)."),
    ("stablejit.scipy.integrate", "The trapezoidal rule."),
    ("stablejit.scipy.stats", "Probability distributions, one module each."),
    ("stablejit.tree", "Pytrees: flatten, map, key paths, registration."),
    ("stablejit.tree_util", "jax.tree_util's names for the pytree functions."),
    ("stablejit.sharding", "Meshes, partition specs and shardings over several devices."),
    ("stablejit.distributed", "Several processes joined by PJRT's distributed runtime."),
    ("stablejit.debug", "Printing and callbacks from compiled code."),
    ("stablejit.config", "Settings made in code, and the environment variables."),
    ("stablejit.checkpoint_policies", "jax.checkpoint_policies' names for checkpoint()."),
    ("stablejit.example_libraries.stax", "jax.example_libraries.stax: layers as (init, "
     "apply) pairs."),
    ("stablejit.example_libraries.optimizers", "jax.example_libraries.optimizers: "
     "optimizers over pytrees."),
]
OPTIONAL = [("stablejit.export", "Serialise a function as a portable StableHLO artifact.")]


def namespaces() -> list[tuple[str, str]]:
    """The namespaces to document: NAMESPACES, every distribution module of scipy.stats,
    and the optional ones that import (export lands separately)."""
    out = list(NAMESPACES)
    stats = importlib.import_module("stablejit.scipy.stats")
    out += [(f"stablejit.scipy.stats.{n}", f"The {n} distribution.") for n in stats.__all__]
    for name, what in OPTIONAL:
        try:
            importlib.import_module(name)
        except ImportError:
            continue
        out.append((name, what))
    return out


def public_names(modname: str) -> list[str]:
    return sorted(importlib.import_module(modname).__all__, key=str.lower)


def page_name(modname: str) -> str:
    return modname


def _entry(modname: str, name: str, obj, documented_modules: set[str],
           classes: set[int]) -> list[str]:
    """The autodoc directive of one public name, in reStructuredText."""
    if isinstance(obj, types.ModuleType):
        what = (f"The namespace :doc:`{obj.__name__}`." if obj.__name__ in documented_modules
                else f"The module ``{obj.__name__}``.")
        return [f".. py:data:: {name}", "", f"   {what}", ""]
    if inspect.isclass(obj):  # its members on the first page that shows it
        own = obj.__module__.startswith("stablejit") and getattr(obj, "__name__", "") == name
        first = id(obj) not in classes
        classes.add(id(obj))
        return [f".. autoclass:: {name}", *(["   :members:"] if own and first else []),
                *([] if first else ["   :no-index:"]), ""]
    if callable(obj):
        return [f".. autofunction:: {name}", ""]
    return [f".. py:data:: {name}", f"   :value: {_short_repr(obj)}", "",
            f"   {_data_doc(modname, name)}", ""]


def _short_repr(obj) -> str:
    text = repr(obj).replace("\n", " ")
    return text if len(text) <= 60 else text[:57] + "..."


def _data_doc(modname: str, name: str) -> str:
    mod = importlib.import_module(modname)
    doc = getattr(mod, "__doc_data__", {}).get(name)
    return doc or f"``{modname}.{name}``."


def page(modname: str, what: str, documented_modules: set[str],
         classes: set[int] | None = None) -> str:
    mod = importlib.import_module(modname)
    names = public_names(modname)
    rst = []
    if inspect.getdoc(mod):
        rst += [f".. automodule:: {modname}", "   :no-members:", "   :no-index:", ""]
    rst += [f".. currentmodule:: {modname}", "", ".. autosummary::", "   :nosignatures:", "",
            *[f"   {n}" for n in names], ""]
    for name in names:
        rst += _entry(modname, name, getattr(mod, name), documented_modules,
                      set() if classes is None else classes)
    return "\n".join([f"# `{modname}`", "", what, "", "```{eval-rst}", *rst, "```", ""])


def write(outdir: Path) -> list[str]:
    """Write one page per namespace and the reference's index; return the page names."""
    outdir.mkdir(parents=True, exist_ok=True)
    spaces = namespaces()
    documented = {m for m, _ in spaces}
    names, classes = [], set()
    for modname, what in spaces:
        text = page(modname, what, documented, classes)
        path = outdir / f"{page_name(modname)}.md"
        if not path.exists() or path.read_text() != text:  # unchanged pages stay unbuilt
            path.write_text(text)
        names.append(page_name(modname))
    index = ["# API reference", "",
             "Every public name of every namespace, generated from the docstrings.", "",
             "```{toctree}", ":maxdepth: 1", "", *names, "```", ""]
    (outdir / "index.md").write_text("\n".join(index))
    return names
