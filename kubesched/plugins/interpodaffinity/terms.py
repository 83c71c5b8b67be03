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

import weakref
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.affinity import PodAffinityTerm

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
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


def counts_by_value(snap: Snapshot, key: str, node_rows: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
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


class TermGroup:
    """Existing pods sharing one term: uid -> (node row, how many times the pod carries the term)."""

    __slots__ = ("key", "members", "_arrays")

    def __init__(self, key: Hashable) -> None:
        self.key = key
        self.members: dict[str, tuple[int, int]] = {}
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(node rows, multiplicities), cached until the membership changes."""
        if self._arrays is None:
            vals = list(self.members.values())
            rows = np.fromiter((r for r, _ in vals), dtype=np.int64, count=len(vals))
            mults = np.fromiter((m for _, m in vals), dtype=np.float64, count=len(vals))
            self._arrays = (rows, mults)
        return self._arrays

    def changed(self) -> None:
        self._arrays = None


class ExistingTermIndex:
    """Groups the terms of the snapshot's pods with affinity, kept in step with the snapshot.

    ``source`` names a uid->Pod dict on the snapshot (``anti_affinity_pods`` or
    ``affinity_pods``); ``extract`` lists a pod's group keys, one per term it carries. A new
    snapshot object or a node change (rows may move) rebuilds; otherwise only pods that came,
    went or were replaced since the last call are touched.
    """

    def __init__(self, source: str, extract: Callable[[Pod], Iterable[Hashable]]) -> None:
        self._source = source
        self._extract = extract
        self._snap: weakref.ref | None = None
        self._node_gen = -1
        self._gen = -1
        self._pods: dict[str, Pod] = {}
        self._keys: dict[str, tuple[Hashable, ...]] = {}
        self.groups: dict[Hashable, TermGroup] = {}

    def refresh(self, snap: Snapshot) -> dict[Hashable, TermGroup]:
        src: dict[str, Pod] = getattr(snap, self._source)
        same_snap = self._snap is not None and self._snap() is snap
        if not same_snap or self._node_gen != snap.node_generation:
            self._pods.clear()
            self._keys.clear()
            self.groups.clear()
            self._snap = weakref.ref(snap)
            self._node_gen = snap.node_generation
            for uid, pod in src.items():
                self._add(uid, pod, snap)
        elif self._gen != snap.generation:
            gone = [uid for uid, pod in self._pods.items() if src.get(uid) is not pod]
            for uid in gone:
                self._remove(uid)
            for uid, pod in src.items():
                if uid not in self._pods:
                    self._add(uid, pod, snap)
        self._gen = snap.generation
        return self.groups

    def _add(self, uid: str, pod: Pod, snap: Snapshot) -> None:
        row = snap.row_of.get(pod.node_name)
        if row is None:
            return
        self._pods[uid] = pod
        keys = Counter(self._extract(pod))
        self._keys[uid] = tuple(keys)
        for key, mult in keys.items():
            group = self.groups.get(key)
            if group is None:
                group = self.groups[key] = TermGroup(key)
            group.members[uid] = (row, mult)
            group.changed()

    def _remove(self, uid: str) -> None:
        self._pods.pop(uid, None)
        for key in self._keys.pop(uid, ()):
            group = self.groups[key]
            del group.members[uid]
            group.changed()
            if not group.members:
                del self.groups[key]
