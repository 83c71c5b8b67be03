"""Existing pods' required anti-affinity terms that match an incoming pod, kept up to date.

getExistingAntiAffinityCounts depends on the incoming pod only through its namespace, its
labels and its namespace's labels (the *matcher*). Workloads schedule many pods with equal
matchers, while existing anti-affinity pods come and go one at a time, so for the last few
matchers asked this keeps, in step with the ``ExistingTermIndex``:

* ``counts``: topology key -> matching terms per value code (``topologyToMatchedTermCount``);
* ``blocked``: per node row, how many of its (key, value) pairs have a nonzero count, so
  Filter's "existing pods anti-affinity" verdict for any rows is one gather;
* ``nonzero``: the number of nonzero (key, value) pairs (PreFilter's Skip decision).

Each member added to or removed from an anti-affinity term group is logged; a matcher applies
the changes since its last use when asked again (one bump per change whose term matches its
pod, the match decided once per group). Readers get the arrays through ``share``; the next
change copies them first, so a PreFilter state never sees counts that changed after it was built.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from kubesched.plugins.interpodaffinity.terms import TermGroup, existing_term_matches

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.state.labels import LabelIndex
    from kubesched.state.snapshot import Snapshot

Counts = dict[str, np.ndarray]
MatcherKey = tuple[str, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]

#: Matchers kept (least recently used dropped first); every change is applied to all of them.
MAX_MATCHERS = 32


def matcher_key(pod: Pod, ns_labels: Mapping[str, str]) -> MatcherKey:
    """Everything of the incoming pod that an existing pod's term reads."""
    return (pod.namespace, tuple(sorted(pod.labels.items())), tuple(sorted(ns_labels.items())))


class Matcher:
    """The existing anti-affinity terms matching one (namespace, labels, namespace labels)."""

    __slots__ = ("pod", "ns_labels", "counts", "blocked", "nonzero", "pos", "_matches", "_shared")

    def __init__(self, pod: Pod, ns_labels: Mapping[str, str], n: int, pos: int) -> None:
        self.pod = pod  # a representative: only its namespace and labels are read
        self.ns_labels = ns_labels
        self.counts: Counts = {}
        self.blocked = np.zeros(n, np.int32)
        self.nonzero = 0
        self.pos = pos  # changes up to this position of the observer's log are applied
        self._matches: dict[int, bool] = {}  # group id -> whether its term matches the pod
        self._shared = False

    def matches(self, gid: int, group_key: Hashable) -> bool:
        m = self._matches.get(gid)
        if m is None:
            term, owner_ns = group_key  # type: ignore[misc]
            m = self._matches[gid] = existing_term_matches(term, owner_ns, self.pod, self.ns_labels)
        return m

    def share(self) -> tuple[Counts, np.ndarray]:
        """(counts, blocked) for a reader; treat as read-only (the next change copies them)."""
        self._shared = True
        return self.counts, self.blocked

    def _own(self) -> None:
        if self._shared:
            self.counts = {k: v.copy() for k, v in self.counts.items()}
            self.blocked = self.blocked.copy()
            self._shared = False


