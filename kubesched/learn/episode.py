"""One FGD-protocol run, decision by decision: the loop the environment steps through.

The run is the protocol's (``kubesched.experiment.protocol``): pods one at a time through the real
``Scheduler`` with the base policy's configuration, no retries, a pod that fits nowhere dropped
for good. The only change is at host selection: ``DecisionScheduler.select_host`` hands the
cycle's scores to the episode, which ranks the feasible nodes, builds the observation and lets
the base policy's choice (candidate 0) go through. When the agent then picks another candidate,
the pod is deleted and scheduled again with that node chosen: the state after a delete is the
state before the bind, so the result is the same as if that node had been picked in the first
place, and every placement still goes through Filter, Reserve (the GPU index) and Bind.

A decision is a pod with at least two feasible nodes; pods with one or none go through on
their own. The reward of a step is minus the GPUs (milli / 1000) requested by the pods that fail
before the next decision, so an episode's return is minus the GPUs that failed up to the horizon.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kubesched.api.objects import Pod
from kubesched.experiment.protocol import POLICY_WEIGHT, Prepared, RunResult, build_scheduler
from kubesched.framework.cycle import ScheduleResult
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.runtime import Framework, Scores
from kubesched.gpu.metrics import GpuMetricsTracker
from kubesched.gpu.model import pod_gpu_ask
from kubesched.plugins.learned.features import CandidateFeatures
from kubesched.scheduler import Scheduler


class DecisionScheduler(Scheduler):
    """A Scheduler whose host selection asks ``chooser(pod, scores)`` first (None: the usual
    choice)."""

    chooser: Callable[[Pod, Scores], int | None] | None = None
    _pod: Pod | None = None  # the pod of the cycle in progress

    def schedule_pod(self, fw: Framework, state: CycleState, pod: Pod) -> ScheduleResult:
        self._pod = pod
        return super().schedule_pod(fw, state, pod)

    def select_host(self, scores: Scores) -> int:
        if self.chooser is not None and self._pod is not None:
            row = self.chooser(self._pod, scores)
            if row is not None:
                return row
        return super().select_host(scores)


@dataclass
class Decision:
    pod: Pod
    obs: np.ndarray
    mask: np.ndarray
    rows: np.ndarray  # candidate snapshot rows, best first by the base policy
    annotations: dict[str, str]  # the pod's annotations before the cycle wrote its GPU index


class Episode:
    """Steps one prepared run. ``advance()`` runs pods until a decision is pending or the run ends
    (arrived % above ``horizon``, or no pods left); ``act(i)`` places the pending pod on candidate
    ``i`` (an index outside the feasible candidates means candidate 0, the base policy's)."""

    def __init__(
        self,
        prep: Prepared,
        features: CandidateFeatures,
        *,
        base: str = "FGD",
        horizon: float = 100.5,
        config: dict | None = None,
    ) -> None:
        self.features = features
        self.pods = prep.pods
        self.sched = build_scheduler(
            prep.nodes, base, prep.seed, prep.typical, config=config, scheduler_cls=DecisionScheduler
        )
        self.sched.chooser = self._choose
        self.snap = self.sched.snapshot
        self.tracker = GpuMetricsTracker(self.snap, None)
        self.capacity = self.tracker.update().capacity_milli
        self.horizon = horizon
        self.seed = prep.seed
        self.i = 0
        self.arrived = 0
        self.events: list[tuple[int, int]] = []  # (arrived, allocated milli) after each pod
        self.placed: list[bool] = []
        self.failed_milli = 0
        self.decisions = 0
        self.pending: Decision | None = None
        self._annotations: dict[str, str] = {}
        self._forced: int | None = None
        self._weight = POLICY_WEIGHT if config is None else 1

    @property
    def done(self) -> bool:
        return self.pending is None and (
            self.i >= len(self.pods) or self.arrived * 100 > self.horizon * self.capacity
        )

    def _choose(self, pod: Pod, scores: Scores) -> int | None:
        if self._forced is not None:
            return self._forced
        obs, mask, rows = self.features.observe(pod, self.snap, scores.rows, scores.total / self._weight)
        self.pending = Decision(pod, obs, mask, rows, self._annotations)
        return int(rows[0])

    def _record(self, placed: bool) -> None:
        self.placed.append(placed)
        self.events.append((self.arrived, self.tracker.update().allocated_milli))

    def advance(self) -> int:
        """Run pods until a decision is pending or the run is done; the GPU milli that failed."""
        failed = 0
        while self.pending is None and not self.done:
            pod = self.pods[self.i]
            self.i += 1
            ask = pod_gpu_ask(pod)
            self.arrived += ask.total_milli if ask else 0
            self._annotations = pod.annotations
            self.sched.add_pending(pod)
            res = self.sched.schedule_one()
            if res is None or res.node is None:
                self.sched.delete_pod(pod)
                self.pending = None  # a decision whose binding failed is no decision
                failed += ask.total_milli if ask else 0
                self._record(False)
            elif self.pending is None:
                self._record(True)
        self.failed_milli += failed
        return failed

    def act(self, action: int) -> bool:
        """Place the pending pod on candidate ``action``; whether the action was valid."""
        d = self.pending
        assert d is not None, "no decision pending"
        valid = 0 <= action < len(d.rows)
        if valid and action != 0:
            pod = d.pod
            self.sched.delete_pod(pod)
            pod.annotations = d.annotations
            self._forced = int(d.rows[action])
            try:
                self.sched.add_pending(pod)
                res = self.sched.schedule_one()
            finally:
                self._forced = None
            if res is None or res.node != self.snap.nodes[int(d.rows[action])].name:
                raise RuntimeError(f"pod {pod.uid}: the chosen feasible node did not take it")
        self.pending = None
        self.decisions += 1
        self._record(True)
        return valid

    def result(self) -> RunResult:
        """The run so far as the protocol's RunResult (curves, unallocated at a level)."""
        ev = np.asarray(self.events, np.int64).reshape(-1, 2)
        n = len(ev)
        placed = np.asarray(self.placed, bool)
        idle = self.capacity - ev[:, 1]
        return RunResult("learned", self.seed, self.capacity, ev[:, 0], ev[:, 1], idle, np.zeros(n), placed, [None] * n)

