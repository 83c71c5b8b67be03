"""PreFilter/Filter of InterPodAffinity: topology-pair counts, then a per-node lookup.

Counts are kept per topology key as an int64 array indexed by the node-label value code of
that key (kube-scheduler's ``map[topologyPair]int64``), so Filter is one gather per key.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.affinity import PodAffinityTerm
from kubesched.framework.status import Code, FilterResult
from kubesched.plugins.interpodaffinity.terms import (
    ExistingTermIndex,
    Namespaces,
    TermGroup,
    add_counts,
    existing_term_matches,
    incoming_namespaces,
    incoming_term_matches,
    lookup,
    matching_counts,
    owner_key,
    required_affinity_terms,
    required_anti_affinity_terms,
)

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.state.snapshot import Snapshot

ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"

Counts = dict[str, np.ndarray]
#: ExistingTermIndex tag of existing pods' required anti-affinity terms.
ANTI_AFFINITY_TAG = "requiredAntiAffinity"


def _clone_counts(counts: Counts) -> Counts:
    return {k: v.copy() for k, v in counts.items()}


def _any(counts: Counts) -> bool:
    """len(topologyToMatchedTermCount) > 0: zero entries are deleted upstream."""
    return any(bool(v.any()) for v in counts.values())


def _bump(counts: Counts, snap: Snapshot, key: str, row: int, delta: int) -> None:
    """counts[(key, value of node ``row``)] += delta, when the node has the key."""
    code = int(snap.labels.codes(key)[row])
    if code < 0:
        return
    arr = counts.get(key)
    need = code + 1
    if arr is None or len(arr) < need:
        grown = np.zeros(max(need, len(snap.labels.values_of(key))), np.int64)
        if arr is not None:
            grown[: len(arr)] = arr
        arr = counts[key] = grown
    arr[code] += delta


@dataclass(slots=True)
class PreFilterState:
    """What Filter needs; mutable through add_pod/remove_pod, hence ``clone``."""

    affinity_terms: tuple[PodAffinityTerm, ...]
    affinity_namespaces: tuple[Namespaces, ...]
    anti_affinity_terms: tuple[PodAffinityTerm, ...]
    anti_affinity_namespaces: tuple[Namespaces, ...]
    namespace_labels: Mapping[str, str]
    self_match: bool  # the incoming pod matches all of its own required affinity terms
    existing_anti_affinity_counts: Counts = field(default_factory=dict)
    affinity_counts: Counts = field(default_factory=dict)
    anti_affinity_counts: Counts = field(default_factory=dict)

    def clone(self) -> PreFilterState:
        return PreFilterState(
            self.affinity_terms,
            self.affinity_namespaces,
            self.anti_affinity_terms,
            self.anti_affinity_namespaces,
            self.namespace_labels,
            self.self_match,
            _clone_counts(self.existing_anti_affinity_counts),
            _clone_counts(self.affinity_counts),
            _clone_counts(self.anti_affinity_counts),
        )

    def existing_anti_affinity_counts_nonzero(self) -> bool:
        return _any(self.existing_anti_affinity_counts)

    def update_with_pod(self, incoming: Pod, other: Pod, row: int, snap: Snapshot, multiplier: int) -> None:
        """updateWithPod: account ``other`` (on node ``row``) as added (+1) or removed (-1)."""
        for term in required_anti_affinity_terms(other):
            if existing_term_matches(term, other.namespace, incoming, self.namespace_labels):
                _bump(self.existing_anti_affinity_counts, snap, term.topology_key, row, multiplier)
        if self.affinity_terms and all(
            incoming_term_matches(t, ns, other)
            for t, ns in zip(self.affinity_terms, self.affinity_namespaces, strict=True)
        ):
            for term in self.affinity_terms:
                _bump(self.affinity_counts, snap, term.topology_key, row, multiplier)
        for term, ns in zip(self.anti_affinity_terms, self.anti_affinity_namespaces, strict=True):
            if incoming_term_matches(term, ns, other):
                _bump(self.anti_affinity_counts, snap, term.topology_key, row, multiplier)


def anti_affinity_group_keys(pod: Pod) -> list[tuple[str, Hashable]]:
    """Index keys of an existing pod's required anti-affinity terms: (term, owner namespace).

    The owner namespace is "" when the term does not read it, so one group serves all owners.
    """
    return [(ANTI_AFFINITY_TAG, (t, owner_key(t, pod.namespace))) for t in required_anti_affinity_terms(pod)]


def existing_anti_affinity_counts(
    groups: Mapping[Hashable, TermGroup], pod: Pod, ns_labels: Mapping[str, str], snap: Snapshot
) -> Counts:
    """getExistingAntiAffinityCounts: existing pods' required anti-affinity terms matching ``pod``."""
    counts: Counts = {}
    for (term, owner_ns), group in groups.items():
        if not existing_term_matches(term, owner_ns, pod, ns_labels):
            continue
        add_counts(counts, term.topology_key, group.counts(snap, term.topology_key))
    return counts


