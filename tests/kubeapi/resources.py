"""The API resources the test server serves, and the two Event representations it converts between."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]

_POD_FIELDS = (
    "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
    "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName",
)
_EVENT_FIELDS = (
    "involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
    "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
    "reason", "reportingComponent", "source", "type",
)


@dataclass(frozen=True)
class Resource:
    """One REST resource; `store` names the storage it shares (both Event APIs share core's)."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    status: bool = False  # has a status subresource: main writes keep status, status writes keep the rest
    builtin: bool = True  # built-in list items carry no kind/apiVersion; custom resources' do
    fields: tuple[str, ...] = ()  # field-selector labels besides metadata.name/namespace
    store: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """How Status messages name the resource: `pods`, `leases.coordination.k8s.io`."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def storage(self) -> str:
        return self.store or self.group_resource

    def to_wire(self, obj: Obj) -> Obj:
        """The stored object as this resource's clients see it (kind and apiVersion included)."""
        body = core_event_to_v1(obj) if self.group == "events.k8s.io" else obj
        return {"kind": self.kind, "apiVersion": self.api_version, **body}

    def from_wire(self, obj: Obj) -> Obj:
        """A client's object in storage form (no kind/apiVersion)."""
        body = {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}
        return v1_event_to_core(body) if self.group == "events.k8s.io" else body


def _r(group: str, version: str, plural: str, kind: str, namespaced: bool, **kw: Any) -> Resource:
    return Resource(group, version, plural, kind, namespaced, **kw)


RESOURCES: tuple[Resource, ...] = (
    _r("", "v1", "pods", "Pod", True, status=True, fields=_POD_FIELDS),
    _r("", "v1", "nodes", "Node", False, status=True, fields=("spec.unschedulable",)),
    _r("", "v1", "namespaces", "Namespace", False, status=True, fields=("status.phase",)),
    _r("", "v1", "events", "Event", True, fields=_EVENT_FIELDS),
    _r("", "v1", "services", "Service", True, status=True),
    _r("", "v1", "configmaps", "ConfigMap", True),
    _r("", "v1", "secrets", "Secret", True, fields=("type",)),
    _r("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, status=True),
    _r("", "v1", "persistentvolumes", "PersistentVolume", False, status=True),
    _r("", "v1", "replicationcontrollers", "ReplicationController", True, status=True),
    _r("events.k8s.io", "v1", "events", "Event", True, fields=_EVENT_FIELDS, store="events"),
    _r("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False),
    _r("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, status=True),
    _r("coordination.k8s.io", "v1", "leases", "Lease", True),
    _r("apps", "v1", "replicasets", "ReplicaSet", True, status=True),
    _r("apps", "v1", "statefulsets", "StatefulSet", True, status=True),
    _r("apps", "v1", "deployments", "Deployment", True, status=True),
    _r("storage.k8s.io", "v1", "storageclasses", "StorageClass", False),
    _r("storage.k8s.io", "v1", "csinodes", "CSINode", False),
    _r("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False),
    _r("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", True),
    _r("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", False, status=True),
    _r("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", False),
    _r("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", False,
       fields=("spec.nodeName", "spec.driver")),
    _r("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", True, status=True),
    _r("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate", True),
    _r("scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", True, status=True, builtin=False),
    _r("scheduling.x-k8s.io", "v1alpha1", "elasticquotas", "ElasticQuota", True, status=True, builtin=False),
)

BY_PATH: dict[tuple[str, str, str], Resource] = {(r.group, r.version, r.plural): r for r in RESOURCES}
# Kind -> the resource the test-side helpers (api.create/get/...) use; "Event" is core/v1's.
BY_KIND: dict[str, Resource] = {}
for _res in RESOURCES:
    BY_KIND.setdefault(_res.kind, _res)
BY_API_KIND: dict[tuple[str, str], Resource] = {(r.api_version, r.kind): r for r in RESOURCES}


def resource_for(kind: str, api_version: str | None = None) -> Resource:
    """The resource of a Kind (and apiVersion when given), or KeyError naming the kind."""
    if api_version and (api_version, kind) in BY_API_KIND:
        return BY_API_KIND[(api_version, kind)]
    try:
        return BY_KIND[kind]
    except KeyError:
        raise KeyError(f"kind {kind!r} is not served by the test API server") from None


# events.k8s.io/v1 <-> core/v1 field names (k8s.io/kubernetes pkg/apis/events/v1/conversion.go).
_EVENT_RENAMES = (
    ("involvedObject", "regarding"), ("message", "note"), ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"), ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"), ("reportingComponent", "reportingController"),
)


def core_event_to_v1(obj: Obj) -> Obj:
    renames = dict(_EVENT_RENAMES)
    return {renames.get(k, k): v for k, v in obj.items()}


def v1_event_to_core(obj: Obj) -> Obj:
    renames = {new: old for old, new in _EVENT_RENAMES}
    return {renames.get(k, k): v for k, v in obj.items()}
