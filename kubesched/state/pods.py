"""Columnar index of assigned pods, so selectors over existing pods are vectorised.

Inter-pod affinity and topology spread count pods matching a selector per node or domain;
with pod labels in a LabelIndex that is one mask and one bincount instead of a Python
loop over every pod.
"""

from __future__ import annotations

import numpy as np

from kubesched.api.objects import Pod
from kubesched.state.labels import LabelIndex


class PodIndex:
    """Rows are assigned pods; removal swaps the last row in (rows are not stable)."""

    def __init__(self) -> None:
        self.labels = LabelIndex()
        self.items: list[Pod] = []
        self.row_of: dict[str, int] = {}
        self._node_row = np.zeros(64, np.int32)
        self._ns = np.zeros(64, np.int32)
        self._deleting = np.zeros(64, bool)
        self._priority = np.zeros(64, np.int64)
        self.ns_codes: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.items)

    def copy(self) -> PodIndex:
        """An index of its own with the same rows, in the same order."""
        out = PodIndex.__new__(PodIndex)
        out.labels = self.labels.copy()
        out.items, out.row_of = list(self.items), dict(self.row_of)
        for attr in ("_node_row", "_ns", "_deleting", "_priority"):
            setattr(out, attr, getattr(self, attr).copy())
        out.ns_codes = dict(self.ns_codes)
        return out

    def _grow(self) -> None:
        cap = len(self._node_row) * 2
        for attr in ("_node_row", "_ns", "_deleting", "_priority"):
            old = getattr(self, attr)
            new = np.zeros(cap, old.dtype)
            new[: len(old)] = old
            setattr(self, attr, new)

    def ns_code(self, namespace: str) -> int:
        code = self.ns_codes.get(namespace)
        if code is None:
            code = self.ns_codes[namespace] = len(self.ns_codes)
        return code

    def add(self, pod: Pod, node_row: int) -> None:
        i = len(self.items)
        if i == len(self._node_row):
            self._grow()
        self.items.append(pod)
        self.row_of[pod.uid] = i
        self.labels.append(pod.labels, pod.uid)
        self._node_row[i] = node_row
        self._ns[i] = self.ns_code(pod.namespace)
        self._deleting[i] = pod.deleting
        self._priority[i] = pod.priority

    def remove(self, uid: str) -> Pod | None:
        i = self.row_of.pop(uid, None)
        if i is None:
            return None
        pod = self.items[i]
        last = len(self.items) - 1
        self.labels.swap_remove(i)
        if i != last:
            moved = self.items[last]
            self.items[i] = moved
            self.row_of[moved.uid] = i
            for attr in ("_node_row", "_ns", "_deleting", "_priority"):
                arr = getattr(self, attr)
                arr[i] = arr[last]
        self.items.pop()
        return pod

    def renumber_node(self, old_row: int, new_row: int) -> None:
        """A node moved rows (swap-remove in the snapshot)."""
        nr = self.node_row
        nr[nr == old_row] = new_row

    @property
    def node_row(self) -> np.ndarray:
        return self._node_row[: len(self.items)]

    @property
    def namespace(self) -> np.ndarray:
        return self._ns[: len(self.items)]

    @property
    def deleting(self) -> np.ndarray:
        return self._deleting[: len(self.items)]

    @property
    def priority(self) -> np.ndarray:
        return self._priority[: len(self.items)]

    def namespace_mask(self, namespaces: frozenset[str] | set[str]) -> np.ndarray:
        codes = [self.ns_codes[n] for n in namespaces if n in self.ns_codes]
        if not codes:
            return np.zeros(len(self.items), bool)
        return np.isin(self.namespace, codes)
