"""The preemption dry run: which nodes could take the pod, and whom it would evict there.

Ports preemption.Evaluator.findCandidates / DryRunPreemption and
DefaultPreemption.SelectVictimsOnNode. kube-scheduler copies NodeInfo and CycleState per
node; here victims are taken out of the live snapshot for the check and always put back,
and the profile's PreFilter is re-run on a fresh CycleState for every check.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import Diagnosis, NodeFailures
from kubesched.framework.runtime import PluginFailure
from kubesched.framework.status import Code, Status
from kubesched.plugins.defaultpreemption.candidates import (
    Candidate,
    MoreImportantPodFunc,
    PodDisruptionBudget,
    filter_pods_with_pdb_violation,
    sort_by_importance,
)

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.handle import Handle
    from kubesched.state.snapshot import Snapshot

NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"

#: ``(snap, row, victim, preemptor) -> bool``: extra eligibility on top of "lower priority".
IsEligiblePodFunc = Callable[["Snapshot", int, "Pod", "Pod"], bool]


def node_codes(diagnosis: Diagnosis, n: int) -> np.ndarray:
    """Filter status code of every row; rows never filtered take the absent status's code."""
    absent = diagnosis.absent_status
    # NewDefaultNodeToStatus: nodes with no recorded status are UnschedulableAndUnresolvable.
    fill = Code.UnschedulableAndUnresolvable if absent is None else absent.code
    codes = np.full(n, int(fill), np.int8)
    for f in diagnosis.failures:
        codes[f.rows] = f.code
    return codes


def potential_rows(diagnosis: Diagnosis, snap: Snapshot) -> np.ndarray:
    """NodesForStatusCode(Unschedulable), in node-tree order: the nodes preemption may help."""
    codes = node_codes(diagnosis, snap.n)
    order = snap.order
    return order[codes[order] == Code.Unschedulable]


def fit_error_message(statuses: dict[int, Status], num_all_nodes: int) -> str:
    """FitError over the dry run's per-node statuses; other nodes: preemption is not helpful."""
    diag = Diagnosis(absent_status=Status(Code.UnschedulableAndUnresolvable, (NOT_HELPFUL,)))
    for row, st in statuses.items():
        diag.failures.append(
            NodeFailures(
                st.plugin,
                np.asarray([row], np.int32),
                np.asarray([int(st.code)], np.int8),
                np.asarray([(1 << len(st.reasons)) - 1], np.int64),
                st.reasons,
            )
        )
    return diag.fit_error(num_all_nodes)


