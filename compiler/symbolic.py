"""Symbolic dimensions: shapes with named sizes (`b`, `2*b + 1`, `b // 8`), for export.

A dimension is an int or a `DimExpr`: a polynomial with int coefficients over atoms,
where an atom is a dimension variable or an opaque term (`floordiv(e, k)`, `mod(e, k)`,
`max(a, b)`, `min(a, b)`), as in jax.export. Expressions are normalised (sorted
monomials, zero terms dropped, a constant collapses to an int), so equal expressions
compare and hash equal and shapes of them can be interned like int shapes.

`==` / `!=` are structural (what shape rules need: `(b, 3) != (c, 3)`). Ordering
comparisons are decided from interval bounds (every variable is >= 1) and the scope's
constraints (`b >= 16`, `b % 8 == 0`); what they cannot decide raises
InconclusiveDimensionOperation naming the comparison and the constraint to add.
`int(d)` of a symbolic dimension is a TypeError: a concrete size is needed there.

Parsing (`parse_shape`) reads the jax.export spelling through Python's `ast`, with only
names, ints, + - * // %, unary minus, max() and min(): no code is run.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterable, Mapping

INF = math.inf


class InconclusiveDimensionOperation(ValueError):
    """A comparison or division of symbolic dimensions that the constraints do not
    decide (jax.export's name)."""


class Scope:
    """The constraints that the dimensions of one export share: per-variable bounds,
    facts `e >= 0` and divisibility facts `e % k == 0`. Dimensions of different scopes
    cannot be combined."""

    def __init__(self, constraints: Iterable[str] = ()):
        self.constraints: tuple[str, ...] = ()
        self.checks: list[tuple[str, object]] = []  # (text, e): the constraint is e >= 0
        self.bounds: dict[str, tuple[float, float]] = {}
        self.facts: list[DimExpr | int] = []  # each >= 0
        self.divisible: list[tuple[DimExpr, int]] = []
        for c in constraints:
            self.add_constraint(c)

    def add_constraint(self, text: str) -> None:
        tree = _parse_text(text, "constraint")
        if not (isinstance(tree, ast.Compare) and len(tree.ops) == 1):
            raise ValueError(f"constraint {text!r}: write one comparison, e.g. 'b >= 16', "
                             f"'b <= 4096' or 'b % 8 == 0'")
        op = tree.ops[0]
        lhs, rhs = _build(tree.left, self, text), _build(tree.comparators[0], self, text)
        if isinstance(op, ast.Eq):
            self._add_equality(lhs, rhs, text)
            self.checks.append((text, ("==", lhs - rhs)))
        elif isinstance(op, (ast.GtE, ast.Gt, ast.LtE, ast.Lt)):
            diff = lhs - rhs if isinstance(op, (ast.GtE, ast.Gt)) else rhs - lhs
            diff = diff - 1 if isinstance(op, (ast.Gt, ast.Lt)) else diff
            self._add_fact(diff, text)
            self.checks.append((text, (">=", diff)))
        else:
            raise ValueError(f"constraint {text!r}: use >=, >, <=, < or == (for 'e % k == 0')")
        self.constraints += (text,)

    def _add_equality(self, lhs, rhs, text: str) -> None:
        atom = _single_atom(lhs) if rhs == 0 else None
        if atom is None or atom[0] != "mod" or not isinstance(atom[2], int):
            raise ValueError(f"constraint {text!r}: the equalities supported are "
                             f"divisibility, 'e % k == 0'")
        self.divisible.append((atom[1], atom[2]))

    def _add_fact(self, e, text: str) -> None:
        if isinstance(e, int):
            if e < 0:
                raise ValueError(f"constraint {text!r} is always false")
            return
        atom, coef, const = _linear_in_one_var(e)
        if atom is not None:  # coef*v + const >= 0: a bound on v
            lo, hi = self.bounds.get(atom, (1, INF))
            if coef > 0:
                lo = max(lo, -(const // coef))  # ceil(-const / coef)
            else:
                hi = min(hi, const // -coef)
            if lo > hi:
                raise ValueError(f"constraint {text!r} leaves {atom} no value: {lo} > {hi}")
            self.bounds[atom] = (lo, hi)
        else:
            self.facts.append(e)

    def violated(self, env: Mapping[str, int]) -> list[tuple[str, set[str]]]:
        """The constraints that the variables' values `env` break, with the variables
        each names."""
        out = []
        for text, (kind, e) in self.checks:
            v = evaluate(e, env)
            if (v != 0) if kind == "==" else (v < 0):
                out.append((text, e.variables() if type(e) is DimExpr else set()))
        return out

    def divides(self, e, k: int) -> bool:
        return any(f == e and k > 0 and fk % k == 0 for f, fk in self.divisible)

    def __repr__(self) -> str:
        return f"Scope({list(self.constraints)})"


def _single_atom(e):
    if isinstance(e, DimExpr) and len(e.terms) == 1:
        mono, coef = e.terms[0]
        if coef == 1 and len(mono) == 1 and mono[0][1] == 1:
            return mono[0][0]
    return None


def _linear_in_one_var(e: DimExpr):
    """(v, c, k) when e == c*v + k for a variable v, else (None, 0, 0)."""
    const, var, coef = 0, None, 0
    for mono, c in e.terms:
        if mono == ():
            const = c
        elif len(mono) == 1 and mono[0][1] == 1 and isinstance(mono[0][0], str) \
                and var is None:
            var, coef = mono[0][0], c
        else:
            return None, 0, 0
    return var, coef, const


def _atom_key(atom) -> str:
    return atom if isinstance(atom, str) else f"~{atom[0]}({atom[1]!r},{atom[2]!r})"


def _mono_key(mono) -> tuple:
    return (-sum(p for _, p in mono), tuple((_atom_key(a), p) for a, p in mono))


class DimExpr:
    """A normalised symbolic dimension: terms is a sorted tuple of (monomial,
    coefficient), a monomial a sorted tuple of (atom, power); () is the constant."""

    __slots__ = ("terms", "scope", "_hash")

    def __init__(self, terms: tuple, scope: Scope):
        self.terms, self.scope = terms, scope
        self._hash = hash(terms)

    # ---- construction ---------------------------------------------------------------------
    @staticmethod
    def make(poly: Mapping, scope: Scope) -> DimExpr | int:
        if scope.divisible:
            poly = _exact_quotients(poly, scope)
        items = [(m, c) for m, c in poly.items() if c != 0]
        if not items:
            return 0
        if len(items) == 1 and items[0][0] == ():
            return items[0][1]
        return DimExpr(tuple(sorted(items, key=lambda mc: _mono_key(mc[0]))), scope)

    @staticmethod
    def var(name: str, scope: Scope) -> DimExpr:
        return DimExpr(((((name, 1),), 1),), scope)

    @staticmethod
    def atom(atom: tuple, scope: Scope) -> DimExpr:
        return DimExpr(((((atom, 1),), 1),), scope)

    def _poly(self) -> dict:
        return dict(self.terms)

    # ---- arithmetic ----------------------------------------------------------------------
    def _other(self, o):
        if isinstance(o, DimExpr):
            if o.scope is not self.scope:
                raise ValueError(f"the symbolic dimensions {self} and {o} come from different "
                                 f"symbolic_shape calls; create them in one call, or pass "
                                 f"the same scope=")
            return o._poly()
        if isinstance(o, bool) or not isinstance(o, int):
            try:
                o = _as_int(o)
            except TypeError:
                return None
        return {(): o}

    def __add__(self, o):
        p = self._other(o)
        if p is None:
            return NotImplemented
        out = self._poly()
        for m, c in p.items():
            out[m] = out.get(m, 0) + c
        return DimExpr.make(out, self.scope)

    __radd__ = __add__

    def __neg__(self):
        return DimExpr.make({m: -c for m, c in self.terms}, self.scope)

    def __sub__(self, o):
        p = self._other(o)
        return NotImplemented if p is None else self + DimExpr.make(
            {m: -c for m, c in p.items()}, self.scope)

    def __rsub__(self, o):
        return (-self) + o

    def __mul__(self, o):
        p = self._other(o)
        if p is None:
            return NotImplemented
        out: dict = {}
        for m1, c1 in self.terms:
            for m2, c2 in p.items():
                powers = dict(m1)
                for a, k in m2:
                    powers[a] = powers.get(a, 0) + k
                m = tuple(sorted(powers.items(), key=lambda ak: _atom_key(ak[0])))
                out[m] = out.get(m, 0) + c1 * c2
        return DimExpr.make(out, self.scope)

    __rmul__ = __mul__

    def __floordiv__(self, o):
        return floordiv(self, o)

    def __rfloordiv__(self, o):
        return floordiv(o, self)

    def __mod__(self, o):
        return mod(self, o)

    def __rmod__(self, o):
        return mod(o, self)

    # ---- comparison ----------------------------------------------------------------------
    def __eq__(self, o) -> bool:
        if isinstance(o, DimExpr):
            return self.scope is o.scope and self.terms == o.terms
        return False  # a normalised DimExpr is never a constant

    def __ne__(self, o) -> bool:
        return not self.__eq__(o)

    def __hash__(self) -> int:
        return self._hash

    def __ge__(self, o) -> bool:
        return decide_ge(self - o, f"{self} >= {_text(o)}")

    def __gt__(self, o) -> bool:
        return decide_ge(self - o - 1, f"{self} > {_text(o)}")

    def __le__(self, o) -> bool:
        return decide_ge(o - self, f"{self} <= {_text(o)}")

    def __lt__(self, o) -> bool:
        return decide_ge(o - self - 1, f"{self} < {_text(o)}")

    def __bool__(self) -> bool:  # (sizes: nonzero means >= 1)
        # (either answer can be the user's: name both constraints, `b % 2 == 0` as well)
        return decide_ge(self - 1, f"whether {self} is 0", (f"{self} == 0", f"{self} >= 1"))

    # ---- not an int ----------------------------------------------------------------------
    def __int__(self):
        raise TypeError(f"the symbolic dimension {self} is used where a concrete size is "
                        f"needed; this operation cannot be exported with a symbolic "
                        f"dimension there (export it with a concrete size)")

    __index__ = __int__
    __float__ = __int__

    def __str__(self) -> str:
        return _format(self.terms)

    def __repr__(self) -> str:
        return str(self)

    def __reduce__(self):
        raise TypeError("symbolic dimensions are not pickled; artifacts hold their text")

    # ---- values ---------------------------------------------------------------------------
    def variables(self) -> set[str]:
        out: set[str] = set()
        for mono, _ in self.terms:
            for a, _ in mono:
                out |= {a} if isinstance(a, str) else _atom_vars(a)
        return out

    def evaluate(self, env: Mapping[str, int]) -> int:
        total = 0
        for mono, c in self.terms:
            v = c
            for a, p in mono:
                v *= _atom_value(a, env) ** p
            total += v
        return total


def _exact_quotients(poly: Mapping, scope: Scope) -> dict:
    """c*(e // k)*m as (c/k)*e*m where the scope says k divides e and k divides c: the
    canonical form, so that (b // 8) * 8 == b under 'b % 8 == 0'."""
    out: dict = {}
    for mono, c in poly.items():
        q = next((a for a, p in mono if not isinstance(a, str) and a[0] == "floordiv"
                  and p == 1 and type(a[2]) is int and c % a[2] == 0
                  and scope.divides(a[1], a[2])), None)
        if q is None:
            out[mono] = out.get(mono, 0) + c
            continue
        rest = DimExpr.make({tuple(ap for ap in mono if ap[0] != q): c // q[2]}, scope)
        for m, k in (q[1] * rest)._poly().items() if type(q[1] * rest) is DimExpr \
                else {(): q[1] * rest}.items():
            out[m] = out.get(m, 0) + k
    return out


def slice_indices(s: slice, n: DimExpr) -> tuple:
    """slice.indices(n) and the slice's length for a symbolic size n (positive steps;
    int start and stop, clamped to n as Python does)."""
    step = 1 if s.step is None else _as_int(s.step)
    if step < 1:
        raise InconclusiveDimensionOperation(
            f"a slice with step {step} of the symbolic dimension {n} is not supported yet; "
            f"use a positive step (or flip the result)")

    def clamp(v, default):
        if v is None:
            return default
        if type(v) is not DimExpr:
            v = _as_int(v)
            if v < 0:
                v = n + v
                return dim_max(v, 0)
        return dim_min(v, n)
    start, stop = clamp(s.start, 0), clamp(s.stop, n)
    count = dim_max(floordiv(stop - start + step - 1, step), 0)
    return start, stop, step, count


def is_symbolic(d) -> bool:
    return type(d) is DimExpr


def is_symbolic_shape(shape) -> bool:
    return any(type(d) is DimExpr for d in shape)


def _as_int(o) -> int:
    import operator  # noqa: PLC0415 - small

    return operator.index(o)


def _text(o) -> str:
    return str(o)


def evaluate(d, env: Mapping[str, int]) -> int:
    return d.evaluate(env) if type(d) is DimExpr else int(d)


def _atom_vars(atom) -> set[str]:
    out: set[str] = set()
    for x in atom[1:]:
        if type(x) is DimExpr:
            out |= x.variables()
    return out


def _atom_value(a, env) -> int:
    if isinstance(a, str):
        return env[a]
    x, y = evaluate(a[1], env), evaluate(a[2], env)
    return {"floordiv": lambda: x // y, "mod": lambda: x % y,
            "max": lambda: max(x, y), "min": lambda: min(x, y)}[a[0]]()


def _scope_of(*xs) -> Scope | None:
    return next((x.scope for x in xs if type(x) is DimExpr), None)


def floordiv(e, k):
    """e // k: exact when k divides every coefficient, else an opaque term."""
    scope = _scope_of(e, k)
    if scope is None:
        return _as_int(e) // _as_int(k)
    if type(k) is not DimExpr:
        k = _as_int(k)
        if k <= 0:
            raise InconclusiveDimensionOperation(
                f"cannot divide the symbolic dimension {e} by {k}: divisors must be positive")
        if k == 1:
            return e
        if type(e) is DimExpr:  # (k*A + R) // k == A + R // k
            whole = {m: c // k for m, c in e.terms if c % k == 0}
            if whole:
                rest = DimExpr.make({m: c for m, c in e.terms if c % k}, scope)
                return DimExpr.make(whole, scope) + floordiv(rest, k)
    else:
        q = _exact_division(e, k)
        if q is not None:
            return q
        if type(e) is int and _decide(k + e if e < 0 else k - e - 1):  # -k <= e < k
            return -1 if e < 0 else 0
    return DimExpr.atom(("floordiv", e, k), scope)


def mod(e, k):
    """e % k: 0 when it is exact or the scope says so, else an opaque term."""
    scope = _scope_of(e, k)
    if scope is None:
        return _as_int(e) % _as_int(k)
    if type(k) is not DimExpr:
        k = _as_int(k)
        if k == 1 or scope.divides(e, k):
            return 0
        if type(e) is DimExpr and any(c % k == 0 for _, c in e.terms):  # (k*A + R) % k
            return mod(DimExpr.make({m: c for m, c in e.terms if c % k}, scope), k)
    elif _exact_division(e, k) is not None:
        return 0
    elif type(e) is int and _decide(k + e if e < 0 else k - e - 1):  # -k <= e < k: -1 % b
        return e + k if e < 0 else e
    return DimExpr.atom(("mod", e, k), scope)


def _exact_division(e, k: DimExpr):
    """e / k when k is one term (c*m) that divides every term of e, else None."""
    if len(k.terms) != 1:
        return None
    (kmono, kc), = k.terms
    kpow = dict(kmono)
    out = {}
    for mono, c in (e.terms if type(e) is DimExpr else (((), e),)):
        powers = dict(mono)
        if c % kc or any(powers.get(a, 0) < p for a, p in kpow.items()):
            return None
        rest = {a: p - kpow.get(a, 0) for a, p in powers.items() if p - kpow.get(a, 0)}
        out[tuple(sorted(rest.items(), key=lambda ap: _atom_key(ap[0])))] = c // kc
    return DimExpr.make(out, k.scope)


def dim_max(a, b):
    scope = _scope_of(a, b)
    if scope is None:
        return max(a, b)
    if a == b:
        return a
    if _decide(a - b):
        return a
    if _decide(b - a):
        return b
    x, y = sorted((a, b), key=str)
    return DimExpr.atom(("max", x, y), scope)


def dim_min(a, b):
    scope = _scope_of(a, b)
    if scope is None:
        return min(a, b)
    m = dim_max(a, b)
    if type(m) is DimExpr and _single_atom(m) is not None and _single_atom(m)[0] == "max":
        x, y = sorted((a, b), key=str)
        return DimExpr.atom(("min", x, y), scope)
    return b if m == a else a


# ---- deciding e >= 0 ----------------------------------------------------------------------

def _imul(a, b):
    products = [0 if (x == 0 or y == 0) else x * y for x in a for y in b]
    return (min(products), max(products))


def _bounds(e) -> tuple[float, float]:
    if type(e) is not DimExpr:
        return (e, e)
    lo = hi = 0
    for mono, c in e.terms:
        iv = (1, 1)
        for a, p in mono:
            ab = _atom_bounds(a, e.scope)
            for _ in range(p):
                iv = _imul(iv, ab)
        iv = _imul(iv, (c, c))
        lo, hi = lo + iv[0], hi + iv[1]
    return (lo, hi)


def _atom_bounds(a, scope: Scope) -> tuple[float, float]:
    if isinstance(a, str):
        return scope.bounds.get(a, (1, INF))
    x, y = _bounds(a[1]), _bounds(a[2])
    if a[0] == "max":
        return (max(x[0], y[0]), max(x[1], y[1]))
    if a[0] == "min":
        return (min(x[0], y[0]), min(x[1], y[1]))
    if a[0] == "mod":
        return (0, y[1] - 1) if x[0] >= 0 and y[0] > 0 else (-INF, INF)
    if y[0] > 0 and x[0] >= 0:  # floordiv of non-negatives
        return (x[0] // y[1] if y[1] != INF else 0, x[1] // y[0] if x[1] != INF else INF)
    return (-INF, INF)


def _without_quotients(e):
    """e with each c*(x // k) (k dividing c) written (c/k)*(x - x % k): the same value,
    with bounds that see k*(x // k) <= x."""
    if type(e) is not DimExpr:
        return e
    out = 0
    for mono, c in e.terms:
        if len(mono) == 1 and mono[0][1] == 1 and not isinstance(mono[0][0], str) \
                and mono[0][0][0] == "floordiv" and type(mono[0][0][2]) is int \
                and c % mono[0][0][2] == 0:
            _, x, k = mono[0][0]
            out = out + (c // k) * (x - DimExpr.atom(("mod", x, k), e.scope))
        else:
            out = out + DimExpr.make({mono: c}, e.scope)
    return out


def _decide(e) -> bool | None:
    """e >= 0: True, False, or None when the scope does not decide it."""
    ans = _decide_bounds(e)
    if ans is None:
        e2 = _without_quotients(e)
        ans = None if e2 == e else _decide_bounds(e2)
    if ans is None and type(e) is DimExpr:
        for lower in _lower_bounds(e):  # e >= lower >= 0
            if _decide_bounds(lower):
                return True
    return ans


def _lower_bounds(e: DimExpr):
    """e with one term -c*min(x, y) (or +c*max(x, y)) replaced by -c*x or -c*y: each is
    <= e, since min(x, y) <= x, y <= max(x, y)."""
    for mono, c in e.terms:
        if len(mono) == 1 and mono[0][1] == 1 and not isinstance(mono[0][0], str) \
                and (mono[0][0][0], c > 0) in (("min", False), ("max", True)):
            rest = e - DimExpr.make({mono: c}, e.scope)
            yield from (rest + c * v for v in mono[0][0][1:])


def _decide_bounds(e) -> bool | None:
    lo, hi = _bounds(e)
    if lo >= 0:
        return True
    if hi < 0:
        return False
    if type(e) is DimExpr:
        for f in e.scope.facts:  # e = f + (e - f) with f >= 0
            if _bounds(e - f)[0] >= 0:
                return True
            if _bounds(-e - 1 - f)[0] >= 0:
                return False
    return None


def decide_ge(e, what: str, constraints: tuple[str, ...] | None = None) -> bool:
    """Whether e >= 0; raises InconclusiveDimensionOperation saying which comparison
    and how to decide it (`constraints`: the ones that would, default `what` itself)."""
    if type(e) is not DimExpr:
        return e >= 0
    ans = _decide(e)
    if ans is None:
        options = " or ".join(map(repr, constraints or (what,)))
        which = " (whichever holds for every size you will call it with)" if constraints \
            and len(constraints) > 1 else ""
        raise InconclusiveDimensionOperation(
            f"cannot decide {what} while tracing (every dimension variable is only known to "
            f"be >= 1); add the constraint {options}{which} to symbolic_shape(..., "
            f"constraints=...)")
    return ans


# ---- text ---------------------------------------------------------------------------------

def _atom_text(a) -> str:
    if isinstance(a, str):
        return a
    x, y = (_paren(v) for v in a[1:])
    if a[0] == "floordiv":
        return f"{x} // {y}"
    if a[0] == "mod":
        return f"{x} % {y}"
    return f"{a[0]}({a[1]}, {a[2]})"


def _paren(v) -> str:
    s = str(v)
    return s if (type(v) is int and v >= 0) or s.isidentifier() else f"({s})"


def _format(terms) -> str:
    parts = []
    for mono, c in terms:
        factors = []
        for a, p in mono:
            t = _atom_text(a)
            t = t if isinstance(a, str) or a[0] in ("max", "min") else f"({t})"
            factors.extend([t] * p)
        if not factors:
            body = str(abs(c))
        else:
            body = "*".join(([str(abs(c))] if abs(c) != 1 else []) + factors)
        parts.append(("- " if c < 0 else "+ ") + body)
    s = " ".join(parts)
    return s[2:] if s.startswith("+ ") else "-" + s[2:]


def _parse_text(text: str, what: str) -> ast.AST:
    try:
        return ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise ValueError(f"cannot parse the {what} {text!r}; write e.g. 'b, 784', "
                         f"'2*b + 1', 'b >= 16'") from None


_BINARY = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
           ast.Mult: lambda a, b: a * b, ast.FloorDiv: floordiv, ast.Mod: mod}


_CALLS = {"max": dim_max, "min": dim_min, "mod": mod, "floordiv": floordiv}  # jax's spellings


def _build(node: ast.AST, scope: Scope, text: str):
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name):
        return DimExpr.var(node.id, scope)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_build(node.operand, scope, text)
    if isinstance(node, ast.BinOp):
        f = _BINARY.get(type(node.op))
        if f is not None:
            return f(_build(node.left, scope, text), _build(node.right, scope, text))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in _CALLS and len(node.args) == 2 and not node.keywords:
        a, b = (_build(x, scope, text) for x in node.args)
        return _CALLS[node.func.id](a, b)
    raise ValueError(f"cannot read {ast.unparse(node)!r} in {text!r}: a dimension is an int, "
                     f"a name, or +, -, *, //, % and max(), min() of those")


def parse_dim(text: str, scope: Scope):
    return _build(_parse_text(text, "dimension"), scope, text)


def parse_shape(text: str, scope: Scope) -> tuple:
    """'b, 784' -> (b, 784); '(b, 2*b)', '' (a scalar) and a trailing comma are accepted."""
    s = text.strip()
    if s.startswith("(") and s.endswith(")"):
        s = s[1:-1]
    items = [p.strip() for p in s.split(",")]
    if items and items[-1] == "":
        items.pop()
    out = []
    for item in items:
        if not item:
            raise ValueError(f"the shape {text!r} has an empty dimension")
        d = parse_dim(item, scope)
        if type(d) is int and d < 0:
            raise ValueError(f"the shape {text!r} has the negative dimension {d}")
        out.append(d)
    return tuple(out)


__all__ = ["DimExpr", "InconclusiveDimensionOperation", "Scope", "decide_ge", "dim_max",
           "dim_min", "evaluate", "floordiv", "is_symbolic", "is_symbolic_shape", "mod",
           "slice_indices",
           "parse_dim", "parse_shape"]


def index(d):
    """operator.index for a dimension: ints (NumPy's too) as int, a DimExpr as itself."""
    return d if type(d) is DimExpr else _as_int(d)
