"""Pages and page parts written by running stablejit when the site builds, so that they
cannot drift from the code: the API reference (api_pages.py), the environment
variables' table (from frontend/config.py's VARIABLES) and the compiler's stages of one
program (docs/examples/pipeline.py)."""

from __future__ import annotations

import os
import re
import runpy
import warnings
from pathlib import Path

import api_pages

DOCS = Path(__file__).resolve().parents[1]

# What each variable is for. The rest of a row (what it accepts, its default) comes from
# config.py itself; a variable config.py reads but this table lacks fails the build.
MEANING = {
    "STABLEJIT_PLATFORM": "the platform, or a preference list (`cuda,host`), for every "
                          "computation that does not name one",
    "STABLEJIT_DEVICE_ID": "the device of the platform computations run on by default",
    "STABLEJIT_PREALLOCATE": "GPUs: reserve the allocator's pool when the client starts",
    "STABLEJIT_MEMORY_FRACTION": "GPUs: the share of each GPU's memory the client may use",
    "STABLEJIT_CPU_ASYNC_DISPATCH": "the host: `0` runs each program on the calling thread "
                                    "instead of PJRT's worker threads (faster for small "
                                    "programs, no overlap with Python; see devices.md)",
    "JAX_CPU_ENABLE_ASYNC_DISPATCH": "jax's name for `STABLEJIT_CPU_ASYNC_DISPATCH` (which "
                                     "wins when both are set)",
    "STABLEJIT_LOG_COMPILES": "log every trace and compilation, with its time, outcome "
                              "(compiled, disk hit, memory hit) and why a function was "
                              "traced again",
    "STABLEJIT_VERIFY": "re-run every shape rule after each compiler pass",
    "STABLEJIT_DEBUG_NANS": "check every result for NaNs and name the first operation "
                            "that made one (as `config.update(\"debug_nans\", True)`)",
    "STABLEJIT_DEBUG_INFS": "the same for infinities",
    "STABLEJIT_ENABLE_X64": "x64 mode: the default float is float64 and the default "
                            "complex complex128 (as `config.update(\"jax_enable_x64\", "
                            "True)`); read at start-up",
    "JAX_ENABLE_X64": "jax's name for `STABLEJIT_ENABLE_X64` (which wins when both are "
                      "set)",
    "STABLEJIT_DEFAULT_MATMUL_PRECISION": "the precision of matrix products and "
                                          "convolutions that pass no `precision=` "
                                          "(`highest` or `float32`: full float32 on GPUs, "
                                          "which use TF32 otherwise; as `config.update("
                                          "\"jax_default_matmul_precision\", ...)`); read "
                                          "at start-up",
    "JAX_DEFAULT_MATMUL_PRECISION": "jax's name for `STABLEJIT_DEFAULT_MATMUL_PRECISION` "
                                    "(which wins when both are set)",
    "STABLEJIT_TRACEBACK_FILTERING": "hide stablejit's own frames from the tracebacks of "
                                     "errors raised by public calls",
    "STABLEJIT_LAZY": "make the default backend lazy: eager ops record a graph that runs "
                      "as one program when a value is needed",
    "STABLEJIT_LAZY_MAX_OPS": "a pending lazy graph runs once it holds this many ops",
    "STABLEJIT_NATIVE": "`0`: cached jitted calls take the Python path, not the C "
                        "extension ([the native cached call](native.md)); read at import",
    "STABLEJIT_DUMP_TO": "a directory: every compilation writes its IR before and after "
                         "the passes, StableHLO, XLA's optimised HLO and metadata there",
    "STABLEJIT_CACHE_DIR": "the persistent compilation cache's directory; empty turns "
                           "the cache off",
    "STABLEJIT_CACHE": "0 turns the persistent compilation cache off",
    "STABLEJIT_CACHE_MAX_BYTES": "the persistent cache's size bound; least recently "
                                 "used entries go first",
    "STABLEJIT_EXECUTABLE_CACHE_ENTRIES": "how many compiled programs the in-memory "
                                          "cache keeps",
    "STABLEJIT_EXECUTABLE_CACHE_BYTES": "how many bytes of compiled programs it keeps",
}


