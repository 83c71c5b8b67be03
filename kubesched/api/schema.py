"""Strict field validation of the kinds kubesched reads, as kubectl's ``--validate=strict`` does it.

``schema_v1.json`` lists the wire fields of Pod, Node, Namespace, PriorityClass,
PodDisruptionBudget and the storage kinds (PersistentVolume, PersistentVolumeClaim,
StorageClass, CSINode, CSIDriver, CSIStorageCapacity, VolumeAttachment) and of every type below
them (``schema_resource_v1.json`` those of the resource.k8s.io/v1 kinds of Dynamic Resource
Allocation), with their JSON types, as the Go types of
Kubernetes v1.36 declare them (regenerate with ``scripts/gen_api_schema.py``). An unknown field
(a typo such as ``spec.toleration``) or a value of the wrong JSON type (``priority: "5"``, a
number past the int32 range) is an error naming the field, as the API server's strict decoding
reports it. A wrong ``apiVersion`` for the kind is one too; a missing one is accepted, so
hand-written fixtures without it still load.

With ``--validate=warn`` or ``ignore`` (``check``'s ``unknown``), unknown fields are dropped
(with a warning, or silently) as the API server drops them; wrong types stay errors.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from importlib import resources
from typing import Any

from kubesched.errors import InputError, describe

#: apiVersion each strictly read kind is served at.
API_VERSIONS: dict[str, str] = {
    "Pod": "v1",
    "Node": "v1",
    "Namespace": "v1",
    "PriorityClass": "scheduling.k8s.io/v1",
    "PodDisruptionBudget": "policy/v1",
    "PersistentVolume": "v1",
    "PersistentVolumeClaim": "v1",
    "StorageClass": "storage.k8s.io/v1",
    "CSINode": "storage.k8s.io/v1",
    "CSIDriver": "storage.k8s.io/v1",
    "CSIStorageCapacity": "storage.k8s.io/v1",
    "VolumeAttachment": "storage.k8s.io/v1",
    "DeviceClass": "resource.k8s.io/v1",
    "ResourceSlice": "resource.k8s.io/v1",
    "ResourceClaim": "resource.k8s.io/v1",
    "ResourceClaimTemplate": "resource.k8s.io/v1",
}
#: The generated tables (``scripts/gen_api_schema.py``); a type named in two is the same type.
TABLES = ("schema_v1.json", "schema_resource_v1.json")

class _Mismatch(Exception):
    """A field that does not fit the schema; ``parts`` collects its path while unwinding.
    ``holder``: for an unknown field, the object that holds it (``parts[0]`` is its key)."""

    def __init__(self, message: str, key: str | int | None = None, holder: dict | None = None) -> None:
        self.message = message
        self.parts: list[str | int] = [] if key is None else [key]
        self.holder = holder


# Compiled types: (code, payload). STRUCT: (type name, {field: type}); LIST and MAP: the element
# type; the scalar codes carry no payload. Scalars are checked inline in ``_walk`` (one call per
# object or list, not per field: a 50,000-pod dump has millions of fields).
STRUCT, LIST, MAP, ANY, STRING, BOOL, INT32, INT64, FLOAT, QUANTITY, INTSTR = range(11)
_SCALAR_CODES = {
    "string": STRING, "time": STRING, "bytes": STRING, "bool": BOOL, "int32": INT32, "int64": INT64,
    "float": FLOAT, "quantity": QUANTITY, "intstr": INTSTR, "any": ANY,
}  # fmt: skip
_EXPECTED = {
    STRING: "a string", BOOL: "true or false", INT32: "an integer (int32)", INT64: "an integer (int64)",
    FLOAT: "a number", QUANTITY: "a quantity", INTSTR: "an integer or a string",
}  # fmt: skip
_RANGES = {INT32: (-(2**31), 2**31 - 1), INT64: (-(2**63), 2**63 - 1)}


def _compile(types: dict[str, dict[str, str]]) -> dict[str, tuple[int, Any]]:
    compiled: dict[str, tuple[int, Any]] = {}

    def ref(name: str) -> tuple[int, Any]:
        if name.startswith("[]"):
            return (LIST, ref(name[2:]))
        if name.startswith("{}"):
            return (MAP, ref(name[2:]))
        if name in _SCALAR_CODES:
            return (_SCALAR_CODES[name], None)
        if name not in compiled:
            fields: dict[str, tuple[int, Any]] = {}
            compiled[name] = (STRUCT, (name.split(".", 1)[1], fields))
            fields.update({f: ref(t) for f, t in types[name].items()})
        return compiled[name]

    for name in types:
        ref(name)
    return compiled


def _load() -> tuple[dict[str, tuple[int, Any]], dict[str, str]]:
    types: dict[str, dict[str, str]] = {}
    kinds: dict[str, str] = {}
    for table in TABLES:
        doc = json.loads(resources.files("kubesched.api").joinpath(table).read_text())
        types.update(doc["types"])
        kinds.update(doc["kinds"])
    return _compile(types), kinds


_TYPES, _KINDS = _load()


def _scalar_ok(code: int, v: Any) -> bool:
    t = type(v)
    if code == STRING:
        return t is str
    if code == ANY:
        return True
    if code == BOOL:
        return t is bool
    if code == INT32 or code == INT64:
        return t is int
    if code == QUANTITY:
        return t is str or t is int or t is float
    if code == INTSTR:
        return t is str or t is int
    return t is int or t is float  # FLOAT


def _check_scalar(code: int, v: Any) -> None:
    if not _scalar_ok(code, v):
        raise _Mismatch(f"expected {_EXPECTED[code]}, got {describe(v)}")
    if code in _RANGES:
        lo, hi = _RANGES[code]
        if not lo <= v <= hi:
            raise _Mismatch(f"invalid value {v}: out of the int{32 if code == INT32 else 64} range")


def _walk(value: Any, t: tuple[int, Any]) -> None:
    """Check ``value`` against compiled type ``t`` (an object, list or map type)."""
    code, sub = t
    if code == STRUCT:
        if type(value) is not dict:
            raise _Mismatch(f"expected an object, got {describe(value)}")
        type_name, fields = sub
        for k, v in value.items():
            ft = fields.get(k)
            if ft is None:
                raise _Mismatch(_unknown(k, type_name, fields), k, value)
            if v is None:
                continue
            fcode = ft[0]
            try:
                if fcode == STRING:
                    if type(v) is not str:
                        _check_scalar(fcode, v)
                elif fcode <= ANY:
                    if fcode != ANY:
                        _walk(v, ft)
                else:
                    _check_scalar(fcode, v)
            except _Mismatch as e:
                e.parts.append(k)
                raise
        return
    if code == LIST:
        if type(value) is not list:
            raise _Mismatch(f"expected a list, got {describe(value)}")
        items: Any = list(enumerate(value))
    else:  # MAP
        if type(value) is not dict:
            raise _Mismatch(f"expected an object, got {describe(value)}")
        for k in value:
            if type(k) is not str:
                raise _Mismatch(f"expected string keys, got {describe(k)}")
        items = list(value.items())
    ecode = sub[0]
    for k, v in items:
        if v is None:
            if ecode == STRING:  # Go decodes a null string item as "": so do the later stages
                value[k] = ""
            continue
        try:
            if ecode <= ANY:
                if ecode != ANY:
                    _walk(v, sub)
            elif ecode != STRING or type(v) is not str:
                _check_scalar(ecode, v)
        except _Mismatch as e:
            e.parts.append(k)
            raise


def _unknown(key: Any, type_name: str, fields: dict[str, Any]) -> str:
    msg = f'unknown field "{key}" ({type_name} has no such field)'
    if isinstance(key, str):
        close = difflib.get_close_matches(key, list(fields), n=1)
        if close:
            msg += f'; did you mean "{close[0]}"?'
    return msg


def _path(base: str, parts: list[str | int]) -> str:
    out = base
    for p in reversed(parts):
        if isinstance(p, int):
            out = f"{out}[{p}]"
        elif out:
            out = f"{out}.{p}"
        else:
            out = str(p)
    return out


def check(kind: str, doc: dict, path: str, unknown: Callable[[InputError], None] | None = None) -> None:
    """Raise an InputError (path relative to the file) if ``doc`` does not fit ``kind``'s schema.

    A null item of a string list or map becomes "" in place, as Go decodes it; other nulls stay
    (an unset field). With ``unknown`` (kubectl's ``--validate=warn`` or ``ignore``), an unknown
    field is no error: it goes to ``unknown`` and is dropped from ``doc``, as the API server drops
    it; a value of the wrong type still is one (no object can be built from it)."""
    want = API_VERSIONS[kind]
    api = doc.get("apiVersion")
    if api is not None and api != want:
        raise InputError(
            f'{kind} is served as apiVersion "{want}", not {describe(api)}', path=_path(path, ["apiVersion"])
        )
    while True:
        try:
            _walk(doc, _TYPES[_KINDS[kind]])
            return
        except _Mismatch as e:
            err = InputError(e.message, path=_path(path, e.parts) or None)
            if unknown is None or e.holder is None:
                raise err from None
            del e.holder[e.parts[0]]  # walked again: one pass per unknown field, on one object
            unknown(err)
