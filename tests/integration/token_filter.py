"""preemption_test.go's tokenFilter, loaded with ``--plugin-path``: ``tokens`` is how many more
pods the cluster can host. Each Filter call takes a token (a node passes while tokens are left,
else it is Unschedulable, or UnschedulableAndUnresolvable with ``unresolvable``); AddPod and
RemovePod take and give back one, as preemption's dry run adds and removes pods. With
``enablePreFilter`` PreFilter rejects the pod once no token is left."""

from __future__ import annotations

from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import FilterPlugin, PreFilterPlugin
from kubesched.framework.status import Code, FilterResult, Status
from kubesched.state.snapshot import Snapshot


class TokenFilter(PreFilterPlugin, FilterPlugin):
    name = "filter-plugin"  # upstream's filterPluginName

    def __init__(self, args: dict[str, Any] | None = None, handle: Any = None) -> None:
        super().__init__(args, handle)
        self.tokens = int(self.args.get("tokens", 0))
        self.unresolvable = bool(self.args.get("unresolvable", False))
        self.enable_pre_filter = bool(self.args.get("enablePreFilter", False))

    def pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot) -> Status | None:
        if not self.enable_pre_filter or self.tokens > 0:
            return None
        return Status(Code.Unschedulable)

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        fail = np.zeros(len(rows), bool)
        for i in range(len(rows)):  # one token per node examined, in order
            if self.tokens > 0:
                self.tokens -= 1
            else:
                fail[i] = True
        code = Code.UnschedulableAndUnresolvable if self.unresolvable else Code.Unschedulable
        return FilterResult.from_mask(fail, f"can't fit {pod.name}", code)

    def add_pod(self, state: CycleState, pod: Pod, added: Pod, row: int, snap: Snapshot) -> None:
        self.tokens -= 1

    def remove_pod(self, state: CycleState, pod: Pod, removed: Pod, row: int, snap: Snapshot) -> None:
        self.tokens += 1
