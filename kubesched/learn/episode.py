"""One FGD-protocol run, decision by decision: the loop the environment steps through.

The run is the protocol's (``kubesched.experiment.protocol``): pods one at a time through the real
``Scheduler`` with the base policy's configuration, no retries, a pod that fits nowhere dropped
for good. Each pod's scheduling cycle is split at host selection: ``Scheduler.propose`` gives the
feasible nodes and their scores, the episode ranks them and builds the observation, and
``Scheduler.commit`` places the pod on the candidate the agent picks (candidate 0 is the base
policy's choice), through Reserve (the GPU index) and Bind like any other placement.

A decision is a pod with at least two feasible nodes; pods with one or none go through on
their own. The reward of a step is minus the GPUs (milli / 1000) requested by the pods that fail
before the next decision, so an episode's return is minus the GPUs that failed up to the horizon.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kubesched.api.objects import Pod
from kubesched.experiment.protocol import POLICY_WEIGHT, Prepared, RunResult, build_scheduler
from kubesched.framework.cycle import ScheduleResult
from kubesched.gpu.metrics import GpuMetricsTracker
from kubesched.gpu.model import pod_gpu_ask
from kubesched.plugins.learned.features import CandidateFeatures
from kubesched.scheduler import Attempt
from kubesched.state.snapshot import Snapshot


@dataclass
class Decision:
    pod: Pod
    obs: np.ndarray
    mask: np.ndarray
    rows: np.ndarray  # candidate snapshot rows, best first by the base policy
    attempt: Attempt  # the pod's proposed scheduling attempt, committed by the action

    @classmethod
    def of(cls, features: CandidateFeatures, snap: Snapshot, attempt: Attempt, weight: float) -> Decision:
        """The observation of a proposed attempt with two or more feasible nodes (their scores
        divided by the base policy's ``weight``)."""
        scores = attempt.scores
        assert scores is not None
        obs, mask, rows = features.observe(attempt.pod, snap, scores.rows, scores.total / weight)
        return cls(attempt.pod, obs, mask, rows, attempt)

    def node(self, snap: Snapshot, action: int) -> tuple[str, bool]:
        """The node of candidate ``action`` (candidate 0's when outside the feasible ones), and
        whether the action was valid."""
        valid = 0 <= action < len(self.rows)
        return snap.nodes[int(self.rows[action if valid else 0])].name, valid


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
        frag: bool = False,
    ) -> None:
        self.features = features
        self.pods = prep.pods
        self.sched = build_scheduler(prep.nodes, base, prep.seed, prep.typical, config=config)
        self.snap = self.sched.snapshot
        # ``frag``: follow FGD's fragmentation of the typical pods too (``frag_milli``)
        self.tracker = GpuMetricsTracker(self.snap, prep.typical if frag else None)
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
        self._failed_at_act = 0  # milli of a decided pod whose binding failed: charged to the next advance
        self._weight = POLICY_WEIGHT if config is None else 1

    @property
    def done(self) -> bool:
        return self.pending is None and (
            self.i >= len(self.pods) or self.arrived * 100 > self.horizon * self.capacity
        )

    @property
    def frag_milli(self) -> float:
        """FGD's fragmentation of the cluster now (the sum over nodes of the GPU milli the typical
        pods cannot use, as the protocol's curves count it); 0 unless made with ``frag``."""
        return float(self.tracker.update().frag_milli)

    def _record(self, placed: bool) -> None:
        self.placed.append(placed)
        self.events.append((self.arrived, self.tracker.update().allocated_milli))

    def _settle(self, pod: Pod, res: ScheduleResult | None) -> int:
        """Record a pod's outcome; the GPU milli that failed (a pod that fits nowhere is dropped)."""
        if res is not None and res.node is not None:
            self._record(True)
            return 0
        self.sched.delete_pod(pod)
        self._record(False)
        ask = pod_gpu_ask(pod)
        return ask.total_milli if ask else 0

    def advance(self) -> int:
        """Run pods until a decision is pending or the run is done; the GPU milli that failed."""
        failed, self._failed_at_act = self._failed_at_act, 0
        while self.pending is None and not self.done:
            pod = self.pods[self.i]
            self.i += 1
            ask = pod_gpu_ask(pod)
            self.arrived += ask.total_milli if ask else 0
            self.sched.add_pending(pod)
            a = self.sched.propose()
            if a is not None and a.rows.size > 1:
                self.pending = Decision.of(self.features, self.snap, a, self._weight)
            else:
                failed += self._settle(pod, None if a is None else self.sched.commit(a))
        self.failed_milli += failed
        return failed

    def act(self, action: int) -> bool:
        """Place the pending pod on candidate ``action``; whether the action was valid."""
        d = self.pending
        assert d is not None, "no decision pending"
        node, valid = d.node(self.snap, action)
        res = self.sched.commit(d.attempt, node)
        self.pending = None
        self.decisions += 1
        self._failed_at_act = self._settle(d.pod, res)  # a binding that failed: the pod is dropped
        return valid

    def result(self) -> RunResult:
        """The run so far as the protocol's RunResult (curves, unallocated at a level)."""
        ev = np.asarray(self.events, np.int64).reshape(-1, 2)
        n = len(ev)
        placed = np.asarray(self.placed, bool)
        idle = self.capacity - ev[:, 1]
        return RunResult("learned", self.seed, self.capacity, ev[:, 0], ev[:, 1], idle, np.zeros(n), placed, [None] * n)

