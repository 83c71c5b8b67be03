"""NodeName: a pod that names its node (``spec.nodeName``) fits only that node."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kubesched.framework.interfaces import FilterPlugin, NodeLocal
from kubesched.framework.status import Code, FilterResult

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.state.snapshot import Snapshot

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


class NodeName(FilterPlugin, NodeLocal):
    """Filter only: v1.36 has no NodeName PreFilter (1.37 adds one, gated, for deferred resizes)."""

    name = NAME
    events_to_register = frozenset({"NodeAdd"})

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        """Unresolvable: no preemption makes another node carry the requested name."""
        if not pod.node_name:
            return FilterResult.all_pass(len(rows))
        target = snap.row_of.get(pod.node_name, -1)
        fail = np.asarray(rows) != target
        return FilterResult.from_mask(fail, ERR_REASON, Code.UnschedulableAndUnresolvable)
