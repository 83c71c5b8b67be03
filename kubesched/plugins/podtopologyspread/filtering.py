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
    ShapeMasks,
    min_domains,
    selector_matches,
    shape_masks,
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


#: Filter verdict per domain -> (Code, reason bits): 0 passes, 1 skew too large, 2 missing label.
_VERDICT_CODE = np.array([Code.Success, Code.Unschedulable, Code.UnschedulableAndUnresolvable], np.int8)
_SKEW, _MISSING = 1, 2


@dataclass(slots=True)
class PreFilterState:
    """preFilterState: constraints, per-domain counts and eligibility, for one pod and cycle."""

    constraints: tuple[TopologySpreadConstraint, ...]
    counts: list[np.ndarray]  # per constraint: int64 count per value code
    present: list[np.ndarray]  # per constraint: bool per value code (domain in the map); copy on write
    eligible: list[np.ndarray]  # per constraint: bool per node row (keys + inclusion policies); shared
    all_keys: np.ndarray | None  # bool per node row: every topology key present; shared
    namespace: str = ""
    all_keys_everywhere: bool = False  # every node has every topology key
    # per constraint: verdict (0/_SKEW/_MISSING) per value code, the last slot for "no label";
    # built by the first Filter call of a cycle, dropped when AddPod/RemovePod change the counts
    verdicts: list[np.ndarray] | None = None
    verdict_stamp: int = -1  # the snapshot's node generation the tables were built for
    # per constraint the min_match_num PreFilter found (from the counts' kept minimum); None once
    # AddPod/RemovePod changed the counts
    critical: list[int] | None = None

    def clone(self) -> PreFilterState:
        """Counts change under AddPod/RemovePod; node masks and constraints are shared."""
        return PreFilterState(
            self.constraints,
            [c.copy() for c in self.counts],
            [p.copy() for p in self.present],
            self.eligible,
            self.all_keys,
            self.namespace,
            self.all_keys_everywhere,
        )

    def domains_num(self, i: int) -> int:
        return int(np.count_nonzero(self.present[i]))

    def min_match_num(self, i: int) -> int:
        """Global minimum; 0 when fewer eligible domains than minDomains."""
        if self.critical is not None:
            return self.critical[i]
        present = self.present[i]
        k = int(np.count_nonzero(present))
        if k < min_domains(self.constraints[i]):
            return 0
        if k == 0:
            return _MAX_INT32
        counts = self.counts[i]
        return int(counts.min() if k == len(counts) else counts[present].min())

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
            if not self.present[i][code]:
                self.present[i] = self.present[i].copy()  # may be shared with the mask cache
                self.present[i][code] = True
            self.verdicts = None
            self.critical = None

    def verdict_tables(self, pod: Pod, snap: Snapshot) -> list[np.ndarray]:
        """Per constraint, the Filter verdict of every value code; built once per cycle.

        A node fails on skew where matchNum + selfMatch - minMatchNum > maxSkew, i.e. where its
        domain's count exceeds one threshold; codes past the counts have no matching pods.
        """
        if self.verdicts is not None and self.verdict_stamp == snap.node_generation:
            return self.verdicts
        tables = []
        for i, c in enumerate(self.constraints):
            counts = self.counts[i]
            size = max(len(counts), len(snap.labels.values_of(c.topology_key)))
            self_match = 1 if selector_matches(c.selector, pod.labels) else 0
            threshold = c.max_skew + self.min_match_num(i) - self_match
            table = np.empty(size + 1, np.int8)
            table[: len(counts)] = counts > threshold  # True is _SKEW
            table[len(counts) : size] = _SKEW if threshold < 0 else 0
            table[size] = _MISSING  # code -1 (no such label) reads the last slot
            tables.append(table)
        self.verdicts = tables
        self.verdict_stamp = snap.node_generation
        return tables

    def passes_everywhere(self, pod: Pod, snap: Snapshot) -> bool:
        """True when Filter passes every node: all carry every key (``all_keys``) and no value
        code's table entry fails (codes no node uses count too: exact, if sometimes cautious)."""
        if self.all_keys is None or len(self.all_keys) != snap.n or not self.all_keys_everywhere:
            return False
        # verdict_tables' test without building the tables: no count over the threshold (codes
        # past the counts fail only when the threshold is negative, and then every code fails)
        for i, c in enumerate(self.constraints):
            self_match = 1 if selector_matches(c.selector, pod.labels) else 0
            threshold = c.max_skew + self.min_match_num(i) - self_match
            counts = self.counts[i]
            if threshold < 0 or (len(counts) and int(counts.max()) > threshold):
                return False
        return True


