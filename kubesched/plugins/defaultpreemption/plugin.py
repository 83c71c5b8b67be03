"""DefaultPreemption: when a pod fits nowhere, evict lower-priority pods from one node for it.

Ports pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go and the
synchronous path of pkg/scheduler/framework/preemption (Evaluator.Preempt, prepareCandidate).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework.diagnosis import Diagnosis
from kubesched.framework.interfaces import PostFilterPlugin
from kubesched.framework.status import Code, Status
from kubesched.plugins.defaultpreemption.candidates import (
    Candidate,
    PodDisruptionBudget,
    aggregate_errors,
    more_important_pod,
    select_candidate,
)
from kubesched.plugins.defaultpreemption.evaluator import (
    Evaluator,
    fit_error_message,
    node_codes,
    potential_rows,
)

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.state.snapshot import Snapshot

NAME = "DefaultPreemption"
DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100
MSG_PREFIX = "preemption: "
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
NO_CANDIDATE = "no candidate node for preemption"
PREEMPT_NEVER = "Never"
DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
PREEMPTED = "preempted"  # why a victim waiting at Permit is rejected


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
        self.min_candidate_nodes_percentage = int(
            self.args.get("minCandidateNodesPercentage", DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE)
        )
        self.min_candidate_nodes_absolute = int(
            self.args.get("minCandidateNodesAbsolute", DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE)
        )
        self.is_eligible_pod = _always_eligible
        self.more_important_pod = more_important_pod
        self.pdb_lister: Callable[[], list[PodDisruptionBudget]] | None = None
        self._rng = handle.rng if handle is not None else np.random.default_rng()

    # ---- PostFilter ------------------------------------------------------------------
    def post_filter(
        self, state: CycleState, pod: Pod, snap: Snapshot, diagnosis: Diagnosis
    ) -> tuple[str | None, Status]:
        """(node to nominate, "" to clear the nomination, or None to leave it; status)."""
        node, st = self.preempt(pod, snap, diagnosis)
        if st.message:
            return node, Status(st.code, (MSG_PREFIX + st.message,))
        return node, st

    def preempt(self, pod: Pod, snap: Snapshot, diagnosis: Diagnosis) -> tuple[str | None, Status]:
        """Evaluator.Preempt without extenders: eligibility, dry run, pick, evict."""
        codes = node_codes(diagnosis, snap.n)
        nominated_code = self._nominated_node_code(pod, snap, diagnosis, codes)
        ok, msg = self.pod_eligible_to_preempt_others(pod, snap, nominated_code)
        if not ok:
            return None, Status(Code.Unschedulable, (msg,))
        if snap.n == 0:
            return None, Status.error("no nodes available")
        candidates, statuses, errors = self.find_candidates(pod, snap, diagnosis)
        if errors and not candidates:
            return None, Status.error(aggregate_errors(errors))
        if not candidates:
            return "", Status(Code.Unschedulable, (fit_error_message(statuses, snap.n),))
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.Unschedulable, (NO_CANDIDATE,))
        st = self.prepare_candidate(best, pod)
        if not st.ok:
            return None, st
        return best.name, Status()

    @staticmethod
    def _nominated_node_code(pod: Pod, snap: Snapshot, diagnosis: Diagnosis, codes: np.ndarray) -> Code:
        """m.Get(nominatedNodeName): the node's filter code, else the absent nodes' code."""
        row = snap.row_of.get(pod.nominated_node_name) if pod.nominated_node_name else None
        if row is not None:
            return Code(int(codes[row]))
        absent = diagnosis.absent_status
        return Code.UnschedulableAndUnresolvable if absent is None else absent.code

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

    def find_candidates(
        self, pod: Pod, snap: Snapshot, diagnosis: Diagnosis
    ) -> tuple[list[Candidate], dict[int, Status], list[str]]:
        """findCandidates: dry-run preemption on the nodes filters rejected as Unschedulable."""
        rows = potential_rows(diagnosis, snap)
        if rows.size == 0:
            return [], {}, []
        offset, num = self.get_offset_and_num_candidates(int(rows.size))
        return self.dry_run_preemption(pod, snap, rows, self.pod_disruption_budgets(), offset, num)

    def select_candidate(self, candidates: list[Candidate]) -> Candidate | None:
        return select_candidate(candidates)

    # ---- acting on the choice --------------------------------------------------------
    def prepare_candidate(self, cand: Candidate, pod: Pod) -> Status:
        """Evict the victims and clear lower-priority nominations to the chosen node.

        A victim still waiting at Permit is not deleted: it is rejected ("preempted"), so its
        binding cycle unreserves it and it goes back to the queue, as upstream's prepareCandidate.
        """
        handle = self.handle
        cluster = handle.cluster if handle is not None else None
        nominator = handle.nominator if handle is not None else None
        for victim in cand.victims:
            if victim.deleting:
                continue  # graceful deletion already started: no second API call
            waiting = handle.get_waiting_pod(victim.uid) if handle is not None else None
            if waiting is not None:
                waiting.reject(self.name, PREEMPTED)
                continue
            try:
                if cluster is not None:
                    cluster.delete_pod(victim, f"Preempted by pod {pod.uid} on node {cand.name}")
                if nominator is not None:
                    nominator.delete_pod(victim)
            except Exception as e:  # noqa: BLE001 - an API failure is this pod's Error status
                return Status.error(str(e))
        nominated: dict[str, Pod] | None = getattr(nominator, "nominated", None)
        if nominated:
            for uid, p in list(nominated.items()):
                if p.nominated_node_name == cand.name and p.priority < pod.priority and uid != pod.uid:
                    p.nominated_node_name = ""
                    del nominated[uid]
                    if cluster is not None:
                        cluster.set_nominated_node(p, "")
        return Status()