class PreFilterError(Exception):
    """PreFilter failed during a check (upstream: a PreFilter AddPod/RemovePod extension error)."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


class Evaluator:
    """Dry-run machinery shared by preemption plugins (the plugin supplies the hooks)."""

    handle: Handle | None
    is_eligible_pod: IsEligiblePodFunc
    more_important_pod: MoreImportantPodFunc

    # ---- one filter check ------------------------------------------------------------
    def _run_filters(self, pod: Pod, snap: Snapshot, row: int) -> Status:
        """RunFilterPlugins on one node of the current snapshot (PreFilter re-run first).

        A PreFilter error raises PreFilterError; a Filter error is returned as an Error status.
        """
        fw = self.handle.framework if self.handle is not None else None
        if fw is None:
            raise PreFilterError(
                Status.error("preemption needs the profile's framework (handle.framework is unset)")
            )
        # When every PreFilter plugin either reads only the pod (row_local) or certainly skips,
        # removing victims cannot change the PreFilter state: compute it once per preemptor.
        reusable = all(pl.row_local or pl.skips(pod, snap) for pl in fw.pre_filter)
        key = (pod.uid, id(snap), snap.structure)
        cached = getattr(self, "_pre_filter_cache", None)
        if reusable and cached is not None and cached[0] == key:
            state, names, st, with_nodes = cached[1]
        else:
            state = CycleState()
            try:
                names, st, with_nodes, _ = fw.run_pre_filter(state, pod, snap)
            except PluginFailure as e:
                raise PreFilterError(Status(Code.Error, e.status.reasons, e.status.plugin)) from e
            if reusable:
                self._pre_filter_cache = (key, (state, names, st, with_nodes))
        if st.code == Code.Error:
            raise PreFilterError(st)
        if not st.ok:
            return st
        try:
            node_name = snap.nodes[row].name
            if names is not None and node_name not in names:
                msg = f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(with_nodes))}]"
                return Status(Code.UnschedulableAndUnresolvable, (msg,))
            diag = Diagnosis()
            ok = fw.filter_rows(state, pod, snap, np.asarray([row], np.int32), diag)
        except PluginFailure as e:
            return Status(Code.Error, e.status.reasons, e.status.plugin)
        if bool(ok[0]):
            return Status()
        return diag.status_of(row) or Status(Code.Unschedulable)

    def fits(self, pod: Pod, snap: Snapshot, row: int) -> Status:
        """RunFilterPluginsWithNominatedPods: the framework's filter_rows also checks the node
        with the pods of equal or higher priority nominated to it."""
        return self._run_filters(pod, snap, row)

    # ---- one node --------------------------------------------------------------------
    def select_victims_on_node(
        self, pod: Pod, snap: Snapshot, row: int, pdbs: Sequence[PodDisruptionBudget]
    ) -> tuple[list[Pod], int, Status]:
        """The fewest lower-priority pods to evict from ``row``; the snapshot is left unchanged."""
        node_pods = list(snap.pods_on[row].values())
        potential = [
            p for p in node_pods if p.priority < pod.priority and self.is_eligible_pod(snap, row, p, pod)
        ]
        if not potential:
            # The node is unchanged by preemption, so there is no point re-running filters.
            return [], 0, Status(Code.UnschedulableAndUnresolvable, (NO_VICTIMS,))
        try:
            for p in potential:
                snap.remove_pod(p.uid)
            st = self.fits(pod, snap, row)
            if not st.ok:
                # Affinity of the preemptor to a victim is deliberately not considered.
                return [], 0, st
            ordered = sort_by_importance(potential, self.more_important_pod)
            violating, non_violating = filter_pods_with_pdb_violation(ordered, pdbs)
            victims: list[Pod] = []

            def reprieve(p: Pod) -> bool:
                snap.add_pod(p)
                fits = self.fits(pod, snap, row).ok  # a Filter error counts as not fitting
                if not fits:
                    snap.remove_pod(p.uid)
                    victims.append(p)
                return fits

            num_violating = 0
            for p in violating:
                if not reprieve(p):
                    num_violating += 1
            for p in non_violating:
                reprieve(p)
            if violating and non_violating:
                victims = sort_by_importance(victims, self.more_important_pod)
            return victims, num_violating, Status()
        except PreFilterError as e:
            return [], 0, e.status
        finally:
            self._restore_node(snap, row, node_pods)

    @staticmethod
    def _restore_node(snap: Snapshot, row: int, node_pods: list[Pod]) -> None:
        """Put the node's pods back exactly as they were (same objects, same order)."""
        current = list(snap.pods_on[row].values())
        if [p.uid for p in current] == [p.uid for p in node_pods]:
            return
        for p in current:
            snap.remove_pod(p.uid)
        for p in node_pods:
            snap.add_pod(p)

    # ---- all nodes -------------------------------------------------------------------
    def dry_run_preemption(
        self,
        pod: Pod,
        snap: Snapshot,
        rows: np.ndarray,
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], dict[int, Status], list[str]]:
        """DryRunPreemption from ``offset`` (wrapping), stopping at ``num_candidates`` with one non-violating.

        Returns (non-violating then violating candidates, per-row statuses of failed nodes, errors).
        """
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[int, Status] = {}
        errors: list[str] = []
        n = len(rows)
        for i in range(n):
            row = int(rows[(offset + i) % n])
            victims, num_pdb, st = self.select_victims_on_node(pod, snap, row, pdbs)
            name = snap.nodes[row].name
            if st.ok and victims:
                cand = Candidate(name, victims, num_pdb)
                bucket = non_violating if num_pdb == 0 else violating
                if len(bucket) < num_candidates:  # candidateList drops adds beyond its size
                    bucket.append(cand)
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if st.ok:
                st = Status.error(f'expected at least one victim pod on node "{name}"')
            if st.code == Code.Error:
                errors.append(st.message)
            statuses[row] = st
        return non_violating + violating, statuses, errors
