"""Affinity-term matching, as kube-scheduler's framework.AffinityTerm does it, in scalar and columnar form.

Two readings of a term exist upstream and both are kept here:

* the incoming pod's terms have their namespaceSelector resolved to namespace names once
  (``mergeAffinityTermNamespacesIfNotEmpty``), then match existing pods by namespace and labels;
* existing pods' terms keep their namespaceSelector and match the incoming pod against the
  labels of the incoming pod's namespace.

Existing pods' terms are grouped by term identity (plus the owner's namespace, which fills in
a term without namespaces), so a term carried by thousands of pods is evaluated once per cycle.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import TYPE_CHECKING, Protocol

import numpy as np

from kubesched.api.affinity import PodAffinityTerm

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.state.labels import LabelIndex
    from kubesched.state.snapshot import Snapshot

#: None stands for "every namespace" (an empty namespaceSelector).
Namespaces = frozenset[str] | None


def required_affinity_terms(pod: Pod) -> tuple[PodAffinityTerm, ...]:
    return pod.pod_affinity.required if pod.pod_affinity else ()


def required_anti_affinity_terms(pod: Pod) -> tuple[PodAffinityTerm, ...]:
    return pod.pod_anti_affinity.required if pod.pod_anti_affinity else ()


def incoming_namespaces(term: PodAffinityTerm, pod: Pod, snap: Snapshot) -> Namespaces:
    """The namespaces an incoming pod's term selects, its namespaceSelector merged in."""
    nss = term.namespace_selector
    if nss is not None and nss.is_empty:
        return None  # an empty selector is left unmerged upstream and matches every namespace
    names = set(term.resolved_namespaces(pod.namespace))
    if nss is not None:
        names |= snap.namespaces_matching(nss)
    return frozenset(names)


def incoming_term_matches(term: PodAffinityTerm, namespaces: Namespaces, target: Pod) -> bool:
    """AffinityTerm.Matches(target, nil) for an incoming pod's (merged) term."""
    if term.selector is None:
        return False
    if namespaces is not None and target.namespace not in namespaces:
        return False
    return term.selector.matches(target.labels)


def incoming_term_mask(term: PodAffinityTerm, namespaces: Namespaces, snap: Snapshot) -> np.ndarray:
    """incoming_term_matches for every assigned pod of the snapshot (PodIndex rows)."""
    pods = snap.pods
    if term.selector is None or len(pods) == 0:
        return np.zeros(len(pods), dtype=bool)
    mask = term.selector.mask(pods.labels)
    if namespaces is not None:
        mask &= pods.namespace_mask(namespaces)
    return mask


def owner_key(term: PodAffinityTerm, owner_namespace: str) -> str:
    """The owner's namespace as far as the term reads it: only a term without namespaces and
    without namespaceSelector defaults to it (``resolved_namespaces``); "" otherwise."""
    if not term.namespaces and term.namespace_selector is None:
        return owner_namespace
    return ""


def existing_term_matches(
    term: PodAffinityTerm, owner_namespace: str, pod: Pod, ns_labels: Mapping[str, str]
) -> bool:
    """AffinityTerm.Matches(pod, nsLabels) for a term of an existing pod in ``owner_namespace``."""
    if term.selector is None:
        return False
    in_ns = pod.namespace in term.resolved_namespaces(owner_namespace) or (
        term.namespace_selector is not None and term.namespace_selector.matches(ns_labels)
    )
    return in_ns and term.selector.matches(pod.labels)


def matching_counts(
    snap: Snapshot, conjuncts: Iterable[tuple[PodAffinityTerm, Namespaces]], key: str
) -> np.ndarray:
    """counts_by_value over the existing pods matching every incoming term (read-only).

    Served by the snapshot's incremental MatchCounts: a workload's pods ask the same question
    every cycle, and only the pod bound in between changes the answer.
    """
    query = (tuple((t.selector, ns) for t, ns in conjuncts), False)
    return snap.match_counts.per_value(query, snap.n, key)


def counts_by_value(
    snap: Snapshot, key: str, node_rows: np.ndarray, weights: np.ndarray | None = None
) -> np.ndarray:
    """Sum per value code of node label ``key`` over pods on ``node_rows`` (nodes without the key drop out)."""
    size = len(snap.labels.values_of(key))
    codes = snap.labels.codes(key)[node_rows]
    valid = codes >= 0
    if weights is None:
        return np.bincount(codes[valid], minlength=size).astype(np.int64, copy=False)
    # float64 sums of small integers are exact; rint guards the cast.
    return np.rint(np.bincount(codes[valid], weights=weights[valid], minlength=size)).astype(np.int64)


def add_counts(acc: dict[str, np.ndarray], key: str, counts: np.ndarray) -> None:
    """acc[key] += counts, growing to the longer vocabulary."""
    cur = acc.get(key)
    if cur is None:
        acc[key] = counts.astype(np.int64, copy=True)
        return
    if len(cur) < len(counts):
        cur = np.concatenate([cur, np.zeros(len(counts) - len(cur), np.int64)])
    cur[: len(counts)] += counts
    acc[key] = cur


def lookup(counts: np.ndarray | None, codes: np.ndarray) -> np.ndarray:
    """counts[code] per row; 0 where the node lacks the key or the value has no entry."""
    out = np.zeros(len(codes), dtype=np.int64)
    if counts is None or len(counts) == 0:
        return out
    ok = (codes >= 0) & (codes < len(counts))
    out[ok] = counts[codes[ok]]
    return out


class IndexObserver(Protocol):
    """Follows one tag of an ExistingTermIndex (see ``ExistingTermIndex.watch``)."""

    def reset(self, snap: Snapshot) -> None: ...

    def member(self, group_key: Hashable, row: int, delta: int) -> None: ...


