"""User-input errors: one line naming the source and the field path (exit code 2, HTTP 400)."""

from __future__ import annotations


class InputError(Exception):
    """Bad user input. ``str(err)`` is the single line shown to the user."""

    def __init__(self, message: str, *, source: str | None = None, path: str | None = None):
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


def join_path(base: str, key: str | int) -> str:
    """Field path join: ``a.b``, ``a[0]``."""
    if isinstance(key, int):
        return f"{base}[{key}]"
    return f"{base}.{key}" if base else key
