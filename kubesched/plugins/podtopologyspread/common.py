"""Vectorised building blocks shared by filtering and scoring: node inclusion and pod counts."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.taints import NO_EXECUTE, NO_SCHEDULE, first_untolerated
from kubesched.plugins.podtopologyspread.counts import DomainCounts

if TYPE_CHECKING:
    from kubesched.api.affinity import TopologySpreadConstraint
    from kubesched.api.objects import Pod
    from kubesched.api.selectors import LabelSelector
    from kubesched.state.snapshot import Snapshot

NAME = "PodTopologySpread"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

HONOR = "Honor"


def required_affinity_mask(pod: Pod, snap: Snapshot) -> np.ndarray:
    """nodeaffinity.GetRequiredNodeAffinity(pod).Match for every node: nodeSelector AND required terms."""
    labels = snap.labels
    mask = np.ones(snap.n, dtype=bool)
    for key, value in pod.node_selector.items():
        code = labels.vocab(key).get(value)
        if code is None:
            return np.zeros(snap.n, dtype=bool)
        mask &= labels.codes(key) == code
    na = pod.node_affinity
    if na is not None and na.required is not None:
        mask &= na.required.mask(labels)
    return mask


def taints_tolerated_mask(pod: Pod, snap: Snapshot) -> np.ndarray:
    """No untolerated NoSchedule/NoExecute taint, per node (one check per distinct taint set)."""
    table = np.fromiter(
        (first_untolerated(ts, pod.tolerations, (NO_SCHEDULE, NO_EXECUTE)) is None for ts in snap.taint_sets),
        dtype=bool,
        count=len(snap.taint_sets),
    )
    return table[snap.taint_set_ids]


class NodeMasks:
    """Per-cycle lazy node masks for one pod: all-keys presence and inclusion policies."""

    def __init__(self, pod: Pod, snap: Snapshot) -> None:
        self.pod = pod
        self.snap = snap
        self._affinity: np.ndarray | None = None
        self._taints: np.ndarray | None = None

    def affinity(self) -> np.ndarray:
        if self._affinity is None:
            self._affinity = required_affinity_mask(self.pod, self.snap)
        return self._affinity

    def taints(self) -> np.ndarray:
        if self._taints is None:
            self._taints = taints_tolerated_mask(self.pod, self.snap)
        return self._taints

    def all_keys(self, constraints: tuple[TopologySpreadConstraint, ...]) -> np.ndarray:
        """nodeLabelsMatchSpreadConstraints: the node has every constraint's topology key."""
        mask = np.ones(self.snap.n, dtype=bool)
        for c in constraints:
            mask &= self.snap.labels.codes(c.topology_key) >= 0
        return mask

    def inclusion(self, c: TopologySpreadConstraint) -> np.ndarray | None:
        """matchNodeInclusionPolicies; None when both policies ignore the node's fit."""
        mask = None
        if c.node_affinity_policy == HONOR:
            mask = self.affinity()
        if c.node_taints_policy == HONOR:
            mask = self.taints() if mask is None else mask & self.taints()
        return mask


#: Pod shapes whose masks are kept for one snapshot and node generation.
_MASK_CACHE_SIZE = 16
#: Incremental domain counts kept per pod shape (one per constraint, role and selector).
_COUNTS_PER_SHAPE = 16


class ShapeMasks:
    """Node masks of one pod shape for one node generation, and what derives from them alone.

    ``all_keys`` and ``inclusions`` are as ``NodeMasks`` computes them; ``derived`` holds
    per-constraint arrays built from them (eligible rows, domain codes, frozen label codes) and
    ``counts`` the ``DomainCounts`` over those rows, which follow pod changes on their own.
    Everything here is shared read-only across cycles.
    """

    __slots__ = ("all_keys", "inclusions", "derived", "counts")

    def __init__(self, all_keys: np.ndarray, inclusions: list[np.ndarray | None]) -> None:
        self.all_keys = all_keys
        self.inclusions = inclusions
        self.derived: dict[tuple, Any] = {}
        self.counts: dict[tuple, DomainCounts] = {}

    def counter(
        self,
        role: tuple,
        selector: LabelSelector | None,
        namespace: str,
        dom: np.ndarray,
        size: int,
        domains: np.ndarray | None = None,
    ) -> DomainCounts:
        """The DomainCounts of ``role`` and the query, made on first use (see DomainCounts)."""
        key = (role, selector, namespace)
        c = self.counts.get(key)
        if c is None or c.size != size:
            if len(self.counts) >= _COUNTS_PER_SHAPE:
                self.counts.clear()
            c = self.counts[key] = DomainCounts(dom, size, selector, namespace, domains)
        return c


