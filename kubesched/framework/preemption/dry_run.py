"""The preemption dry run: which nodes could take the pod, and whom it would evict there.

Ports preemption.Evaluator's DryRunPreemption and DefaultPreemption.SelectVictimsOnNode. kube-scheduler copies NodeInfo and CycleState per
node; here victims are taken out of the live snapshot inside a trial (``Snapshot.trial``),
which puts them back. Given
the scheduling cycle's CycleState (the PostFilter's), each node's check works on a copy of it
that the PreFilter plugins' RemovePod/AddPod extensions keep up to date as victims are taken away
and given back, and Filter runs on that copy whatever PreFilter said, as upstream. Without one
(the extender's preemption verb), the profile's PreFilter is re-run on a fresh CycleState for
every check. When every PreFilter and Filter plugin reads only its own row, nodes are dry-run
together, with PreFilter re-run once (``_victims_batched``): the in-tree plugins that do keep
their state up to date through the extensions (InterPodAffinity, PodTopologySpread) read other
rows, so they are never batched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from kubesched.framework import cycle
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import Diagnosis, NodeFailures
from kubesched.framework.failures import PluginFailure, plugin_error, reword_error
from kubesched.framework.preemption.candidates import (
    Candidate,
    MoreImportantPodFunc,
    PodDisruptionBudget,
    filter_pods_with_pdb_violation,
    reprieve_in_turn,
    sort_by_importance,
)
from kubesched.framework.runtime import PreFiltered
from kubesched.framework.status import Code, Status
from kubesched.state.memo import NAMESPACES, NODES

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.handle import Handle
    from kubesched.framework.runtime import Framework
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


class NodeCheck:
    """One node's check in SelectVictimsOnNode: a copy of the cycle's CycleState, updated by the
    PreFilter plugins' AddPod/RemovePod extensions (those that did not Skip) as pods are taken off
    and put back, and RunFilterPluginsWithNominatedPods on it."""

    def __init__(self, fw: Framework, state: CycleState, pod: Pod, snap: Snapshot, row: int) -> None:
        self.fw, self.state, self.pod, self.snap, self.row = fw, state, pod, snap, row
        self.plugins = [pl for pl in fw.pre_filter if pl.name not in state.skip_filter]

    def extensions(self, point: str, other: Pod) -> None:
        """RunPreFilterExtensionRemovePod / AddPod for ``other``; an error raises PreFilterError."""
        for pl in self.plugins:
            fn = pl.remove_pod if point == "RemovePod" else pl.add_pod
            try:
                out = self.fw.call(pl, point, fn, self.state, self.pod, other, self.row, self.snap)
            except PluginFailure as e:
                raise PreFilterError(e.status) from e
            if isinstance(out, Status) and not out.ok:  # any other status is an error, as upstream
                raise PreFilterError(plugin_error(point, pl.name, out.message).status)

    def fits(self) -> Status:
        diag = Diagnosis()
        try:
            ok = self.fw.filter_rows(self.state, self.pod, self.snap, np.asarray([self.row], np.intp), diag)
        except PluginFailure as e:
            return Status(Code.Error, e.status.reasons, e.status.plugin)
        if bool(ok[0]):
            return Status()
        return diag.status_of(self.row) or Status(Code.Unschedulable)


class DryRun:
    """The victim search shared by preemption plugins and the extender (the owner supplies
    ``handle``, ``is_eligible_pod`` and ``more_important_pod``)."""

    handle: Handle | None
    is_eligible_pod: IsEligiblePodFunc
    more_important_pod: MoreImportantPodFunc

    # ---- one filter check ------------------------------------------------------------
    def _framework(self) -> Framework:
        fw = self.handle.framework if self.handle is not None else None
        if fw is None:
            raise PreFilterError(
                Status.error("preemption needs the profile's framework (handle.framework is unset)")
            )
        return fw

    def _pre_filter(self, pod: Pod, snap: Snapshot, ext: str = "RemovePod") -> tuple[CycleState, PreFiltered]:
        """The profile's PreFilter on the current snapshot; a PreFilter error raises PreFilterError,
        worded as upstream words the extension this re-run stands for (``ext``: RemovePod after
        victims were taken away, AddPod after one was given back)."""
        fw = self._framework()

        def run() -> tuple[CycleState, PreFiltered]:
            state = CycleState()
            try:
                pre = cycle.pre_filter(fw, state, pod, snap)
            except PluginFailure as e:
                raise PreFilterError(reword_error(e.status, "PreFilter", ext)) from e
            if pre.status.code == Code.Error:
                raise PreFilterError(reword_error(pre.status, "PreFilter", ext))
            return state, pre

        # When every PreFilter plugin reads only the pod (or takes no part), removing victims
        # cannot change its state: computed once per preemptor, while nodes stay put.
        if fw.row_local(pod, snap, fw.pre_filter):
            return snap.memo.get(("preemption/pre-filter", fw, pod), run, on=NODES | NAMESPACES)
        return run()

    def _run_filters(self, pod: Pod, snap: Snapshot, row: int, ext: str = "RemovePod") -> Status:
        """RunFilterPlugins on one node of the current snapshot (PreFilter re-run first).

        A PreFilter error raises PreFilterError; a Filter error is returned as an Error status.
        """
        state, pre = self._pre_filter(pod, snap, ext)
        if not pre.status.ok:
            return pre.status
        try:
            ok, diag = cycle.filter_nodes(self._framework(), state, pod, snap, np.asarray([row], np.intp), pre)
        except PluginFailure as e:
            return Status(Code.Error, e.status.reasons, e.status.plugin)
        if bool(ok[0]):
            return Status()
        return diag.status_of(row) or Status(Code.Unschedulable)

    def fits(self, pod: Pod, snap: Snapshot, row: int, ext: str = "RemovePod") -> Status:
        """RunFilterPluginsWithNominatedPods: the framework's filter_rows also checks the node
        with the pods of equal or higher priority nominated to it. ``ext``: see _pre_filter."""
        return self._run_filters(pod, snap, row, ext)

    # ---- one node --------------------------------------------------------------------
    def select_victims_on_node(
        self,
        pod: Pod,
        snap: Snapshot,
        row: int,
        pdbs: Sequence[PodDisruptionBudget],
        state: CycleState | None = None,
    ) -> tuple[list[Pod], int, Status]:
        """The fewest lower-priority pods to evict from ``row``; the snapshot is left unchanged.
        ``state``: the scheduling cycle's CycleState (see the module's docstring)."""
        node_pods = list(snap.pods_on[row].values())
        potential = [
            p for p in node_pods if p.priority < pod.priority and self.is_eligible_pod(snap, row, p, pod)
        ]
        if not potential:
            # The node is unchanged by preemption, so there is no point re-running filters.
            return [], 0, Status(Code.UnschedulableAndUnresolvable, (NO_VICTIMS,))
        try:
            node = None if state is None else NodeCheck(self._framework(), state.clone(), pod, snap, row)
            with snap.trial():  # the node gets its pods back, in their order
                return self._victims_on_node(pod, snap, row, pdbs, potential, node)
        except PreFilterError as e:
            return [], 0, e.status

    def _victims_on_node(
        self,
        pod: Pod,
        snap: Snapshot,
        row: int,
        pdbs: Sequence[PodDisruptionBudget],
        potential: list[Pod],
        node: NodeCheck | None,
    ) -> tuple[list[Pod], int, Status]:
        """select_victims_on_node's search: the potential victims taken off ``row``, then given
        back one by one, most important first, while the pod still fits."""

        def take(p: Pod) -> None:
            snap.remove_pod(p.uid)
            if node is not None:
                node.extensions("RemovePod", p)

        for p in potential:
            take(p)
        st = self.fits(pod, snap, row) if node is None else node.fits()
        if not st.ok:
            # Affinity of the preemptor to a victim is deliberately not considered.
            return [], 0, st
        ordered = sort_by_importance(potential, self.more_important_pod)
        violating, non_violating = filter_pods_with_pdb_violation(ordered, pdbs)
        victims: list[Pod] = []

        def reprieve(p: Pod) -> bool:
            snap.add_pod(p)
            if node is not None:
                node.extensions("AddPod", p)
            fits = (self.fits(pod, snap, row, "AddPod") if node is None else node.fits()).ok
            if not fits:  # a Filter error counts as not fitting
                take(p)
                victims.append(p)
            return fits

        num_violating = reprieve_in_turn(violating, non_violating, reprieve)
        if violating and non_violating:
            victims = sort_by_importance(victims, self.more_important_pod)
        return victims, num_violating, Status()

    # ---- all nodes -------------------------------------------------------------------
    def dry_run_preemption(
        self,
        pod: Pod,
        snap: Snapshot,
        rows: np.ndarray,
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
        state: CycleState | None = None,
    ) -> tuple[list[Candidate], dict[int, Status], list[str]]:
        """DryRunPreemption from ``offset`` (wrapping), stopping at ``num_candidates`` with one non-violating.
        ``state``: the scheduling cycle's CycleState, copied for each node.

        Returns (non-violating then violating candidates, per-row statuses of failed nodes, errors).
        """
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[int, Status] = {}
        errors: list[str] = []
        n = len(rows)
        ordered = rows[(offset + np.arange(n)) % n] if n else rows
        chunk = max(num_candidates, 64)
        batched = self._batchable(pod, snap)
        for start in range(0, n, chunk):
            part = ordered[start : start + chunk]
            results: Iterable[tuple[list[Pod], int, Status]] | None = None
            if batched:
                results = self._victims_batched(pod, snap, part, pdbs)
            if results is None:  # not batchable, or a Filter error: node by node (lazily), as upstream
                results = (self.select_victims_on_node(pod, snap, int(r), pdbs, state) for r in part)
            for row, (victims, num_pdb, st) in zip(part.tolist(), results, strict=False):
                name = snap.nodes[row].name
                if st.ok and victims:
                    cand = Candidate(name, victims, num_pdb)
                    bucket = non_violating if num_pdb == 0 else violating
                    if len(bucket) < num_candidates:  # candidateList drops adds beyond its size
                        bucket.append(cand)
                    if non_violating and len(non_violating) + len(violating) >= num_candidates:
                        return non_violating + violating, statuses, errors
                    continue
                if st.ok:
                    st = Status.error(f'expected at least one victim pod on node "{name}"')
                if st.code == Code.Error:
                    errors.append(st.message)
                statuses[row] = st
        return non_violating + violating, statuses, errors

    # ---- many nodes at once ----------------------------------------------------------
    def _batchable(self, pod: Pod, snap: Snapshot) -> bool:
        """Every PreFilter and Filter plugin judges a node by its own row only (or skips): then
        evicting on one node cannot change another node's verdict, and all nodes of a chunk can
        be dry-run together, one vectorised Filter pass per reprieve round."""
        fw = self.handle.framework if self.handle is not None else None
        if fw is None:
            return False
        return fw.row_local(pod, snap, (*fw.pre_filter, *fw.filter))

    def _victims_batched(
        self, pod: Pod, snap: Snapshot, rows: np.ndarray, pdbs: Sequence[PodDisruptionBudget]
    ) -> list[tuple[list[Pod], int, Status]] | None:
        """select_victims_on_node for every row, with the same results; None on a Filter error."""
        try:
            state, pre = self._pre_filter(pod, snap)
        except PreFilterError as e:
            return [([], 0, e.status)] * len(rows)
        fw = self._framework()
        out: list[tuple[list[Pod], int, Status]] = [([], 0, Status())] * len(rows)
        lists: dict[int, tuple[list[Pod], int]] = {}  # i -> (reprieve order, #violating first)
        try:
            with snap.trial():  # every node gets its pods back, in their order
                for i, row in enumerate(rows.tolist()):
                    node_pods = list(snap.pods_on[row].values())
                    potential = [
                        p for p in node_pods if p.priority < pod.priority and self.is_eligible_pod(snap, row, p, pod)
                    ]
                    if not potential:
                        out[i] = ([], 0, Status(Code.UnschedulableAndUnresolvable, (NO_VICTIMS,)))
                    elif not pre.status.ok:
                        out[i] = ([], 0, pre.status)
                    elif pre.names is not None and snap.nodes[row].name not in pre.names:
                        out[i] = ([], 0, pre.outside)
                    else:
                        ordered = sort_by_importance(potential, self.more_important_pod)
                        bad, good = filter_pods_with_pdb_violation(ordered, pdbs)
                        lists[i] = (bad + good, len(bad))
                        for p in potential:
                            snap.remove_pod(p.uid)
                idx = np.fromiter(lists, np.int64, len(lists))
                if idx.size:
                    ok, diag = cycle.filter_nodes(fw, state, pod, snap, rows[idx].astype(np.intp), pre)
                    failed = diag.statuses()
                    for i in idx[~ok].tolist():
                        out[i] = ([], 0, failed.get(int(rows[i])) or Status(Code.Unschedulable))
                        del lists[i]
                victims: dict[int, list[Pod]] = {i: [] for i in lists}
                violations = dict.fromkeys(lists, 0)
                k = 0
                while True:  # round k gives back each node's k-th pod, most important first
                    turn = [i for i, (order, _) in lists.items() if k < len(order)]
                    if not turn:
                        break
                    for i in turn:
                        snap.add_pod(lists[i][0][k])
                    sub = rows[np.asarray(turn)].astype(np.intp)
                    fits = fw.filter_rows(state, pod, snap, sub, None)
                    for i, fit in zip(turn, fits.tolist(), strict=True):
                        if not fit:
                            p = lists[i][0][k]
                            snap.remove_pod(p.uid)
                            victims[i].append(p)
                            if k < lists[i][1]:
                                violations[i] += 1
                    k += 1
                for i, (order, n_bad) in lists.items():
                    v = victims[i]
                    if 0 < n_bad < len(order):
                        v = sort_by_importance(v, self.more_important_pod)
                    out[i] = (v, violations[i], Status())
                return out
        except PluginFailure:
            return None
