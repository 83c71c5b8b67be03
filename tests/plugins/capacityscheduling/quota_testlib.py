"""Builders for the CapacityScheduling tests: upstream's makePod / makeEQ, a framework, a Scheduler."""

from __future__ import annotations

from typing import Any

import numpy as np

from kubesched.api.objects import ElasticQuota, Pod
from kubesched.config import EXTENSION_POINTS, PluginRef, Profile
from kubesched.framework.diagnosis import Diagnosis
from kubesched.framework.handle import Handle
from kubesched.framework.runtime import Framework
from kubesched.framework.status import Code, Status
from kubesched.plugins import in_tree_registry
from kubesched.plugins.capacityscheduling import CapacityScheduling
from kubesched.state.snapshot import Snapshot
from kubesched.testing import build_snapshot, make_node, make_pod

GPU = "nvidia.com/gpu"
MID, HIGH = 100, 1000


def qpod(
    name: str, ns: str, mem: int, cpu: int = 0, gpu: int = 0, prio: int = 0, node: str | None = None, **kw: Any
) -> dict:
    """makePod(name, namespace, memReq, cpuReq (milli), gpuReq, priority, uid=name, nodeName)."""
    d = make_pod(
        name,
        namespace=ns,
        uid=name,
        node=node,
        priority=prio,
        requests={"memory": str(mem), "cpu": f"{cpu}m", GPU: str(gpu)},
    )
    md = d["metadata"]
    if kw.get("terminating"):
        md["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    if kw.get("labels"):
        md["labels"] = kw["labels"]
    if kw.get("nominated"):
        d["status"] = {"nominatedNodeName": kw["nominated"]}
    if kw.get("never"):
        d["spec"]["preemptionPolicy"] = "Never"
    return d


def quota(ns: str, min: dict[str, Any] | None = None, max: dict[str, Any] | None = None) -> dict:
    """makeEQ: an ElasticQuota in ``ns`` (memory amounts as plain numbers, like the Go tables)."""
    spec: dict[str, Any] = {}
    if min is not None:
        spec["min"] = {k: str(v) for k, v in min.items()}
    if max is not None:
        spec["max"] = {k: str(v) for k, v in max.items()}
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": f"eq-{ns}", "namespace": ns},
        "spec": spec,
    }


def cluster(pods: list[dict], quotas: list[dict], *, node_mem: str = "150", nodes: int = 1) -> Snapshot:
    snap = build_snapshot(
        [make_node(f"node-{chr(ord('a') + i)}", cpu="100", memory=node_mem, extra={GPU: 8}) for i in range(nodes)], pods
    )
    for q in quotas:
        eq = ElasticQuota.parse(q)
        snap.elastic_quotas[eq.namespace] = eq
    return snap


def framework(snap: Snapshot, *, nominator: Any = None, cluster: Any = None) -> tuple[CapacityScheduling, Framework]:
    """NodeResourcesFit (PreFilter + Filter) and CapacityScheduling (PreFilter, PostFilter, Reserve)."""
    reg = in_tree_registry(entry_points=False)
    points: dict[str, list[PluginRef]] = {p: [] for p in EXTENSION_POINTS}
    points["preFilter"] = [PluginRef("NodeResourcesFit"), PluginRef("CapacityScheduling")]
    points["filter"] = [PluginRef("NodeResourcesFit")]
    points["postFilter"] = [PluginRef("CapacityScheduling")]
    points["reserve"] = [PluginRef("CapacityScheduling")]
    handle = Handle(snap, cluster, np.random.default_rng(0))
    handle.nominator = nominator
    fw = Framework(Profile("default-scheduler", None, points, {}), reg, handle)
    pl = fw.plugins["CapacityScheduling"]
    assert isinstance(pl, CapacityScheduling)
    return pl, fw


def all_unschedulable(snap: Snapshot) -> Diagnosis:
    """Every node failed with Unschedulable (NodeToStatusMap{"node-a": Unschedulable})."""
    return Diagnosis(absent_status=Status(Code.Unschedulable))


def used(pl: CapacityScheduling, snap: Snapshot, ns: str, resource: str = "memory") -> int:
    return pl.infos(snap)[ns].used[resource]


def as_pod(d: dict) -> Pod:
    return Pod.parse(d)


def quota_config() -> dict:
    """scheduler-plugins' capacityscheduling config: it replaces DefaultPreemption at PostFilter."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {
                    "preFilter": {"enabled": [{"name": "CapacityScheduling"}]},
                    "postFilter": {"enabled": [{"name": "CapacityScheduling"}], "disabled": [{"name": "*"}]},
                    "reserve": {"enabled": [{"name": "CapacityScheduling"}]},
                },
            }
        ],
    }


def start(docs: list[dict], *, seed: int = 1) -> Any:
    """A Scheduler over ``docs`` on a virtual clock; returns (scheduler, cluster, clock, results)."""
    from kubesched.app import VirtualClock
    from kubesched.cluster.memory import MemoryCluster
    from kubesched.config.load import parse_config
    from kubesched.load import parse_objects, resolve_priorities
    from kubesched.scheduler import Scheduler

    reg = in_tree_registry(entry_points=False)
    cfg = parse_config(quota_config(), "test-config.yaml", reg.points_of)
    objs = parse_objects("test.yaml", [(f"documents[{i}]", d) for i, d in enumerate(docs)])
    resolve_priorities(objs)
    snap = Snapshot.of(objs)
    pending = objs.pending()
    mem = MemoryCluster(pods={p.uid: p for p in objs.pods})
    clock = VirtualClock()
    sched = Scheduler(cfg, snap, mem, reg, seed=seed, clock=clock)
    results: dict[str, Any] = {}
    sched.hooks.on_scheduled.append(lambda r: results.__setitem__(r.pod.name, r))
    sched.hooks.on_failed.append(lambda r: results.__setitem__(r.pod.name, r))
    for p in pending:
        sched.add_pending(p)
    return SimpleRun(sched, mem, clock, results)


class SimpleRun:
    def __init__(self, sched: Any, cluster: Any, clock: Any, results: dict[str, Any]) -> None:
        self.sched, self.cluster, self.clock, self.results = sched, cluster, clock, results

    def until_idle(self) -> None:
        self.sched.run_until_idle(advance=self.clock.advance, max_attempts=10_000)

    @property
    def bound(self) -> dict[str, str]:
        return {uid: n for uid, n in self.cluster.bindings.items()}

    @property
    def preempted(self) -> list[str]:
        return [p.name for p in self.cluster.deleted]


def cpu_pod(name: str, ns: str, cpu: str = "2", *, node: str | None = None, prio: int | None = None, labels: dict | None = None) -> dict:
    return make_pod(name, namespace=ns, uid=name, node=node, priority=prio, requests={"cpu": cpu, "memory": "1Gi"}, labels=labels)


def cpu_quota(ns: str, min_cpu: str, max_cpu: str) -> dict:
    return quota(ns, {"cpu": min_cpu, "memory": "64Gi"}, {"cpu": max_cpu, "memory": "64Gi"})


def cpu_node(name: str, cpu: str) -> dict:
    return make_node(name, cpu=cpu, memory="64Gi")
