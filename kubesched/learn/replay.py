"""One time-mode replay, decision by decision: the simulator's engine (``kubesched.sim.engine``,
what ``kubesched simulate --mode time`` runs) with the base policy's configuration, stopped at
every host selection.

Pods arrive at their trace times, wait in the real scheduling queue (backoff, the unschedulable
pool, retries on cluster events), run for their trace duration once bound and then free their
resources. The engine's ``decisions()`` stops the replay at each pod with a choice to make,
before its host is chosen; the episode builds the observation there and commits the pod's
attempt to the node the agent picks (``Scheduler.commit``), and the replay goes on.

A decision is a pod with at least two feasible nodes (the cycle picks the only one itself). The
cost of a step is the GPU-hours pods spent pending (GPUs asked x hours waited) since the previous
decision, so an episode's return is minus the GPU-weighted waiting time of the whole replay. A
pod that never gets a node waits until the end of the replay.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.config import parse_config
from kubesched.experiment.protocol import POLICY_WEIGHT, policy_config, prepare
from kubesched.learn.data import Instance, load
from kubesched.learn.episode import Decision
from kubesched.plugins import in_tree_registry
from kubesched.plugins.learned.features import CandidateFeatures
from kubesched.scheduler import Attempt
from kubesched.sim.engine import Engine, SimOptions
from kubesched.sim.states import QUEUED, WAITING
from kubesched.sim.workload import Workload
from kubesched.trace.openb import check_fits

HOUR = 3600.0


@dataclass(frozen=True)
class Replay:
    """What one time-mode episode replays: the workload and the base policy's configuration."""

    workload: Workload
    config: dict[str, Any]
    seed: int


def prepare_replay(inst: Instance, seed: int, speedup: float = 1.0) -> Replay:
    """The instance's pods in trace order at their trace times (``creation_time / speedup``; the
    run lengths are kept), on its nodes in the protocol's seeded order (the order that breaks
    score ties). Pods asking for more GPUs than any node of the instance has are left out."""
    if not speedup > 0:
        raise ValueError("speedup must be greater than 0")
    nodes, tp = load(inst)
    tp = check_fits(nodes, tp, skip_invalid=True)
    if not tp.pods:
        raise ValueError(f"trace {inst.trace}: no pod fits the instance's nodes")
    prep = prepare(tp, nodes, seed, tune=0)  # only the node order and the typical pods are used
    t0 = min(float(c) for c in tp.creation_time)
    arrival = [(float(c) - t0) / speedup for c in tp.creation_time]
    duration: list[float | None] = [
        None if d is None else max(0.0, float(d) - float(c)) for c, d in zip(tp.creation_time, tp.deletion_time, strict=True)
    ]
    wl = Workload(prep.nodes, list(tp.pods), arrival, duration, source=f"{inst.trace} on {inst.nodes}")
    return Replay(wl, policy_config("FGD", prep.typical), seed)


class ReplayEpisode:
    """Steps one time-mode replay. ``advance()`` runs until a decision is pending or the replay
    ends and returns the GPU-hours spent pending since the last call; ``act(i)`` places the
    pending pod on candidate ``i`` (an index outside the feasible candidates means candidate 0,
    the base policy's). ``close()`` drops a replay left unfinished."""

    def __init__(self, replay: Replay, features: CandidateFeatures) -> None:
        self.features = features
        self.seed = replay.seed
        registry = in_tree_registry(entry_points=False)
        config = parse_config(replay.config, "policy FGD", registry.points_of)
        opts = SimOptions(mode="time", seed=replay.seed, tie_break="first", record_events=False)
        self.engine = Engine(config, replay.workload, registry, opts)
        self.snap = self.engine.snap
        self.gpu = self.engine.gpu_req.astype(np.float64) / 1000  # GPUs asked, per pod
        self.pending: Decision | None = None
        self.decisions = 0
        self.done = False
        self.waited = 0.0  # GPU-hours pending, up to the last decision
        self._steps: Iterator[Attempt] | None = None

    def advance(self) -> float:
        """Run until a decision is pending or the replay is done; the GPU-hours pods spent pending
        since the previous call."""
        if self.done or self.pending is not None:
            return 0.0
        if self._steps is None:
            self._steps = self.engine.decisions()
        attempt = next(self._steps, None)
        if attempt is None:
            self.done = True
        else:
            self.pending = Decision.of(self.features, self.snap, attempt, POLICY_WEIGHT)
        before, self.waited = self.waited, self.pending_gpu_hours()
        return self.waited - before

    def act(self, action: int) -> bool:
        """Place the pending pod on candidate ``action``; whether the action was valid."""
        d = self.pending
        assert d is not None, "no decision pending"
        node, valid = d.node(self.snap, action)
        self.engine.sched.commit(d.attempt, node)
        self.pending = None
        self.decisions += 1
        return valid

    def close(self) -> None:
        """Drop an unfinished replay (nothing to do once it is done)."""
        if self._steps is not None:
            self._steps.close()
        self.pending = None
        self.done = True

    def pending_gpu_hours(self) -> float:
        """GPUs asked x hours pending, summed over the pods that arrived, up to now: a bound pod
        waited until its (last) binding, a withdrawn or failed one until it left, a queued one
        until now."""
        eng = self.engine
        now = eng.clock.now
        state = np.asarray(eng.state, np.int8)
        arrival = np.asarray(eng.arrival, np.float64)
        bound = np.asarray(eng.bind_time, np.float64)
        left = np.where(np.isnan(bound), np.asarray(eng.end_time, np.float64), bound)
        left = np.where((state == QUEUED) | np.isnan(left), now, left)
        arrived = state != WAITING
        return float((self.gpu[arrived] * (left[arrived] - arrival[arrived])).sum()) / HOUR

    def summary(self) -> dict[str, float]:
        """The replay's time-mode figures: mean and peak GPU allocation %, pods that never got a node."""
        eng = self.engine
        state = np.asarray(eng.state, np.int8)
        arrived = state != WAITING
        never = arrived & np.isnan(np.asarray(eng.bind_time, np.float64))
        return {
            "gpu_allocation_mean_pct": eng.totals.mean().gpu if eng.totals.span else 0.0,
            "gpu_allocation_peak_pct": eng.totals.peak.gpu,
            "pending_gpu_hours": self.pending_gpu_hours(),
            "unplaced_pods": int(never.sum()),
            "sim_time_s": eng.clock.now - eng.t_start,
        }
