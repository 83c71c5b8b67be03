"""PreFilter/Filter: hard (DoNotSchedule) constraints as per-domain matching-pod counts.

Per constraint the state holds one count per topology value code of the snapshot's label
index (``counts``) and which values are eligible domains (``present``), i.e. the upstream
``TpValueToMatchNum`` map as two arrays. The global minimum is exact (as upstream's
DomainsAtCount bookkeeping), so AddPod/RemovePod during preemption stay correct.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kubesched.framework.status import Code, FilterResult
from kubesched.plugins.podtopologyspread.common import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    MaskCache,
    min_domains,
    node_masks,
    selector_matches,
)

if TYPE_CHECKING:
    from kubesched.api.affinity import TopologySpreadConstraint
    from kubesched.api.objects import Pod
    from kubesched.api.selectors import LabelSelector
    from kubesched.state.snapshot import Snapshot

CountFn = Callable[["Snapshot", "LabelSelector | None", str], np.ndarray]

#: FilterResult reason bits: bit 0 skew, bit 1 missing topology label.
FILTER_REASONS = (ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH)
_MAX_INT32 = 2**31 - 1


@dataclass(slots=True)
class PreFilterState:
    """preFilterState: constraints, per-domain counts and eligibility, for one pod and cycle."""

    constraints: tuple[TopologySpreadConstraint, ...]
    counts: list[np.ndarray]  # per constraint: int64 count per value code
    present: list[np.ndarray]  # per constraint: bool per value code (domain in the map)
    eligible: list[np.ndarray]  # per constraint: bool per node row (keys + inclusion policies)
    all_keys: np.ndarray | None  # bool per node row: every topology key present
    namespace: str = ""

    def clone(self) -> PreFilterState:
        """Counts change under AddPod/RemovePod; node masks and constraints are shared."""
        return PreFilterState(
            self.constraints,
            [c.copy() for c in self.counts],
            [p.copy() for p in self.present],
            self.eligible,
            self.all_keys,
            self.namespace,
        )

    def domains_num(self, i: int) -> int:
        return int(np.count_nonzero(self.present[i]))

    def min_match_num(self, i: int) -> int:
        """Global minimum; 0 when fewer eligible domains than minDomains."""
        present = self.present[i]
        if np.count_nonzero(present) < min_domains(self.constraints[i]):
            return 0
        if not present.any():
            return _MAX_INT32
        return int(self.counts[i][present].min())

    def match_num(self, i: int, values: list[str]) -> dict[str, int]:
        """TpValueToMatchNum[i] as a dict (for tests and explain output)."""
        idx = np.flatnonzero(self.present[i])
        return {values[k]: int(self.counts[i][k]) for k in idx}

    def _ensure(self, i: int, code: int) -> None:
        if code >= len(self.counts[i]):
            grow = code + 1 - len(self.counts[i])
            self.counts[i] = np.concatenate([self.counts[i], np.zeros(grow, np.int64)])
            self.present[i] = np.concatenate([self.present[i], np.zeros(grow, bool)])

    def update_with_pod(self, updated: Pod, preemptor: Pod, row: int, snap: Snapshot, delta: int) -> None:
        """updateWithPod: account one pod added to / removed from node ``row``."""
        if updated.namespace != preemptor.namespace or not 0 <= row < snap.n:
            return
        if self.all_keys is None or row >= len(self.all_keys) or not self.all_keys[row]:
            return
        for i, c in enumerate(self.constraints):
            if not selector_matches(c.selector, updated.labels):
                continue
            if not self.eligible[i][row]:
                continue
            code = int(snap.labels.codes(c.topology_key)[row])
            self._ensure(i, code)
            self.counts[i][code] += delta
            self.present[i][code] = True


def compute_pre_filter_state(
    pod: Pod,
    constraints: tuple[TopologySpreadConstraint, ...],
    snap: Snapshot,
    count: CountFn,
    mask_cache: MaskCache | None = None,
) -> PreFilterState:
    """calPreFilterState over every node of the snapshot."""
    if not constraints:
        return PreFilterState((), [], [], [], None, pod.namespace)
    all_keys, inclusions = node_masks(pod, snap, constraints, mask_cache)
    counts, present, eligible = [], [], []
    for c, inclusion in zip(constraints, inclusions, strict=True):
        elig = all_keys
        if inclusion is not None:
            elig = elig & inclusion
        codes = snap.labels.codes(c.topology_key)
        nvals = len(snap.labels.values_of(c.topology_key))
        dom = codes[elig]
        per_node = count(snap, c.selector, pod.namespace)
        cnt = np.bincount(dom, weights=per_node[elig], minlength=nvals) if dom.size else np.zeros(nvals)
        counts.append(cnt.astype(np.int64))
        present.append(np.bincount(dom, minlength=nvals) > 0)
        eligible.append(elig)
    return PreFilterState(constraints, counts, present, eligible, all_keys, pod.namespace)


def filter_rows(st: PreFilterState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
    """Filter: the first failing constraint decides a node's code and reason, as upstream."""
    n = len(rows)
    if not st.constraints:
        return FilterResult.all_pass(n)
    code = np.zeros(n, np.int8)
    bits = np.zeros(n, np.int64)
    decided = np.zeros(n, bool)
    for i, c in enumerate(st.constraints):
        codes = snap.labels.codes(c.topology_key)[rows]
        missing = codes < 0
        new = missing & ~decided
        code[new] = Code.UnschedulableAndUnresolvable
        bits[new] = 2
        decided |= missing
        counts = st.counts[i]
        safe = np.where((codes >= 0) & (codes < len(counts)), codes, 0)
        match_num = np.where((codes >= 0) & (codes < len(counts)), counts[safe] if len(counts) else 0, 0)
        self_match = 1 if selector_matches(c.selector, pod.labels) else 0
        skew = match_num + self_match - st.min_match_num(i)
        fail = (skew > c.max_skew) & ~decided
        code[fail] = Code.Unschedulable
        bits[fail] = 1
        decided |= fail
    return FilterResult(code, bits, FILTER_REASONS)


__all__ = ["FILTER_REASONS", "PreFilterState", "compute_pre_filter_state", "filter_rows"]
