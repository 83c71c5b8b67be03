"""The asynchronous binding cycle and the cache's event handling, without an API server.

Bindings are "submitted" into a list and their outcomes applied by hand, in the orders the
live runner can see them: bound, a failure after which the pod informer has the pod no more
unbound (``gone``: deleted or bound elsewhere), 500, watch confirmation first, deletion meanwhile.
"""

from __future__ import annotations

from kubesched.api.objects import Node, Pod
from kubesched.app import build_registry
from kubesched.config.load import DEFAULTS_SOURCE, parse_config
from kubesched.config.types import KIND, V1
from kubesched.framework.status import Code, Status
from kubesched.live.binding import InFlight, LiveScheduler
from kubesched.live.cache import ClusterCache
from kubesched.scheduler import ScheduleResult
from kubesched.state.snapshot import Snapshot
from kubesched.testing import make_node, make_pod


class Recorder:
    """A ClusterBackend that accepts everything (DefaultBinder's API call succeeds)."""

    def __init__(self) -> None:
        self.bound: list[tuple[str, str]] = []

    def bind(self, pod: Pod, node: str) -> None:
        self.bound.append((pod.key, node))

    def delete_pod(self, pod: Pod, reason: str) -> None:
        pass

    def set_nominated_node(self, pod: Pod, node: str) -> None:
        pass


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def setup(nodes: int = 1) -> tuple[LiveScheduler, ClusterCache, list[InFlight], list[ScheduleResult], Clock]:
    reg = build_registry([])
    cfg = parse_config({"apiVersion": V1, "kind": KIND, "profiles": [{"schedulerName": "kubesched"}]}, DEFAULTS_SOURCE, reg.points_of)
    submitted: list[InFlight] = []
    clock = Clock()
    sched = LiveScheduler(cfg, Snapshot(), Recorder(), reg, seed=1, clock=clock, submit=submitted.append)
    results: list[ScheduleResult] = []
    sched.hooks.on_scheduled.append(results.append)
    sched.hooks.on_failed.append(results.append)
    cache = ClusterCache(sched)
    for i in range(nodes):
        cache.apply("Node", None, Node.parse(make_node(f"n{i}", cpu="4", memory="8Gi")))
    return sched, cache, submitted, results, clock


def pending(name: str, cpu: str = "1", **kw: object) -> Pod:
    d = make_pod(name, requests={"cpu": cpu}, uid=name, spec={"schedulerName": "kubesched"}, **kw)
    return Pod.parse(d)


def bound_view(p: Pod, node: str) -> Pod:
    raw = {**p.raw, "spec": {**p.raw["spec"], "nodeName": node}}
    return Pod.parse(raw)


def schedule_all(sched: LiveScheduler) -> None:
    while sched.schedule_one() is not None:
        pass


def test_only_our_pending_pods_are_queued_and_bound_pods_occupy_nodes() -> None:
    sched, cache, submitted, _, _ = setup()
    other = Pod.parse(make_pod("other", uid="other", spec={"schedulerName": "default-scheduler"}))
    running = Pod.parse(make_pod("running", uid="running", requests={"cpu": "3"}, node="n0"))
    cache.apply("Pod", None, other)
    cache.apply("Pod", None, running)
    cache.apply("Pod", None, pending("mine", cpu="2"))
    assert [q.pod.name for q in sched.queue.pending_pods()] == ["mine"]
    assert "running" in sched.snapshot.pod_by_uid
    schedule_all(sched)
    assert submitted == []  # 3 of 4 CPUs taken: 2 more do not fit
    cache.apply("Pod", running, None)  # the bound pod leaves: AssignedPodDelete moves ours back
    sched.clock.now += 20  # past the backoff
    schedule_all(sched)
    assert [b.pod.name for b in submitted] == ["mine"]


def test_bound_outcome_fires_hooks_and_keeps_the_assumption() -> None:
    sched, cache, submitted, results, _ = setup()
    p = pending("a")
    cache.apply("Pod", None, p)
    schedule_all(sched)
    (b,) = submitted
    assert results == []  # nothing reported before the binding's outcome
    assert sched.snapshot.pod_by_uid["a"].node_name == "n0"  # assumed
    assert sched.complete(b, Status(), gone=False) == "bound"
    assert [r.node for r in results] == ["n0"] and results[0].duration > 0
    assert sched.snapshot.pod_by_uid["a"].node_name == "n0"
    # the stale pending view (e.g. our own status patch) must not queue it again
    cache.apply("Pod", p, pending("a"))
    assert not sched.queue.contains("a")
    cache.apply("Pod", p, bound_view(p, "n0"))  # the watch confirms
    assert sched.snapshot.pod_by_uid["a"].raw["spec"]["nodeName"] == "n0"
    assert not sched.in_flight


def test_failed_bind_forgets_and_requeues_with_backoff() -> None:
    sched, cache, submitted, results, clock = setup()
    cache.apply("Pod", None, pending("a"))
    schedule_all(sched)
    (b,) = submitted
    assert sched.complete(b, Status.error("binding rejected: 500 InternalError"), gone=False) == "requeued"
    assert "a" not in sched.snapshot.pod_by_uid  # forgotten
    assert results[-1].node is None and results[-1].message == "binding rejected: 500 InternalError"
    assert sched.queue.contains("a")
    assert sched.schedule_one() is None  # backing off
    clock.now += 2
    schedule_all(sched)
    assert len(submitted) == 2 and submitted[1].qpi.attempts == 2


