"""CycleState: per-attempt scratch space plugins share between extension points."""

from __future__ import annotations

import copy
from typing import Any


class CycleState:
    """A dict keyed by plugin-chosen keys; ``clone`` is used by preemption dry runs."""

    __slots__ = ("_data", "binding", "known_raw", "skip_filter", "skip_pre_bind", "skip_score")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()
        self.skip_pre_bind: set[str] = set()
        #: the Reserve, Permit and PreBind plugins taking part for the pod
        #: (``Framework.binding_plugins``: the equivalence cache leaves out those signed NOTHING);
        #: None: all of the profile's
        self.binding: Any = None
        #: the raw Score results the equivalence cache already holds for the pod this cycle
        #: (plugin name -> raw score per snapshot row, valid on the feasible rows): a score plugin
        #: that builds on another's scores reads them here rather than scoring again
        self.known_raw: dict[str, Any] = {}

    def read(self, key: str) -> Any:
        return self._data.get(key)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def fork(self) -> CycleState:
        """A copy whose entries are the same objects (shared, read-only) and whose skip sets are
        its own: a cycle of the equivalence cache writes fresh plugins' state on a fork of the
        state the cache keeps."""
        c = CycleState()
        c._data = dict(self._data)
        c.skip_filter = set(self.skip_filter)
        c.skip_score = set(self.skip_score)
        c.skip_pre_bind = set(self.skip_pre_bind)
        c.binding = self.binding
        return c

    def clone(self) -> CycleState:
        c = CycleState()
        c._data = {k: (v.clone() if hasattr(v, "clone") else copy.copy(v)) for k, v in self._data.items()}
        c.skip_filter = set(self.skip_filter)
        c.skip_score = set(self.skip_score)
        c.skip_pre_bind = set(self.skip_pre_bind)
        c.binding = self.binding
        return c
