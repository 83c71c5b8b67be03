"""Matching pods per topology domain, kept in step with the snapshot instead of re-summed each cycle.

PreFilter and PreScore need, per constraint, the number of matching pods in every domain over
the constraint's eligible nodes. The eligible nodes and their domains only change with the
nodes (``ShapeMasks`` keeps them per pod shape and node generation); the per-node matching
counts change by one bound pod per cycle. So a ``DomainCounts`` sums once and then follows the
rows whose pods changed (the snapshot's memo hands them to ``update``), re-reading only those
rows' matching counts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.api.selectors import LabelSelector
    from kubesched.state.snapshot import Snapshot

#: More changed rows than n / REBUILD_FRACTION since the last read: sum again instead.
REBUILD_FRACTION = 8
#: Changed rows handled one by one in Python below this many (numpy costs more for a few).
_SCALAR_ROWS = 16
#: A changed row holding at most this many pods is recounted from its pods; busier rows read the
#: snapshot's per-node match counts (one query lookup, costlier than matching a few pods).
_SCAN_PODS = 8


def count_matching(pods: Iterable[Pod], selector: LabelSelector | None, namespace: str) -> int:
    """countPodsMatchSelector over ``pods``: non-terminating pods of ``namespace`` matching.

    The scalar twin of ``common.matching_pods_per_node`` (an empty selector counts nothing).
    """
    if selector is None or selector.is_empty:
        return 0
    return sum(1 for p in pods if not p.deleting and p.namespace == namespace and selector.matches(p.labels))


def domain_sums(dom: np.ndarray, per_node: np.ndarray, size: int) -> np.ndarray:
    """Sum of ``per_node`` per domain code (``dom`` -1: the row counts nowhere), int64."""
    keep = dom >= 0
    if not keep.any():
        return np.zeros(size, np.int64)
    # float weights are exact for integer counts far beyond any cluster's pod count
    sums = np.bincount(dom[keep], weights=per_node[keep], minlength=size)
    return np.rint(sums).astype(np.int64)


class DomainCounts:
    """Per-domain sums of matching pods over fixed rows, updated from the snapshot's change log.

    ``dom`` gives each node row its domain code, -1 where the row does not count (not eligible);
    it is fixed for this object's life, which its owner ties to the snapshot's node generation.
    A pod matches ``selector`` in ``namespace`` as ``count_matching`` says.
    With ``domains`` (a bool per code) it also keeps the minimum over those domains, as
    upstream's DomainsAtCount: the count of domains at the minimum, so that a bound pod costs
    O(1) and the minimum is searched again only when its last domain moves up.
    """

    __slots__ = (
        "dom", "size", "selector", "namespace", "domains", "_per_node", "_sums", "_min", "_at_min", "rebuilds",
    )  # fmt: skip

    def __init__(
        self,
        dom: np.ndarray,
        size: int,
        selector: LabelSelector | None,
        namespace: str,
        domains: np.ndarray | None = None,
    ) -> None:
        self.dom = dom
        self.size = size
        self.selector = selector
        self.namespace = namespace
        self.domains = domains
        self._per_node = np.zeros(0, np.int64)  # the per-node counts the sums reflect
        self._sums = np.zeros(size, np.int64)
        self._min: int | None = None  # None: search again on the next read
        self._at_min = 0
        self.rebuilds = 0  # full sums taken (tests and profiling)

    @property
    def sums(self) -> np.ndarray:
        """Sums per domain as of the last rebuild or update (read-only; copy before changing)."""
        return self._sums

    def update(self, snap: Snapshot, rows: list[int], per_node: Callable[[], np.ndarray]) -> None:
        """Catch up with ``rows`` whose pods changed (``per_node`` reads the matching pods per node
        for this selector and namespace): row by row, or summed anew when many changed."""
        if len(rows) * REBUILD_FRACTION > max(snap.n, _SCALAR_ROWS):
            self.rebuild(per_node())
        else:
            self._apply(snap, rows, per_node)

    def rebuild(self, live: np.ndarray) -> DomainCounts:
        """Sum ``live`` (matching pods per node) anew."""
        self.rebuilds += 1
        self._per_node = np.array(live, np.int64)
        sums = domain_sums(self.dom, self._per_node, self.size)
        sums.flags.writeable = False
        self._sums = sums
        self._min = None
        return self

    def minimum(self) -> int | None:
        """Smallest sum over ``domains`` as of the last update; None when there is none."""
        if self._min is None:
            if self.domains is None or not self.domains.any():
                return None
            vals = self._sums[self.domains]
            self._min = int(vals.min())
            self._at_min = int(np.count_nonzero(vals == self._min))
        return self._min

    def _moved(self, d: int, old: int, new: int) -> None:
        """Keep the minimum and its domain count in step with one domain's sum."""
        mn = self._min
        if mn is None or self.domains is None or not self.domains[d]:
            return
        if new < mn:
            self._min, self._at_min = new, 1
        elif new == mn:
            self._at_min += 1
        elif old == mn:
            self._at_min -= 1
            if self._at_min == 0:
                self._min = None

    def _apply(self, snap: Snapshot, rows: list[int], per_node: Callable[[], np.ndarray]) -> None:
        """Move the sums by each changed row's difference from what they reflect."""
        sums = self._sums
        sums.flags.writeable = True
        known, dom = self._per_node, self.dom
        if len(rows) <= _SCALAR_ROWS:
            live = None
            for row in set(rows):
                pods = snap.pods_on[row]
                if len(pods) <= _SCAN_PODS:
                    now = count_matching(pods.values(), self.selector, self.namespace)
                else:
                    live = per_node() if live is None else live
                    now = int(live[row])
                delta = now - int(known[row])
                if delta:
                    known[row] += delta
                    d = int(dom[row])
                    if d >= 0:
                        old = int(sums[d])
                        sums[d] = old + delta
                        self._moved(d, old, old + delta)
        else:
            r = np.unique(np.asarray(rows, np.int64))
            delta = per_node()[r].astype(np.int64) - known[r]
            known[r] += delta
            d = dom[r]
            keep = (d >= 0) & (delta != 0)
            np.add.at(sums, d[keep], delta[keep])
            self._min = None
        sums.flags.writeable = False
