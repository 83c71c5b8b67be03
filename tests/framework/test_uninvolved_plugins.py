"""Plugins a pod does not concern cost it nothing: a plugin signed NOTHING for the pod is not
called at Reserve, Unreserve, Permit, PreBindPreFlight or PreBind when the equivalence cache
serves the cycle, and a plugin whose ``needs_pod_field`` the pod lacks is neither asked to sign
nor called at PreEnqueue. The cache off (the regular path) calls every plugin, as upstream."""

from __future__ import annotations

from typing import ClassVar

import pytest
from fake_plugins import FakePermit, new_scheduler

from kubesched.api.objects import Node, Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    NOT_INVOLVED,
    PermitPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    ReservePlugin,
    Signature,
    SignPlugin,
)
from kubesched.framework.status import Code, Status
from kubesched.plugins import in_tree_registry
from kubesched.state.snapshot import Snapshot
from kubesched.testing import make_node, make_pod


class Picky(PreFilterPlugin, ReservePlugin, PermitPlugin, PreBindPlugin, SignPlugin):
    """Takes part for pods labelled ``picky`` only; records every call of the binding points."""

    name = "Picky"
    calls: ClassVar[list[tuple[str, str]]] = []

    def sign_pod(self, pod: Pod, snap: Snapshot) -> Signature | None:
        return None if "picky" in pod.labels else NOT_INVOLVED

    def pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot) -> Status | None:
        return None if "picky" in pod.labels else Status(Code.Skip)

    def add_pod(self, *args: object) -> None:
        return None

    def remove_pod(self, *args: object) -> None:
        return None

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.calls.append(("Reserve", pod.name))
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.calls.append(("Unreserve", pod.name))

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        self.calls.append(("Permit", pod.name))
        return Status(), 0.0

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.calls.append(("PreBindPreFlight", pod.name))
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.calls.append(("PreBind", pod.name))
        return None


class NeedsVolumes(PreEnqueuePlugin, PreFilterPlugin, SignPlugin):
    """Declares ``needs_pod_field = "volumes"``; records being asked to sign and to admit."""

    name = "NeedsVolumes"
    needs_pod_field = "volumes"
    calls: ClassVar[list[tuple[str, str]]] = []

    def sign_pod(self, pod: Pod, snap: Snapshot) -> Signature | None:
        self.calls.append(("Sign", pod.name))
        return NOT_INVOLVED if not pod.volumes else None

    def pre_enqueue(self, pod: Pod) -> Status | None:
        self.calls.append(("PreEnqueue", pod.name))
        return None

    def pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot) -> Status | None:
        return None if pod.volumes else Status(Code.Skip)

    def add_pod(self, *args: object) -> None:
        return None

    def remove_pod(self, *args: object) -> None:
        return None


NODES = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(3)]
BINDING_POINTS = ["Reserve", "Permit", "PreBindPreFlight", "PreBind"]


def schedule(plugins: list, pods: list[dict], *, cache: bool) -> tuple[list, dict[str, str]]:
    Picky.calls.clear()
    NeedsVolumes.calls.clear()
    sched = new_scheduler(plugins, NODES)
    sched.use_equivalence_cache = cache
    for p in pods:
        sched.add_pending(Pod.parse(p))
    placed = {}
    while (res := sched.schedule_one()) is not None:
        placed[res.pod.name] = res.node
    return sched, placed


@pytest.mark.parametrize("cache", [True, False])
def test_a_plugin_signed_nothing_is_not_called_at_the_binding_points(cache: bool) -> None:
    pods = [make_pod("plain", requests={"cpu": "100m"}), make_pod("labelled", requests={"cpu": "100m"}, labels={"picky": "yes"})]
    _, placed = schedule([Picky], pods, cache=cache)
    assert set(placed) == {"plain", "labelled"} and all(placed.values())
    by_pod = {name: [point for point, p in Picky.calls if p == name] for name in placed}
    assert by_pod["labelled"] == BINDING_POINTS
    # the regular path calls every plugin (upstream's framework); the cache knows "plain" is none of Picky's
    assert by_pod["plain"] == ([] if cache else BINDING_POINTS)


def test_unreserve_skips_a_plugin_signed_nothing_too() -> None:
    """A failed binding unreserves: Picky is called back only for the pod it reserved."""
    reject = type("RejectingPermit", (FakePermit,), {"name": "RejectingPermit", "status": Status(Code.Unschedulable, ("no",))})
    pods = [make_pod("plain", requests={"cpu": "100m"}), make_pod("labelled", requests={"cpu": "100m"}, labels={"picky": "yes"})]
    _, placed = schedule([Picky, reject], pods, cache=True)
    assert set(placed) == {"plain", "labelled"} and not any(placed.values())  # Permit rejected both
    assert [c for c in Picky.calls if c[0] == "Unreserve"] == [("Unreserve", "labelled")]
    assert not [c for c in Picky.calls if c[1] == "plain"]


@pytest.mark.parametrize("cache", [True, False])
def test_needs_pod_field_spares_pods_without_it(cache: bool) -> None:
    with_volume = make_pod("with-volume", requests={"cpu": "100m"})
    with_volume["spec"]["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    pods = [make_pod("plain", requests={"cpu": "100m"}), with_volume]
    _, placed = schedule([NeedsVolumes], pods, cache=cache)
    assert all(placed.values()) and set(placed) == {"plain", "with-volume"}
    asked = {name: [point for point, p in NeedsVolumes.calls if p == name] for name in placed}
    assert "PreEnqueue" in asked["with-volume"] and "PreEnqueue" not in asked["plain"]
    if cache:  # the regular path signs nothing
        assert "Sign" in asked["with-volume"]
    assert "Sign" not in asked["plain"]


def test_in_tree_plugins_that_need_a_pod_field_take_no_part_without_it() -> None:
    """The contract the framework relies on: with the field empty, sign_pod is NOT_INVOLVED and
    PreEnqueue admits the pod (each in-tree plugin declaring one)."""
    reg = in_tree_registry(entry_points=False)
    snap = Snapshot()
    snap.add_node(Node.parse(NODES[0]))
    plain = Pod.parse(make_pod("plain", requests={"cpu": "100m"}))
    # volumes no volume plugin reads: storage_volumes is empty
    secret = make_pod("secret", requests={"cpu": "100m"})
    secret["spec"]["volumes"] = [{"name": "s", "secret": {"secretName": "s"}}, {"name": "e", "emptyDir": {}}]
    secret = Pod.parse(secret)
    assert len(secret.volumes) == 2 and secret.storage_volumes == ()
    declaring = []
    for info in reg.infos():
        cls = reg.resolve(info.name)
        field = getattr(cls, "needs_pod_field", "")
        if not field:
            continue
        declaring.append((info.name, field))
        plugin = cls(None, None) if info.name != "VolumeBinding" else cls({"bindTimeoutSeconds": 600}, None)
        for pod in (plain, secret):
            assert not getattr(pod, field)
            assert plugin.sign_pod(pod, snap) == NOT_INVOLVED, info.name
            if isinstance(plugin, PreEnqueuePlugin):
                st = plugin.pre_enqueue(pod)
                assert st is None or st.ok, info.name
    assert sorted(declaring) == [
        ("DynamicResources", "resource_claims"),
        ("NodeVolumeLimits", "storage_volumes"),
        ("VolumeBinding", "storage_volumes"),
        ("VolumeRestrictions", "storage_volumes"),
        ("VolumeZone", "storage_volumes"),
    ]
