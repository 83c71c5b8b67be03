"""Reading a look-ahead plugin's JSON data file (a plan, a value function): one line naming the
file, and the field where its parser names one, on anything wrong."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from kubesched.errors import InputError

T = TypeVar("T")


def load_json(path: str | Path, parse: Callable[[Any], T], max_bytes: int) -> T:
    """``parse`` of the JSON document in ``path`` (at most ``max_bytes``); its InputErrors come
    back anchored at the file."""
    src = str(path)
    try:
        p = Path(path)
        if p.stat().st_size > max_bytes:
            raise InputError(f"larger than {max_bytes:,} bytes", source=src)
        doc = json.loads(p.read_text())
    except OSError as e:
        raise InputError(e.strerror or str(e), source=src) from None
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise InputError(f"not JSON: {e}", source=src) from None
    try:
        return parse(doc)
    except InputError as e:
        raise InputError(e.reason, source=src, path=e.path) from None
