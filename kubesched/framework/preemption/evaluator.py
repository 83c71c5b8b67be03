"""Evaluator.Preempt: when a pod fits nowhere, pick a node where evicting lower-priority pods
makes room, and evict them (pkg/scheduler/framework/preemption, the synchronous path).

A preemption plugin (DefaultPreemption, CapacityScheduling) is an ``Evaluator``: it supplies the
hooks upstream's preemption.Interface names (``pod_eligible_to_preempt_others``,
``get_offset_and_num_candidates``, ``pod_disruption_budgets``, and the victim search's
``is_eligible_pod`` / ``more_important_pod``); the flow and the dry run are here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kubesched.framework.preemption.candidates import (
    Candidate,
    PodDisruptionBudget,
    aggregate_errors,
    select_candidate,
)
from kubesched.framework.preemption.dry_run import DryRun, fit_error_message, node_codes, potential_rows
from kubesched.framework.status import Code, Status

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.diagnosis import Diagnosis
    from kubesched.state.snapshot import Snapshot

NO_CANDIDATE = "no candidate node for preemption"
PREEMPTED = "preempted"  # why a victim waiting at Permit is rejected


class Evaluator(DryRun):
    """preemption.Evaluator; subclasses supply the hooks below."""

    name: str

    # ---- hooks (preemption.Interface) ---------------------------------------------------
    def pod_eligible_to_preempt_others(
        self, pod: Pod, snap: Snapshot, nominated_code: Code | None
    ) -> tuple[bool, str]:
        raise NotImplementedError

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        raise NotImplementedError

    def pod_disruption_budgets(self) -> list[PodDisruptionBudget]:
        return []

    # ---- the flow -----------------------------------------------------------------------
    def preempt(
        self, pod: Pod, snap: Snapshot, diagnosis: Diagnosis, state: CycleState | None = None
    ) -> tuple[str | None, Status]:
        """Evaluator.Preempt without extenders: eligibility, dry run, pick, evict. ``state``: the
        scheduling cycle's CycleState, which the dry run copies for each node."""
        codes = node_codes(diagnosis, snap.n)
        nominated_code = self._nominated_node_code(pod, snap, diagnosis, codes)
        ok, msg = self.pod_eligible_to_preempt_others(pod, snap, nominated_code)
        if not ok:
            return None, Status(Code.Unschedulable, (msg,))
        if snap.n == 0:
            return None, Status.error("no nodes available")
        candidates, statuses, errors = self.find_candidates(pod, snap, diagnosis, state)
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

    def find_candidates(
        self, pod: Pod, snap: Snapshot, diagnosis: Diagnosis, state: CycleState | None = None
    ) -> tuple[list[Candidate], dict[int, Status], list[str]]:
        """findCandidates: dry-run preemption on the nodes filters rejected as Unschedulable."""
        rows = potential_rows(diagnosis, snap)
        if rows.size == 0:
            return [], {}, []
        offset, num = self.get_offset_and_num_candidates(int(rows.size))
        return self.dry_run_preemption(pod, snap, rows, self.pod_disruption_budgets(), offset, num, state)

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
        nominated = nominator.nominated if nominator is not None else None
        if nominated:
            for uid, p in list(nominated.items()):
                if p.nominated_node_name == cand.name and p.priority < pod.priority and uid != pod.uid:
                    p.nominated_node_name = ""
                    del nominated[uid]
                    if cluster is not None:
                        cluster.set_nominated_node(p, "")
        return Status()
