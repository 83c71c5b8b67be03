"""The API resources the live scheduler watches, and how each one's raw JSON becomes a kubesched object."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.api.objects import (
    ElasticQuota,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PodGroup,
    PriorityClass,
)
from kubesched.api.selectors import LabelSelector
from kubesched.errors import InputError


@dataclass(frozen=True)
class Workload:
    """A Service, ReplicationController, ReplicaSet or StatefulSet: only its pod selector matters."""

    kind: str
    namespace: str
    name: str
    selector: LabelSelector | None

    @property
    def entry(self) -> tuple[str, str, str, LabelSelector] | None:
        """The ``Snapshot.workload_selectors`` tuple (None without a selector)."""
        if self.selector is None:
            return None
        return (self.kind, self.namespace, self.name, self.selector)


def _workload(kind: str) -> Callable[[dict], Workload]:
    def parse(d: dict) -> Workload:
        md = d.get("metadata") or {}
        spec = d.get("spec") or {}
        sel = spec.get("selector")
        if sel is None:
            selector = None
        elif kind in ("Service", "ReplicationController"):  # plain label maps
            selector = LabelSelector.parse({"matchLabels": sel}, "spec.selector")
        else:
            selector = LabelSelector.parse(sel, "spec.selector")
        return Workload(kind, str(md.get("namespace") or "default"), str(md.get("name") or ""), selector)

    return parse


@dataclass(frozen=True)
class Resource:
    kind: str
    path: str  # the collection URL across namespaces
    parse: Callable[[dict], Any]
    namespaced: bool
    # Optional resources feed PodTopologySpread's system default constraints only; a cluster that
    # does not serve them (or RBAC that forbids them) degrades that, it does not stop scheduling.
    optional: bool = False
    field_selector: str = ""

    def key(self, d: dict) -> str:
        md = d.get("metadata") or {}
        name = str(md.get("name") or "")
        return f"{md.get('namespace') or ''}/{name}" if self.namespaced else name


# kube-scheduler's pod informer leaves out finished pods (they hold no resources).
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"

NODES = Resource("Node", "/api/v1/nodes", Node.parse, False)
PODS = Resource("Pod", "/api/v1/pods", Pod.parse, True, field_selector=POD_FIELD_SELECTOR)
NAMESPACES = Resource("Namespace", "/api/v1/namespaces", Namespace.parse, False)
PRIORITY_CLASSES = Resource("PriorityClass", "/apis/scheduling.k8s.io/v1/priorityclasses", PriorityClass.parse, False)
PDBS = Resource("PodDisruptionBudget", "/apis/policy/v1/poddisruptionbudgets", PodDisruptionBudget.parse, True)
SERVICES = Resource("Service", "/api/v1/services", _workload("Service"), True, optional=True)
RCS = Resource(
    "ReplicationController", "/api/v1/replicationcontrollers", _workload("ReplicationController"), True, optional=True
)
REPLICA_SETS = Resource("ReplicaSet", "/apis/apps/v1/replicasets", _workload("ReplicaSet"), True, optional=True)
STATEFUL_SETS = Resource("StatefulSet", "/apis/apps/v1/statefulsets", _workload("StatefulSet"), True, optional=True)

# scheduler-plugins' custom resources, watched when a profile enables the plugin that reads them
POD_GROUPS = Resource("PodGroup", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", PodGroup.parse, True)
ELASTIC_QUOTAS = Resource("ElasticQuota", "/apis/scheduling.x-k8s.io/v1alpha1/elasticquotas", ElasticQuota.parse, True)
#: plugin name -> the custom resources it needs
PLUGIN_RESOURCES: dict[str, tuple[Resource, ...]] = {
    "Coscheduling": (POD_GROUPS,),
    "CapacityScheduling": (ELASTIC_QUOTAS,),
}

#: Watched in this order; PriorityClasses before pods so pod priorities resolve on arrival.
REQUIRED = (NODES, NAMESPACES, PRIORITY_CLASSES, PDBS, PODS)
WORKLOADS = (SERVICES, RCS, REPLICA_SETS, STATEFUL_SETS)


def decode(resource: Resource, raw: dict) -> Any:
    """The kubesched object for one API object; ``InputError`` names the object and field."""
    try:
        return resource.parse(raw)
    except InputError as e:
        raise e.within(source=f"{resource.kind} {resource.key(raw)}") from None
