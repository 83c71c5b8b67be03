"""Incremental counts of assigned pods matching a selector query, per node and per topology value.

InterPodAffinity and PodTopologySpread ask, every cycle, "how many assigned pods match this
selector (in these namespaces), per node / per topology domain". Workloads ask the same few
questions again and again while pods are bound one at a time, so instead of masking every
assigned pod each cycle the snapshot keeps the answers of recently asked queries and updates
them by one scalar match per bound or removed pod. Node changes (rows move, label
vocabularies grow) drop everything; the next question rebuilds from the columnar PodIndex.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.api.selectors import LabelSelector
    from kubesched.state.labels import LabelIndex
    from kubesched.state.pods import PodIndex

#: One conjunct: a selector and the namespaces it applies to (None: every namespace).
Conjunct = tuple["LabelSelector | None", "frozenset[str] | None"]
#: A query: pods matching every conjunct; ``live_only`` leaves out terminating pods.
Query = tuple[tuple[Conjunct, ...], bool]

#: Queries kept; each bound pod is matched against all of them, so this stays small.
MAX_QUERIES = 32


def _readonly(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


def query_matches(query: Query, pod: Pod) -> bool:
    """The scalar reading of a query (the mask in ``_build`` is its columnar twin)."""
    conjuncts, live_only = query
    if live_only and pod.deleting:
        return False
    for selector, namespaces in conjuncts:
        if selector is None:
            return False
        if namespaces is not None and pod.namespace not in namespaces:
            return False
        if not selector.matches(pod.labels):
            return False
    return True


class _Entry:
    __slots__ = ("per_node", "by_value")

    def __init__(self, per_node: np.ndarray) -> None:
        self.per_node = per_node
        self.by_value: dict[str, np.ndarray] = {}


class MatchCounts:
    """Per-query counts kept in step with the snapshot's assigned pods (see module doc)."""

    def __init__(self, node_labels: LabelIndex, pods: PodIndex) -> None:
        self._labels = node_labels
        self._pods = pods
        self._entries: OrderedDict[Query, _Entry] = OrderedDict()

    def clear(self) -> None:
        """Node rows or label vocabularies changed: every count is rebuilt on demand."""
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    # ---- reads -----------------------------------------------------------------------------
    def _entry(self, query: Query, n: int) -> _Entry:
        e = self._entries.get(query)
        if e is None:
            e = self._entries[query] = _Entry(self._build(query, n))
            if len(self._entries) > MAX_QUERIES:
                self._entries.popitem(last=False)
        else:
            self._entries.move_to_end(query)
        return e

    def _build(self, query: Query, n: int) -> np.ndarray:
        pods = self._pods
        conjuncts, live_only = query
        if len(pods) == 0 or any(sel is None for sel, _ in conjuncts):
            return np.zeros(n, np.int64)
        mask = ~pods.deleting if live_only else np.ones(len(pods), bool)
        for selector, namespaces in conjuncts:
            if namespaces is not None:
                mask &= pods.namespace_mask(namespaces)
            if not mask.any():
                return np.zeros(n, np.int64)
            mask &= selector.mask(pods.labels)  # type: ignore[union-attr]
        return np.bincount(pods.node_row[mask], minlength=n)[:n].astype(np.int64)

    def per_node(self, query: Query, n: int) -> np.ndarray:
        """Matching pods per node row (read-only)."""
        return _readonly(self._entry(query, n).per_node)

    def per_value(self, query: Query, n: int, key: str) -> np.ndarray:
        """Matching pods per value code of node label ``key``; nodes without it drop out (read-only)."""
        e = self._entry(query, n)
        arr = e.by_value.get(key)
        if arr is None:
            codes = self._labels.codes(key)
            valid = codes >= 0
            size = len(self._labels.values_of(key))
            arr = np.bincount(codes[valid], weights=e.per_node[valid], minlength=size)
            arr = e.by_value[key] = np.rint(arr).astype(np.int64)
        return _readonly(arr)

    # ---- updates (called by the snapshot) --------------------------------------------------
    def on_pod(self, pod: Pod, row: int, delta: int) -> None:
        """A pod was assigned to (``delta`` 1) or removed from (-1) node ``row``."""
        for query, e in self._entries.items():
            if not query_matches(query, pod):
                continue
            e.per_node[row] += delta
            for key, arr in e.by_value.items():
                code = int(self._labels.codes(key)[row])
                if code >= 0:
                    arr[code] += delta
