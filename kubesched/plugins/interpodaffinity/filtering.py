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
from kubesched.plugins.interpodaffinity.existing import ExistingAntiAffinity
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
    """What Filter needs; mutable through add_pod/remove_pod, hence ``clone``.

    Count dicts may be shared (with a clone, or with the ``ExistingAntiAffinity`` matcher they
    came from) and are copied before the first change (``_owned``). ``existing_blocked`` is the
    matcher's per-row verdict for the existing counts, dropped once they change here.
    """

    affinity_terms: tuple[PodAffinityTerm, ...]
    affinity_namespaces: tuple[Namespaces, ...]
    anti_affinity_terms: tuple[PodAffinityTerm, ...]
    anti_affinity_namespaces: tuple[Namespaces, ...]
    namespace_labels: Mapping[str, str]
    self_match: bool  # the incoming pod matches all of its own required affinity terms
    existing_anti_affinity_counts: Counts = field(default_factory=dict)
    affinity_counts: Counts = field(default_factory=dict)
    anti_affinity_counts: Counts = field(default_factory=dict)
    existing_blocked: np.ndarray | None = None  # per row: nonzero existing counts on its domains
    # _any() of the three count dicts, kept so Filter need not scan them on every call
    existing_any: bool = False
    affinity_any: bool = False
    anti_any: bool = False
    _owned: int = 0  # bits: 1 existing, 2 affinity, 4 anti-affinity counts are this state's own
    # Filter's (code, reason bits, reasons) over every row, built on the second Filter call of a
    # state (a cycle that examines several chunks of nodes); dropped when the counts change
    _full: tuple[np.ndarray, np.ndarray, tuple[str, ...]] | None = None
    _filter_calls: int = 0

    def clone(self) -> PreFilterState:
        self._owned = 0  # the counts are shared from now on: whichever changes first copies
        return PreFilterState(
            self.affinity_terms,
            self.affinity_namespaces,
            self.anti_affinity_terms,
            self.anti_affinity_namespaces,
            self.namespace_labels,
            self.self_match,
            self.existing_anti_affinity_counts,
            self.affinity_counts,
            self.anti_affinity_counts,
            self.existing_blocked,
            self.existing_any,
            self.affinity_any,
            self.anti_any,
        )

    def existing_anti_affinity_counts_nonzero(self) -> bool:
        return self.existing_any

    def _bump(self, which: int, snap: Snapshot, key: str, row: int, delta: int) -> None:
        if which == 1:
            if not self._owned & 1:
                self.existing_anti_affinity_counts = _clone_counts(self.existing_anti_affinity_counts)
                self.existing_blocked = None
            counts = self.existing_anti_affinity_counts
        elif which == 2:
            if not self._owned & 2:
                self.affinity_counts = _clone_counts(self.affinity_counts)
            counts = self.affinity_counts
        else:
            if not self._owned & 4:
                self.anti_affinity_counts = _clone_counts(self.anti_affinity_counts)
            counts = self.anti_affinity_counts
        self._owned |= which
        self._full = None
        _bump(counts, snap, key, row, delta)

    def update_with_pod(self, incoming: Pod, other: Pod, row: int, snap: Snapshot, multiplier: int) -> None:
        """updateWithPod: account ``other`` (on node ``row``) as added (+1) or removed (-1)."""
        for term in required_anti_affinity_terms(other):
            if existing_term_matches(term, other.namespace, incoming, self.namespace_labels):
                self._bump(1, snap, term.topology_key, row, multiplier)
        if self.affinity_terms and all(
            incoming_term_matches(t, ns, other)
            for t, ns in zip(self.affinity_terms, self.affinity_namespaces, strict=True)
        ):
            for term in self.affinity_terms:
                self._bump(2, snap, term.topology_key, row, multiplier)
        for term, ns in zip(self.anti_affinity_terms, self.anti_affinity_namespaces, strict=True):
            if incoming_term_matches(term, ns, other):
                self._bump(4, snap, term.topology_key, row, multiplier)
        self.existing_any = _any(self.existing_anti_affinity_counts)
        self.affinity_any = _any(self.affinity_counts)
        self.anti_any = _any(self.anti_affinity_counts)


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


