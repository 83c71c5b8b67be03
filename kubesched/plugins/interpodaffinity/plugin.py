"""InterPodAffinity: required pod (anti-)affinity as a filter, preferred terms as a score."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.config.args import plugin_args
from kubesched.framework.interfaces import (
    NOT_INVOLVED,
    ROW,
    FilterPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    Signature,
    SignPlugin,
)
from kubesched.framework.status import Code, FilterResult, PreFilterResult, Status
from kubesched.plugins.interpodaffinity.existing import ExistingAntiAffinity
from kubesched.plugins.interpodaffinity.filtering import (
    ANTI_AFFINITY_TAG,
    PreFilterState,
    anti_affinity_group_keys,
    build_state,
    filter_rows,
)
from kubesched.plugins.interpodaffinity.scoring import (
    REQUIRED_AFFINITY,
    SCORING_TAG,
    PreScoreState,
    build_topology_score,
    normalize_scores,
    preferred_terms,
    score_rows,
    scoring_group_keys,
)
from kubesched.plugins.interpodaffinity.terms import (
    ExistingTermIndex,
    existing_term_matches,
    required_anti_affinity_terms,
)
from kubesched.state.memo import AFFINITY, AFFINITY_PODS, NAMESPACES, NODES

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.state.snapshot import Snapshot

NAME = "InterPodAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
_ROW_LOCAL_EACH_CYCLE = Signature(ROW, (), pre_filter_each_cycle=True)
#: What row_local_for's answer reads besides the pod (see there)
_HINT_READS = NODES | NAMESPACES | AFFINITY_PODS


def _group_keys(pod: Pod) -> list[tuple[str, Hashable]]:
    """Everything the index keeps for one existing pod: its filtering and its scoring terms."""
    return anti_affinity_group_keys(pod) + scoring_group_keys(pod)


class ExistingTerms:
    """The existing pods' terms of one snapshot: one index serves PreFilter and PreScore, and
    the existing anti-affinity counts per incoming pod's matcher follow it."""

    def __init__(self, snap: Snapshot) -> None:
        self.index = ExistingTermIndex(_group_keys, (ANTI_AFFINITY_TAG, SCORING_TAG))
        self.anti_affinity = ExistingAntiAffinity()
        self.index.watch(ANTI_AFFINITY_TAG, self.anti_affinity)
        self.index.rebuild(snap)

    @staticmethod
    def of(snap: Snapshot) -> ExistingTerms:
        """Kept in the snapshot's memo: rebuilt when nodes change (rows may move), else updated
        with the pods with terms that came or went."""
        return snap.memo.follow(
            (NAME, "terms"),
            lambda _old: ExistingTerms(snap),
            lambda terms, uids: terms.index.apply(snap, uids),
            on=NODES,
            log=AFFINITY,
        )


