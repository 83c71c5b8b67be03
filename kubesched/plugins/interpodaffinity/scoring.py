"""PreScore/Score/NormalizeScore of InterPodAffinity: weighted topology-pair sums, min-max scaled.

PreScore builds kube-scheduler's ``topologyScore`` (topology key -> value -> weight sum) as one
int64 array per key over the key's node-label value codes; Score sums, per node, the entries of
the node's own topology values.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.affinity import WeightedPodAffinityTerm
from kubesched.framework.interfaces import MAX_NODE_SCORE
from kubesched.plugins.interpodaffinity.terms import (
    TermGroup,
    add_counts,
    existing_term_matches,
    incoming_namespaces,
    lookup,
    matching_counts,
    owner_key,
)

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.state.snapshot import Snapshot

#: ExistingTermIndex tag of existing pods' scoring terms.
SCORING_TAG = "scoring"
# Kinds of an existing pod's term, in its scoring group key.
REQUIRED_AFFINITY, PREFERRED_AFFINITY, PREFERRED_ANTI_AFFINITY = 0, 1, 2


@dataclass(slots=True)
class PreScoreState:
    """topologyScore; read-only after PreScore (upstream's Clone returns itself)."""

    topology_score: dict[str, np.ndarray] = field(default_factory=dict)

    def clone(self) -> PreScoreState:
        return self


def preferred_terms(
    pod: Pod,
) -> tuple[tuple[WeightedPodAffinityTerm, ...], tuple[WeightedPodAffinityTerm, ...]]:
    aff = pod.pod_affinity.preferred if pod.pod_affinity else ()
    anti = pod.pod_anti_affinity.preferred if pod.pod_anti_affinity else ()
    return aff, anti


def scoring_group_keys(pod: Pod) -> list[tuple[str, Hashable]]:
    """Index keys of an existing pod's scoring terms: (kind, weight, term, owner namespace)."""
    keys: list[Hashable] = []
    ns = pod.namespace
    if pod.pod_affinity:
        keys.extend((REQUIRED_AFFINITY, 0, t, owner_key(t, ns)) for t in pod.pod_affinity.required)
        keys.extend(
            (PREFERRED_AFFINITY, w.weight, w.term, owner_key(w.term, ns)) for w in pod.pod_affinity.preferred
        )
    if pod.pod_anti_affinity:
        keys.extend(
            (PREFERRED_ANTI_AFFINITY, w.weight, w.term, owner_key(w.term, ns))
            for w in pod.pod_anti_affinity.preferred
        )
    return [(SCORING_TAG, k) for k in keys]


def build_topology_score(
    pod: Pod,
    snap: Snapshot,
    groups: Mapping[Hashable, TermGroup] | None,
    hard_weight: int,
) -> tuple[dict[str, np.ndarray], bool]:
    """(topologyScore, whether any term matched on a node carrying its topology key).

    ``groups`` is None when existing pods' terms are not considered at all.
    """
    score: dict[str, np.ndarray] = {}
    touched = False
    aff, anti = preferred_terms(pod)
    # The incoming pod's preferred terms against every existing pod.
    for weighted, sign in [(w, 1) for w in aff] + [(w, -1) for w in anti]:
        term = weighted.term
        ns = incoming_namespaces(term, pod, snap)
        counts = matching_counts(snap, ((term, ns),), term.topology_key)
        if counts.any():
            touched = True
            add_counts(score, term.topology_key, counts * (sign * weighted.weight))
    if groups is None:
        return score, touched
    # Existing pods' terms against the incoming pod.
    ns_labels = snap.namespaces.get(pod.namespace, {})
    for (kind, weight, term, owner_ns), group in groups.items():
        if kind == REQUIRED_AFFINITY:
            if hard_weight <= 0:
                continue
            weight = hard_weight
        if not existing_term_matches(term, owner_ns, pod, ns_labels):
            continue
        counts = group.counts(snap, term.topology_key)
        if counts.any():
            touched = True
            sign = -1 if kind == PREFERRED_ANTI_AFFINITY else 1
            add_counts(score, term.topology_key, counts * (sign * weight))
    return score, touched


def score_rows(state: PreScoreState, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
    """Sum of topologyScore over the node's own (key, value) pairs."""
    out = np.zeros(len(rows), dtype=np.int64)
    for key, values in state.topology_score.items():
        out += lookup(values, snap.labels.codes(key)[rows])
    return out


def normalize_scores(scores: np.ndarray) -> np.ndarray:
    """NormalizeScore: ``int64(MaxNodeScore * (float64(s-min) / float64(max-min)))``, 0 if max==min."""
    scores = np.asarray(scores, dtype=np.int64)
    if scores.size == 0:
        return scores
    lo = int(scores.min())
    diff = int(scores.max()) - lo
    if diff <= 0:
        return np.zeros_like(scores)
    frac = (scores - lo).astype(np.float64) / np.float64(diff)
    return (np.float64(MAX_NODE_SCORE) * frac).astype(np.int64)
