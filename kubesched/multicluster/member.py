"""A member cluster: kubesched's in-memory cluster (nodes, pods, its own scheduler) behind a Karmada Cluster.

The Cluster's status is what Karmada's cluster-status controller would report for these nodes and
pods: the resource summary (allocatable of every node; requests of bound, non-terminal pods as
allocated; requests of unbound pods as allocating; a ``pods`` entry counting each; when the Cluster
sets resource models, the nodes per grade as ``allocatableModelings``) and, unless the Cluster
object lists them, the built-in Kubernetes APIs as enabled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from kubesched.api.objects import Node, Pod
from kubesched.api.resources import PODS, Resources, add_into
from kubesched.app import VirtualClock
from kubesched.cluster.memory import MemoryCluster
from kubesched.config import SchedulerConfig
from kubesched.framework.registry import Registry
from kubesched.load import ClusterObjects
from kubesched.multicluster.api import Cluster, ResourceSummary
from kubesched.multicluster.modeling import allocatable_modelings
from kubesched.plugins import in_tree_registry
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
        self.scheduler: Scheduler | None = None
        self.pending: dict[str, Pod] = {}  # created here, not bound yet (Karmada's "allocating")
        self.clock = VirtualClock()
        self.bound = 0
        self._pending_source: Callable[[], Iterable[Pod]] | None = None
        self._summary_key: tuple | None = None
        if objects is not None:
            from kubesched.app import build_config

            reg = registry or in_tree_registry()
            snap = Snapshot.of(objects)
            backend = MemoryCluster()
            for pod in objects.pods:
                backend.pods[pod.uid] = pod
            self.scheduler = Scheduler(config or build_config(None, reg), snap, backend, reg, seed=seed, clock=self.clock)
            self.scheduler.hooks.on_scheduled.append(self._on_scheduled)
            self.pending = {pod.uid: pod for pod in objects.pending()}
            if cluster.api_enablements is None:
                cluster = replace(cluster, api_enablements=dict(BUILTIN_APIS), complete_api_enablements=True)
        self.cluster = cluster
        self.refresh()

    @classmethod
    def attached(cls, cluster: Cluster, scheduler: Scheduler, pending: Callable[[], Iterable[Pod]]) -> MemberCluster:
        """A member around a scheduler someone else drives (the simulator's member clusters);
        ``pending`` lists the pods created there and not bound yet."""
        m = cls(replace(cluster, api_enablements=cluster.api_enablements or dict(BUILTIN_APIS), complete_api_enablements=True))
        m.scheduler = scheduler
        m._pending_source = pending
        m.refresh()
        return m

    @property
    def name(self) -> str:
        return self.cluster.name

    @property
    def snapshot(self) -> Snapshot | None:
        return self.scheduler.snapshot if self.scheduler else None

    def refresh(self) -> None:
        """The Cluster's resource summary from the member's columns (cheap: sums over nodes)."""
        snap = self.snapshot
        if snap is None:
            return
        pending = list(self._pending_source()) if self._pending_source else list(self.pending.values())
        key = (snap.generation, len(pending), sum(p.uid.__hash__() for p in pending))
        if key == self._summary_key:
            return
        self._summary_key = key
        alloc = snap.alloc.sum(axis=0)
        used = snap.requested.sum(axis=0)
        allocatable = {r: int(alloc[i]) for r, i in snap.res_index.items() if alloc[i]}
        allocated = {r: int(used[i]) for r, i in snap.res_index.items() if used[i]}
        allocating: Resources = {}
        for p in pending:
            add_into(allocating, p.requests)
        allocating[PODS] = len(pending)
        allocated.setdefault(PODS, 0)
        modelings = ()
        if self.cluster.resource_models:
            bound = (p for on_node in snap.pods_on for p in on_node.values())
            modelings = allocatable_modelings(self.cluster.resource_models, snap.nodes, bound)
        self.cluster.resource_summary = ResourceSummary(allocatable, allocating, allocated, modelings)

    # ---- replicas --------------------------------------------------------------------------------
    def _on_scheduled(self, res) -> None:  # noqa: ANN001 - ScheduleResult
        if res.node is not None and self.pending.pop(res.pod.uid, None) is not None:
            self.bound += 1

    def create(self, template: Pod, name: str, count: int) -> list[Pod]:
        """Create ``count`` replicas of ``template`` here (as the member's controller would) and
        let the member's scheduler place them; the ones that do not fit stay pending."""
        sched = self.scheduler
        assert sched is not None
        pods = []
        for i in range(count):
            p = template.copy()
            p.name = f"{name}-{i}"
            p.uid = f"{self.name}/{template.namespace}/{p.name}"
            p.annotations = dict(template.annotations)
            self.pending[p.uid] = p
            sched.add_pending(p)
            pods.append(p)
        sched.run_until_idle(advance=self.clock.advance)
        return pods