class InterPodAffinity(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, SignPlugin):
    """kube-scheduler's InterPodAffinity (v1.36), vectorised over nodes and existing pods."""

    name = NAME
    events_to_register = frozenset(
        {"NodeAdd", "NodeUpdate", "AssignedPodAdd", "AssignedPodUpdate", "AssignedPodDelete", "NamespaceUpdate"}
    )

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        a = plugin_args(NAME, self.args)  # an explicit hardPodAffinityWeight 0 turns the symmetric weight off
        self.hard_pod_affinity_weight: int = a["hardPodAffinityWeight"]
        self.ignore_preferred_terms_of_existing_pods: bool = a["ignorePreferredTermsOfExistingPods"]

    # ---- PreFilter / Filter -----------------------------------------------------------

    def sign_pod(self, pod: Pod, snap: Snapshot) -> Signature | None:
        """Not involved with a pod without terms in a cluster without pods that have terms;
        row-local (its PreFilter run every cycle) when ``row_local_for`` holds; else not signable."""
        if not pod.has_affinity_terms and not snap.affinity_pods:
            return NOT_INVOLVED
        return _ROW_LOCAL_EACH_CYCLE if self.row_local_for(pod, snap) else None

    def row_local_for(self, pod: Pod, snap: Snapshot) -> bool:
        """Filter reads a node's own pods only, and PreScore skips, when every term that can
        reject the pod has a topology key whose domains are single nodes (``LabelIndex.unique``):

        * the pod's required anti-affinity terms: a node fails when a matching pod sits in its
          domain, i.e. on the node itself;
        * existing pods' required anti-affinity terms matching the pod: counted at the owner's
          domain, so again only pods on the node itself count;
        * no required affinity terms: "no pod in the cluster matches, so the first of a group may
          go anywhere" reads the whole cluster;
        * nothing scores (PreScore's Skip): no preferred terms of its own, and no existing pod's
          scoring term (preferred, or required affinity at hardPodAffinityWeight > 0) matches it.

        The answer reads the pod's signature (terms, namespace, labels), node labels, namespaces
        and the pods with terms: it is kept in the snapshot's memo while those hold.
        """
        aff, anti = pod.pod_affinity, pod.pod_anti_affinity
        if (aff and (aff.required or aff.preferred)) or (anti and anti.preferred):
            return False  # terms that read the whole cluster, or that score
        sig = pod.signature()
        if sig is None:
            return self._row_local_for(pod, snap)
        return snap.memo.get((self, "row-local", sig), lambda: self._row_local_for(pod, snap), on=_HINT_READS)

    def _row_local_for(self, pod: Pod, snap: Snapshot) -> bool:
        """row_local_for for a pod whose only terms are required anti-affinity terms."""
        labels = snap.labels
        if not all(labels.unique(t.topology_key) for t in required_anti_affinity_terms(pod)):
            return False
        terms = ExistingTerms.of(snap)
        index = terms.index
        ns_labels = snap.namespaces.get(pod.namespace, {})
        groups = index.groups[ANTI_AFFINITY_TAG]
        if groups and not all(labels.unique(key[0].topology_key) for key in groups):
            matcher = terms.anti_affinity.get(pod, ns_labels, groups, snap)
            if any(not labels.unique(key) and arr.any() for key, arr in matcher.counts.items()):
                return False
        if not self.ignore_preferred_terms_of_existing_pods:
            for kind, _, term, owner_ns in index.groups[SCORING_TAG]:
                if kind == REQUIRED_AFFINITY and self.hard_pod_affinity_weight <= 0:
                    continue
                if existing_term_matches(term, owner_ns, pod, ns_labels):
                    return False
        return True

    def pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot) -> PreFilterResult | Status | None:
        """Skip when no existing anti-affinity term matches and the pod has no required terms."""
        terms = ExistingTerms.of(snap)
        s = build_state(pod, snap, terms.index, terms.anti_affinity)
        if (
            not s.existing_anti_affinity_counts_nonzero()
            and not s.affinity_terms
            and not s.anti_affinity_terms
        ):
            state.delete(PRE_FILTER_STATE_KEY)
            return Status(Code.Skip, plugin=self.name)
        state.write(PRE_FILTER_STATE_KEY, s)
        return None

    def add_pod(self, state: CycleState, pod: Pod, added: Pod, row: int, snap: Snapshot) -> None:
        """AddPod: count a pod the dry run places on node ``row``."""
        s = state.read(PRE_FILTER_STATE_KEY)
        if isinstance(s, PreFilterState):
            s.update_with_pod(pod, added, row, snap, 1)

    def remove_pod(self, state: CycleState, pod: Pod, removed: Pod, row: int, snap: Snapshot) -> None:
        """RemovePod: uncount a pod the dry run takes off node ``row``."""
        s = state.read(PRE_FILTER_STATE_KEY)
        if isinstance(s, PreFilterState):
            s.update_with_pod(pod, removed, row, snap, -1)

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        s = state.read(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            msg = f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
            return FilterResult.from_mask(np.ones(len(rows), dtype=bool), msg, Code.Error)
        return filter_rows(s, snap, np.asarray(rows))

    # ---- PreScore / Score -------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> Status | None:
        """Skip when nothing scores: no term matched on any node carrying its topology key."""
        aff, anti = preferred_terms(pod)
        has_constraints = bool(aff or anti)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            state.delete(PRE_SCORE_STATE_KEY)
            return Status(Code.Skip, plugin=self.name)
        groups = ExistingTerms.of(snap).index.groups[SCORING_TAG]
        topology_score, touched = build_topology_score(pod, snap, groups, self.hard_pod_affinity_weight)
        if not touched:
            state.delete(PRE_SCORE_STATE_KEY)
            return Status(Code.Skip, plugin=self.name)
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(topology_score))
        return None

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        s = state.read(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return np.zeros(len(rows), dtype=np.int64)
        return score_rows(s, snap, np.asarray(rows))

    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray | None:
        """Min-max to [0, 100]; untouched when PreScore found nothing (upstream returns early)."""
        s = state.read(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState) or not s.topology_score:
            return None
        return normalize_scores(scores)
