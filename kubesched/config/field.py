"""The texts of k8s.io/apimachinery's validation errors, as kube-scheduler prints them.

``field.Error.Error()`` is ``<path>: <body>``; the bodies below are ``ErrorBody()`` for each error
type (``Invalid value: 101: not in valid range [0, 100]``, ``Unsupported value: "Fastest":
supported values: "LeastAllocated", ...``, ``Required value``, ``Forbidden: ...``, ``Duplicate
value: ...``), and an aggregate of several errors reads ``[<error>, <error>]``. Bad values print as
Go prints them: strings quoted (``%q``), numbers and booleans bare, string lists as
``[]string{"a"}``; ``Bare`` wraps a value that Go prints through its ``String()`` method (a
duration, a field path).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api import names
from kubesched.framework.status import go_quote


@dataclass(frozen=True)
class Bare:
    """A value Go prints with its String() method: no quotes."""

    text: str


def go_value(value: Any) -> str:
    """How ``field.Error`` prints a bad value."""
    if value is None:
        return "null"
    if isinstance(value, Bare):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return "[]string{" + ", ".join(go_quote(v) for v in value) + "}"
    return str(value)


def invalid(value: Any, detail: str = "") -> str:
    return _body("Invalid value: " + go_value(value), detail)


def required(detail: str = "") -> str:
    return _body("Required value", detail)


def forbidden(detail: str = "") -> str:
    return _body("Forbidden", detail)


def duplicate(value: Any) -> str:
    return "Duplicate value: " + go_value(value)


def not_supported(value: Any, supported: Sequence[str] = ()) -> str:
    detail = "supported values: " + ", ".join(go_quote(s) for s in supported) if supported else ""
    return _body("Unsupported value: " + go_value(value), detail)


def _body(head: str, detail: str) -> str:
    return f"{head}: {detail}" if detail else head


def aggregate(errors: Sequence[str]) -> str:
    """utilerrors.NewAggregate(errs).Error(): one error as it is, several as ``[a, b]`` (repeats
    dropped)."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def is_qualified_name(value: str) -> list[str]:
    """validation.IsQualifiedName: every reason ``value`` is not a qualified name (empty: it is)."""
    return list(names.is_qualified_name(value))


def is_dns1123_subdomain(value: str) -> list[str]:
    return list(names.is_dns1123_subdomain(value))


def is_valid_label_value(value: str) -> list[str]:
    """validation.IsValidLabelValue: every reason ``value`` is not a label value."""
    return list(names.is_valid_label_value(value))