def test_conflict_or_gone_drops_without_retry() -> None:
    sched, cache, submitted, _, clock = setup()
    cache.apply("Pod", None, pending("a"))
    schedule_all(sched)
    (b,) = submitted
    assert sched.complete(b, Status.error("binding rejected: 409 Conflict"), gone=True) == "dropped"
    assert "a" not in sched.snapshot.pod_by_uid
    clock.now += 60
    schedule_all(sched)
    assert len(submitted) == 1 and not sched.queue.contains("a")


def test_watch_confirmation_before_a_failed_outcome_keeps_the_pod_bound() -> None:
    sched, cache, submitted, _, clock = setup()
    p = pending("a")
    cache.apply("Pod", None, p)
    schedule_all(sched)
    (b,) = submitted
    cache.apply("Pod", p, bound_view(p, "n0"))  # bound after all (e.g. the response was lost)
    assert sched.complete(b, Status.error("binding rejected: timeout"), gone=False) == "dropped"
    assert sched.snapshot.pod_by_uid["a"].node_name == "n0"
    clock.now += 60
    schedule_all(sched)
    assert len(submitted) == 1


def test_deleted_while_in_flight() -> None:
    sched, cache, submitted, results, _ = setup()
    p = pending("a")
    cache.apply("Pod", None, p)
    schedule_all(sched)
    (b,) = submitted
    cache.apply("Pod", p, None)
    assert "a" not in sched.snapshot.pod_by_uid
    assert sched.complete(b, Status.error("binding rejected: 404 NotFound"), gone=True) == "dropped"
    assert results == [] and not sched.queue.contains("a")


def test_status_only_update_does_not_requeue_an_unschedulable_pod() -> None:
    sched, cache, submitted, results, _ = setup()
    p = pending("big", cpu="64")
    cache.apply("Pod", None, p)
    schedule_all(sched)
    assert results[-1].message.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert sched.queue.counts()["unschedulable"] == 1
    with_status = Pod.parse({**p.raw, "status": {"conditions": [{"type": "PodScheduled", "status": "False"}]}})
    cache.apply("Pod", p, with_status)
    assert sched.queue.counts()["unschedulable"] == 1  # our own condition patch: no retry
    assert sched.queue.info("big").pod is with_status
    relabeled = Pod.parse({**with_status.raw, "metadata": {**with_status.raw["metadata"], "labels": {"x": "y"}}})
    cache.apply("Pod", with_status, relabeled)
    assert sched.queue.counts()["unschedulable"] == 0  # a real change: retried


def test_node_heartbeat_keeps_cached_verdicts() -> None:
    sched, cache, _, _, _ = setup()
    gen = sched.snapshot.node_generation
    old = sched.snapshot.nodes[0]
    beat = make_node("n0", cpu="4", memory="8Gi")
    beat["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    cache.apply("Node", old, Node.parse(beat))
    assert sched.snapshot.node_generation == gen
    cache.apply("Node", sched.snapshot.nodes[0], Node.parse(make_node("n0", cpu="8", memory="8Gi")))
    assert sched.snapshot.node_generation == gen + 1
    assert sched.snapshot.alloc[0, sched.snapshot.res_index["cpu"]] == 8000


def test_priority_from_priority_class_when_admission_did_not_set_it() -> None:
    from kubesched.api.objects import PriorityClass

    sched, cache, _, _, _ = setup()
    cache.apply("PriorityClass", None, PriorityClass.parse({"metadata": {"name": "high"}, "value": 1000}))
    p = Pod.parse(make_pod("a", uid="a", spec={"schedulerName": "kubesched", "priorityClassName": "high"}))
    cache.apply("Pod", None, p)
    assert sched.queue.info("a").pod.priority == 1000


def test_pods_parked_at_permit_bind_asynchronously_once_allowed() -> None:
    """A gang of two: the first pod waits at Permit (assumed, not bound); the second allows both."""
    from kubesched.framework.interfaces import PermitPlugin

    class PairUp(PermitPlugin):
        name = "PairUp"

        def permit(self, state, pod, node_name):  # noqa: ANN001,ANN201
            waiting = []
            self.handle.iterate_over_waiting_pods(waiting.append)
            if not waiting:
                return Status(Code.Wait), 10.0
            for wp in waiting:
                wp.allow(self.name)
            return Status(), 0.0

    reg = build_registry([])
    reg.register(PairUp)
    doc = {
        "apiVersion": V1,
        "kind": KIND,
        "profiles": [{"schedulerName": "kubesched", "plugins": {"permit": {"enabled": [{"name": "PairUp"}]}}}],
    }
    cfg = parse_config(doc, DEFAULTS_SOURCE, reg.points_of)
    submitted: list[InFlight] = []
    sched = LiveScheduler(cfg, Snapshot(), Recorder(), reg, seed=1, clock=Clock(), submit=submitted.append)
    cache = ClusterCache(sched)
    cache.apply("Node", None, Node.parse(make_node("n0", cpu="4", memory="8Gi")))
    cache.apply("Pod", None, pending("a"))
    schedule_all(sched)
    assert submitted == [] and "a" in sched.waiting  # parked, its resources held
    assert sched.snapshot.pod_by_uid["a"].node_name == "n0"
    cache.apply("Pod", None, pending("b"))
    schedule_all(sched)
    assert sorted(b.pod.name for b in submitted) == ["a", "b"]
    assert [sched.complete(b, Status(), gone=False) for b in submitted] == ["bound", "bound"]
