"""The bytes of an exported artifact (docs/export_format.md is the specification).

    offset  size  field
    0       8     magic b"SJEXPORT"
    8       4     format version, uint32 little-endian (FORMAT_VERSION)
    12      4     metadata length M, uint32 little-endian
    16      8     total length of the artifact N, uint64 little-endian
    24      32    SHA-256 of bytes [56, N): the metadata and every blob
    56      M     metadata: UTF-8 JSON (see `encode_tree`, `encode_avals`)
    56+M    ...   blobs (StableHLO portable artifacts, serialized executables), each
                  found by its (offset, size) in the metadata's "blobs" list

Loading checks, in order: the magic, the format version, the length, the checksum,
then the JSON; every failure is an ArtifactError that says what to do. The metadata is
data only: trees are JSON, never pickle, and nothing in an artifact is run as Python.
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys

from .. import tree
from ..callbacks import ShapeDtypeStruct
from ..compiler import dtypes as dt
from ..compiler import symbolic as sym

MAGIC = b"SJEXPORT"
FORMAT_VERSION = 2  # 2: shapes may hold symbolic dimensions (strings), and constraints
OLDEST_FORMAT_VERSION = 1  # the oldest format this version of stablejit reads
_HEADER = struct.Struct("<8sIIQ32s")


class ArtifactError(ValueError):
    """An artifact that cannot be loaded: what is wrong and what to do."""


def pack(meta: dict, blobs: list[bytes]) -> bytearray:
    """The artifact of metadata `meta` and `blobs` (their offsets go into meta)."""
    offsets, at = [], 0
    for b in blobs:
        offsets.append({"offset": at, "size": len(b)})
        at += len(b)
    body = json.dumps({**meta, "blobs": offsets}, sort_keys=True,
                      separators=(",", ":")).encode()
    payload = body + b"".join(bytes(b) for b in blobs)
    total = _HEADER.size + len(payload)
    digest = hashlib.sha256(payload).digest()
    return bytearray(_HEADER.pack(MAGIC, FORMAT_VERSION, len(body), total, digest) + payload)


def unpack(data) -> tuple[dict, list[bytes]]:
    """(metadata, blobs) of an artifact, after every check of the header."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ArtifactError(f"deserialize expects the bytes of an artifact (what "
                            f"Exported.serialize() returned), got {type(data).__name__}")
    data = bytes(data)
    if data[:len(MAGIC)] != MAGIC:
        raise ArtifactError(f"not a stablejit export artifact: it does not start with "
                            f"{MAGIC!r}; pass the bytes Exported.serialize() wrote, read in "
                            f"binary mode")
    if len(data) < _HEADER.size:
        raise ArtifactError(f"the artifact is truncated: {len(data)} bytes, shorter than "
                            f"its {_HEADER.size}-byte header; copy the whole file again")
    _, version, meta_len, total, digest = _HEADER.unpack_from(data)
    if version > FORMAT_VERSION:
        raise ArtifactError(f"the artifact has format version {version}, newer than the "
                            f"versions this stablejit reads ({OLDEST_FORMAT_VERSION} to "
                            f"{FORMAT_VERSION}); upgrade stablejit, or export it again with "
                            f"this version")
    if version < OLDEST_FORMAT_VERSION:
        raise ArtifactError(f"the artifact has format version {version}, which this "
                            f"stablejit no longer reads (it reads {OLDEST_FORMAT_VERSION} to "
                            f"{FORMAT_VERSION}); export it again from the source")
    if len(data) != total:
        what = "truncated" if len(data) < total else "longer than its header says"
        raise ArtifactError(f"the artifact is {what}: its header says {total} bytes, it has "
                            f"{len(data)}; copy the whole file again, in binary mode")
    payload = data[_HEADER.size:]
    if hashlib.sha256(payload).digest() != digest:
        raise ArtifactError("the artifact is corrupted: its checksum does not match its "
                            "contents (a changed byte); copy it again or export it again")
    try:
        meta = json.loads(payload[:meta_len].decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as e:  # checksum passed: a bad writer
        raise ArtifactError(f"the artifact's metadata is not valid JSON ({e}); export it "
                            f"again") from None
    blobs_at = payload[meta_len:]
    blobs = [blobs_at[b["offset"]:b["offset"] + b["size"]] for b in meta.pop("blobs")]
    return meta, blobs


# ---- avals -------------------------------------------------------------------------------

def encode_avals(avals) -> list[dict]:
    """A symbolic dimension is written as its text ("b", "2*b + 1"), an int as itself."""
    return [{"shape": [d if type(d) is int else str(d) for d in a.shape],
             "dtype": a.dtype.name, "weak_type": a.weak_type} for a in avals]


def _dim(d, scope: sym.Scope | None):
    if type(d) is str and scope is not None:
        try:
            return sym.parse_dim(d, scope)
        except ValueError as e:
            raise ArtifactError(f"the artifact's dimension {d!r} does not parse ({e}); "
                                f"export it again") from None
    return int(d)


def decode_avals(items, scope: sym.Scope | None = None) -> tuple[ShapeDtypeStruct, ...]:
    out = []
    for a in items:
        try:
            d = dt.dtype(a["dtype"])
        except (TypeError, ValueError, KeyError):
            raise ArtifactError(f"the artifact names the dtype {a.get('dtype')!r}, which "
                                f"this stablejit does not know; upgrade stablejit") from None
        out.append(ShapeDtypeStruct(tuple(_dim(s, scope) for s in a["shape"]), d,
                                    weak_type=bool(a.get("weak_type", False))))
    return tuple(out)


# ---- trees as data -----------------------------------------------------------------------

def _class_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def check_json(value, what: str):
    """`value` if JSON can hold it exactly (None, bool, int, float, str, lists)."""
    if value is None or type(value) in (bool, int, float, str):
        return value
    if type(value) in (tuple, list):
        return [check_json(v, what) for v in value]
    raise TypeError(f"{what} is a {type(value).__name__}, which an artifact cannot hold as "
                    f"data")


def encode_tree(td: tree.TreeDef, path: str = "") -> dict | str:
    """A TreeDef as JSON data. Raises TypeError naming the node's path (keystr form) for
    a node that cannot be named as data."""
    kind = td.kind
    where = path or "the root"
    if kind is None:
        return "*"
    if kind is type(None):
        return {"node": "None"}
    if kind is tuple or kind is list:
        return {"node": kind.__name__, "children": [
            encode_tree(c, f"{path}[{i}]") for i, c in enumerate(td.children)]}
    if kind is dict:
        bad = [k for k in td.aux if type(k) is not str]
        if bad:
            raise TypeError(f"the dict at {where} has the key {bad[0]!r}; an exported "
                            f"function's dicts must have str keys")
        return {"node": "dict", "keys": list(td.aux), "children": [
            encode_tree(c, f"{path}[{k!r}]") for k, c in zip(td.aux, td.children,
                                                              strict=True)]}
    node = tree._registry.get(kind)
    if node is None and hasattr(kind, "_fields"):
        return {"node": "namedtuple", "class": _class_name(kind), "fields": list(kind._fields),
                "children": [encode_tree(c, f"{path}.{f}")
                             for f, c in zip(kind._fields, td.children, strict=True)]}
    if node is not None and node.field_names is not None:
        meta = check_json(td.aux, f"the static fields of the {kind.__name__} at {where}")
        return {"node": "dataclass", "class": _class_name(kind),
                "fields": list(node.field_names), "meta": meta,
                "children": [encode_tree(c, f"{path}.{f}")
                             for f, c in zip(node.field_names, td.children, strict=True)]}
    raise TypeError(
        f"the {getattr(kind, '__name__', kind)} at {where} is a pytree node an artifact "
        f"cannot name as data; use tuples, lists, dicts with str keys, None, namedtuples, "
        f"or classes registered with stablejit.tree.register_dataclass")


def _loaded_class(name: str):
    """The class `module:qualname` if its module is already imported (nothing is
    imported: loading an artifact runs no code it names)."""
    module, _, qual = name.partition(":")
    obj = sys.modules.get(module)
    for part in qual.split("."):
        obj = getattr(obj, part, None)
    return obj if isinstance(obj, type) else None


_STAND_INS: dict = {}


def same_structure(got, want) -> bool:
    """Whether a call's argument structure `got` is an artifact's `want`. A namedtuple
    the artifact names but this process did not have at deserialize is a stand-in class,
    which any namedtuple of its name and fields matches (a class defined in the caller's
    script after loading the artifact)."""
    if got is want:
        return True
    if got.kind is not want.kind:
        k, w = got.kind, want.kind
        if not (any(w is c for c in _STAND_INS.values()) and isinstance(k, type)
                and issubclass(k, tuple) and k.__name__ == w.__name__
                and tuple(getattr(k, "_fields", ())) == tuple(w._fields)):
            return False
    elif got.aux != want.aux:
        return False
    return len(got.children) == len(want.children) and all(
        same_structure(a, b) for a, b in zip(got.children, want.children, strict=True))


def decode_tree(data) -> tree.TreeDef:
    if data == "*":
        return tree.LEAF
    node = data.get("node") if isinstance(data, dict) else None
    children = tuple(decode_tree(c) for c in data.get("children", ())) if node else ()
    if node == "None":
        return tree.TreeDef(type(None), None, ())
    if node in ("tuple", "list"):
        return tree.TreeDef(tuple if node == "tuple" else list, None, children)
    if node == "dict":
        return tree.TreeDef(dict, tuple(data["keys"]), children)
    if node == "namedtuple":
        cls = _loaded_class(data["class"])
        if cls is None or tuple(getattr(cls, "_fields", ())) != tuple(data["fields"]):
            # a stand-in with the same name and fields: the module need not be importable
            key = (data["class"], tuple(data["fields"]))
            if key not in _STAND_INS:
                from collections import namedtuple  # noqa: PLC0415 - rare

                _STAND_INS[key] = namedtuple(data["class"].rpartition(".")[2].split(":")[-1],
                                             data["fields"])
            cls = _STAND_INS[key]
        return tree.TreeDef(cls, None, children)
    if node == "dataclass":
        cls = _loaded_class(data["class"])
        reg = tree._registry.get(cls) if cls is not None else None
        if reg is None or tuple(reg.field_names or ()) != tuple(data["fields"]):
            raise ArtifactError(
                f"the artifact's inputs or outputs hold a {data['class']} (fields "
                f"{data['fields']}), which is not a registered pytree class in this process; "
                f"import its module and register it (stablejit.tree.register_dataclass) "
                f"before deserialize")
        meta = data.get("meta")
        aux = tuple(tuple(m) if isinstance(m, list) else m for m in meta) \
            if isinstance(meta, list) else meta
        return tree.TreeDef(cls, aux, children)
    raise ArtifactError(f"the artifact's metadata has an unknown tree node {data!r:.80}; "
                        f"upgrade stablejit")