class ExistingAntiAffinity:
    """Matchers for recently scheduled pods, following one ``ExistingTermIndex`` tag's groups.

    The index calls ``reset`` when it rebuilds (new snapshot, node changes: value codes and
    rows may move) and ``member`` for every pod it adds to or removes from a group. Changes go
    to a log that each matcher catches up on when it is asked for, so matchers of pods no longer
    being scheduled (a workload's init pods, other namespaces) cost nothing; one that falls
    more than ``MAX_LOG`` changes behind is dropped and rebuilt if asked again.
    """

    MAX_LOG = 4096

    def __init__(self) -> None:
        self._matchers: OrderedDict[MatcherKey, Matcher] = OrderedDict()
        self._labels: LabelIndex | None = None
        # (group id, row, delta) per change; _log[0] is change number _base
        self._log: list[tuple[int, int, int]] = []
        self._base = 0
        self._gids: dict[Hashable, int] = {}  # group key -> small id (terms hash slowly)
        self._groups: list[tuple[Hashable, str]] = []  # id -> (group key, topology key)
        self._codes: dict[str, np.ndarray] = {}  # topology key -> value code per row
        # topology key -> (rows ordered by value code, start of each code's run): the rows of a
        # domain, for a count that crosses zero on a key shared by several nodes
        self._domains: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def __len__(self) -> int:
        return len(self._matchers)

    def reset(self, snap: Snapshot) -> None:
        self._matchers.clear()
        self._log.clear()
        self._base = 0
        self._gids.clear()
        self._groups.clear()
        self._codes.clear()
        self._domains.clear()
        self._labels = snap.labels

    def member(self, group_key: Hashable, row: int, delta: int) -> None:
        """A pod carrying the group's term ``delta`` times (negative: removed) on node ``row``."""
        if not self._matchers:
            return
        gid = self._gids.get(group_key)
        if gid is None:
            gid = self._gids[group_key] = len(self._groups)
            self._groups.append((group_key, group_key[0].topology_key))  # type: ignore[index]
        self._log.append((gid, row, delta))
        if len(self._log) > self.MAX_LOG:
            self._trim()

    def get(self, pod: Pod, ns_labels: Mapping[str, str], groups: Mapping[Hashable, TermGroup], snap: Snapshot) -> Matcher:
        """The matcher of ``pod``, up to date; ``groups`` (the index's, refreshed) builds a new one."""
        key = matcher_key(pod, ns_labels)
        end = self._base + len(self._log)
        m = self._matchers.get(key)
        if m is not None:
            self._matchers.move_to_end(key)
            if m.pos < end:
                self._catch_up(m, end)
            return m
        m = Matcher(pod, ns_labels, snap.n, end)
        labels = snap.labels
        for group_key, group in groups.items():
            term, owner_ns = group_key  # type: ignore[misc]
            if not existing_term_matches(term, owner_ns, pod, ns_labels):
                continue
            tkey = term.topology_key
            add = group.counts(snap, tkey)
            cur = m.counts.get(tkey)
            if cur is None:
                m.counts[tkey] = add.astype(np.int64, copy=True)
            else:
                cur[: len(add)] += add
        for tkey, arr in m.counts.items():
            codes = labels.codes(tkey)
            valid = codes >= 0
            m.blocked[valid] += arr[codes[valid]] > 0
            m.nonzero += int(np.count_nonzero(arr))
        self._matchers[key] = m
        if len(self._matchers) > MAX_MATCHERS:
            self._matchers.popitem(last=False)
        return m

    # ---- changes -------------------------------------------------------------------------------
    def _catch_up(self, m: Matcher, end: int) -> None:
        groups = self._groups
        for gid, row, delta in self._log[m.pos - self._base :]:
            group_key, tkey = groups[gid]
            if m.matches(gid, group_key):
                self._bump(m, tkey, row, delta)
        m.pos = end

    def _trim(self) -> None:
        """Drop the log's prefix every matcher has applied; drop matchers lagging far behind."""
        end = self._base + len(self._log)
        keep_from = end - self.MAX_LOG // 2
        for key in [k for k, m in self._matchers.items() if m.pos < keep_from]:
            del self._matchers[key]
        low = min((m.pos for m in self._matchers.values()), default=end)
        del self._log[: low - self._base]
        self._base = low

    def _bump(self, m: Matcher, tkey: str, row: int, delta: int) -> None:
        codes = self._codes.get(tkey)
        if codes is None:
            assert self._labels is not None
            codes = self._codes[tkey] = self._labels.codes(tkey)
        code = int(codes[row])
        if code < 0:
            return
        m._own()
        arr = m.counts.get(tkey)
        if arr is None:
            assert self._labels is not None
            arr = m.counts[tkey] = np.zeros(len(self._labels.values_of(tkey)), np.int64)
        before = int(arr[code])
        after = before + delta
        arr[code] = after
        if (before > 0) == (after > 0):
            return
        step = 1 if after > 0 else -1
        m.nonzero += step
        m.blocked[self._domain(tkey, code)] += step

    def _domain(self, tkey: str, code: int) -> np.ndarray:
        """Rows whose node has value ``code`` for ``tkey``."""
        dom = self._domains.get(tkey)
        if dom is None:
            assert self._labels is not None
            codes = self._labels.codes(tkey)
            order = np.argsort(codes, kind="stable")
            size = len(self._labels.values_of(tkey))
            starts = np.searchsorted(codes[order], np.arange(size + 1), side="left")
            dom = self._domains[tkey] = (order, starts)
        order, starts = dom
        return order[starts[code] : starts[code + 1]]