def incoming_counts(state: PreFilterState, snap: Snapshot) -> tuple[Counts, Counts]:
    """getIncomingAffinityAntiAffinityCounts: existing pods matching the pod's required terms."""
    affinity: Counts = {}
    anti: Counts = {}
    if state.affinity_terms:
        # One pod must match every affinity term for any of them to count.
        both = tuple(zip(state.affinity_terms, state.affinity_namespaces, strict=True))
        for term in state.affinity_terms:
            add_counts(affinity, term.topology_key, matching_counts(snap, both, term.topology_key))
    for term, ns in zip(state.anti_affinity_terms, state.anti_affinity_namespaces, strict=True):
        add_counts(anti, term.topology_key, matching_counts(snap, ((term, ns),), term.topology_key))
    return affinity, anti


def build_state(pod: Pod, snap: Snapshot, index: ExistingTermIndex) -> PreFilterState:
    """PreFilter's computation (without the Skip decision)."""
    aff = required_affinity_terms(pod)
    anti = required_anti_affinity_terms(pod)
    aff_ns = tuple(incoming_namespaces(t, pod, snap) for t in aff)
    anti_ns = tuple(incoming_namespaces(t, pod, snap) for t in anti)
    ns_labels = snap.namespaces.get(pod.namespace, {})
    self_match = bool(aff) and all(
        incoming_term_matches(t, ns, pod) for t, ns in zip(aff, aff_ns, strict=True)
    )
    state = PreFilterState(aff, aff_ns, anti, anti_ns, ns_labels, self_match)
    groups = index.refresh(snap).groups[ANTI_AFFINITY_TAG]
    state.existing_anti_affinity_counts = existing_anti_affinity_counts(groups, pod, ns_labels, snap)
    state.affinity_counts, state.anti_affinity_counts = incoming_counts(state, snap)
    return state


def filter_rows(state: PreFilterState, snap: Snapshot, rows: np.ndarray) -> FilterResult:
    """Filter over ``rows``: affinity first, then the pod's anti-affinity, then existing pods'."""
    n = len(rows)
    fail_aff = np.zeros(n, dtype=bool)
    if state.affinity_terms:
        has_all = np.ones(n, dtype=bool)
        pods_exist = np.ones(n, dtype=bool)
        for term in state.affinity_terms:
            codes = snap.labels.codes(term.topology_key)[rows]
            has_all &= codes >= 0
            pods_exist &= lookup(state.affinity_counts.get(term.topology_key), codes) > 0
        if not _any(state.affinity_counts) and state.self_match:
            # The first pod of a group with affinity to itself: any node with the topology keys.
            ok = has_all
        else:
            ok = has_all & pods_exist
        fail_aff = ~ok
    fail_anti = np.zeros(n, dtype=bool)
    if _any(state.anti_affinity_counts):
        for term in state.anti_affinity_terms:
            codes = snap.labels.codes(term.topology_key)[rows]
            fail_anti |= lookup(state.anti_affinity_counts.get(term.topology_key), codes) > 0
    fail_existing = np.zeros(n, dtype=bool)
    if _any(state.existing_anti_affinity_counts):
        for key, counts in state.existing_anti_affinity_counts.items():
            fail_existing |= lookup(counts, snap.labels.codes(key)[rows]) > 0
    fail_anti &= ~fail_aff
    fail_existing &= ~(fail_aff | fail_anti)
    return FilterResult.from_masks(
        [
            (fail_aff, ERR_REASON_AFFINITY, Code.UnschedulableAndUnresolvable),
            (fail_anti, ERR_REASON_ANTI_AFFINITY, Code.Unschedulable),
            (fail_existing, ERR_REASON_EXISTING_ANTI_AFFINITY, Code.Unschedulable),
        ],
        n,
    )
