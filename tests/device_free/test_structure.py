"""The frontend's structure, counted from the source with `ast` (nothing is imported):
how often code tests a backend's class instead of asking it, how many hand-written exact
keys and signature tables sit beside the shared ones, and how long modules are.

Each bound is today's count: a change may lower it (then lower the bound here) but
never raise it. Issue 25's targets are in the comments."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [p for d in ("frontend", "compiler", "runtime") for p in (ROOT / d).rglob("*.py")]

BACKEND_CLASSES = {"Backend", "ProgramBackend", "ReferenceBackend", "XlaBackend", "LazyBackend",
                   "GradTape",
                   "SpmdBackend", "Trace", "TransformTrace", "ValuedTrace", "RegionTrace",
                   "_RuleTrace"}
MAX_BACKEND_CLASS_CHECKS = 1    # 72 at a58a090; now code asks backends.Backend's capabilities
# (the one left: explain's check of what the user passed to jit(backend=...), a backend or a name)
MAX_MODULE_LINES = 700          # issue 25: ~700 (1,406 at a58a090: random.py, now a package)


def _class_names(node) -> list[str]:
    elts = node.elts if isinstance(node, ast.Tuple) else [node]
    return [getattr(e, "id", getattr(e, "attr", "")) for e in elts]


def backend_class_checks() -> list[str]:
    """`isinstance(x, <backend class>)` and `type(x) is <backend class>` in frontend/."""
    found = []
    for path in sorted((ROOT / "frontend").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance" \
                    and len(node.args) == 2:
                names = _class_names(node.args[1])
            elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Call) and \
                    getattr(node.left.func, "id", None) == "type":
                names = [n for c in node.comparators for n in _class_names(c)]
            if BACKEND_CLASSES & set(names):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_backend_class_checks_do_not_grow():
    checks = backend_class_checks()
    assert len(checks) <= MAX_BACKEND_CLASS_CHECKS, "\n".join(checks)


def test_one_exact_key_and_one_cache_kind():
    """Exact keys of Python values come from keys.exact_key, and signature tables are
    runtime.cache.SingleFlightCache: no module packs float bits or keeps its own
    dict-with-a-lock table of programs."""
    packers, tables = [], []
    for path in SOURCES:
        rel = str(path.relative_to(ROOT))
        text = path.read_text()
        if rel != "frontend/keys.py" and ('Struct("<d")' in text or 'pack("<d"' in text):
            packers.append(rel)
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and any(
                    isinstance(t, (ast.Name, ast.Attribute)) and
                    getattr(t, "id", getattr(t, "attr", "")).lstrip("_").lower() in
                    ("ops", "programs", "built") for t in node.targets):
                tables.append(f"{rel}:{node.lineno}")
    assert not packers and not tables, (packers, tables)


def test_modules_stay_short():
    sizes = {str(p.relative_to(ROOT)): len(p.read_text().splitlines()) for p in SOURCES}
    too_long = {p: n for p, n in sizes.items() if n > MAX_MODULE_LINES}
    assert not too_long, too_long


def test_one_staging_function():
    """User Python runs under a trace in one place: staging.stage (6 trace loops at
    a58a090). Elsewhere `with using_backend(...)` opens a default_backend block
    (context.using_default, which api.default_backend calls) or runs a library function
    where its inputs live (tracebacks.py): none stages IR. (A lazy() block and grad's
    tape push the backend stack by hand: lazy.py, autodiff._on_tape; a tape records,
    it stages no IR.)"""
    allowed = {"frontend/staging.py": 1, "frontend/context.py": 1,
               "frontend/tracebacks.py": 1}
    found = {}
    for path in sorted((ROOT / "frontend").rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.With) and any(
                    isinstance(i.context_expr, ast.Call) and
                    getattr(i.context_expr.func, "id", getattr(i.context_expr.func, "attr", ""))
                    == "using_backend" for i in node.items):
                found[rel] = found.get(rel, 0) + 1
    assert found == allowed, found
