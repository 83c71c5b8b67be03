"""Typed access to fields of decoded Kubernetes objects, with path-aware errors."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kubesched.errors import InputError, join_path


def as_map(value: Any, path: str) -> dict:
    """A mapping field; absent (None) becomes {}."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(f"expected an object, got {type(value).__name__}", path=path)
    return dict(value)


def as_list(value: Any, path: str) -> list:
    """A list field; absent (None) becomes []."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"expected a list, got {type(value).__name__}", path=path)
    return value


def child(m: Mapping[str, Any], path: str, key: str) -> tuple[dict, str]:
    """The mapping field ``key`` of ``m`` (``as_map``: absent is {}), with its path."""
    cp = join_path(path, key)
    return as_map(m.get(key), cp), cp


def maps(value: Any, path: str) -> Iterator[tuple[dict, str]]:
    """A list of objects: each item as a mapping (``as_map``), with its path ``path[i]``."""
    for i, item in enumerate(as_list(value, path)):
        ip = join_path(path, i)
        yield as_map(item, ip), ip


def as_str(value: Any, path: str, default: str = "") -> str:
    if value is None:
        return default
    if not isinstance(value, str):
        raise InputError(f"expected a string, got {type(value).__name__}", path=path)
    return value


def str_fields(m: Mapping[str, Any], path: str, *keys: str) -> tuple[str, ...]:
    """The string fields ``keys`` of ``m``, each as ``as_str`` reads it ("" when absent)."""
    return tuple(as_str(m.get(key), join_path(path, key)) for key in keys)


def as_int(value: Any, path: str, default: int | None = 0) -> int | None:
    """An integer field. As for the API server's JSON decoding, a string ("5") or a
    fraction is not an integer; YAML's and JSON's integers are."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        shown = f'"{value}"' if isinstance(value, str) else repr(value)
        raise InputError(f"expected an integer, got {type(value).__name__} {shown}", path=path)
    return value


INT32_MAX = 2**31 - 1


def as_int32(value: Any, path: str, default: int | None = 0, minimum: int = -(2**31)) -> int | None:
    """An int32 field (replicas, priorities): as ``as_int``, and within [minimum, 2^31-1], the range
    the API server's decoding and validation allow."""
    v = as_int(value, path, default)
    if v is not None and not minimum <= v <= INT32_MAX:
        raise InputError(f"invalid value {v}: must be in [{minimum}, {INT32_MAX}]", path=path)
    return v


def as_bool(value: Any, path: str, default: bool = False) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise InputError(f"expected true or false, got {value!r}", path=path)
    return value


def str_map(value: Any, path: str) -> dict[str, str]:
    """A map of string to string (labels, annotations, nodeSelector)."""
    out = as_map(value, path)
    for k, v in out.items():
        if not isinstance(k, str):
            raise InputError(f"key {k!r} is not a string", path=path)
        if v is None:  # JSON null decodes as the empty string, as in Go
            out[k] = ""
        elif not isinstance(v, str):
            # YAML turns `true`/`1` into non-strings; Kubernetes would reject them.
            raise InputError(f"expected a string value, got {v!r}", path=join_path(path, k))
    return out


def one_of(value: Any, path: str, allowed: tuple[str, ...], default: str) -> str:
    s = as_str(value, path, default)
    if s not in allowed:
        raise InputError(f'unknown value "{s}" (expected one of {", ".join(allowed)})', path=path)
    return s
