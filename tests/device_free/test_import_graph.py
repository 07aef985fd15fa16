"""The module graph: no import cycles inside a folder, counting imports inside
functions, and the layers point one way (compiler/ and runtime/ never import each other
or the frontend). Built from the source with `ast`; nothing is imported.
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The folders whose module graph must have no cycle (frontend/ joins when its knot is
# untied).
FOLDERS = ("frontend", "compiler", "runtime")

# folder -> the package it installs as (pyproject's package-dir)
PACKAGE = {"frontend": "stablejit", "compiler": "stablejit.compiler",
           "runtime": "stablejit.runtime"}

# folder -> the other folders it may import (DESIGN.md, "Layers and folders")
MAY_IMPORT = {"frontend": ("compiler", "runtime"), "compiler": (), "runtime": ()}


@dataclass(frozen=True)
class Import:
    target: str        # the fully qualified module (or name) imported
    where: str         # "path:line"
    in_function: bool
    commented: bool    # a comment on its line or the line above says why


def _module_name(folder: str, path: Path) -> str:
    parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PACKAGE[folder], *parts])


def _modules(folder: str) -> dict[str, Path]:
    return {_module_name(folder, p): p for p in sorted((ROOT / folder).rglob("*.py"))}


def _imports(module: str, path: Path) -> list[Import]:
    """Every import in the file (module level and inside functions), relative ones
    resolved to absolute names. `from X import y` yields X.y (y may be a submodule)
    and X."""
    source = path.read_text()
    lines = source.splitlines()
    tree = ast.parse(source)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    in_function: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            in_function.update(id(n) for n in ast.walk(node) if n is not node)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        line = lines[node.lineno - 1]
        above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
        commented = "#" in line or above.startswith("#")
        where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{node.lineno}"
        out += [Import(t, where, id(node) in in_function, commented) for t in targets]
    return out


def _graph(folder: str) -> dict[str, dict[str, str]]:
    """module -> {imported module of the same folder: where}. Importing a.b.c runs the
    packages a and a.b too; a module's own ancestors are already running, so they are
    not edges."""
    modules = _modules(folder)
    graph: dict[str, dict[str, str]] = {m: {} for m in modules}
    for m, path in modules.items():
        ancestors = {m.rsplit(".", k)[0] for k in range(1, m.count(".") + 1)}
        for imp in _imports(m, path):
            parts = imp.target.split(".")
            for k in range(1, len(parts) + 1):
                t = ".".join(parts[:k])
                if t in modules and t != m and t not in ancestors:
                    graph[m].setdefault(t, imp.where)
    return graph


def _knots(graph: dict[str, dict[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                components.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [sorted(c) for c in components]


def _cycle_through(graph: dict[str, dict[str, str]], component: list[str]) -> list[str]:
    """A shortest path from the component's first module back to itself."""
    members, start = set(component), component[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v]):
            if w == start:
                return paths[v] + [start]
            if w in members and w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    raise AssertionError(f"no cycle through {start}")


def _describe(graph: dict[str, dict[str, str]], knot: list[str]) -> str:
    cycle = _cycle_through(graph, knot)
    steps = [f"  {a} imports {b} ({graph[a][b]})" for a, b in itertools.pairwise(cycle)]
    return (f"a knot of {len(knot)} modules ({', '.join(knot)}); one cycle:\n  "
            + " -> ".join(cycle) + "\n" + "\n".join(steps))


@pytest.mark.parametrize("folder", FOLDERS)
def test_no_import_cycle(folder):
    graph = _graph(folder)
    knots = _knots(graph)
    assert not knots, (f"import cycles among the modules of {folder}/ (imports inside "
                       f"functions count):\n" + "\n".join(_describe(graph, k) for k in knots))


@pytest.mark.parametrize("folder", FOLDERS)
def test_layers_point_one_way(folder):
    own = PACKAGE[folder]
    allowed = [PACKAGE[f] for f in MAY_IMPORT[folder]]
    others = [PACKAGE[f] for f in PACKAGE if f != folder]
    bad = []
    for m, path in _modules(folder).items():
        for imp in _imports(m, path):
            t = imp.target
            if t == own or t.startswith(own + "."):
                continue
            if any(t == a or t.startswith(a + ".") for a in allowed):
                continue
            if any(t == o or t.startswith(o + ".") for o in others):
                bad.append(f"{imp.where} imports {t}")
    assert not bad, (f"{folder}/ may import only {MAY_IMPORT[folder] or 'no other folder'} "
                     f"of stablejit's folders:\n" + "\n".join(sorted(set(bad))))


@pytest.mark.parametrize("folder", FOLDERS)
def test_imports_inside_functions_say_why(folder):
    bare = sorted({imp.where for m, path in _modules(folder).items()
                   for imp in _imports(m, path) if imp.in_function and not imp.commented})
    assert not bare, (f"imports inside functions in {folder}/ without a comment saying why "
                      f"(optional dependency, import cost); move them to the top of the "
                      f"module or explain:\n" + "\n".join(bare))


def test_the_checker_resolves_relative_imports_and_sees_function_bodies(tmp_path):
    f = tmp_path / "mod.py"
    f.write_text("from . import a\n\ndef g():\n    from ..b import c  # why\n"
                 "    import os\n")
    found = {(i.target, i.in_function, i.commented) for i in _imports("pkg.sub.mod", f)}
    assert found == {("pkg.sub", False, False), ("pkg.sub.a", False, False),
                     ("pkg.b", True, True), ("pkg.b.c", True, True), ("os", True, False)}
    graph = {"p.a": {"p.b": "a.py:1"}, "p.b": {"p.c": "b.py:3"}, "p.c": {"p.a": "c.py:9"}}
    assert _knots(graph) == [["p.a", "p.b", "p.c"]]
    assert _cycle_through(graph, ["p.a", "p.b", "p.c"]) == ["p.a", "p.b", "p.c", "p.a"]
    assert "p.c imports p.a (c.py:9)" in _describe(graph, _knots(graph)[0])
