"""JSON merge patch (RFC 7386), strategic merge patch (the subset built-in kinds need), JSON patch (RFC 6902)."""

from __future__ import annotations

import copy
from typing import Any

from .errors import bad_request

# Lists that strategic merge patch merges by a key instead of replacing (patchMergeKey in
# k8s.io/api); the path skips list indices. Lists not named here are replaced whole.
MERGE_KEYS: dict[str, str] = {
    "metadata.ownerReferences": "uid",
    "spec.containers": "name", "spec.initContainers": "name", "spec.ephemeralContainers": "name",
    "spec.containers.env": "name", "spec.containers.ports": "containerPort",
    "spec.containers.volumeMounts": "mountPath", "spec.volumes": "name", "spec.imagePullSecrets": "name",
    "spec.schedulingGates": "name", "spec.resourceClaims": "name",
    "status.reservedFor": "uid",  # ResourceClaim
    "status.conditions": "type", "status.addresses": "type", "status.podIPs": "ip", "status.hostIPs": "ip",
}
MERGED_PRIMITIVE_LISTS = {"metadata.finalizers"}


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, null deletes, everything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def strategic_merge_patch(target: Any, patch: Any, path: str = "") -> Any:
    """Merge patch plus merge-by-key lists and the `$patch`/`$deleteFromPrimitiveList` directives."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return None
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key.startswith("$setElementOrder/") or key in ("$patch", "$retainKeys"):
            continue  # ordering and retain hints: no effect on what this server stores
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            out[field] = [v for v in out.get(field) or [] if v not in value]
            continue
        sub = f"{path}.{key}" if path else key
        if value is None:
            out.pop(key, None)
        elif isinstance(value, list) and sub in MERGE_KEYS:
            out[key] = _merge_keyed_list(out.get(key) or [], value, MERGE_KEYS[sub], sub)
        elif isinstance(value, list) and sub in MERGED_PRIMITIVE_LISTS:
            old = list(out.get(key) or [])
            out[key] = old + [v for v in value if v not in old]
        else:
            merged = strategic_merge_patch(out.get(key), value, sub)
            if merged is None:
                out.pop(key, None)
            else:
                out[key] = merged
    return out


def _merge_keyed_list(old: list[Any], patch: list[Any], key: str, path: str) -> list[Any]:
    items = list(old)
    for entry in patch:
        if not isinstance(entry, dict) or key not in entry:
            raise bad_request(f"map: {entry} does not contain declared merge key: {key}")
        idx = next((i for i, it in enumerate(items) if isinstance(it, dict) and it.get(key) == entry[key]), None)
        if entry.get("$patch") == "delete":
            if idx is not None:
                items.pop(idx)
        elif idx is None:
            items.append({k: v for k, v in entry.items() if k != "$patch"})
        else:
            items[idx] = strategic_merge_patch(items[idx], entry, path)
    return items


def _pointer(doc: Any, pointer: str) -> tuple[Any, str | int]:
    """The container a JSON pointer's last token lives in, and that token."""
    if not pointer.startswith("/"):
        raise bad_request(f"json patch: invalid path {pointer!r}")
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]
    cur = doc
    for tok in tokens[:-1]:
        try:
            cur = cur[int(tok)] if isinstance(cur, list) else cur[tok]
        except (KeyError, IndexError, ValueError, TypeError):
            raise bad_request(f"json patch: path {pointer!r} does not exist") from None
    last = tokens[-1]
    if isinstance(cur, list):
        if last == "-" or last.isdigit():
            return cur, len(cur) if last == "-" else int(last)
        raise bad_request(f"json patch: {last!r} is not a list index in {pointer!r}")
    if not isinstance(cur, dict):
        raise bad_request(f"json patch: path {pointer!r} does not exist")
    return cur, last


def json_patch(target: Any, ops: Any) -> Any:
    """RFC 6902 add/remove/replace/move/copy/test over a copy of target."""
    if not isinstance(ops, list):
        raise bad_request("json patch: the body must be a list of operations")
    doc = copy.deepcopy(target)
    for op in ops:
        kind, path = op.get("op"), op.get("path", "")
        if kind in ("move", "copy"):
            src, skey = _pointer(doc, op.get("from", ""))
            value = copy.deepcopy(src[skey])
            if kind == "move":
                del src[skey]
            kind, op = "add", {"path": path, "value": value}
        parent, key = _pointer(doc, path)
        try:
            if kind == "add":
                if isinstance(parent, list):
                    parent.insert(int(key), copy.deepcopy(op["value"]))
                else:
                    parent[key] = copy.deepcopy(op["value"])
            elif kind == "remove":
                del parent[key]
            elif kind == "replace":
                parent[key]  # noqa: B018  (must exist)
                parent[key] = copy.deepcopy(op["value"])
            elif kind == "test":
                if parent[key] != op["value"]:
                    raise bad_request(f"json patch: test failed at {path}")
            else:
                raise bad_request(f"json patch: unknown op {kind!r}")
        except (KeyError, IndexError, TypeError):
            raise bad_request(f"json patch: cannot {kind} at {path}") from None
    return doc
