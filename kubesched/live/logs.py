"""Structured logs: ``key=value`` text or JSON lines, one line per record, on stderr.

Callers pass fields as ``log.info("scheduled", extra={"kv": {"pod": ..., "node": ...}})``.
"""

from __future__ import annotations

import datetime as dt
import logging
import sys
from typing import Any, TextIO

import orjson

LEVELS = ("debug", "info", "warning", "error")


def _ts(record: logging.LogRecord) -> str:
    return dt.datetime.fromtimestamp(record.created, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _value(v: Any) -> str:
    s = str(v)
    if s == "" or any(c in s for c in ' "=\n\t'):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return s


class TextFormatter(logging.Formatter):
    """``2025-01-01T00:00:00.000Z INFO scheduled pod=ns/p node=n1 attempt=1``."""

    def format(self, record: logging.LogRecord) -> str:
        parts = [_ts(record), record.levelname, record.getMessage()]
        kv = getattr(record, "kv", None)
        if kv:
            parts.extend(f"{k}={_value(v)}" for k, v in kv.items() if v is not None)
        line = " ".join(parts)
        if record.exc_info:
            line += " error=" + _value(self.formatException(record.exc_info).strip().splitlines()[-1])
        return line


class JSONFormatter(logging.Formatter):
    """One JSON object per line: ``ts``, ``level``, ``logger``, ``msg`` and the record's fields."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": _ts(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        kv = getattr(record, "kv", None)
        if kv:
            for k, v in kv.items():
                if v is not None and k not in out:
                    out[k] = v
        if record.exc_info:
            out["error"] = self.formatException(record.exc_info)
        return orjson.dumps(out, default=str).decode()


def setup(fmt: str = "text", level: str = "info", stream: TextIO | None = None) -> logging.Handler:
    """Route the ``kubesched`` loggers to ``stream`` (stderr) in the chosen format."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JSONFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger("kubesched")
    for h in list(root.handlers):
        if getattr(h, "_kubesched_live", False):
            root.removeHandler(h)
    handler._kubesched_live = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(getattr(logging, level.upper()))
    return handler
