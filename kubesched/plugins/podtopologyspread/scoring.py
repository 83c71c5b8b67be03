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
from kubesched.plugins.podtopologyspread.common import MaskCache, node_masks
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


def compute_pre_score_state(
    pod: Pod,
    constraints: tuple[TopologySpreadConstraint, ...],
    snap: Snapshot,
    rows: np.ndarray,
    require_all_topologies: bool,
    count: CountFn,
    mask_cache: MaskCache | None = None,
) -> PreScoreState:
    """initPreScoreState over the filtered ``rows`` plus the count over all nodes."""
    n = snap.n
    all_keys, inclusions = node_masks(pod, snap, constraints, mask_cache)
    rows = np.asarray(rows, dtype=np.int64)
    ignored = np.zeros(n, bool)
    if require_all_topologies:
        ignored[rows[~all_keys[rows]]] = True
    scored_rows = rows[~ignored[rows]]
    n_filtered_kept = len(rows) - int(np.count_nonzero(ignored[rows]))
    # processAllNode: nodes missing any key are skipped only when all keys are required.
    base = all_keys if require_all_topologies else np.ones(n, bool)
    codes_list, domain_counts, node_counts, weights, seeded_list = [], [], [], [], []
    for c, inclusion in zip(constraints, inclusions, strict=True):
        codes = snap.labels.codes(c.topology_key)
        codes_list.append(codes.copy())
        per_node = count(snap, c.selector, pod.namespace)
        if c.topology_key == LABEL_HOSTNAME:
            # Per-node counts are taken in Score, without inclusion policies.
            node_counts.append(per_node)
            domain_counts.append(None)
            seeded_list.append(None)
            size = n_filtered_kept
        else:
            node_counts.append(None)
            # A node without the key counts into the "" domain (node.Labels[key] is "").
            nvals = len(snap.labels.values_of(c.topology_key))
            empty = snap.labels.vocab(c.topology_key).get("", nvals)
            dom = np.where(codes >= 0, codes, empty)
            seeded = np.zeros(nvals + 1, bool)
            seeded[dom[scored_rows]] = True
            size = int(np.count_nonzero(seeded))
            elig = base
            if inclusion is not None:
                elig = elig & inclusion
            d = dom[elig]
            cnt = (
                np.bincount(d, weights=per_node[elig], minlength=nvals + 1) if d.size else np.zeros(nvals + 1)
            )
            cnt = cnt.astype(np.int64)
            cnt[~seeded] = 0
            domain_counts.append(cnt)
            seeded_list.append(seeded)
        weights.append(topology_normalizing_weight(size))
    return PreScoreState(constraints, ignored, codes_list, domain_counts, node_counts, weights, seeded_list)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    """math.Round for non-negative floats (numpy rounds half to even)."""
    fl = np.floor(x)
    return np.where(x - fl >= 0.5, fl + 1.0, fl)


def score_rows(st: PreScoreState, rows: np.ndarray) -> np.ndarray:
    """Score: raw per-node score (float sum in constraint order, then int64(math.Round))."""
    rows = np.asarray(rows, dtype=np.int64)
    score = np.zeros(len(rows), np.float64)
    for i, c in enumerate(st.constraints):
        codes = st.codes[i][rows]
        has = codes >= 0
        if st.node_counts[i] is not None:
            cnt = st.node_counts[i][rows]
        else:
            counts = st.domain_counts[i]
            ok = has & (codes < len(counts))
            cnt = np.where(ok, counts[np.where(ok, codes, 0)], 0)
        term = cnt.astype(np.float64) * st.weights[i] + float(c.max_skew - 1)
        score = score + np.where(has, term, 0.0)
    raw = _round_half_away(score).astype(np.int64)
    ignored = st.ignored[rows]
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
