"""A member cluster: kubesched's in-memory cluster (nodes, pods, its own scheduler) behind a Karmada Cluster.

The Cluster's status is what Karmada's cluster-status controller would report for these nodes and
pods: the resource summary (allocatable of every node; requests of bound, non-terminal pods as
allocated; requests of unbound pods as allocating; a ``pods`` entry counting each) and, unless the
Cluster object lists them, the built-in Kubernetes APIs as enabled.
"""

from __future__ import annotations

from dataclasses import replace

from kubesched.api.load import ClusterObjects
from kubesched.api.objects import Node, Pod
from kubesched.api.resources import PODS, Resources, add_into
from kubesched.app import VirtualClock
from kubesched.cluster.memory import MemoryCluster, populate
from kubesched.config import SchedulerConfig
from kubesched.framework.registry import Registry
from kubesched.multicluster.api import Cluster, ResourceSummary
from kubesched.scheduler import Scheduler
from kubesched.state.snapshot import Snapshot

# What a stock member cluster serves (status.apiEnablements as Karmada collects it, abridged to
# the kinds kubesched propagates and their neighbours).
BUILTIN_APIS: dict[str, frozenset[str]] = {
    "v1": frozenset({"Pod", "Service", "ConfigMap", "Secret", "ServiceAccount", "PersistentVolumeClaim", "Namespace"}),
    "apps/v1": frozenset({"Deployment", "StatefulSet", "ReplicaSet", "DaemonSet"}),
    "batch/v1": frozenset({"Job", "CronJob"}),
}


def resource_summary(nodes: list[Node], pods: list[Pod]) -> ResourceSummary:
    allocatable: Resources = {}
    for n in nodes:
        add_into(allocatable, n.allocatable)
    allocated: Resources = {}
    allocating: Resources = {}
    bound = pending = 0
    for p in pods:
        if p.node_name:
            if p.terminal:
                continue
            add_into(allocated, p.requests)
            bound += 1
        else:
            add_into(allocating, p.requests)
            pending += 1
    allocated[PODS] = allocated.get(PODS, 0) + bound
    allocating[PODS] = allocating.get(PODS, 0) + pending
    return ResourceSummary(allocatable, allocating, allocated)


class MemberCluster:
    """One member: the Karmada Cluster object and, when a dump was given, its kubesched cluster."""

    def __init__(
        self,
        cluster: Cluster,
        objects: ClusterObjects | None = None,
        config: SchedulerConfig | None = None,
        registry: Registry | None = None,
        seed: int | None = None,
    ) -> None:
        self.objects = objects
        self.scheduler: Scheduler | None = None
        self.pending: list[Pod] = []
        if objects is not None:
            from kubesched.app import build_config

            reg = registry or Registry()
            snap = Snapshot()
            self.pending = populate(snap, objects)
            backend = MemoryCluster()
            for pod in objects.pods:
                backend.pods[pod.uid] = pod
            self.scheduler = Scheduler(config or build_config(None, reg), snap, backend, reg, seed=seed, clock=VirtualClock())
            if cluster.api_enablements is None:
                cluster = replace(cluster, api_enablements=dict(BUILTIN_APIS), complete_api_enablements=True)
        self.cluster = cluster
        self.refresh()

    @property
    def name(self) -> str:
        return self.cluster.name

    @property
    def snapshot(self) -> Snapshot | None:
        return self.scheduler.snapshot if self.scheduler else None

    def refresh(self) -> None:
        """Recompute the Cluster's resource summary from the member's nodes and pods."""
        snap = self.snapshot
        if snap is None:
            return
        pods = [p for row in range(snap.n) for p in snap.pods_on[row].values()] + self.pending
        self.cluster.resource_summary = resource_summary(list(snap.nodes), pods)
