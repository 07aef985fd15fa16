"""The IR: small, flat, typed SSA.

    TensorType(shape, dtype)   the type of every value (no scalars apart from rank 0)
    Value                      an SSA value; identity is the name, `type` its type
    Op                         primitive applied to operands with attributes, with results,
                               a source location and (for control flow) regions
    Function                   params, ops in order, results

Attributes are immutable and hashable (`Attrs`), and constants are `Literal`s, so a
Function has a structural key (`Function.key()`) that ignores locations: two traces of
the same computation get the same key and share a compiled executable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from . import dtypes as dt
from .dtypes import DType
from .symbolic import DimExpr


class TensorType:
    """Interned: equal types are the same object, so hashing and comparing are identity
    operations in C (types are dictionary keys on every cached call)."""

    # symbolic: whether a dimension is a DimExpr (export's symbolic shapes), set once here
    __slots__ = ("shape", "dtype", "symbolic", "__weakref__")
    _interned: dict = {}

    def __new__(cls, shape: Iterable[int], dtype: DType):
        key = (shape, dtype)
        try:
            t = cls._interned.get(key)
        except TypeError:  # an unhashable shape (a list)
            t = None
        if t is None:
            # a dim is an int, or a symbolic DimExpr (export's shape polymorphism)
            shape = tuple(d if type(d) is DimExpr else int(d) for d in shape)
            t = cls._interned.get((shape, dtype))
            if t is None:
                if not isinstance(dtype, DType):
                    raise TypeError(f"TensorType needs a stablejit DType, got {dtype!r}")
                if any(type(d) is int and d < 0 for d in shape):  # XLA cannot parse it
                    raise ValueError(f"negative dimensions are not allowed: shape {shape}")
                t = object.__new__(cls)
                t.shape = shape
                t.dtype = dtype
                t.symbolic = any(type(d) is DimExpr for d in shape)
                cls._interned[(shape, dtype)] = t
            if type(key[0]) is tuple:
                try:
                    cls._interned[key] = t
                except TypeError:
                    pass
        return t

    def __reduce__(self):
        return (TensorType, (self.shape, self.dtype))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __str__(self) -> str:
        return f"{self.dtype.short}[{','.join(map(str, self.shape))}]"

    __repr__ = __str__

    def mlir(self) -> str:
        """The StableHLO spelling: tensor<3x4xf32>; a symbolic dimension is `?`."""
        dims = "".join("?x" if type(d) is DimExpr else f"{d}x" for d in self.shape)
        return f"tensor<{dims}{self.dtype.mlir}>"

    def with_dtype(self, dtype: DType) -> TensorType:
        return TensorType(self.shape, dtype)


class Location:
    """Where the user wrote the operation: file, line, column and enclosing function."""

    __slots__ = ("file", "line", "col", "func")

    def __init__(self, file: str, line: int, col: int = 0, func: str = ""):
        self.file, self.line, self.col, self.func = file, line, col, func

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" + (f":{self.col}" if self.col else "")

    def __repr__(self) -> str:
        return f"Location({self.file!r}, {self.line}, {self.col})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Location) and (self.file, self.line, self.col) == (
            other.file, other.line, other.col)

    def __hash__(self) -> int:
        return hash((self.file, self.line, self.col))


UNKNOWN = Location("<unknown>", 0)


class Literal:
    """A constant array as a hashable attribute value."""

    __slots__ = ("array", "_key")

    def __init__(self, array: np.ndarray):
        self.array = np.array(array, order="C", copy=True)  # 0-d stays 0-d
        self.array.setflags(write=False)
        a = self.array
        digest = (a.tobytes() if a.nbytes <= 64 else hashlib.blake2b(a.tobytes()).digest())
        self._key = (a.dtype.str, a.shape, digest)

    def __eq__(self, other) -> bool:
        return isinstance(other, Literal) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        a = self.array
        if a.size <= 8:
            return np.array2string(a, separator=",").replace("\n", "")
        return f"<{a.dtype}{list(a.shape)}>"


class Attrs(Mapping):
    """An immutable, hashable mapping of attribute names to hashable values."""

    __slots__ = ("_items", "_dict", "_hash")

    def __init__(self, d: Mapping[str, Any] | None = None):
        d = dict(d or {})
        self._dict = d
        self._items = tuple(sorted(d.items()))
        self._hash = hash(self._items)

    def __getitem__(self, k):
        return self._dict[k]

    def __iter__(self):
        return iter(self._dict)

    def __len__(self) -> int:
        return len(self._dict)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return isinstance(other, Attrs) and self._items == other._items

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k}={_fmt_attr(v)}" for k, v in self._items) + "}"


EMPTY_ATTRS = Attrs()


def _fmt_attr(v) -> str:
    if isinstance(v, DType):
        return v.short
    if isinstance(v, Function):
        return f"@{v.name}"
    return repr(v)


class Value:
    __slots__ = ("type",)

    def __init__(self, type: TensorType):
        self.type = type

    def __repr__(self) -> str:
        return f"Value({self.type})"


class Op:
    __slots__ = ("prim", "operands", "attrs", "results", "loc", "regions")

    def __init__(self, prim, operands: tuple[Value, ...], attrs: Attrs,
                 results: tuple[Value, ...], loc: Location = UNKNOWN,
                 regions: tuple[Function, ...] = ()):
        self.prim = prim
        self.operands = operands if type(operands) is tuple else tuple(operands)
        self.attrs = attrs
        self.results = results if type(results) is tuple else tuple(results)
        self.loc = loc
        self.regions = regions if type(regions) is tuple else tuple(regions)

    @property
    def result_types(self) -> tuple[TensorType, ...]:
        return tuple(r.type for r in self.results)

    def __repr__(self) -> str:
        return f"Op({self.prim.name}, {len(self.operands)} operands)"


class StructuralKey:
    """Function.key()'s value: the structure as nested tuples, hashed once. Caches look
    programs up by it on every call (a lazy graph's key holds the key of each jitted or
    differentiated Function it inlines), and a tuple would hash its whole nesting each
    time."""

    __slots__ = ("items", "_hash")

    def __init__(self, items: tuple):
        self.items = items
        self._hash = hash(items)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return self is other or (type(other) is StructuralKey and self._hash == other._hash
                                 and self.items == other.items)

    def __repr__(self) -> str:  # structural_hash digests it: the nested tuples' repr
        return repr(self.items)


class Function:
    __slots__ = ("name", "params", "ops", "results", "_key", "clusters", "result_types")

    def __init__(self, name: str, params: Iterable[Value], ops: Iterable[Op],
                 results: Iterable[Value]):
        self.name = name
        self.params = tuple(params)
        self.ops = list(ops)
        self.results = tuple(results)
        # (an attribute, not a property: every cached call of a Function reads it)
        self.result_types: tuple[TensorType, ...] = tuple([r.type for r in self.results])
        self._key = None
        # one fusion cluster number per op, once passes/fusion.py has run (else None);
        # an annotation only: it is not part of key()
        self.clusters: tuple[int, ...] | None = None

    @property
    def param_types(self) -> tuple[TensorType, ...]:
        return tuple(p.type for p in self.params)

    def key(self) -> StructuralKey:
        """Structural key: equal for functions that compute the same thing the same way.

        Locations and names are left out. Computed once; Functions are not mutated
        after construction (passes build new ones).
        """
        if self._key is None:
            number: dict[Value, int] = {}
            for p in self.params:
                number[p] = len(number)
            ops = []
            get = number.get
            for op in self.ops:  # (list comprehensions: eager grad keys every trace)
                ins = tuple([get(v, -1) for v in op.operands])
                results = op.results
                for r in results:
                    number[r] = len(number)
                ops.append((op.prim.name, ins, op.attrs, tuple([r.type for r in results]),
                            tuple([f.key() for f in op.regions]) if op.regions else ()))
            self._key = StructuralKey((self.param_types, tuple(ops),
                                       tuple(number.get(r, -1) for r in self.results)))
        return self._key

    def structural_hash(self) -> str:
        """A stable hex digest of `key()` (usable across processes)."""
        return hashlib.sha256(repr(self.key()).encode()).hexdigest()[:32]

    def __str__(self) -> str:
        return format_function(self)

    def __repr__(self) -> str:
        return f"<Function {self.name}: {len(self.ops)} ops>"


def format_function(fn: Function, indent: str = "", names: dict | None = None) -> str:
    """Readable text form (what `stablejit dump --stage ir` shows)."""
    names = {} if names is None else names

    def name(v: Value) -> str:
        if v not in names:
            names[v] = f"%{len(names)}"
        return names[v]

    params = ", ".join(f"{name(p)}: {p.type}" for p in fn.params)
    outs = ", ".join(str(t) for t in fn.result_types)
    lines = [f"{indent}func @{fn.name}({params}) -> ({outs}) {{"]
    for i, op in enumerate(fn.ops):
        operands = ", ".join(name(v) for v in op.operands)
        results = ", ".join(name(r) for r in op.results)
        attrs = f" {op.attrs!r}" if op.attrs else ""
        types = ", ".join(str(t) for t in op.result_types)
        text = f"{indent}  {results} = {op.prim.name}({operands}){attrs} : {types}"
        notes = []
        if fn.clusters is not None:
            notes.append(f"cluster {fn.clusters[i]}")
        if op.loc is not UNKNOWN and op.loc.line:
            notes.append(f"{_short_file(op.loc.file)}:{op.loc.line}")
        if notes:
            text = f"{text:<60}  # {'  '.join(notes)}"
        lines.append(text)
        for region in op.regions:
            lines.append(format_function(region, indent + "    ", names))
    lines.append(f"{indent}  return {', '.join(name(r) for r in fn.results)}")
    lines.append(f"{indent}}}")
    return "\n".join(lines)


def _short_file(path: str) -> str:
    parts = path.replace("\\", "/").split("/")
    return "/".join(parts[-2:])


def scalar_type(dtype: DType) -> TensorType:
    return TensorType((), dtype)


def literal(value, dtype: DType) -> Literal:
    return Literal(np.asarray(value, dtype=dtype.np))


__all__ = ["TensorType", "Location", "UNKNOWN", "Literal", "Attrs", "EMPTY_ATTRS", "Value",
           "Op", "Function", "StructuralKey", "format_function", "scalar_type", "literal", "dt"]
