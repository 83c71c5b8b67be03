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
from kubesched.api.storage import STORAGE_KINDS
from kubesched.dra.claims import ResourceClaim
from kubesched.dra.objects import DeviceClass, ResourceSlice
from kubesched.errors import InputError


@dataclass(frozen=True)
class WorkloadSelector:
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


def _workload(kind: str) -> Callable[[dict], WorkloadSelector]:
    def parse(d: dict) -> WorkloadSelector:
        md = d.get("metadata") or {}
        spec = d.get("spec") or {}
        sel = spec.get("selector")
        if sel is None:
            selector = None
        elif kind in ("Service", "ReplicationController"):  # plain label maps
            selector = LabelSelector.parse({"matchLabels": sel}, "spec.selector")
        else:
            selector = LabelSelector.parse(sel, "spec.selector")
        return WorkloadSelector(kind, str(md.get("namespace") or "default"), str(md.get("name") or ""), selector)

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



def _storage(kind: str, path: str, namespaced: bool) -> Resource:
    """A storage kind, parsed as a cluster dump's (``api.storage.STORAGE_KINDS``)."""
    return Resource(kind, path, STORAGE_KINDS[kind], namespaced)


# the storage kinds the volume plugins list (kube-scheduler's informers for them)
PVS = _storage("PersistentVolume", "/api/v1/persistentvolumes", False)
PVCS = _storage("PersistentVolumeClaim", "/api/v1/persistentvolumeclaims", True)
STORAGE_CLASSES = _storage("StorageClass", "/apis/storage.k8s.io/v1/storageclasses", False)
CSI_NODES = _storage("CSINode", "/apis/storage.k8s.io/v1/csinodes", False)
CSI_DRIVERS = _storage("CSIDriver", "/apis/storage.k8s.io/v1/csidrivers", False)
CSI_CAPACITIES = _storage("CSIStorageCapacity", "/apis/storage.k8s.io/v1/csistoragecapacities", True)
VOLUME_ATTACHMENTS = _storage("VolumeAttachment", "/apis/storage.k8s.io/v1/volumeattachments", False)
# Dynamic Resource Allocation (ResourceClaimTemplates are the resourceclaim controller's, not read here)
DEVICE_CLASSES = Resource("DeviceClass", "/apis/resource.k8s.io/v1/deviceclasses", DeviceClass.parse, False)
RESOURCE_SLICES = Resource("ResourceSlice", "/apis/resource.k8s.io/v1/resourceslices", ResourceSlice.parse, False)
RESOURCE_CLAIMS = Resource("ResourceClaim", "/apis/resource.k8s.io/v1/resourceclaims", ResourceClaim.parse, True)

#: plugin name -> the resources it reads beyond REQUIRED (watched when a profile enables it)
PLUGIN_RESOURCES: dict[str, tuple[Resource, ...]] = {
    "Coscheduling": (POD_GROUPS,),
    "CapacityScheduling": (ELASTIC_QUOTAS,),
    "VolumeBinding": (PVS, PVCS, STORAGE_CLASSES, CSI_NODES, CSI_DRIVERS, CSI_CAPACITIES),
    "VolumeZone": (PVS, PVCS, STORAGE_CLASSES),
    "VolumeRestrictions": (PVCS,),
    "NodeVolumeLimits": (PVS, PVCS, STORAGE_CLASSES, CSI_NODES, VOLUME_ATTACHMENTS),
    "DynamicResources": (DEVICE_CLASSES, RESOURCE_SLICES, RESOURCE_CLAIMS),
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
