"""PreScore/Score/NormalizeScore: soft (ScheduleAnyway) constraints, as upstream's float math.

Raw score per node = round(sum over constraints the node has a key for of
``count * log(domains + 2) + (maxSkew - 1)``); hostname constraints count the node's own
matching pods, other keys the node's domain. NormalizeScore inverts to [0, 100] with int64
arithmetic; nodes missing a required topology key ("ignored") get 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kubesched.framework.interfaces import MAX_NODE_SCORE
from kubesched.plugins.podtopologyspread.common import ShapeMasks, shape_masks
from kubesched.plugins.podtopologyspread.defaults import LABEL_HOSTNAME

if TYPE_CHECKING:
    from kubesched.api.affinity import TopologySpreadConstraint
    from kubesched.api.objects import Pod
    from kubesched.api.selectors import LabelSelector
    from kubesched.state.snapshot import Snapshot

CountFn = Callable[["Snapshot", "LabelSelector | None", str], np.ndarray]


@dataclass(slots=True)
class PreScoreState:
    """preScoreState; read-only after PreScore, so clone shares it (as upstream)."""

    constraints: tuple[TopologySpreadConstraint, ...]
    ignored: np.ndarray  # bool per node row: a filtered node missing a required key
    codes: list[np.ndarray]  # per constraint: label value code per node row (-1: no label)
    domain_counts: list[np.ndarray | None]  # per constraint (non-hostname): count per value code
    node_counts: list[np.ndarray | None]  # per constraint (hostname): matching pods per node row
    weights: list[float]  # topologyNormalizingWeight per constraint
    seeded: list[np.ndarray | None] = field(default_factory=list)  # domains of scored filtered nodes
    scored_ignored: np.ndarray | None = None  # ignored flags of the rows last scored

    def clone(self) -> PreScoreState:
        return self

    def topology_value_counts(self, i: int, values: list[str]) -> dict[str, int]:
        """TopologyValueToPodCounts[i] as a dict; the slot past the vocabulary is "" (no label)."""
        seeded, counts = self.seeded[i], self.domain_counts[i]
        if seeded is None or counts is None:
            return {}
        names = [*values, ""]
        return {names[k]: int(counts[k]) for k in np.flatnonzero(seeded)}


def topology_normalizing_weight(size: int) -> float:
    """log(size + 2): small topologies are not watered down by big ones."""
    return math.log(size + 2)


def _score_domains(
    shape: ShapeMasks, i: int, c: TopologySpreadConstraint, snap: Snapshot, require_all: bool
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None, int]:
    """(label codes, domain per row, counted domain per row or -1, slots) of constraint i.

    Hostname constraints count per node, so only their codes are kept. Otherwise a node
    without the key falls in the "" domain (node.Labels[key] is ""), and it counts when it is
    processed (all keys present, unless not required) and passes the inclusion policies.
    """
    key = ("score", i, require_all)
    hit = shape.derived.get(key)
    if hit is None:
        codes = snap.labels.codes(c.topology_key).copy()
        codes.flags.writeable = False
        if c.topology_key == LABEL_HOSTNAME:
            hit = (codes, None, None, 0)
        else:
            nvals = len(snap.labels.values_of(c.topology_key))
            empty = snap.labels.vocab(c.topology_key).get("", nvals)
            dom = np.where(codes >= 0, codes, empty)
            elig = shape.all_keys if require_all else np.ones(snap.n, bool)
            inclusion = shape.inclusions[i]
            if inclusion is not None:
                elig = elig & inclusion
            counted = np.where(elig, dom, -1).astype(np.int32)
            for a in (dom, counted):
                a.flags.writeable = False
            hit = (codes, dom, counted, nvals + 1)
        shape.derived[key] = hit
    return hit


def compute_pre_score_state(
    pod: Pod,
    constraints: tuple[TopologySpreadConstraint, ...],
    snap: Snapshot,
    rows: np.ndarray,
    require_all_topologies: bool,
    count: CountFn,
    cached: bool = True,
) -> PreScoreState:
    """initPreScoreState over the filtered ``rows`` plus the count over all nodes.

    Domains per node come from the pod shape's cached masks, counts per domain from its
    DomainCounts (both kept in the snapshot's memo; summed afresh when not ``cached``).
    """
    n = snap.n
    shape = shape_masks(pod, snap, constraints, cached)
    all_keys = shape.all_keys
    rows = np.asarray(rows, dtype=np.int64)
    ignored = np.zeros(n, bool)
    if require_all_topologies:
        ignored[rows[~all_keys[rows]]] = True
    scored_rows = rows[~ignored[rows]]
    n_filtered_kept = len(rows) - int(np.count_nonzero(ignored[rows]))
    ns = pod.namespace
    codes_list, domain_counts, node_counts, weights, seeded_list = [], [], [], [], []
    for i, c in enumerate(constraints):
        codes, dom, counted, size = _score_domains(shape, i, c, snap, require_all_topologies)
        codes_list.append(codes)
        if dom is None or counted is None:
            # Per-node counts are taken in Score, without inclusion policies.
            node_counts.append(count(snap, c.selector, ns))
            domain_counts.append(None)
            seeded_list.append(None)
            weights.append(topology_normalizing_weight(n_filtered_kept))
            continue
        node_counts.append(None)
        seeded = np.zeros(size, bool)
        seeded[dom[scored_rows]] = True
        role = ("score", i, require_all_topologies)
        cnt = shape.counts(snap, role, c.selector, ns, counted, size, lambda sel=c.selector: count(snap, sel, ns)).sums.copy()
        cnt[~seeded] = 0
        domain_counts.append(cnt)
        seeded_list.append(seeded)
        weights.append(topology_normalizing_weight(int(np.count_nonzero(seeded))))
    return PreScoreState(constraints, ignored, codes_list, domain_counts, node_counts, weights, seeded_list)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    """math.Round for non-negative floats (numpy rounds half to even)."""
    fl = np.floor(x)
    return np.where(x - fl >= 0.5, fl + 1.0, fl)


def score_rows(st: PreScoreState, rows: np.ndarray) -> np.ndarray:
    """Score: raw per-node score (float sum in constraint order, then int64(math.Round)).

    A node's term is ``count * weight + (maxSkew - 1)`` when it has the key, else 0.0; for
    domain constraints it is read from a table per value code (same float operations).
    """
    rows = np.asarray(rows, dtype=np.int64)
    score = np.zeros(len(rows), np.float64)
    for i, c in enumerate(st.constraints):
        codes = st.codes[i].take(rows)
        skew_term = float(c.max_skew - 1)
        node_counts = st.node_counts[i]
        if node_counts is not None:
            term = node_counts.take(rows).astype(np.float64) * st.weights[i] + skew_term
            score = score + np.where(codes >= 0, term, 0.0)
            continue
        counts = st.domain_counts[i]
        assert counts is not None
        size = len(counts)
        # slots: each code's term, then codes past the counts (no pods), then code -1 (no key)
        table = np.empty(size + 2, np.float64)
        table[:size] = counts.astype(np.float64) * st.weights[i] + skew_term
        table[size] = skew_term
        table[size + 1] = 0.0
        score = score + table.take(np.minimum(codes, size))
    raw = _round_half_away(score).astype(np.int64)
    ignored = st.ignored.take(rows)
    raw[ignored] = 0
    st.scored_ignored = ignored
    return raw


def normalize_scores(st: PreScoreState, scores: np.ndarray) -> np.ndarray:
    """NormalizeScore: MaxNodeScore * (max + min - s) / max over non-ignored nodes."""
    scores = np.asarray(scores, dtype=np.int64)
    ignored = st.scored_ignored
    if ignored is None or len(ignored) != len(scores):
        ignored = np.zeros(len(scores), bool)
    valid = ~ignored
    out = np.zeros(len(scores), np.int64)
    if not valid.any():
        return out
    vals = scores[valid]
    min_score = int(vals.min())
    max_score = max(0, int(vals.max()))
    if max_score == 0:
        out[valid] = MAX_NODE_SCORE
        return out
    out[valid] = MAX_NODE_SCORE * (max_score + min_score - vals) // max_score
    return out