def _accepts_and_default(var: str, reader) -> tuple[str, str]:
    """What config.py says of a bad value: the values it accepts and the default."""
    from stablejit import config
    old = os.environ.get(var)
    os.environ[var] = "\x01 not a value"
    made = dict(config._overrides)  # the settings' values, once read, are not read again
    config._overrides.clear()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            reader()
    finally:
        config._overrides.clear()
        config._overrides.update(made)
        if old is None:
            del os.environ[var]
        else:
            os.environ[var] = old
    if not caught:  # a path: any text is valid
        return "a path", "unset"
    text = str(caught[0].message)
    accepts = text[text.index("(") + 1:text.index("); using")]
    default = text[text.index("using the default") + len("using the default "):
                   text.index(". Fix")]
    return accepts, default.replace("of the platform", "the platform's")


def environment_table() -> str:
    from stablejit import config
    unknown = sorted(set(config.VARIABLES) - set(MEANING))
    stale = sorted(set(MEANING) - set(config.VARIABLES))
    if unknown or stale:
        raise RuntimeError(f"docs/_ext/stablejit_docs.py's MEANING is out of date: "
                           f"describe {unknown}, remove {stale}")
    rows = ["| variable | what it does | accepts | default |", "|---|---|---|---|"]
    for var, reader in config.VARIABLES.items():
        accepts, default = _accepts_and_default(var, reader)
        rows.append(f"| `{var}` | {MEANING[var]} | {accepts} | {default} |")
    return "\n".join(rows) + "\n"


def pipeline_stages() -> dict[str, str]:
    stages = runpy.run_path(str(DOCS / "examples/pipeline.py"))["STAGES"]
    root = str(DOCS.parent) + "/"
    return {name: text.replace(root, "") for name, text in stages.items()}


def benchmarks_list() -> str:
    """One section per benchmark script, from its docstring (what it measures, how to
    run it)."""
    import ast
    out = []
    for path in sorted((DOCS.parent / "benchmarks").glob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text()))
        if path.stem == "common" or not doc:
            continue
        out += [f"# `benchmarks/{path.name}`", "", "```text", doc, "```", ""]
    return "\n".join(out)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def generate(app=None) -> None:
    api_pages.write(DOCS / "api")
    out = DOCS / "_generated"
    _write(out / "environment.md", environment_table())
    _write(out / "benchmarks.md", benchmarks_list())
    for name, text in pipeline_stages().items():
        _write(out / f"pipeline_{name}.txt", text)


_CODE = re.compile(r"(``.*?``|`[^`]*`)")
_NAME_ = re.compile(r"(\w)_(?=\W|$)")  # unique_ would be a link target


def _plain(text: str) -> str:
    """Plain-text characters reStructuredText would read as markup (`|x|`, `*args`,
    `x**2`), escaped outside backquoted spans."""
    parts = _CODE.split(text)
    return "".join(p if i % 2 else _NAME_.sub(r"\1\\_", p.replace("\\", "\\\\")
                   .replace("*", r"\*").replace("|", r"\|")) for i, p in enumerate(parts))


def plain_text(app, what, name, obj, options, lines) -> None:
    """Docstrings are written as plain text with backquoted code, not as markup: escape
    the rest, but leave doctest lines, literal blocks and napoleon's sections alone."""
    literal = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if literal and stripped and not line.startswith((" ", "\t")):
            literal = False
        if stripped.endswith("::"):
            literal = True
            continue
        if literal or stripped.startswith((">>>", "...")) or not stripped:
            continue
        lines[i] = _plain(line)


def literal_blocks(app, what, name, obj, options, lines) -> None:
    """Docstrings are written as Python's (an indented block after a paragraph is code),
    not as reStructuredText: mark each such block as a literal block."""
    out, prev = [], ""
    for line in lines:
        starts_block = line.startswith("    ") and not prev.strip() and out and \
            out[-2:-1] and out[-2].strip() and not out[-2].startswith(" ")
        if starts_block and not out[-2].rstrip().endswith("::") and \
                not out[-2].startswith(("..", ":")):
            out[-1:] = ["", "::", ""]
        out.append(line)
        prev = line
    lines[:] = out


def setup(app):
    app.connect("builder-inited", generate)
    app.connect("autodoc-process-docstring", literal_blocks)
    app.connect("autodoc-process-docstring", plain_text)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
