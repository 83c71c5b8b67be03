"""Strict, typed access to config documents.

kube-scheduler decodes its config strictly (unknown or mistyped fields are errors), so each
helper here turns a bad value into one ``InputError`` line naming the file and field path.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kubesched.errors import InputError, describe, did_you_mean, join_path

from .field import aggregate, invalid, is_qualified_name
from .types import PointsOf

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)


@dataclass
class Ctx:
    """Decoding context: where errors point, which version rules apply, collected warnings and
    validation errors.

    A decoding problem (wrong type, unknown field) is raised at once, as strict decoding fails
    before anything is validated; validation errors are collected (``report``) and raised together
    by ``check``, as kube-scheduler's field.ErrorList."""

    source: str | None
    version: str
    points_of: PointsOf
    #: the registered plugins' names, for "did you mean" (empty: no suggestion)
    plugin_names: Collection[str] = ()
    warnings: list[str] = field(default_factory=list)
    errors: list[tuple[str | None, str]] = field(default_factory=list)  # (field path, error body)

    def error(self, path: str | None, message: str) -> InputError:
        """An InputError anchored at this file and ``path``."""
        return InputError(message, source=self.source, path=path or None)

    def report(self, path: str | None, body: str) -> None:
        """A validation error at ``path`` (``body``: a kubesched.config.field text)."""
        if (path, body) not in self.errors:
            self.errors.append((path, body))

    def check(self) -> None:
        """Raise the validation errors reported so far: one as ``path: body``, several as
        upstream's aggregate ``[path: body, path: body]``."""
        if len(self.errors) == 1:
            path, body = self.errors[0]
            raise self.error(path, body)
        if self.errors:
            raise self.error(None, aggregate([f"{p}: {b}" if p else b for p, b in self.errors]))

    def warn(self, path: str | None, message: str) -> None:
        """Record a lossy conversion or ignored setting (kept in order, without duplicates)."""
        line = f"{path}: {message}" if path else message
        if line not in self.warnings:
            self.warnings.append(line)


def quote(value: Any) -> str:
    """Value as shown in messages: strings double-quoted, the rest as-is."""
    return f'"{value}"' if isinstance(value, str) else str(value)


def expect_map(ctx: Ctx, value: Any, path: str) -> dict:
    """``value`` as a mapping; null counts as empty (Go leaves the struct zero)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ctx.error(path, f"expected a mapping, got {describe(value)}")
    return value


def expect_list(ctx: Ctx, value: Any, path: str) -> list:
    """``value`` as a list; null counts as empty."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ctx.error(path, f"expected a list, got {describe(value)}")
    return value


def fielded_items(ctx: Ctx, raw: Any, path: str, fields: Iterable[str]) -> Iterator[tuple[int, str, dict]]:
    """``(index, path, mapping)`` of each item of a list of objects, each a mapping with only
    ``fields`` (strict decoding of ``[]struct``)."""
    for i, item in enumerate(expect_list(ctx, raw, path)):
        ipath = join_path(path, i)
        body = expect_map(ctx, item, ipath)
        check_fields(ctx, body, ipath, fields)
        yield i, ipath, body


def check_fields(ctx: Ctx, obj: dict, path: str, allowed: Iterable[str]) -> None:
    """Reject unknown (or wrongly cased) field names, as strict decoding does."""
    allowed = sorted(allowed)
    for key in obj:
        if not isinstance(key, str):
            raise ctx.error(path, f"invalid field name {describe(key)}: field names must be strings")
        if key not in allowed:
            raise ctx.error(join_path(path, key), f'unknown field "{key}"{did_you_mean(key, allowed)}')


def opt_int(ctx: Ctx, obj: dict, key: str, path: str, *, bits: int = 32) -> int | None:
    """An optional integer field (bools and floats are rejected, as Go's decoder does)."""
    value = obj.get(key)
    if value is None:
        return None
    fpath = join_path(path, key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ctx.error(fpath, f"expected an integer, got {describe(value)}")
    lo, hi = INT32 if bits == 32 else INT64
    if not lo <= value <= hi:
        raise ctx.error(fpath, f"invalid value {value}: out of range for int{bits}")
    return value


def opt_float(ctx: Ctx, obj: dict, key: str, path: str) -> float | None:
    """An optional number field (int or float, not bool)."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ctx.error(join_path(path, key), f"expected a number, got {describe(value)}")
    return float(value)


def _opt_of(ctx: Ctx, obj: dict, key: str, path: str, kind: type, what: str) -> Any:
    """An optional field that must be a ``kind`` (``what`` names it in the error)."""
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, kind):
        raise ctx.error(join_path(path, key), f"expected {what}, got {describe(value)}")
    return value


def opt_str(ctx: Ctx, obj: dict, key: str, path: str) -> str | None:
    """An optional string field."""
    return _opt_of(ctx, obj, key, path, str, "a string")


def opt_bool(ctx: Ctx, obj: dict, key: str, path: str) -> bool | None:
    """An optional boolean field."""
    return _opt_of(ctx, obj, key, path, bool, "a boolean")


def str_list(ctx: Ctx, obj: dict, key: str, path: str) -> list[str]:
    """An optional list of strings (empty when absent)."""
    fpath = join_path(path, key)
    items = expect_list(ctx, obj.get(key), fpath)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise ctx.error(join_path(fpath, i), f"expected a string, got {describe(item)}")
    return list(items)


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_DURATION_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}


def parse_duration(text: str) -> float | None:
    """Seconds in a Go duration string (``1m30s``, ``500ms``), or None if it is not one."""
    if not isinstance(text, str) or not text:
        return None
    sign = 1.0
    body = text
    if body[0] in "+-":
        sign = -1.0 if body[0] == "-" else 1.0
        body = body[1:]
    if body == "0":
        return 0.0
    pos, total = 0, 0.0
    while pos < len(body):
        match = _DURATION_PART.match(body, pos)
        if not match:
            return None
        total += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        pos = match.end()
    return sign * total if body else None


def opt_duration(ctx: Ctx, obj: dict, key: str, path: str) -> str | None:
    """An optional Go duration field, kept in its string form once checked."""
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or parse_duration(value) is None:
        raise ctx.error(
            join_path(path, key), f'invalid duration {describe(value)} (expected e.g. "15s", "1m30s")'
        )
    return value


def check_label_name(ctx: Ctx, value: str, path: str) -> None:
    """metav1validation.ValidateLabelName: one error per reason the name is not a qualified name."""
    for reason in is_qualified_name(value):
        ctx.report(path, invalid(value, reason))