def build_state(
    pod: Pod, snap: Snapshot, index: ExistingTermIndex, existing: ExistingAntiAffinity | None = None
) -> PreFilterState:
    """PreFilter's computation (without the Skip decision).

    ``existing`` (watching ``index``'s anti-affinity tag) serves the existing pods' counts; without
    it they are summed from the index's groups.
    """
    aff = required_affinity_terms(pod)
    anti = required_anti_affinity_terms(pod)
    aff_ns = tuple(incoming_namespaces(t, pod, snap) for t in aff)
    anti_ns = tuple(incoming_namespaces(t, pod, snap) for t in anti)
    ns_labels = snap.namespaces.get(pod.namespace, {})
    self_match = bool(aff) and all(
        incoming_term_matches(t, ns, pod) for t, ns in zip(aff, aff_ns, strict=True)
    )
    state = PreFilterState(aff, aff_ns, anti, anti_ns, ns_labels, self_match)
    groups = index.groups[ANTI_AFFINITY_TAG]  # the index is up to date with snap
    if not groups:
        pass  # no existing pod has required anti-affinity: nothing to count
    elif existing is None:
        state.existing_anti_affinity_counts = existing_anti_affinity_counts(groups, pod, ns_labels, snap)
        state.existing_any = _any(state.existing_anti_affinity_counts)
        state._owned = 1
    else:
        matcher = existing.get(pod, ns_labels, groups, snap)
        state.existing_anti_affinity_counts, state.existing_blocked = matcher.share()
        state.existing_any = matcher.nonzero > 0
    if aff or anti:
        state.affinity_counts, state.anti_affinity_counts = incoming_counts(state, snap)
        state._owned |= 6
        state.affinity_any = _any(state.affinity_counts)
        state.anti_any = _any(state.anti_affinity_counts)
    return state


def _existing_fail(state: PreFilterState, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
    if state.existing_blocked is not None:
        return state.existing_blocked[rows] > 0
    fail = np.zeros(len(rows), dtype=bool)
    for key, counts in state.existing_anti_affinity_counts.items():
        fail |= lookup(counts, snap.labels.codes(key)[rows]) > 0
    return fail


def filter_rows(state: PreFilterState, snap: Snapshot, rows: np.ndarray) -> FilterResult:
    """Filter over ``rows``: affinity first, then the pod's anti-affinity, then existing pods'."""
    n = len(rows)
    if not state.affinity_terms and not state.anti_any:
        # Only existing pods' terms can reject (the common case: a pod without required terms).
        fail = _existing_fail(state, snap, rows) if state.existing_any else None
        if fail is None or not fail.any():
            return FilterResult.all_pass(n)
        return FilterResult.from_mask(fail, ERR_REASON_EXISTING_ANTI_AFFINITY, Code.Unschedulable)
    full = state._full
    if full is None:
        state._filter_calls += 1
        if state._filter_calls < 2 or n >= snap.n:
            return _filter_general(state, snap, rows)
        res = _filter_general(state, snap, np.arange(snap.n))
        full = state._full = (res.code, res.reason_bits, res.reasons)
    code, bits, reasons = full
    return FilterResult(code[rows], bits[rows], reasons)


def _filter_general(state: PreFilterState, snap: Snapshot, rows: np.ndarray) -> FilterResult:
    n = len(rows)
    fail_aff = np.zeros(n, dtype=bool)
    if state.affinity_terms:
        has_all = np.ones(n, dtype=bool)
        pods_exist = np.ones(n, dtype=bool)
        for term in state.affinity_terms:
            codes = snap.labels.codes(term.topology_key)[rows]
            has_all &= codes >= 0
            pods_exist &= lookup(state.affinity_counts.get(term.topology_key), codes) > 0
        if not state.affinity_any and state.self_match:
            # The first pod of a group with affinity to itself: any node with the topology keys.
            ok = has_all
        else:
            ok = has_all & pods_exist
        fail_aff = ~ok
    fail_anti = np.zeros(n, dtype=bool)
    if state.anti_any:
        for term in state.anti_affinity_terms:
            codes = snap.labels.codes(term.topology_key)[rows]
            fail_anti |= lookup(state.anti_affinity_counts.get(term.topology_key), codes) > 0
    fail_existing = _existing_fail(state, snap, rows) if state.existing_any else np.zeros(n, dtype=bool)
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
