#!/usr/bin/env python3
"""Regenerate kubesched/api/schema_v1.json: the wire fields of the kinds kubesched reads strictly.

The table lists, for every Go struct reachable from the kinds in ``ROOTS`` (Pod, Node,
Namespace, PriorityClass, PodDisruptionBudget and the storage kinds the volume plugins read),
its JSON field names and their types, as the ``json:"..."`` tags of k8s.io/api and
k8s.io/apimachinery declare them. It is what kubectl's strict field validation
checks a manifest against (unknown fields, wrong scalar types). Run it against checkouts of
both modules at the Kubernetes release kubesched follows:

    git clone --branch v0.36.3 https://github.com/kubernetes/api
    git clone --branch v0.36.3 https://github.com/kubernetes/apimachinery
    python scripts/gen_api_schema.py api apimachinery v0.36.3 > kubesched/api/schema_v1.json
    python scripts/gen_api_schema.py api apimachinery v0.36.3 resource > kubesched/api/schema_resource_v1.json

The second table holds the resource.k8s.io/v1 kinds of Dynamic Resource Allocation (and the
core and meta types they reach); ``kubesched.api.schema`` loads both.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

# package alias -> (module root key, directory, files)
SOURCES = {
    "core": ("api", "core/v1", ("types.go",)),
    "scheduling": ("api", "scheduling/v1", ("types.go",)),
    "policy": ("api", "policy/v1", ("types.go",)),
    "storage": ("api", "storage/v1", ("types.go",)),
    "resource": ("api", "resource/v1", ("types.go",)),
    "meta": ("apimachinery", "pkg/apis/meta/v1", ("types.go",)),
}
# Go import aliases used in those files -> our package keys
ALIASES = {"metav1": "meta", "apiv1": "core", "v1": "core", "corev1": "core"}
# Types with a custom JSON form
SPECIAL = {
    "meta.Time": "time",
    "meta.MicroTime": "time",
    "meta.Duration": "string",
    "meta.FieldsV1": "any",
    "resource.Quantity": "quantity",
    "intstr.IntOrString": "intstr",
    "types.UID": "string",
    "runtime.RawExtension": "any",
}
SCALARS = {
    "string": "string", "bool": "bool", "int32": "int32", "int64": "int64", "int": "int64",
    "float64": "float", "float32": "float", "byte": "int32",
}  # fmt: skip
ROOTS = {
    "Pod": "core.Pod",
    "Node": "core.Node",
    "Namespace": "core.Namespace",
    "PriorityClass": "scheduling.PriorityClass",
    "PodDisruptionBudget": "policy.PodDisruptionBudget",
    "PersistentVolume": "core.PersistentVolume",
    "PersistentVolumeClaim": "core.PersistentVolumeClaim",
    "StorageClass": "storage.StorageClass",
    "CSINode": "storage.CSINode",
    "CSIDriver": "storage.CSIDriver",
    "CSIStorageCapacity": "storage.CSIStorageCapacity",
    "VolumeAttachment": "storage.VolumeAttachment",
}
#: The kinds of each table (the optional last argument picks one; "core" is schema_v1.json's).
TABLES = {
    "core": ROOTS,
    "resource": {
        "DeviceClass": "resource.DeviceClass",
        "ResourceSlice": "resource.ResourceSlice",
        "ResourceClaim": "resource.ResourceClaim",
        "ResourceClaimTemplate": "resource.ResourceClaimTemplate",
    },
}

_TYPE_RE = re.compile(r"^type (\w+) (struct \{|.+)$", re.M)
_FIELD_RE = re.compile(r"^\t(?:(\w+)\s+)?([\w.*\[\]]+)\s+`([^`]*)`", re.M)
_JSON_TAG_RE = re.compile(r'json:"([^"]*)"')


def _declarations(pkg: str, text: str) -> dict[str, object]:
    out: dict[str, object] = {}
    for m in _TYPE_RE.finditer(text):
        name, rest = m.group(1), m.group(2)
        if rest == "struct {":
            end = text.index("\n}\n", m.end())
            out[f"{pkg}.{name}"] = ("struct", text[m.end() : end])
        else:
            out[f"{pkg}.{name}"] = ("alias", rest.split("//")[0].strip())
    return out


def _qualify(pkg: str, go_type: str) -> str:
    if "." in go_type:
        alias, name = go_type.split(".", 1)
        return f"{ALIASES.get(alias, alias)}.{name}"
    return go_type if go_type in SCALARS else f"{pkg}.{go_type}"


class Builder:
    def __init__(self, decls: dict[str, object]) -> None:
        self.decls = decls
        self.types: dict[str, dict[str, str]] = {}

    def ref(self, pkg: str, go_type: str) -> str:
        go_type = go_type.lstrip("*")
        if go_type.startswith("[]"):
            inner = go_type[2:]
            return "bytes" if inner == "byte" else "[]" + self.ref(pkg, inner)
        if go_type.startswith("map["):
            close = go_type.index("]")
            return "{}" + self.ref(pkg, go_type[close + 1 :])
        if go_type in SCALARS:
            return SCALARS[go_type]
        q = _qualify(pkg, go_type)
        if q in SPECIAL:
            return SPECIAL[q]
        decl = self.decls.get(q)
        if decl is None:
            raise SystemExit(f"unresolved type {q}")
        kind, body = decl  # type: ignore[misc]
        if kind == "alias":
            return self.ref(q.split(".")[0], body)
        if q not in self.types:
            self.types[q] = {}
            self.types[q] = self.fields(q.split(".")[0], body)
        return q

    def fields(self, pkg: str, body: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for line in body.splitlines():
            if line.lstrip().startswith("//"):
                continue
            m = _FIELD_RE.match(line)
            if m is None:
                continue
            tag = _JSON_TAG_RE.search(m.group(3))
            if tag is None:
                continue
            name = tag.group(1).split(",")[0]
            if name == "-":
                continue
            go_type = m.group(2)
            if not name and ",inline" in tag.group(1):
                embedded = self.ref(pkg, go_type)
                out.update(self.types[embedded])
                continue
            out[name] = self.ref(pkg, go_type)
        return out


def main(api_root: str, machinery_root: str, release: str, table: str = "core") -> None:
    roots = {"api": Path(api_root), "apimachinery": Path(machinery_root)}
    decls: dict[str, object] = {}
    for pkg, (mod, directory, files) in SOURCES.items():
        for f in files:
            decls.update(_declarations(pkg, (roots[mod] / directory / f).read_text()))
    b = Builder(decls)
    kinds = {kind: b.ref(q.split(".")[0], q.split(".")[1]) for kind, q in TABLES[table].items()}
    doc = {
        "source": f"k8s.io/api and k8s.io/apimachinery {release}, json tags of the Go types",
        "kinds": kinds,
        "types": dict(sorted(b.types.items())),
    }
    sys.stdout.write(json.dumps(doc, separators=(",", ":"), sort_keys=False) + "\n")


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5) or (len(sys.argv) == 5 and sys.argv[4] not in TABLES):
        raise SystemExit(__doc__)
    main(*sys.argv[1:])