class TermGroup:
    """Existing pods sharing one term: their node rows and how often each pod carries the term.

    Rows live in growable arrays (slot per pod, removal swaps the last slot in), so a group of
    thousands of pods changes in O(1) per pod and is read without rebuilding. Per-topology-value
    sums (``counts``) are built on first use and then kept up to date on add/remove: the index
    rebuilds its groups whenever nodes change, so value codes stay valid for a group's lifetime.
    """

    __slots__ = ("key", "slot_of", "_uids", "_rows", "_mults", "_labels", "_by_value")

    def __init__(self, key: Hashable, labels: LabelIndex | None = None) -> None:
        self.key = key
        self.slot_of: dict[str, int] = {}
        self._uids: list[str] = []
        self._rows = np.zeros(4, dtype=np.int64)
        self._mults = np.zeros(4, dtype=np.float64)
        self._labels = labels
        self._by_value: dict[str, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self._uids)

    def _bump(self, row: int, mult: int) -> None:
        if self._labels is None:
            return
        for key, arr in self._by_value.items():
            code = int(self._labels.codes(key)[row])
            if code >= 0:
                arr[code] += mult

    def add(self, uid: str, row: int, mult: int) -> None:
        i = len(self._uids)
        if i == len(self._rows):
            self._rows = np.concatenate([self._rows, np.zeros(i, np.int64)])
            self._mults = np.concatenate([self._mults, np.zeros(i, np.float64)])
        self._uids.append(uid)
        self.slot_of[uid] = i
        self._rows[i] = row
        self._mults[i] = mult
        self._bump(row, mult)

    def remove(self, uid: str) -> tuple[int, int]:
        """Drop ``uid``; returns the (row, multiplicity) it had."""
        i = self.slot_of.pop(uid)
        row, mult = int(self._rows[i]), int(self._mults[i])
        self._bump(row, -mult)
        last = len(self._uids) - 1
        if i != last:
            moved = self._uids[last]
            self._uids[i] = moved
            self.slot_of[moved] = i
            self._rows[i] = self._rows[last]
            self._mults[i] = self._mults[last]
        self._uids.pop()
        return row, mult

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(node rows, multiplicities) of the member pods; views, do not mutate."""
        n = len(self._uids)
        return self._rows[:n], self._mults[:n]

    def counts(self, snap: Snapshot, key: str) -> np.ndarray:
        """counts_by_value over the members (weighted by multiplicity); do not mutate."""
        if self._labels is None or self._labels is not snap.labels:
            rows, mults = self.arrays()
            return counts_by_value(snap, key, rows, mults)
        arr = self._by_value.get(key)
        if arr is None:
            rows, mults = self.arrays()
            arr = self._by_value[key] = counts_by_value(snap, key, rows, mults)
        return arr


class ExistingTermIndex:
    """Groups the terms of the snapshot's pods with affinity, kept in step with the snapshot.

    ``extract`` lists a pod's ``(tag, group key)`` pairs, one per term it carries; groups are
    kept per tag (one tag for filtering, one for scoring) so one pass over the snapshot's
    ``affinity_pods`` serves both. ``rebuild`` starts over (the owner does when nodes change:
    rows may move); ``apply`` touches only the pods the snapshot's ``affinity_log`` names since
    (they came, went or were replaced). Observers (``watch``) of a tag hear every rebuild and
    every member added to or removed from one of its groups.
    """

    def __init__(self, extract: Callable[[Pod], Iterable[tuple[str, Hashable]]], tags: Iterable[str]) -> None:
        self._extract = extract
        self._pods: dict[str, Pod] = {}
        self._keys: dict[str, tuple[tuple[str, Hashable], ...]] = {}
        self.groups: dict[str, dict[Hashable, TermGroup]] = {tag: {} for tag in tags}
        self._observers: dict[str, list[IndexObserver]] = {tag: [] for tag in self.groups}

    def watch(self, tag: str, observer: IndexObserver) -> None:
        """Follow the groups of ``tag``: reset on the next rebuild, then every change."""
        self._observers[tag].append(observer)

    def rebuild(self, snap: Snapshot) -> ExistingTermIndex:
        """Every pod of the snapshot with affinity terms, anew."""
        self._pods.clear()
        self._keys.clear()
        for groups in self.groups.values():
            groups.clear()
        for observers in self._observers.values():
            for obs in observers:
                obs.reset(snap)
        for uid, pod in snap.affinity_pods.items():
            self._add(uid, pod, snap)
        return self

    def apply(self, snap: Snapshot, uids: list[str]) -> None:
        """Pods with affinity terms that came, went or were replaced (the affinity log's entries)."""
        src = snap.affinity_pods
        for uid in dict.fromkeys(uids):
            pod = src.get(uid)
            if pod is self._pods.get(uid):
                continue
            self._remove(uid)
            if pod is not None:
                self._add(uid, pod, snap)

    def _add(self, uid: str, pod: Pod, snap: Snapshot) -> None:
        row = snap.row_of.get(pod.node_name)
        if row is None:
            return
        self._pods[uid] = pod
        keys = Counter(self._extract(pod))
        self._keys[uid] = tuple(keys)
        for (tag, key), mult in keys.items():
            groups = self.groups[tag]
            group = groups.get(key)
            if group is None:
                group = groups[key] = TermGroup(key, snap.labels)
            group.add(uid, row, mult)
            for obs in self._observers[tag]:
                obs.member(key, row, mult)

    def _remove(self, uid: str) -> None:
        self._pods.pop(uid, None)
        for tag, key in self._keys.pop(uid, ()):
            groups = self.groups[tag]
            group = groups[key]
            row, mult = group.remove(uid)
            for obs in self._observers[tag]:
                obs.member(key, row, -mult)
            if not len(group):
                del groups[key]
