"""Handle's waiting-pod API (upstream's IterateOverWaitingPods, GetWaitingPod, RejectWaitingPod)."""

from __future__ import annotations

from kubesched.api.objects import Pod
from kubesched.app import VirtualClock
from kubesched.cluster.memory import MemoryCluster
from kubesched.config.load import parse_config
from kubesched.framework.handle import Handle
from kubesched.framework.status import Code
from kubesched.framework.waiting import WaitingPod, WaitingPods
from kubesched.plugins import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.testing import build_snapshot, make_node, make_pod


def test_the_methods_belong_to_the_class_not_to_each_instance() -> None:
    h = Handle(build_snapshot([]))
    for name in ("iterate_over_waiting_pods", "get_waiting_pod", "reject_waiting_pod"):
        assert name in Handle.__dict__ and name not in vars(h)


def test_a_standalone_handle_has_its_own_empty_waiting_map_and_a_clock() -> None:
    h = Handle(build_snapshot([]))
    seen: list[WaitingPod] = []
    h.iterate_over_waiting_pods(seen.append)
    assert seen == [] and h.get_waiting_pod("x") is None and not h.reject_waiting_pod("x")
    assert isinstance(h.clock(), float)


def test_methods_act_on_the_given_waiting_map() -> None:
    waiting = WaitingPods()
    h = Handle(build_snapshot([]), waiting_pods=waiting, clock=lambda: 42.0)
    pod = Pod.parse(make_pod("p", uid="u1"))
    waiting.add(WaitingPod(pod, "n1", {"Gang": 10.0}, h.clock()))
    seen: list[str] = []
    h.iterate_over_waiting_pods(lambda wp: seen.append(wp.pod.uid))
    wp = h.get_waiting_pod("u1")
    assert seen == ["u1"] and wp is not None and wp.next_deadline() == 52.0
    assert h.reject_waiting_pod("u1") and wp.status is not None
    assert (wp.status.code, wp.status.message) == (Code.Unschedulable, "removed")


def test_every_profile_of_a_scheduler_shares_its_waiting_map_and_clock() -> None:
    reg = in_tree_registry(entry_points=False)
    cfg = parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "a"}, {"schedulerName": "b"}],
        },
        "t.yaml",
        reg.points_of,
    )
    clock = VirtualClock()
    sched = Scheduler(cfg, build_snapshot([make_node("n1")]), MemoryCluster(), reg, clock=clock)
    handles = [fw.handle for fw in sched.frameworks.values()]
    assert len(handles) == 2 and all(h.waiting_pods is sched.waiting for h in handles)
    clock.advance(7.0)
    assert [h.clock() for h in handles] == [7.0, 7.0]
