"""NodeUnschedulable: keep pods off cordoned nodes (``spec.unschedulable``), as kube-scheduler does."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.taints import NO_SCHEDULE, Taint, tolerated
from kubesched.framework.interfaces import FilterPlugin, NodeLocal
from kubesched.framework.status import Code, FilterResult

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.state.snapshot import Snapshot

NAME = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"  # kept for parity; never produced
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

# A pod tolerating the cordon taint may also land on nodes marked spec.unschedulable.
_UNSCHEDULABLE_TAINT = Taint(TAINT_NODE_UNSCHEDULABLE, "", NO_SCHEDULE)


class NodeUnschedulable(FilterPlugin, NodeLocal):
    """Filter: reject ``spec.unschedulable`` nodes unless the pod tolerates the cordon taint."""

    name = NAME
    events_to_register = frozenset({"NodeAdd", "NodeUpdate"})

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        """Unresolvable: preempting pods never uncordons a node."""
        if tolerated(_UNSCHEDULABLE_TAINT, pod.tolerations):
            return FilterResult.all_pass(len(rows))
        fail = snap.unschedulable[rows]
        return FilterResult.from_mask(fail, ERR_REASON_UNSCHEDULABLE, Code.UnschedulableAndUnresolvable)
