"""Plugins' declared queue events (EventsToRegister) decide which events move the pods they rejected."""

from __future__ import annotations

from typing import Any

from kubesched.api.objects import Pod
from kubesched.app import VirtualClock
from kubesched.cluster.memory import MemoryCluster
from kubesched.config.load import parse_config
from kubesched.framework.registry import Registry
from kubesched.gpu.model import GPU_COUNT, GPU_INDEX, GPU_MILLI, GPU_MODEL
from kubesched.plugins import in_tree_registry
from kubesched.queue.scheduling_queue import merge_event_plugins
from kubesched.scheduler import Scheduler
from kubesched.testing import build_snapshot, make_node, make_pod


def _config(reg: Registry, gpu: bool) -> Any:
    plugins = {"multiPoint": {"enabled": [{"name": "Open-Gpu-Share"}]}} if gpu else {}
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}],
    }
    return parse_config(doc, "t.yaml", reg.points_of)


def _gpu_pod(name: str, node: str | None = None) -> Pod:
    d = make_pod(name, uid=name, requests={"cpu": "1", "memory": "1Gi"}, node=node)
    d["metadata"]["annotations"] = {GPU_MILLI: "1000", GPU_COUNT: "1"}
    if node:
        d["metadata"]["annotations"][GPU_INDEX] = "0"
    return Pod.parse(d)


def _gpu_scheduler() -> tuple[Scheduler, Pod]:
    """One node with one GPU, held whole by ``busy``; ``want`` asks for a whole GPU."""
    reg = in_tree_registry()
    node = make_node("g", cpu="64", memory="256Gi", labels={GPU_MODEL: "G2"}, extra={GPU_COUNT: 1, GPU_MILLI: 1000})
    busy = _gpu_pod("busy", node="g")
    snap = build_snapshot([node], [busy])
    sched = Scheduler(_config(reg, gpu=True), snap, MemoryCluster(), reg, seed=0, clock=VirtualClock())
    return sched, snap.pod_by_uid["busy"]


def test_merge_inverts_plugins_declarations() -> None:
    merged = merge_event_plugins({"Mine": {"NodeAdd", "CustomEvent"}, "Other": {"NodeAdd", "AssignedPodAdd"}})
    assert {e: pls for e, pls in merged.items() if pls} == {
        "NodeAdd": frozenset({"Mine", "Other"}),
        "CustomEvent": frozenset({"Mine"}),
        "AssignedPodAdd": frozenset({"Other"}),
    }
    assert merged["NamespaceUpdate"] == frozenset()  # a cluster event nobody registered moves no declared pod


def test_the_built_in_plugins_register_upstreams_events() -> None:
    """EventsToRegister of the default profile's plugins (their enqueue extensions, v1.36),
    declared on each plugin and merged by the scheduler."""
    reg = in_tree_registry()
    sched = Scheduler(_config(reg, gpu=False), build_snapshot([]), MemoryCluster(), reg, clock=VirtualClock())
    ev = sched.queue.event_plugins
    assert ev["AssignedPodAdd"] == {"InterPodAffinity", "PodTopologySpread"}
    assert ev["AssignedPodDelete"] == {
        "NodeResourcesFit",
        "NodePorts",
        "InterPodAffinity",
        "PodTopologySpread",
        "VolumeRestrictions",
        "NodeVolumeLimits",
    }
    assert ev["PersistentVolumeClaimAdd"] == {"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"}
    assert ev["PersistentVolumeClaimUpdate"] == {"VolumeBinding", "VolumeZone"}
    assert ev["CSINodeAdd"] == {"NodeVolumeLimits", "VolumeBinding"}
    assert ev["NamespaceUpdate"] == {"InterPodAffinity"}
    assert "NodeName" in ev["NodeAdd"] and "NodeName" not in ev["NodeUpdate"]


def test_the_queue_map_is_built_per_scheduler_from_enabled_plugins() -> None:
    sched, _ = _gpu_scheduler()
    ev = sched.queue.event_plugins
    assert {e for e, pls in ev.items() if "Open-Gpu-Share" in pls} == {"NodeAdd", "NodeUpdate", "AssignedPodDelete"}
    reg = in_tree_registry()
    plain = Scheduler(_config(reg, gpu=False), build_snapshot([]), MemoryCluster(), reg, clock=VirtualClock())
    assert all("Open-Gpu-Share" not in pls for pls in plain.queue.event_plugins.values())


def test_a_pod_rejected_by_open_gpu_share_moves_only_on_its_events() -> None:
    sched, busy = _gpu_scheduler()
    sched.add_pending(_gpu_pod("want"))
    res = sched.schedule_one()
    assert res is not None and res.node is None
    q = sched.queue
    assert q._where["want"] == "unschedulable"
    assert q.unschedulable["want"].unschedulable_plugins == {"Open-Gpu-Share"}
    assert q.move_for_event("AssignedPodAdd") == 0 and q.move_for_event("NamespaceUpdate") == 0
    assert q._where["want"] == "unschedulable"
    sched.delete_pod(busy)  # the GPU frees up: AssignedPodDelete
    assert q._where["want"] in ("active", "backoff")
    sched.clock.advance(60.0)  # past the backoff
    res = sched.schedule_one()
    assert res is not None and res.node == "g"


def test_an_undeclared_plugin_still_moves_on_every_event() -> None:
    sched, _ = _gpu_scheduler()
    sched.add_pending(_gpu_pod("want"))
    sched.schedule_one()
    q = sched.queue
    q.unschedulable["want"].unschedulable_plugins = {"SomeOutOfTreePlugin"}
    assert q.move_for_event("NamespaceUpdate") == 1
