"""The embedded default backend: an in-memory cluster that binds instantly and records events."""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.api.objects import Pod
from kubesched.dra.store import DraState
from kubesched.load import ClusterObjects
from kubesched.state.snapshot import Snapshot


@dataclass
class Event:
    type: str  # Normal | Warning
    reason: str  # Scheduled | FailedScheduling | Preempted
    pod: str  # namespace/name
    message: str


@dataclass
class MemoryCluster:
    pods: dict[str, Pod] = field(default_factory=dict)  # uid -> pod as the "API server" holds it
    events: list[Event] = field(default_factory=list)
    bindings: dict[str, str] = field(default_factory=dict)  # uid -> node
    deleted: list[Pod] = field(default_factory=list)
    #: the cluster's DRA objects: a deleted pod's claims are released (the resourceclaim
    #: controller's part), so that later pods can have the devices
    dra: DraState | None = None

    def bind(self, pod: Pod, node_name: str) -> None:
        if pod.uid in self.bindings:
            raise RuntimeError(f"pod {pod.key} is already bound to {self.bindings[pod.uid]}")
        self.bindings[pod.uid] = node_name
        self.pods[pod.uid] = pod.with_node(node_name)
        self.events.append(Event("Normal", "Scheduled", pod.key, f"Successfully assigned {pod.key} to {node_name}"))

    def delete_pod(self, pod: Pod, reason: str) -> None:
        self.pods.pop(pod.uid, None)
        self.deleted.append(pod)
        if self.dra is not None and pod.resource_claims:
            self.dra.release_pod(pod)
        self.events.append(Event("Normal", "Preempted", pod.key, reason))

    def set_nominated_node(self, pod: Pod, node_name: str) -> None:
        if pod.uid in self.pods:
            self.pods[pod.uid].nominated_node_name = node_name


def populate(snapshot: Snapshot, objs: ClusterObjects) -> list[Pod]:
    """Fill a snapshot from loaded objects; returns the pending pods (unbound, not terminal)."""
    for ns in objs.namespaces:
        snapshot.set_namespace(ns.name, ns.labels)
    snapshot.workload_selectors.extend(objs.workload_selectors)
    snapshot.pdbs.extend(objs.pdbs)
    snapshot.pod_groups.update(((pg.namespace, pg.name), pg) for pg in objs.pod_groups)
    snapshot.elastic_quotas.update((eq.namespace, eq) for eq in objs.elastic_quotas)
    snapshot.storage.load(objs.storage)
    snapshot.dra.add(objs.dra)
    for node in objs.nodes:
        snapshot.add_node(node)
    pending = []
    for pod in objs.pods:
        if pod.terminal:
            continue
        if pod.node_name:
            snapshot.add_pod(pod)
        else:
            pending.append(pod)
    return pending
