"""DefaultPreemption and pods waiting at Permit: a waiting victim is rejected ("preempted") and
requeued, not deleted through the API (upstream's prepareCandidate)."""

from __future__ import annotations

from typing import ClassVar

from kubesched.api.objects import Pod
from kubesched.app import VirtualClock
from kubesched.cluster.memory import MemoryCluster
from kubesched.config.load import parse_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import PermitPlugin, ReservePlugin
from kubesched.framework.status import Code, Status
from kubesched.plugins import in_tree_registry
from kubesched.scheduler import Scheduler, ScheduleResult
from kubesched.testing import build_snapshot, make_node, make_pod


class HoldLabelled(PermitPlugin, ReservePlugin):
    """Pods labelled ``hold`` wait at Permit (like a gang member short of its quorum)."""

    name = "HoldLabelled"
    unreserved: ClassVar[list[str]] = []

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        return (Status(Code.Wait), 300.0) if "hold" in pod.labels else (Status(), 0.0)

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        HoldLabelled.unreserved.append(pod.name)


def _scheduler(running: list[dict]) -> tuple[Scheduler, MemoryCluster, VirtualClock, list[ScheduleResult]]:
    reg = in_tree_registry(entry_points=False)
    reg.register(HoldLabelled)
    HoldLabelled.unreserved = []
    plugins = {"permit": {"enabled": [{"name": "HoldLabelled"}]}, "reserve": {"enabled": [{"name": "HoldLabelled"}]}}
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}],
    }
    cfg = parse_config(doc, "t.yaml", reg.points_of)
    snap = build_snapshot([make_node("n1", cpu="2", memory="4Gi")], running)
    cluster = MemoryCluster()
    clock = VirtualClock()
    sched = Scheduler(cfg, snap, cluster, reg, seed=1, clock=clock)
    done: list[ScheduleResult] = []
    sched.hooks.on_scheduled.append(done.append)
    sched.hooks.on_failed.append(done.append)
    return sched, cluster, clock, done


def _pod(name: str, prio: int, cpu: str = "2", **kw: object) -> Pod:
    return Pod.parse(make_pod(name, uid=name, priority=prio, requests={"cpu": cpu}, **kw))


def test_a_waiting_victim_is_rejected_and_requeued_not_deleted() -> None:
    sched, cluster, clock, done = _scheduler([])
    sched.add_pending(_pod("low", 0, labels={"hold": "yes"}))
    res = sched.schedule_one()
    assert res is not None and res.code == Code.Wait and "low" in sched.waiting
    sched.add_pending(_pod("high", 100))
    res = sched.schedule_one()
    assert res is not None and res.node is None and res.nominated_node == "n1"
    # the victim was not deleted through the API: its parked binding cycle released it instead
    assert cluster.deleted == [] and not any(e.reason == "Preempted" for e in cluster.events)
    assert len(sched.waiting) == 0 and HoldLabelled.unreserved == ["low"]
    assert "low" not in sched.snapshot.pod_by_uid and sched.queue.contains("low")
    low = next(r for r in done if r.pod.name == "low")
    assert low.code == Code.Unschedulable and low.message == "0/1 nodes are available: 1 preempted."
    clock.advance(30.0)
    sched.run_until_idle(advance=clock.advance)
    assert cluster.bindings == {"high": "n1"}
    assert sched.queue.contains("low") and "low" not in cluster.bindings  # waits for room again


def test_a_running_victim_is_still_deleted() -> None:
    running = make_pod("low", uid="low", priority=0, requests={"cpu": "2"}, node="n1")
    sched, cluster, clock, _ = _scheduler([running])
    sched.add_pending(_pod("high", 100))
    res = sched.schedule_one()
    assert res is not None and res.nominated_node == "n1"
    assert [p.name for p in cluster.deleted] == ["low"] and "low" not in sched.snapshot.pod_by_uid
    clock.advance(30.0)
    sched.run_until_idle(advance=clock.advance)
    assert cluster.bindings == {"high": "n1"}
