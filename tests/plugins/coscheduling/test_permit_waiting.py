"""Permit Wait in the Scheduler (kubesched/framework/waiting.py), with small Permit plugins of our own."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from kubesched.api.objects import Pod
from kubesched.app import VirtualClock
from kubesched.cluster.memory import MemoryCluster
from kubesched.config.load import parse_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import PermitPlugin, ReservePlugin
from kubesched.framework.status import Code, Status
from kubesched.framework.waiting import WaitingPod, go_duration, timeout_message
from kubesched.plugins import in_tree_registry
from kubesched.scheduler import Scheduler, ScheduleResult
from kubesched.testing import build_snapshot, make_node, make_pod


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (10, "10s"), (60, "1m0s"), (90, "1m30s"), (3600, "1h0m0s"), (1.5, "1.5s"), (0.25, "250ms"), (900, "15m0s")],
)
def test_go_duration(seconds: float, text: str) -> None:
    assert go_duration(seconds) == text


def test_waiting_pod_first_verdict_wins() -> None:
    pod = Pod.parse(make_pod("p"))
    wp = WaitingPod(pod, "n", {"A": 5.0, "B": 10.0}, 100.0)
    assert wp.next_deadline() == 105.0 and not wp.expire(104.9)
    wp.allow("A")
    assert not wp.resolved and wp.get_pending_plugins() == ["B"] and wp.next_deadline() == 110.0
    assert wp.expire(110.0) and wp.status is not None
    assert (wp.status.code, wp.status.plugin, wp.status.message) == (
        Code.Unschedulable, "B", timeout_message("B", 10.0)
    )
    wp.allow("B")  # too late: the rejection stands
    assert wp.status.code == Code.Unschedulable
    ok = WaitingPod(pod, "n", {"A": 5.0}, 0.0)
    ok.allow("A")
    ok.reject("A", "late")
    assert ok.status is not None and ok.status.ok


class Barrier(PermitPlugin, ReservePlugin):
    """Waits until ``size`` pods are parked, then allows them all (like a tiny gang)."""

    name = "Barrier"
    size: ClassVar[int] = 2
    unreserved: ClassVar[list[str]] = []

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        waiting = self.handle.waiting_pods  # type: ignore[union-attr]
        if len(waiting) + 1 < self.size:
            return Status(Code.Wait), 30.0
        self.handle.iterate_over_waiting_pods(lambda wp: wp.allow(self.name))  # type: ignore[union-attr]
        return Status(), 0.0

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        Barrier.unreserved.append(pod.name)


class Slow(PermitPlugin):
    """Always waits 5s and never allows: its timeout is the first to pass."""

    name = "Slow"

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        return Status(Code.Wait), 5.0


class Boom(PermitPlugin):
    name = "Boom"

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        raise RuntimeError("kaput")


def scheduler(permit: list[str], pods: int = 2) -> tuple[Scheduler, MemoryCluster, VirtualClock, list[ScheduleResult]]:
    reg = in_tree_registry(entry_points=False)
    for cls in (Barrier, Slow, Boom):
        reg.register(cls)
    Barrier.unreserved = []
    prof: dict[str, Any] = {"schedulerName": "default-scheduler", "plugins": {"permit": {"enabled": [{"name": n} for n in permit]}}}
    if "Barrier" in permit:
        prof["plugins"]["reserve"] = {"enabled": [{"name": "Barrier"}]}
    cfg = parse_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [prof]}, "t.yaml", reg.points_of)
    snap = build_snapshot([make_node("n1", cpu="4", memory="4Gi")])
    cluster = MemoryCluster()
    clock = VirtualClock()
    sched = Scheduler(cfg, snap, cluster, reg, seed=1, clock=clock)
    done: list[ScheduleResult] = []
    sched.hooks.on_scheduled.append(done.append)
    sched.hooks.on_failed.append(done.append)
    for i in range(pods):
        sched.add_pending(Pod.parse(make_pod(f"p{i}", uid=f"p{i}", requests={"cpu": "1"})))
    return sched, cluster, clock, done


def test_waiting_pods_bind_when_allowed() -> None:
    sched, cluster, _, done = scheduler(["Barrier"])
    res = sched.schedule_one()
    assert res is not None and res.code == Code.Wait and res.node == "n1"
    assert cluster.bindings == {} and "p0" in sched.snapshot.pod_by_uid  # assumed, not bound
    sched.schedule_one()
    assert cluster.bindings == {"p0": "n1", "p1": "n1"}
    assert [r.pod.name for r in done] == ["p0", "p1"] and all(r.code == Code.Success for r in done)


def test_the_first_plugin_timeout_rejects_and_the_pod_is_forgotten_and_requeued() -> None:
    sched, cluster, clock, done = scheduler(["Slow", "Barrier"], pods=1)
    sched.schedule_one()
    wp = sched.waiting.get("p0")
    assert wp is not None and wp.waits == {"Slow": 5.0, "Barrier": 30.0}
    sched.run_until_idle(advance=clock.advance)
    assert clock.now >= 5.0 and cluster.bindings == {}
    assert done[0].message == "0/1 nodes are available: 1 rejected due to timeout after waiting 5s at plugin Slow."
    assert done[0].code == Code.Unschedulable and Barrier.unreserved[0] == "p0"
    assert "p0" not in sched.snapshot.pod_by_uid and sched.queue.contains("p0") and len(sched.waiting) == 0


def test_timeouts_fire_on_schedule_one_when_the_clock_has_moved() -> None:
    sched, _, clock, done = scheduler(["Slow"], pods=1)
    sched.schedule_one()
    clock.advance(4.9)
    assert sched.expire_waiting_pods() == 0
    clock.advance(5.0)
    assert sched.schedule_one() is not None or len(sched.waiting) == 0
    assert done and done[0].message.endswith("at plugin Slow.")


def test_a_permit_plugin_error_is_an_error_status_and_releases_the_pod() -> None:
    sched, cluster, _, done = scheduler(["Boom"], pods=1)
    res = sched.schedule_one()
    assert res is not None and res.code == Code.Error and res.node is None
    assert res.message == 'running Permit plugin "Boom": RuntimeError: kaput'
    assert "p0" not in sched.snapshot.pod_by_uid and cluster.bindings == {}


def test_handle_exposes_upstreams_waiting_pod_methods() -> None:
    sched, *_ = scheduler(["Barrier"], pods=1)
    sched.schedule_one()
    handle = sched.frameworks["default-scheduler"].handle
    wp = handle.get_waiting_pod("p0")  # type: ignore[attr-defined]
    assert wp is not None and wp.get_pod().node_name == "n1"
    assert handle.reject_waiting_pod("p0") and not handle.reject_waiting_pod("nope")  # type: ignore[attr-defined]
    assert len(sched.waiting) == 1  # rejected outside a cycle: finished on the next call
    assert sched.expire_waiting_pods() == 0  # no timeout, yet the rejected pod's cycle finishes
    assert len(sched.waiting) == 0 and "p0" not in sched.snapshot.pod_by_uid and sched.queue.contains("p0")


def test_a_pod_deleted_after_it_was_allowed_is_not_bound() -> None:
    sched, cluster, _, done = scheduler(["Barrier"], pods=1)
    sched.schedule_one()
    wp = sched.waiting.get("p0")
    assert wp is not None
    wp.allow("Barrier")  # allowed through the handle, its binding cycle not resumed yet
    sched.delete_pod(wp.get_pod())
    assert cluster.bindings == {} and "p0" not in sched.snapshot.pod_by_uid
    assert Barrier.unreserved == ["p0"] and done == []  # released, and not reported as a failure


def test_reserve_plugin_exception_is_an_error_for_the_pod() -> None:
    class BadReserve(ReservePlugin):
        name = "BadReserve"

        def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
            raise ValueError("no")

    reg = in_tree_registry(entry_points=False)
    reg.register(BadReserve)
    cfg = parse_config(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
         "profiles": [{"schedulerName": "default-scheduler", "plugins": {"reserve": {"enabled": [{"name": "BadReserve"}]}}}]},
        "t.yaml", reg.points_of,
    )
    sched = Scheduler(cfg, build_snapshot([make_node("n1", cpu="4", memory="4Gi")]), MemoryCluster(), reg, clock=VirtualClock())
    sched.add_pending(Pod.parse(make_pod("p0", uid="p0")))
    res = sched.schedule_one()
    assert res is not None and res.code == Code.Error and res.message == 'running Reserve plugin "BadReserve": ValueError: no'
    assert "p0" not in sched.snapshot.pod_by_uid
