"""NodeResourcesBalancedAllocation: prefer nodes whose resource usage gets more even with the pod.

v1.36 scores the change in balance (kubernetes/kubernetes#135573): the standard deviation of
the used/allocatable fractions is computed with and without the pod, on the pods' real requests
(not the 100m/200Mi scoring defaults). Pods requesting none of the listed resources are skipped
at PreScore, so best-effort pods are not all drawn to the same node (#129138).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.config.args import plugin_args
from kubesched.framework.interfaces import PreScorePlugin, RowLocal, ScorePlugin
from kubesched.framework.status import Code, Status
from kubesched.plugins.noderesources.strategies import (
    allocation_matrices,
    balanced_resource_scorer,
    pod_request_list,
    resource_specs,
)

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.state.snapshot import Snapshot

NAME = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY = "PreScore" + NAME


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    pod_requests: np.ndarray

    def clone(self) -> _PreScoreState:
        return self


class BalancedAllocation(PreScorePlugin, ScorePlugin, RowLocal):
    """Score in [50, 100]: 75 = balance unchanged, higher when the pod evens the node out."""

    name = NAME
    events_to_register = frozenset({"NodeAdd"})

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        self.resources = resource_specs(plugin_args(NAME, self.args)["resources"])

    def _pod_requests(self, pod: Pod) -> np.ndarray:
        return pod_request_list(pod, self.resources, non_zero=False)

    def pre_score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> Status | None:
        """Skip best-effort pods (no request in any listed resource)."""
        reqs = self._pod_requests(pod)
        if not reqs.any():
            return Status(Code.Skip, plugin=NAME)
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(reqs))
        return None

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        s = state.read(PRE_SCORE_STATE_KEY)
        if isinstance(s, _PreScoreState):
            reqs = s.pod_requests
        else:
            reqs = self._pod_requests(pod)
            if not reqs.any():
                return np.zeros(len(rows), np.int64)
        requested, allocated, allocatable = allocation_matrices(
            snap, rows, self.resources, reqs, non_zero=False
        )
        return balanced_resource_scorer(requested, allocated, allocatable)
