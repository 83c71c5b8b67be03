"""A scheduling run the UI can look into: every attempt of every pod, and the cluster's changes in order.

``record_run`` drives a Session exactly as ``kubesched schedule`` does (same Scheduler, queue,
virtual clock, preemption) and listens to its hooks: each attempt is kept with its virtual time,
outcome, node, nomination, victims and the time each plugin took at each extension point; each
change to the cluster (a victim deleted, a pod bound) is one step of ``ops``. An attempt records
how many steps had happened before it, so the decision view can show the cluster as that attempt
saw it (``kubesched.ui.timeline``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from kubesched.app import Session
from kubesched.scheduler import ScheduleResult
from kubesched.ui.points import RunResults
from kubesched.ui.timeline import BIND, DELETE, Step

#: attempt outcomes
SCHEDULED, UNSCHEDULABLE, ERROR, WAITING = "scheduled", "unschedulable", "error", "waiting"


@dataclass
class Attempt:
    attempt: int  # 1-based, per pod
    step: int  # cluster changes (``Run.ops``) that happened before this attempt
    time: float  # the run's clock (seconds; offline runs use a virtual clock)
    outcome: str
    node: str | None = None
    message: str | None = None
    nominated_node: str | None = None
    victims: list[dict[str, str]] = field(default_factory=list)
    duration_ms: float = 0.0
    # extension point -> plugin -> milliseconds spent in this attempt
    plugin_ms: dict[str, dict[str, float]] = field(default_factory=dict)
    # the pod's results at PostFilter, Reserve, Permit, PreBind and Bind (``points``); None: the
    # source did not record them (a simulation's attempts.csv)
    results: list[dict[str, Any]] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "attempt": self.attempt,
            "step": self.step,
            "time": self.time,
            "outcome": self.outcome,
            "node": self.node,
            "message": self.message,
            "nominated_node": self.nominated_node,
            "victims": self.victims,
            "duration_ms": round(self.duration_ms, 3),
            "plugin_ms": {p: {k: round(v, 4) for k, v in d.items()} for p, d in self.plugin_ms.items()},
            "results": self.results,
        }


@dataclass(frozen=True)
class Removal:
    """A bound pod's end other than completing: ``how`` is "preempted" or "evicted"."""

    how: str
    time: float
    node: str
    by: str | None = None  # the preemptor's key, when known
    attempt: int | None = None  # the preemptor's attempt that chose the victims
    message: str = ""  # the run's own words (simulations: events.csv's message)

    def describe(self) -> str:
        by = f" by {self.by}" + (f" (its attempt {self.attempt})" if self.attempt else "") if self.by else ""
        tail = f": {self.message}" if self.message else ""
        return f"{self.how}{by} at t = {self.time:g} s, from {self.node}{tail}"


def removals(attempts: dict[str, list[Attempt]]) -> dict[str, Removal]:
    """The victims of the run's preemptions, by key: a pod some attempt chose as a victim and
    that no attempt placed again afterwards (the run deletes victims; nothing re-creates them)."""
    out: dict[str, Removal] = {}
    for key, tries in attempts.items():
        for a in tries:
            for v in a.victims:
                if not any(t.step > a.step and t.outcome == SCHEDULED for t in attempts.get(v["pod"], [])):
                    out[v["pod"]] = Removal("preempted", a.time, v["node"], by=key, attempt=a.attempt)
    return out


@dataclass
class Run:
    attempts: dict[str, list[Attempt]] = field(default_factory=dict)  # pod key -> attempts in order
    ops: list[Step] = field(default_factory=list)  # the cluster's changes, in order
    placements: list[dict[str, Any]] = field(default_factory=list)  # `schedule -o json`'s placements
    skipped: list[dict[str, Any]] = field(default_factory=list)  # and its skipped pods

    def final_node(self, key: str) -> str | None:
        tries = self.attempts.get(key)
        return tries[-1].node if tries and tries[-1].outcome == SCHEDULED else None


class _PluginClock:
    """Framework observer: sums plugin time per extension point until taken."""

    def __init__(self) -> None:
        self.acc: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))

    def __call__(self, plugin: str, point: str, _code: str, seconds: float) -> None:
        self.acc[point][plugin] += seconds * 1000.0

    def take(self) -> dict[str, dict[str, float]]:
        out = {p: dict(d) for p, d in self.acc.items()}
        self.acc.clear()
        return out


def record_run(s: Session) -> Run:
    """Schedule every pending pod of ``s`` as `kubesched schedule` does (``batch.schedule_all``),
    keeping every attempt besides the final placements (the session is consumed)."""
    from kubesched.batch import schedule_all

    sched = s.scheduler
    run = Run()
    clock = _PluginClock()
    results = RunResults()
    for fw in sched.frameworks.values():
        fw.add_observer(clock)
        fw.add_recorder(results)
    deleted_seen = len(s.cluster.deleted)

    def record(res: ScheduleResult) -> None:
        # The run is synchronous: pods deleted since the last hook were this attempt's victims.
        nonlocal deleted_seen
        key = res.pod.key
        step = len(run.ops)
        gone = s.cluster.deleted[deleted_seen:]
        deleted_seen = len(s.cluster.deleted)
        victims = [{"pod": v.key, "node": v.node_name} for v in gone]
        run.ops.extend(Step(DELETE, v.key, v) for v in gone)
        if res.node is not None:
            bound = sched.snapshot.pod_by_uid.get(res.pod.uid) or res.pod.with_node(res.node)
            run.ops.append(Step(BIND, key, bound))
            outcome = SCHEDULED
        else:
            outcome = ERROR if res.code.name == "Error" else WAITING if res.code.name == "Wait" else UNSCHEDULABLE
        tries = run.attempts.setdefault(key, [])
        fw = sched.frameworks[res.pod.scheduler_name]
        tries.append(
            Attempt(
                attempt=len(tries) + 1,
                step=step,
                time=float(s.clock.now),
                outcome=outcome,
                node=res.node,
                message=None if res.node else res.message,
                nominated_node=res.nominated_node or None,
                victims=victims,
                duration_ms=res.duration * 1000.0,
                plugin_ms=clock.take(),
                results=results.take(res.pod, fw, reached_permit=outcome in (SCHEDULED, WAITING)),
            )
        )

    sched.hooks.on_scheduled.append(record)
    sched.hooks.on_failed.append(record)
    clock.take()
    batch = schedule_all(s)
    run.placements, run.skipped = batch.placements, batch.skipped
    return run
