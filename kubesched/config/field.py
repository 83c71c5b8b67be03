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

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.framework.status import go_quote

_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_NAME_RE = re.compile(_NAME_FMT)
_NAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
_DNS1123_SUBDOMAIN_FMT = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)


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


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """validation.RegexError: the message, examples and the regex, worded as upstream."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def is_qualified_name(value: str) -> list[str]:
    """validation.IsQualifiedName: every reason ``value`` is not a qualified name (empty: it is)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + _regex_error(_NAME_MSG, _NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _NAME_RE.fullmatch(name):
        errs.append("name part " + _regex_error(_NAME_MSG, _NAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    errs = []
    if len(value) > 253:
        errs.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


_LABEL_VALUE_FMT = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)


def is_valid_label_value(value: str) -> list[str]:
    """validation.IsValidLabelValue: every reason ``value`` is not a label value."""
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs
