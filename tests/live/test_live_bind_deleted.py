"""LiveScheduler keeps the base class's binding checks: a pod deleted while it waited at Permit,
or after its waiting plugins allowed it, is forgotten (Unreserve) and never handed to a binder."""

from __future__ import annotations

from typing import ClassVar

from kubesched.api.objects import Node, Pod
from kubesched.app import build_registry
from kubesched.config.load import DEFAULTS_SOURCE, parse_config
from kubesched.config.types import KIND, V1
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import PermitPlugin, ReservePlugin
from kubesched.framework.status import Code, Status
from kubesched.live.binding import InFlight, LiveScheduler
from kubesched.live.cache import ClusterCache
from kubesched.state.snapshot import Snapshot
from kubesched.testing import make_node, make_pod


class Hold(PermitPlugin, ReservePlugin):
    """Every pod waits at Permit (60 s); Unreserve is recorded."""

    name = "Hold"
    unreserved: ClassVar[list[str]] = []

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        return Status(Code.Wait), 60.0

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        Hold.unreserved.append(pod.name)


class NoBinds:
    """A ClusterBackend that fails the test if anything binds synchronously."""

    def bind(self, pod: Pod, node: str) -> None:
        raise AssertionError(f"{pod.name} bound synchronously")

    def delete_pod(self, pod: Pod, reason: str) -> None:
        pass

    def set_nominated_node(self, pod: Pod, node: str) -> None:
        pass


def _setup() -> tuple[LiveScheduler, ClusterCache, list[InFlight]]:
    reg = build_registry([])
    reg.register(Hold)
    Hold.unreserved = []
    prof = {
        "schedulerName": "kubesched",
        "plugins": {"permit": {"enabled": [{"name": "Hold"}]}, "reserve": {"enabled": [{"name": "Hold"}]}},
    }
    cfg = parse_config({"apiVersion": V1, "kind": KIND, "profiles": [prof]}, DEFAULTS_SOURCE, reg.points_of)
    submitted: list[InFlight] = []
    sched = LiveScheduler(cfg, Snapshot(), NoBinds(), reg, seed=1, clock=lambda: 0.0, submit=submitted.append)
    cache = ClusterCache(sched)
    cache.apply("Node", None, Node.parse(make_node("n0", cpu="4", memory="8Gi")))
    return sched, cache, submitted


def _park(sched: LiveScheduler, cache: ClusterCache, name: str) -> Pod:
    pod = Pod.parse(make_pod(name, uid=name, requests={"cpu": "1"}, spec={"schedulerName": "kubesched"}))
    cache.apply("Pod", None, pod)
    while sched.schedule_one() is not None:
        pass
    assert name in sched.waiting and sched.snapshot.pod_by_uid[name].node_name == "n0"
    return pod


def test_a_pod_deleted_after_permit_allowed_it_is_never_submitted() -> None:
    sched, cache, submitted = _setup()
    pod = _park(sched, cache, "a")
    wp = sched.frameworks["kubesched"].handle.get_waiting_pod("a")
    assert wp is not None
    wp.allow("Hold")  # allowed through the handle; its binding cycle has not resumed yet
    cache.apply("Pod", pod, None)  # the watch shows it deleted first
    sched.expire_waiting_pods()
    assert submitted == [] and sched.in_flight == {}
    assert "a" not in sched.snapshot.pod_by_uid and not sched.queue.contains("a") and len(sched.waiting) == 0
    assert Hold.unreserved == ["a"]


def test_a_pod_deleted_while_waiting_is_never_submitted() -> None:
    sched, cache, submitted = _setup()
    pod = _park(sched, cache, "a")
    _park(sched, cache, "b")
    cache.apply("Pod", pod, None)
    assert submitted == [] and "a" not in sched.snapshot.pod_by_uid and Hold.unreserved == ["a"]
    # the other waiting pod, allowed, still binds asynchronously through ``submit``
    wp = sched.frameworks["kubesched"].handle.get_waiting_pod("b")
    assert wp is not None
    wp.allow("Hold")
    sched.expire_waiting_pods()
    assert [b.pod.name for b in submitted] == ["b"] and "b" in sched.in_flight
    assert sched.complete(submitted[0], Status(), gone=False) == "bound"
