"""The envelope of a non-upstream plugin's args (kubesched's own and scheduler-plugins' ones).

The config layer passes such args through raw; each plugin checks them itself, with error paths
that start at ``<Name>Args``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.errors import InputError, join_path


def shown(value: Any) -> str:
    """A value as messages show it: as written in YAML/JSON ("text", 5, true, [1,2]), never as
    a Python structure, and at most 60 characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (ValueError, RecursionError):
        text = str(type(value).__name__)
    return text if len(text) <= 60 else text[:57] + "..."


def args_body(name: str, args: Mapping[str, Any] | None, allowed: Sequence[str]) -> dict[str, Any]:
    """The args without their optional apiVersion/kind envelope; unknown fields are errors."""
    root = f"{name}Args"
    if args is None:
        return {}
    if not isinstance(args, Mapping):
        raise InputError(f"expected an object, got {type(args).__name__}", path=root)
    body = dict(args)
    body.pop("apiVersion", None)
    kind = body.pop("kind", None)
    if kind is not None and kind != root:
        raise InputError(f'invalid value "{kind}": has to match plugin args "{root}"', path=join_path(root, "kind"))
    for key in body:
        if key not in allowed:
            known = ", ".join(allowed) if allowed else "none"
            raise InputError(f'unknown field "{key}" (known: {known})', path=join_path(root, str(key)))
    return body
