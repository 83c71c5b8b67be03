"""DefaultPreemption: when a pod fits nowhere, evict lower-priority pods from one node for it.

Ports pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go: the plugin's
args and its preemption.Interface hooks; the flow is ``kubesched.framework.preemption``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.config.args import plugin_args
from kubesched.framework.diagnosis import Diagnosis
from kubesched.framework.interfaces import PostFilterPlugin
from kubesched.framework.preemption.candidates import (
    PodDisruptionBudget,
    more_important_pod,
)
from kubesched.framework.preemption.evaluator import (
    Evaluator,
)
from kubesched.framework.status import Code, Status

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.state.snapshot import Snapshot

NAME = "DefaultPreemption"
MSG_PREFIX = "preemption: "
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
PREEMPT_NEVER = "Never"
DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"


def pod_terminating_by_preemption(pod: Pod) -> bool:
    """Deleting, with the DisruptionTarget=True condition the scheduler sets on its victims."""
    if not pod.deleting:
        return False
    status = pod.raw.get("status") if isinstance(pod.raw, dict) else None
    conditions = status.get("conditions") if isinstance(status, dict) else None
    for cond in conditions or ():
        if isinstance(cond, dict) and cond.get("type") == DISRUPTION_TARGET:
            return cond.get("status") == "True" and cond.get("reason") == REASON_PREEMPTION_BY_SCHEDULER
    return False


def _always_eligible(snap: Snapshot, row: int, victim: Pod, preemptor: Pod) -> bool:
    return True


class DefaultPreemption(PostFilterPlugin, Evaluator):
    """PostFilter: nominate a node where evicting lower-priority pods makes the pod fit.

    ``is_eligible_pod`` and ``more_important_pod`` may be replaced, as upstream's IsEligiblePod
    and MoreImportantPod; ``pdb_lister`` supplies PodDisruptionBudgets (none by default).
    """

    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        a = plugin_args(NAME, self.args)
        self.min_candidate_nodes_percentage: int = a["minCandidateNodesPercentage"]
        self.min_candidate_nodes_absolute: int = a["minCandidateNodesAbsolute"]
        self.is_eligible_pod = _always_eligible
        self.more_important_pod = more_important_pod
        self.pdb_lister: Callable[[], list[PodDisruptionBudget]] | None = None
        self._rng = handle.rng if handle is not None else np.random.default_rng()

    # ---- PostFilter ------------------------------------------------------------------
    def post_filter(
        self, state: CycleState, pod: Pod, snap: Snapshot, diagnosis: Diagnosis
    ) -> tuple[str | None, Status]:
        """(node to nominate, "" to clear the nomination, or None to leave it; status)."""
        node, st = self.preempt(pod, snap, diagnosis, state)
        if st.message:
            return node, Status(st.code, (MSG_PREFIX + st.message,))
        return node, st

    # ---- eligibility -----------------------------------------------------------------
    def pod_eligible_to_preempt_others(
        self, pod: Pod, snap: Snapshot, nominated_code: Code | None
    ) -> tuple[bool, str]:
        """PodEligibleToPreemptOthers: not with preemptionPolicy Never, nor while earlier victims terminate."""
        if pod.preemption_policy == PREEMPT_NEVER:
            return False, NOT_ELIGIBLE_NEVER
        nom = pod.nominated_node_name
        if nom:
            # A nominated node that filters now reject outright is no reason to wait.
            if nominated_code == Code.UnschedulableAndUnresolvable:
                return True, ""
            row = snap.row_of.get(nom)
            if row is not None:
                for p in snap.pods_on[row].values():
                    if (
                        p.priority < pod.priority
                        and self.is_eligible_pod(snap, row, p, pod)
                        and pod_terminating_by_preemption(p)
                    ):
                        return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    # ---- candidates ------------------------------------------------------------------
    def calculate_num_candidates(self, num_nodes: int) -> int:
        """max(numNodes * pct / 100, abs), capped at numNodes (int32 arithmetic)."""
        n = num_nodes * self.min_candidate_nodes_percentage // 100
        n = max(n, self.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def random_offset(self, num_nodes: int) -> int:
        """rand.Int31n(numNodes), from the scheduler's seeded generator."""
        return int(self._rng.integers(num_nodes))

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return self.random_offset(num_nodes), self.calculate_num_candidates(num_nodes)

    def pod_disruption_budgets(self) -> list[PodDisruptionBudget]:
        """The snapshot's PodDisruptionBudgets, unless a ``pdb_lister`` is set."""
        if self.pdb_lister is not None:
            return list(self.pdb_lister())
        return list(self.handle.snapshot.pdbs) if self.handle is not None else []