def _filter_domains(
    shape: ShapeMasks, i: int, c: TopologySpreadConstraint, snap: Snapshot
) -> tuple[np.ndarray, np.ndarray, int, np.ndarray, int]:
    """(eligible rows, domain per row or -1, value count, present domains, their number) of constraint i."""
    key = ("filter", i)
    hit = shape.derived.get(key)
    if hit is None:
        inclusion = shape.inclusions[i]
        elig = shape.all_keys if inclusion is None else shape.all_keys & inclusion
        codes = snap.labels.codes(c.topology_key)
        nvals = len(snap.labels.values_of(c.topology_key))
        dom = np.where(elig, codes, -1).astype(np.int32)
        present = np.bincount(codes[elig], minlength=nvals) > 0
        for a in (elig, dom, present):
            a.flags.writeable = False
        hit = shape.derived[key] = (elig, dom, nvals, present, int(np.count_nonzero(present)))
    return hit


def compute_pre_filter_state(
    pod: Pod,
    constraints: tuple[TopologySpreadConstraint, ...],
    snap: Snapshot,
    count: CountFn,
    cached: bool = True,
) -> PreFilterState:
    """calPreFilterState over every node of the snapshot.

    The eligible nodes and their domains come from the pod shape's masks, the per-domain
    counts from its DomainCounts (both kept in the snapshot's memo; summed afresh when not ``cached``).
    """
    if not constraints:
        return PreFilterState((), [], [], [], None, pod.namespace)
    shape = shape_masks(pod, snap, constraints, cached)
    ns = pod.namespace
    counts, present, eligible, critical = [], [], [], []
    for i, c in enumerate(constraints):
        elig, dom, nvals, pres, npres = _filter_domains(shape, i, c, snap)
        counter = shape.counts(snap, ("filter", i), c.selector, ns, dom, nvals, lambda sel=c.selector: count(snap, sel, ns), pres)
        counts.append(counter.sums.copy())
        present.append(pres)
        eligible.append(elig)
        # min_match_num: 0 below minDomains (npres is 0 only then, minDomains being at least 1)
        low = counter.minimum()
        critical.append(0 if npres < min_domains(c) or low is None else low)
    st = PreFilterState(constraints, counts, present, eligible, shape.all_keys, ns, shape.everywhere)
    st.critical = critical
    return st


def filter_rows(st: PreFilterState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
    """Filter: the first failing constraint decides a node's code and reason, as upstream."""
    if not st.constraints:
        return FilterResult.all_pass(len(rows))
    tables = st.verdict_tables(pod, snap)
    labels = snap.labels
    # take: much cheaper than fancy indexing with int32 rows; code -1 wraps to the last slot
    verdict = tables[0].take(labels.codes(st.constraints[0].topology_key).take(rows))
    for c, table in zip(st.constraints[1:], tables[1:], strict=True):
        v = table.take(labels.codes(c.topology_key).take(rows))
        verdict = np.where(verdict == 0, v, verdict)
    return FilterResult(_VERDICT_CODE.take(verdict), verdict.astype(np.int64), FILTER_REASONS)


__all__ = ["FILTER_REASONS", "PreFilterState", "compute_pre_filter_state", "filter_rows"]
