"""Port a JAX program to stablejit by rewriting its import statements, and nothing else.

`import jax.numpy as jnp` becomes `import stablejit.numpy as jnp`, `from jax import grad`
becomes `from stablejit import grad`, `import jax` becomes `import stablejit as jax` (so
that `jax.grad(...)` in the body still names the same thing). Every other line of the
program is left byte for byte as it was, and line numbers do not move, so a traceback
through the swapped program points at the same line of the file on disk.
"""

from __future__ import annotations

import ast
import linecache
import pathlib
import types

JAX, OURS = "jax", "stablejit"


def _is_jax(module: str | None) -> bool:
    return module is not None and (module == JAX or module.startswith(JAX + "."))


def _ours(module: str) -> str:
    return OURS + module[len(JAX):]


def _swap_statement(node: ast.Import | ast.ImportFrom) -> str | None:
    """The rewritten statement, or None when it imports nothing from jax."""
    if isinstance(node, ast.ImportFrom):
        if node.level or not _is_jax(node.module):
            return None
        return ast.unparse(ast.ImportFrom(_ours(node.module), node.names, 0))
    if not any(_is_jax(a.name) for a in node.names):
        return None
    parts = []
    for alias in node.names:
        if not _is_jax(alias.name):
            parts.append(ast.unparse(ast.Import([alias])))
        elif alias.asname:
            parts.append(f"import {_ours(alias.name)} as {alias.asname}")
        else:
            # `import jax.numpy` binds the name `jax`: import the submodule, then bind
            # `jax` to the top-level package as the original statement did.
            if alias.name != JAX:
                parts.append(f"import {_ours(alias.name)}")
            parts.append(f"import {OURS} as {JAX}")
    return "; ".join(parts)


def swap_imports(source: str) -> str:
    """`source` with each import of jax or a jax submodule rewritten to stablejit's."""
    lines = source.splitlines(keepends=True)
    statements = [n for n in ast.walk(ast.parse(source))
                  if isinstance(n, ast.Import | ast.ImportFrom)]
    for node in statements:
        new = _swap_statement(node)
        if new is None:
            continue
        first, last = node.lineno - 1, node.end_lineno - 1
        line = lines[first]
        if line[:node.col_offset].strip() or lines[last][node.end_col_offset:].strip():
            raise ValueError(f"line {node.lineno}: an import of jax shares its line with "
                             "other code; put it on a line of its own so that only the "
                             "import is rewritten")
        # The statement keeps its indentation; a statement spread over several lines
        # becomes one line followed by blank ones, so no later line moves.
        lines[first] = line[:node.col_offset] + new + "\n"
        for i in range(first + 1, last + 1):
            lines[i] = "\n"
    return "".join(lines)


def load_program(path: pathlib.Path, *, swap: bool) -> types.ModuleType:
    """Execute the program at `path` as a fresh module: as written, or with swapped
    imports. Tracebacks name `path` and show the text that actually ran."""
    source = path.read_text()
    if swap:
        source = swap_imports(source)
    filename = f"{path}" if not swap else f"{path} [imports swapped to {OURS}]"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = types.ModuleType(f"ported_{path.stem}_{OURS if swap else JAX}")
    module.__file__ = filename
    exec(compile(source, filename, "exec"), module.__dict__)
    return module
