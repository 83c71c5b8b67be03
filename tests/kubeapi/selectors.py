"""labelSelector / fieldSelector query strings, parsed and matched the way the API server does."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .errors import bad_request
from .resources import Resource

Matcher = Callable[[dict[str, Any]], bool]

_KEY = r"[A-Za-z0-9][-A-Za-z0-9_./]*"
_VAL = r"[-A-Za-z0-9_.]*"
_EXISTS = re.compile(rf"^(!?)\s*({_KEY})$")
_EQUALITY = re.compile(rf"^({_KEY})\s*(==|=|!=)\s*({_VAL})$")
_SET = re.compile(rf"^({_KEY})\s+(in|notin)\s*\(([^()]*)\)$")
_ORDER = re.compile(rf"^({_KEY})\s*(<|>)\s*(-?\d+)$")


def _split_top_level(text: str) -> list[str]:
    """Split at commas outside parentheses (`a in (x,y),b` has two requirements)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _label_requirement(req: str) -> Callable[[dict[str, str]], bool]:
    if m := _EQUALITY.match(req):
        key, op, val = m.groups()
        if op == "!=":
            return lambda labels: labels.get(key) != val
        return lambda labels: labels.get(key) == val
    if m := _SET.match(req):
        key, op, raw = m.groups()
        values = {v.strip() for v in raw.split(",") if v.strip()}
        if op == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    if m := _ORDER.match(req):
        key, op, num = m.group(1), m.group(2), int(m.group(3))

        def compare(labels: dict[str, str]) -> bool:
            val = labels.get(key, "")
            if not re.fullmatch(r"-?\d+", val):
                return False
            return int(val) > num if op == ">" else int(val) < num

        return compare
    if m := _EXISTS.match(req):
        negate, key = m.groups()
        return (lambda labels: key not in labels) if negate else (lambda labels: key in labels)
    raise bad_request(f"unable to parse requirement: {req!r}")


def label_matcher(selector: str | None) -> Matcher:
    """A predicate over objects for a labelSelector string; an empty selector matches everything."""
    reqs = [_label_requirement(r) for r in _split_top_level(selector or "")]

    def match(obj: dict[str, Any]) -> bool:
        labels = obj.get("metadata", {}).get("labels") or {}
        return all(req(labels) for req in reqs)

    return match


def field_value(obj: dict[str, Any], path: str) -> str:
    """The string a field selector compares against: missing is "", booleans are "true"/"false"."""
    cur: Any = obj
    for part in path.split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    if isinstance(cur, dict):  # Event `source` compares its component
        return str(cur.get("component", ""))
    return str(cur)


def field_matcher(selector: str | None, res: Resource) -> Matcher:
    """A predicate for a fieldSelector string; unknown field labels are refused like the real API."""
    reqs: list[tuple[str, bool, str]] = []
    for req in _split_top_level(selector or ""):
        m = re.fullmatch(r"([^=!]+?)\s*(==|=|!=)\s*(.*)", req)
        if not m:
            raise bad_request(f"invalid selector: '{selector}'; can't understand '{req}'")
        label, op, value = m.groups()
        if label not in ("metadata.name", "metadata.namespace", *res.fields):
            raise bad_request(f'field label not supported: {label}')
        reqs.append((label, op != "!=", value))

    def match(obj: dict[str, Any]) -> bool:
        return all((field_value(obj, label) == value) == equal for label, equal, value in reqs)

    return match
