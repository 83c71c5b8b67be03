"""RunFilterPluginsWithNominatedPods: a node that passed the filters must pass them again with
the pods of equal or higher priority nominated to it (upstream adds them to a copy of the node
and to the PreFilter state; here to the snapshot inside a trial, undone afterwards)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kubesched.framework.diagnosis import Diagnosis

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.interfaces import FilterPlugin
    from kubesched.framework.runtime import Framework
    from kubesched.state.snapshot import Snapshot


def recheck_with_nominated(
    fw: Framework,
    state: CycleState,
    pod: Pod,
    snap: Snapshot,
    rows: np.ndarray,
    alive: np.ndarray,
    diagnosis: Diagnosis | None,
    only: list[FilterPlugin] | None = None,
) -> None:
    """RunFilterPluginsWithNominatedPods: a node must also fit with the pods of equal or
    higher priority nominated to it (added to the snapshot and to the PreFilter state).
    ``only`` restricts the second pass as it restricted the first."""
    by_node: dict[str, list[Pod]] = {}
    for other in fw.handle.nominator.nominated.values():
        if other.uid != pod.uid and other.priority >= pod.priority and other.nominated_node_name in snap.row_of:
            by_node.setdefault(other.nominated_node_name, []).append(other)
    if not by_node:
        return
    todo = [i for i in np.nonzero(alive)[0].tolist() if snap.nodes[int(rows[i])].name in by_node]
    if not todo:
        return
    active_pre = [pl for pl in fw.pre_filter if pl.name not in state.skip_filter]
    if fw.row_local(pod, snap, (*active_pre, *fw.active_filters(state))):
        # Every verdict reads its own row only: add all nominated pods, check once.
        groups = [todo]
    else:
        groups = [[i] for i in todo]
    for group in groups:
        st2 = state.clone()
        with snap.trial():
            for i in group:
                row = int(rows[i])
                for other in by_node[snap.nodes[row].name]:
                    placed = other.with_node(snap.nodes[row].name)
                    snap.add_pod(placed)
                    for pl in active_pre:
                        fw.call(pl, "AddPod", pl.add_pod, st2, pod, placed, row, snap)
            idx = np.asarray(group)
            sub_diag = Diagnosis() if diagnosis is not None else None
            ok = fw.filter_rows(st2, pod, snap, rows[idx], sub_diag, nominated=False, only=only)
        if not ok.all():
            alive[idx[~ok]] = False
            if diagnosis is not None and sub_diag is not None:
                diagnosis.failures.extend(sub_diag.failures)
                diagnosis.unschedulable_plugins |= sub_diag.unschedulable_plugins
