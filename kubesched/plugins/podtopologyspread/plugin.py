"""The PodTopologySpread plugin: spread pods over topology domains (hard filter, soft score)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from kubesched.framework.interfaces import (
    NOT_INVOLVED,
    FilterPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    Signature,
    SignPlugin,
)
from kubesched.framework.status import Code, FilterResult, PluginError, PreFilterResult, Status
from kubesched.plugins.podtopologyspread.common import (
    NAME,
    PRE_FILTER_STATE_KEY,
    PRE_SCORE_STATE_KEY,
    matching_pods_per_node,
)
from kubesched.plugins.podtopologyspread.defaults import (
    DO_NOT_SCHEDULE,
    SCHEDULE_ANYWAY,
    constraints_for,
    parse_args,
)
from kubesched.plugins.podtopologyspread.filtering import (
    PreFilterState,
    compute_pre_filter_state,
    filter_rows,
)
from kubesched.plugins.podtopologyspread.scoring import (
    PreScoreState,
    compute_pre_score_state,
    normalize_scores,
    score_rows,
)
from kubesched.state.memo import NODES, PODS

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.api.selectors import LabelSelector
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.state.snapshot import Snapshot

_NOT_FOUND = 'reading "{key}" from cycleState: not found'


class PodTopologySpread(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, SignPlugin):
    """kube-scheduler's PodTopologySpread (v1.36): PreFilter, Filter, PreScore, Score."""

    name: ClassVar[str] = NAME
    events_to_register = frozenset(
        {"NodeAdd", "NodeUpdate", "AssignedPodAdd", "AssignedPodUpdate", "AssignedPodDelete"}
    )

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        parsed = parse_args(self.args)
        self.default_constraints = parsed.default_constraints
        self.system_defaulted = parsed.system_defaulted

    def sign_pod(self, pod: Pod, snap: Snapshot) -> Signature | None:
        """Not involved with a pod without constraints of its own and no workload that could
        give it default ones; the others' domains count pods on every node (not signable)."""
        if pod.spread_constraints or (self.default_constraints and snap.workload_selectors):
            return None
        return NOT_INVOLVED

    # ---- shared -----------------------------------------------------------------------
    @staticmethod
    def _count(snap: Snapshot, selector: LabelSelector | None, namespace: str) -> np.ndarray:
        """Matching pods per node, shared by PreFilter and PreScore of a cycle (and kept while
        pods and nodes stay put)."""
        return snap.memo.get(
            (NAME, "matching", selector, namespace),
            lambda: matching_pods_per_node(snap, selector, namespace),
            on=NODES | PODS,
        )

    # ---- PreFilter / Filter -----------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot) -> PreFilterResult | Status | None:
        constraints = constraints_for(pod, DO_NOT_SCHEDULE, self.default_constraints, snap)
        if not constraints:
            return Status(Code.Skip, plugin=self.name)
        state.write(
            PRE_FILTER_STATE_KEY, compute_pre_filter_state(pod, constraints, snap, self._count)
        )
        return None

    def _pre_filter_state(self, state: CycleState) -> PreFilterState:
        st = state.read(PRE_FILTER_STATE_KEY)
        if not isinstance(st, PreFilterState):
            raise PluginError(_NOT_FOUND.format(key=PRE_FILTER_STATE_KEY))
        return st

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        return filter_rows(self._pre_filter_state(state), pod, snap, np.asarray(rows))

    def passes_everywhere(self, state: CycleState, pod: Pod, snap: Snapshot) -> bool:
        """Every node has every topology key and no domain value fails its skew check."""
        st = state.read(PRE_FILTER_STATE_KEY)
        return isinstance(st, PreFilterState) and st.passes_everywhere(pod, snap)

    def add_pod(self, state: CycleState, pod: Pod, added: Pod, row: int, snap: Snapshot) -> None:
        st = state.read(PRE_FILTER_STATE_KEY)
        if isinstance(st, PreFilterState):
            st.update_with_pod(added, pod, row, snap, 1)

    def remove_pod(self, state: CycleState, pod: Pod, removed: Pod, row: int, snap: Snapshot) -> None:
        st = state.read(PRE_FILTER_STATE_KEY)
        if isinstance(st, PreFilterState):
            st.update_with_pod(removed, pod, row, snap, -1)

    # ---- PreScore / Score -------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> Status | None:
        if snap.n == 0:
            return Status(Code.Skip, plugin=self.name)
        constraints = constraints_for(pod, SCHEDULE_ANYWAY, self.default_constraints, snap)
        if not constraints:
            return Status(Code.Skip, plugin=self.name)
        # Only require all topology labels for non-system-default spreading, so nodes
        # without a zone label still get hostname spreading.
        require_all = bool(pod.spread_constraints) or not self.system_defaulted
        st = compute_pre_score_state(
            pod, constraints, snap, np.asarray(rows), require_all, self._count
        )
        state.write(PRE_SCORE_STATE_KEY, st)
        return None

    def _pre_score_state(self, state: CycleState) -> PreScoreState:
        st = state.read(PRE_SCORE_STATE_KEY)
        if not isinstance(st, PreScoreState):
            raise PluginError(f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        return st

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        return score_rows(self._pre_score_state(state), rows)

    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray | None:
        return normalize_scores(self._pre_score_state(state), scores)