class MaskCache:
    """Node masks per pod shape, kept while the snapshot's nodes do not change.

    The masks read only node labels and taints, so they are valid until ``node_generation``
    bumps; recomputing them over every node each cycle dominated the spreading workloads.
    Returned arrays are read-only and shared.
    """

    def __init__(self) -> None:
        self._snap: weakref.ref | None = None
        self._stamp: tuple[int, int] = (-1, -1)
        self._entries: dict[tuple, ShapeMasks] = {}

    def get(self, pod: Pod, snap: Snapshot, constraints: tuple[TopologySpreadConstraint, ...]) -> ShapeMasks:
        """The pod shape's masks (all-keys, per constraint its inclusion mask or None)."""
        stamp = (snap.node_generation, snap.n)
        if self._snap is None or self._snap() is not snap or self._stamp != stamp:
            self._snap = weakref.ref(snap)
            self._stamp = stamp
            self._entries.clear()
        na = pod.node_affinity
        key = (
            tuple((c.topology_key, c.node_affinity_policy, c.node_taints_policy) for c in constraints),
            tuple(pod.node_selector.items()),
            na.required if na is not None else None,
            pod.tolerations,
        )
        hit = self._entries.get(key)
        if hit is None:
            all_keys, inclusions = node_masks(pod, snap, constraints, None)
            hit = ShapeMasks(_frozen(all_keys), [None if m is None else _frozen(m) for m in inclusions])
            if len(self._entries) >= _MASK_CACHE_SIZE:
                self._entries.clear()
            self._entries[key] = hit
        return hit


def node_masks(
    pod: Pod, snap: Snapshot, constraints: tuple[TopologySpreadConstraint, ...], cache: MaskCache | None
) -> tuple[np.ndarray, list[np.ndarray | None]]:
    """(all-keys mask, per constraint its inclusion mask or None), from ``cache`` when given."""
    if cache is not None:
        shape = cache.get(pod, snap, constraints)
        return shape.all_keys, shape.inclusions
    masks = NodeMasks(pod, snap)
    return masks.all_keys(constraints), [masks.inclusion(c) for c in constraints]


def shape_masks(
    pod: Pod, snap: Snapshot, constraints: tuple[TopologySpreadConstraint, ...], cache: MaskCache | None
) -> ShapeMasks:
    """The pod shape's ShapeMasks: cached, or (no cache) fresh, so every count is summed anew."""
    if cache is not None:
        return cache.get(pod, snap, constraints)
    all_keys, inclusions = node_masks(pod, snap, constraints, None)
    return ShapeMasks(all_keys, inclusions)


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=bool)  # own copy: NodeMasks may hand out a shared array
    a.flags.writeable = False
    return a


def matching_pods_per_node(snap: Snapshot, selector: LabelSelector | None, namespace: str) -> np.ndarray:
    """countPodsMatchSelector for every node: non-terminating pods of ``namespace`` matching.

    Read-only; served by the snapshot's incremental MatchCounts (one scalar match per bound pod
    instead of a mask over every assigned pod per cycle).
    """
    if selector is None or selector.is_empty or len(snap.pods) == 0:
        # v1.36 counts nothing for an empty selector (countPodsMatchSelector's selector.Empty()
        # check, fixed upstream only after 1.36: kubernetes/kubernetes#141340)
        return np.zeros(snap.n, dtype=np.int64)
    return snap.match_counts.per_node((((selector, frozenset((namespace,))),), True), snap.n)


def selector_matches(selector: LabelSelector | None, labels: dict[str, str]) -> bool:
    """labels.Selector.Matches; a missing selector (labels.Nothing) matches nothing."""
    return selector is not None and selector.matches(labels)


def min_domains(c: TopologySpreadConstraint) -> int:
    """MinDomains is 1 when unset."""
    return 1 if c.min_domains is None else c.min_domains
