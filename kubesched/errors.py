"""User-input errors: one line naming the source and the field path (exit code 2, HTTP 400)."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

# Control characters (line breaks included) that a quoted user value may carry, written as escapes
# so that an error stays one line.
_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
_ESCAPES.update({ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", 0x2028: "\\u2028", 0x2029: "\\u2029"})


def one_line(text: str) -> str:
    """``text`` with control characters and line breaks escaped."""
    return text.translate(_ESCAPES)


class InputError(Exception):
    """Bad user input. ``str(err)`` is the single line shown to the user."""

    def __init__(self, message: str, *, source: str | None = None, path: str | None = None):
        message, source, path = (one_line(x) if x else x for x in (message, source, path))  # type: ignore[assignment]
        self.source = source
        self.path = path
        self.reason = message
        parts = [p for p in (source, path) if p]
        super().__init__(": ".join([*parts, message]))

    def within(self, source: str | None = None, prefix: str | None = None) -> InputError:
        """Return the same error re-anchored under a file and/or an outer field path."""
        path = self.path
        if prefix:
            path = f"{prefix}.{path}" if path and not path.startswith("[") else f"{prefix}{path or ''}"
        return InputError(self.reason, source=source or self.source, path=path)


def require_extra(module: str, what: str, extra: str, source: str) -> None:
    """Import ``module`` now, or raise the one line saying which extra of kubesched installs it:
    a command checks what it needs before any work, rather than failing at the end."""
    import importlib

    try:
        importlib.import_module(module)
    except ImportError:
        raise InputError(f"needs {what}: pip install 'kubesched[{extra}]'", source=source) from None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean "X"?)`` for the choice ``word`` differs from only in case, else for the
    closest one (difflib, ratio 0.6 and up), else ``""``."""
    import difflib  # only when a name is wrong: kubesched --help imports this module

    choices = sorted(choices)
    close = [c for c in choices if c.lower() == word.lower()] or difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


def describe(value: object) -> str:
    """Type and value for messages: ``string "5"``, ``number 3.5``, ``boolean true``, ``a list``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"number {value}"
    if isinstance(value, str):
        return f'string "{value if len(value) <= 40 else value[:37] + "..."}"'
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def join_path(base: str, key: str | int) -> str:
    """Field path join: ``a.b``, ``a[0]``."""
    if isinstance(key, int):
        return f"{base}[{key}]"
    return f"{base}.{key}" if base else key


def check_mapping(value: Any, path: str, keys: Collection[str], source: str | None = None) -> dict[str, Any]:
    """``value`` if it is a mapping whose keys are all in ``keys``; else the error naming the field."""
    if not isinstance(value, dict):
        raise InputError(f"expected a mapping, got {type(value).__name__}", source=source, path=path)
    for k in value:
        if k not in keys:
            raise InputError(f'unknown field (known: {", ".join(keys)})', source=source, path=join_path(path, str(k)))
    return value


class SourceReader:
    """Reads one input file's fields: every error names the file (``source``) and the field path.
    The file formats' readers (the autoscaler's options, NodePools, synthetic workloads) extend it
    with their own field kinds."""

    def __init__(self, source: str | None) -> None:
        self.source = source

    def err(self, path: str, msg: str) -> InputError:
        return InputError(msg, source=self.source, path=path)

    def mapping(self, v: Any, path: str, keys: Collection[str]) -> dict[str, Any]:
        return check_mapping(v, path, keys, self.source)
