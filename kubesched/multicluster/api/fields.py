"""Reading Karmada's objects strictly: objects whose every key is known, lists of strings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.api.fields import as_list, as_map, as_str
from kubesched.errors import InputError, join_path


def strict_object(value: Any, path: str, allowed: tuple[str, ...]) -> dict:
    """An object whose keys must all be in ``allowed`` (Karmada's CRDs prune nothing silently here)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(f"expected an object, got {type(value).__name__}", path=path)
    for k in value:
        if k not in allowed:
            raise InputError(f'unknown field "{k}"', path=join_path(path, str(k)))
    return dict(value)


def str_list(value: Any, path: str) -> tuple[str, ...]:
    return tuple(as_str(v, join_path(path, i)) for i, v in enumerate(as_list(value, path)))


def metadata_and_name(m: Mapping, path: str) -> tuple[dict, str, str]:
    """A Karmada object's top-level keys checked; its metadata, the metadata's path and its
    ``metadata.name`` (required)."""
    strict_object(m, path, ("apiVersion", "kind", "metadata", "spec", "status"))
    mp = join_path(path, "metadata")
    md = as_map(m.get("metadata"), mp)
    name = as_str(md.get("name"), join_path(mp, "name"))
    if not name:
        raise InputError("metadata.name is required", path=join_path(mp, "name"))
    return md, mp, name
