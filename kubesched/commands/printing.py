"""What the cluster commands print besides their tables: the JSON/YAML contract and warnings."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any


def emit(data: Any, fmt: str) -> None:
    """``data`` as ``-o json`` or ``-o yaml`` on stdout."""
    if fmt == "json":
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        import yaml

        sys.stdout.write(yaml.safe_dump(data, sort_keys=False))


def warn(warnings: Iterable[str]) -> None:
    for w in warnings:
        sys.stderr.write(f"kubesched: warning: {w}\n")
