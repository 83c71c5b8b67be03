"""Vectorised building blocks shared by filtering and scoring: node inclusion and pod counts."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.taints import NO_EXECUTE, NO_SCHEDULE, first_untolerated
from kubesched.plugins.podtopologyspread.counts import DomainCounts
from kubesched.state.memo import NODES

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


class ShapeMasks:
    """Node masks of one pod shape for one node generation, and what derives from them alone.

    ``all_keys`` and ``inclusions`` are as ``NodeMasks`` computes them (``everywhere``: every
    node has all keys); ``derived`` holds per-constraint arrays built from them (eligible rows,
    domain codes, frozen label codes). A shape kept in the snapshot's memo (``key`` set) shares
    them read-only across cycles, and so are its ``DomainCounts``, which follow pod changes.
    """

    __slots__ = ("key", "all_keys", "everywhere", "inclusions", "derived")

    def __init__(self, all_keys: np.ndarray, inclusions: list[np.ndarray | None], key: tuple | None = None) -> None:
        self.key = key
        self.all_keys = all_keys
        self.everywhere = bool(all_keys.all())
        self.inclusions = inclusions
        self.derived: dict[tuple, Any] = {}

    def counts(
        self,
        snap: Snapshot,
        role: tuple,
        selector: LabelSelector | None,
        namespace: str,
        dom: np.ndarray,
        size: int,
        per_node: Callable[[], np.ndarray],
        domains: np.ndarray | None = None,
    ) -> DomainCounts:
        """The DomainCounts of ``role`` and the query, up to date with ``snap`` (``per_node`` reads
        the matching pods per node): kept in the snapshot's memo, summed anew for an unkept shape."""
        if self.key is None:
            return DomainCounts(dom, size, selector, namespace, domains).rebuild(per_node())
        return snap.memo.follow(
            (NAME, "counts", self.key, role, selector, namespace, size),
            lambda _old: DomainCounts(dom, size, selector, namespace, domains).rebuild(per_node()),
            lambda counts, rows: counts.update(snap, rows, per_node),
            on=NODES,
        )


def shape_masks(
    pod: Pod, snap: Snapshot, constraints: tuple[TopologySpreadConstraint, ...], cached: bool = True
) -> ShapeMasks:
    """The pod shape's masks (all-keys, per constraint its inclusion mask or None). Cached: kept
    in the snapshot's memo until nodes change (they read node labels and taints only; recomputing
    them over every node each cycle dominated the spreading workloads), and shared read-only.
    Not cached: computed afresh, and every count summed anew."""
    if not cached:
        masks = NodeMasks(pod, snap)
        return ShapeMasks(masks.all_keys(constraints), [masks.inclusion(c) for c in constraints])
    na = pod.node_affinity
    key = (
        tuple((c.topology_key, c.node_affinity_policy, c.node_taints_policy) for c in constraints),
        tuple(pod.node_selector.items()),
        na.required if na is not None else None,
        pod.tolerations,
    )

    def build() -> ShapeMasks:
        masks = NodeMasks(pod, snap)
        inclusions = [masks.inclusion(c) for c in constraints]
        return ShapeMasks(_frozen(masks.all_keys(constraints)), [None if m is None else _frozen(m) for m in inclusions], key)

    return snap.memo.get((NAME, "shape", key), build, on=NODES)


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
