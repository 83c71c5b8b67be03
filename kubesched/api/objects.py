"""Pod, Node, Namespace and PriorityClass, parsed once from Kubernetes wire dicts.

Only what scheduling reads is kept; everything is validated at this edge so plugins can
trust the fields. Parsing applies the API server's defaulting that matters for scheduling
(requests default to limits, schedulerName, priority from PriorityClass).
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kubesched.api.affinity import NodeAffinity, PodAffinity, TopologySpreadConstraint
from kubesched.api.claims import PodClaimRef, parse_pod_claims
from kubesched.api.fields import as_bool, as_int, as_int32, as_list, as_map, as_str, child, str_map
from kubesched.api.quantity import format_quantity
from kubesched.api.resources import (
    PODS,
    Resources,
    non_zero_requests,
    parse_resource_list,
    pod_requests,
    supported_pod_level,
)
from kubesched.api.selectors import LabelSelector
from kubesched.api.storage import SCHEDULED_SOURCES, PodVolume, parse_pod_volumes, volume_key
from kubesched.api.taints import Taint, Toleration, parse_taints, parse_tolerations
from kubesched.errors import InputError, join_path

DEFAULT_SCHEDULER_NAME = "default-scheduler"
_uid_counter = itertools.count(1)


def _parse_time(value: Any, path: str) -> float | None:
    """RFC 3339 timestamp -> seconds since the epoch (None when absent)."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.timestamp()
    s = as_str(value, path)
    try:
        return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise InputError(f'invalid timestamp "{s}"', path=path) from None


@dataclass(frozen=True, slots=True)
class HostPort:
    host_ip: str  # "0.0.0.0" when unset
    protocol: str  # TCP | UDP | SCTP
    port: int


@dataclass(frozen=True, slots=True)
class OwnerRef:
    kind: str
    name: str
    controller: bool
    api_version: str = ""


@dataclass(frozen=True, slots=True)
class Container:
    name: str
    image: str
    requests: Resources
    restartable: bool  # a sidecar: init container with restartPolicy Always


def _parse_container(d: Any, path: str, init: bool, host_network: bool = False) -> tuple[Container, list[HostPort]]:
    m = as_map(d, path)
    res = as_map(m.get("resources"), join_path(path, "resources"))
    requests = parse_resource_list(res.get("requests"), join_path(path, "resources.requests"))
    limits = parse_resource_list(res.get("limits"), join_path(path, "resources.limits"))
    for k, v in limits.items():  # API server defaulting: a limit without a request sets it
        requests.setdefault(k, v)
    for k, v in requests.items():
        if v < 0:
            raise InputError("must be greater than or equal to 0", path=join_path(path, f"resources.requests.{k}"))
    ports = []
    for i, p in enumerate(as_list(m.get("ports"), join_path(path, "ports"))):
        pp = join_path(join_path(path, "ports"), i)
        pm = as_map(p, pp)
        host_port = as_int(pm.get("hostPort"), join_path(pp, "hostPort"))
        if not host_port and host_network:  # API server defaulting: hostNetwork pods bind their ports
            host_port = as_int(pm.get("containerPort"), join_path(pp, "containerPort"))
        if host_port:
            if not 0 < host_port < 65536:
                raise InputError("must be between 1 and 65535", path=join_path(pp, "hostPort"))
            proto = as_str(pm.get("protocol"), join_path(pp, "protocol"), "TCP") or "TCP"
            ip = as_str(pm.get("hostIP"), join_path(pp, "hostIP"), "") or "0.0.0.0"
            ports.append(HostPort(ip, proto, host_port))
    restart = as_str(m.get("restartPolicy"), join_path(path, "restartPolicy"))
    c = Container(
        as_str(m.get("name"), join_path(path, "name")),
        as_str(m.get("image"), join_path(path, "image")),
        requests,
        init and restart == "Always",
    )
    return c, ports


def _parse_owners(refs: Any, mp: str) -> tuple[OwnerRef, ...]:
    rp = join_path(mp, "ownerReferences")
    return tuple(
        OwnerRef(
            as_str(o.get("kind"), rp),
            as_str(o.get("name"), rp),
            bool(o.get("controller")),
            as_str(o.get("apiVersion"), rp),
        )
        for o in (as_map(x, rp) for x in as_list(refs, mp))
    )


def _parse_containers(spec: dict, sp: str) -> tuple[list[Container], list[Container], list[HostPort]]:
    """Containers, init containers, and the host ports of both (a restartable init container's
    ports stay bound while the pod runs)."""
    containers, inits, ports = [], [], []
    host_network = as_bool(spec.get("hostNetwork"), join_path(sp, "hostNetwork"))
    cp = join_path(sp, "containers")
    for i, c in enumerate(as_list(spec.get("containers"), cp)):
        cont, cports = _parse_container(c, join_path(cp, i), False, host_network)
        containers.append(cont)
        ports.extend(cports)
    ip = join_path(sp, "initContainers")
    for i, c in enumerate(as_list(spec.get("initContainers"), ip)):
        cont, cports = _parse_container(c, join_path(ip, i), True, host_network)
        inits.append(cont)
        if cont.restartable:
            ports.extend(cports)
    return containers, inits, ports


def _pod_requests(spec: dict, sp: str, containers: list[Container], inits: list[Container]) -> tuple[Resources, int, int]:
    """The pod's effective requests (no "pods" entry) and its non-zero CPU and memory requests:
    containers, init containers, overhead and pod-level resources together."""
    overhead = parse_resource_list(spec.get("overhead"), join_path(sp, "overhead"))
    pod_res = as_map(spec.get("resources"), join_path(sp, "resources"))
    pod_level = parse_resource_list(pod_res.get("requests"), join_path(sp, "resources.requests"))
    for k, v in parse_resource_list(pod_res.get("limits"), join_path(sp, "resources.limits")).items():
        pod_level.setdefault(k, v)
    pod_level = supported_pod_level(pod_level)
    creqs = [c.requests for c in containers]
    ireqs = [(c.requests, c.restartable) for c in inits]
    requests = pod_requests(creqs, ireqs, overhead, pod_level)
    requests.pop(PODS, None)
    nz_cpu, nz_mem = non_zero_requests(creqs, ireqs, overhead, pod_level, requests)
    return requests, nz_cpu, nz_mem


class Signature:
    """A pod's scheduling signature (``Pod.signature``) with its hash computed once: the tuple is
    deep, and hashing it again on every cache lookup cost more than the lookup itself."""

    __slots__ = ("_hash", "key")

    def __init__(self, key: tuple) -> None:
        self.key = key
        self._hash = hash(key)  # TypeError when some field is unhashable

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (
            isinstance(other, Signature) and self._hash == other._hash and self.key == other.key
        )


@dataclass(eq=False, slots=True)
class Pod:
    namespace: str
    name: str
    uid: str
    labels: dict[str, str]
    annotations: dict[str, str]
    owners: tuple[OwnerRef, ...]
    scheduler_name: str
    node_name: str
    nominated_node_name: str
    priority: int
    priority_class_name: str
    preemption_policy: str  # PreemptLowerPriority | Never
    requests: Resources  # effective requests (filter semantics), includes no "pods" entry
    non_zero_cpu: int
    non_zero_mem: int
    containers: tuple[Container, ...]
    init_containers: tuple[Container, ...]
    host_ports: tuple[HostPort, ...]
    node_selector: dict[str, str]
    node_affinity: NodeAffinity | None
    pod_affinity: PodAffinity | None
    pod_anti_affinity: PodAffinity | None
    tolerations: tuple[Toleration, ...]
    spread_constraints: tuple[TopologySpreadConstraint, ...]
    scheduling_gates: tuple[str, ...]
    phase: str
    creation_time: float | None
    start_time: float | None
    deleting: bool
    raw: dict = field(repr=False)
    volumes: tuple[PodVolume, ...] = field(default=(), repr=False)  # spec.volumes
    _sig: Any = field(default=None, repr=False, compare=False)
    # spec.resourceClaims, and status.resourceClaimStatuses (pod claim -> generated claim name)
    resource_claims: tuple[PodClaimRef, ...] = ()
    resource_claim_statuses: dict[str, str | None] = field(default_factory=dict, repr=False)
    # the volumes the volume plugins read (claims, in-tree disks, inline CSI: SCHEDULED_SOURCES)
    storage_volumes: tuple[PodVolume, ...] = field(default=(), repr=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def images(self) -> tuple[str, ...]:
        return tuple(c.image for c in self.containers if c.image)

    @property
    def terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    @classmethod
    def parse(cls, d: Any, path: str = "", *, default_namespace: str = "default") -> Pod:
        m = as_map(d, path)
        md, mp = child(m, path, "metadata")
        spec, sp = child(m, path, "spec")
        status = as_map(m.get("status"), join_path(path, "status"))
        name = as_str(md.get("name"), join_path(mp, "name"))
        if not name:
            raise InputError("metadata.name is required", path=join_path(mp, "name"))
        namespace = as_str(md.get("namespace"), join_path(mp, "namespace")) or default_namespace
        labels = str_map(md.get("labels"), join_path(mp, "labels"))
        owners = _parse_owners(md.get("ownerReferences"), mp)
        containers, inits, ports = _parse_containers(spec, sp)
        requests, nz_cpu, nz_mem = _pod_requests(spec, sp, containers, inits)
        aff = as_map(spec.get("affinity"), join_path(sp, "affinity"))
        ap = join_path(sp, "affinity")
        priority = as_int(spec.get("priority"), join_path(sp, "priority"), None)
        gates = tuple(
            as_str(as_map(g, join_path(sp, "schedulingGates")).get("name"), join_path(sp, "schedulingGates"))
            for g in as_list(spec.get("schedulingGates"), join_path(sp, "schedulingGates"))
        )
        tp = join_path(sp, "topologySpreadConstraints")
        volumes = parse_pod_volumes(vols, join_path(sp, "volumes"), name) if (vols := spec.get("volumes")) else ()
        if spec.get("resourceClaims") or status.get("resourceClaimStatuses"):
            claims, claim_statuses = parse_pod_claims(spec, status, path)
        else:  # most pods: nothing to parse (each pod its own statuses: the claim controller writes them)
            claims, claim_statuses = (), {}
        return cls(
            namespace=namespace,
            name=name,
            uid=as_str(md.get("uid"), join_path(mp, "uid")) or f"uid-{next(_uid_counter)}",
            labels=labels,
            annotations=str_map(md.get("annotations"), join_path(mp, "annotations")),
            owners=owners,
            scheduler_name=as_str(spec.get("schedulerName"), join_path(sp, "schedulerName")) or DEFAULT_SCHEDULER_NAME,
            node_name=as_str(spec.get("nodeName"), join_path(sp, "nodeName")),
            nominated_node_name=as_str(status.get("nominatedNodeName"), join_path(path, "status.nominatedNodeName")),
            priority=priority if priority is not None else 0,
            priority_class_name=as_str(spec.get("priorityClassName"), join_path(sp, "priorityClassName")),
            preemption_policy=as_str(spec.get("preemptionPolicy"), join_path(sp, "preemptionPolicy"))
            or "PreemptLowerPriority",
            requests=requests,
            non_zero_cpu=nz_cpu,
            non_zero_mem=nz_mem,
            containers=tuple(containers),
            init_containers=tuple(inits),
            host_ports=tuple(ports),
            node_selector=str_map(spec.get("nodeSelector"), join_path(sp, "nodeSelector")),
            node_affinity=NodeAffinity.parse(aff.get("nodeAffinity"), join_path(ap, "nodeAffinity")),
            pod_affinity=PodAffinity.parse(aff.get("podAffinity"), join_path(ap, "podAffinity"), labels),
            pod_anti_affinity=PodAffinity.parse(aff.get("podAntiAffinity"), join_path(ap, "podAntiAffinity"), labels),
            tolerations=parse_tolerations(spec.get("tolerations"), join_path(sp, "tolerations")),
            spread_constraints=tuple(
                TopologySpreadConstraint.parse(c, join_path(tp, i), labels)
                for i, c in enumerate(as_list(spec.get("topologySpreadConstraints"), tp))
            ),
            scheduling_gates=gates,
            phase=as_str(status.get("phase"), join_path(path, "status.phase")),
            creation_time=_parse_time(md.get("creationTimestamp"), join_path(mp, "creationTimestamp")),
            start_time=_parse_time(status.get("startTime"), join_path(path, "status.startTime")),
            deleting=md.get("deletionTimestamp") is not None,
            raw=m,
            volumes=volumes,
            storage_volumes=tuple(v for v in volumes if v.source in SCHEDULED_SOURCES) if volumes else (),
            resource_claims=claims,
            resource_claim_statuses=claim_statuses,
        )

    def copy(self) -> Pod:
        """A shallow copy: parsed fields are shared (never mutated in place); the signature is
        not carried over."""
        p = Pod(*_pod_values(self))
        p._sig = None
        return p

    def with_node(self, node_name: str) -> Pod:
        """A copy bound to ``node_name`` (what binding does to the object)."""
        p = self.copy()
        p.node_name = node_name
        return p

    def signature(self) -> Signature | None:
        """What scheduling reads of this pod: equal signatures get equal verdicts on equal nodes.

        None when some field is unhashable (then the pod is never cached).
        """
        if self._sig is not None:
            return self._sig or None
        try:
            sig = (
                self.scheduler_name,
                self.namespace,
                tuple(sorted(self.labels.items())),
                tuple(sorted(self.requests.items())),
                self.non_zero_cpu,
                self.non_zero_mem,
                self.node_name,
                self.priority,
                self.host_ports,
                tuple(sorted(self.node_selector.items())),
                self.node_affinity,
                self.pod_affinity,
                self.pod_anti_affinity,
                self.tolerations,
                self.spread_constraints,
                self.owners,
                self.images,
                tuple(c.image for c in self.init_containers),
                volume_key(self.volumes) if self.volumes else (),
                self.resource_claims,
            )
            key = Signature(sig)
        except TypeError:
            self._sig = ()
            return None
        self._sig = key
        return key

    @property
    def has_required_anti_affinity(self) -> bool:
        return bool(self.pod_anti_affinity and self.pod_anti_affinity.required)

    @property
    def has_affinity_terms(self) -> bool:
        return self.pod_affinity is not None or self.pod_anti_affinity is not None


_POD_FIELDS = tuple(f.name for f in dataclasses.fields(Pod))
_pod_values = operator.attrgetter(*_POD_FIELDS)  # every field, in order, in one C call


@dataclass(frozen=True, slots=True)
class ImageState:
    names: tuple[str, ...]
    size: int


@dataclass(eq=False, slots=True)
class Node:
    name: str
    uid: str
    labels: dict[str, str]
    allocatable: Resources  # includes "pods"
    unschedulable: bool
    taints: tuple[Taint, ...]
    images: tuple[ImageState, ...]
    raw: dict = field(repr=False)

    @classmethod
    def parse(cls, d: Any, path: str = "") -> Node:
        m = as_map(d, path)
        md, mp = child(m, path, "metadata")
        spec, sp = child(m, path, "spec")
        status, stp = child(m, path, "status")
        name = as_str(md.get("name"), join_path(mp, "name"))
        if not name:
            raise InputError("metadata.name is required", path=join_path(mp, "name"))
        alloc_raw = status.get("allocatable")
        alloc_path = join_path(stp, "allocatable")
        if alloc_raw is None:  # the API server copies capacity when allocatable is unset
            alloc_raw, alloc_path = status.get("capacity"), join_path(stp, "capacity")
        allocatable = parse_resource_list(alloc_raw, alloc_path)
        images = []
        for i, im in enumerate(as_list(status.get("images"), join_path(stp, "images"))):
            ipath = join_path(join_path(stp, "images"), i)
            imm = as_map(im, ipath)
            names = tuple(as_str(n, join_path(ipath, "names")) for n in as_list(imm.get("names"), ipath))
            images.append(ImageState(names, as_int(imm.get("sizeBytes"), join_path(ipath, "sizeBytes"))))
        return cls(
            name=name,
            uid=as_str(md.get("uid"), join_path(mp, "uid")) or f"uid-{next(_uid_counter)}",
            labels=str_map(md.get("labels"), join_path(mp, "labels")),
            allocatable=allocatable,
            unschedulable=as_bool(spec.get("unschedulable"), join_path(sp, "unschedulable")),
            taints=parse_taints(spec.get("taints"), join_path(sp, "taints")),
            images=tuple(images),
            raw=m,
        )


@dataclass(frozen=True, slots=True)
class Namespace:
    name: str
    labels: dict[str, str]

    @classmethod
    def parse(cls, d: Any, path: str = "") -> Namespace:
        m = as_map(d, path)
        md = as_map(m.get("metadata"), join_path(path, "metadata"))
        name = as_str(md.get("name"), join_path(path, "metadata.name"))
        if not name:
            raise InputError("metadata.name is required", path=join_path(path, "metadata.name"))
        return cls(name, str_map(md.get("labels"), join_path(path, "metadata.labels")))


@dataclass(frozen=True, slots=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool
    preemption_policy: str

    @classmethod
    def parse(cls, d: Any, path: str = "") -> PriorityClass:
        m = as_map(d, path)
        md = as_map(m.get("metadata"), join_path(path, "metadata"))
        name = as_str(md.get("name"), join_path(path, "metadata.name"))
        value = as_int(m.get("value"), join_path(path, "value"), None)
        if value is None:
            raise InputError("value is required", path=join_path(path, "value"))
        return cls(
            name,
            value,
            as_bool(m.get("globalDefault"), join_path(path, "globalDefault")),
            as_str(m.get("preemptionPolicy"), join_path(path, "preemptionPolicy")) or "PreemptLowerPriority",
        )


@dataclass(frozen=True, slots=True)
class PodDisruptionBudget:
    """What preemption reads of a policy/v1 PodDisruptionBudget."""

    namespace: str
    selector: LabelSelector | None
    disruptions_allowed: int
    disrupted_pods: frozenset[str] = frozenset()  # pod names already evicted

    @classmethod
    def parse(cls, d: Any, path: str = "") -> PodDisruptionBudget:
        m = as_map(d, path)
        md = as_map(m.get("metadata"), join_path(path, "metadata"))
        spec = as_map(m.get("spec"), join_path(path, "spec"))
        status = as_map(m.get("status"), join_path(path, "status"))
        sp = join_path(path, "status")
        return cls(
            as_str(md.get("namespace"), join_path(path, "metadata.namespace")) or "default",
            LabelSelector.parse(spec.get("selector"), join_path(path, "spec.selector")),
            as_int(status.get("disruptionsAllowed"), join_path(sp, "disruptionsAllowed")) or 0,
            frozenset(as_map(status.get("disruptedPods"), join_path(sp, "disruptedPods"))),
        )


# ---- scheduler-plugins objects (scheduling.x-k8s.io/v1alpha1) --------------------------------
#: API groups of PodGroup and ElasticQuota: today's and the one before scheduler-plugins v0.24.
SCHEDULING_API_VERSIONS = ("scheduling.x-k8s.io/v1alpha1", "scheduling.sigs.k8s.io/v1alpha1")


def _scheduling_meta(m: dict, path: str, kind: str) -> tuple[str, str, float | None]:
    """(namespace, name, creation time) of a scheduler-plugins object; checks its apiVersion."""
    api = m.get("apiVersion")
    if api is not None and api not in SCHEDULING_API_VERSIONS:
        raise InputError(
            f'unsupported apiVersion "{api}" for {kind} (supported: {", ".join(SCHEDULING_API_VERSIONS)})',
            path=join_path(path, "apiVersion"),
        )
    md, mp = child(m, path, "metadata")
    name = as_str(md.get("name"), join_path(mp, "name"))
    if not name:
        raise InputError("metadata.name is required", path=join_path(mp, "name"))
    namespace = as_str(md.get("namespace"), join_path(mp, "namespace")) or "default"
    return namespace, name, _parse_time(md.get("creationTimestamp"), join_path(mp, "creationTimestamp"))


@dataclass(frozen=True, slots=True)
class PodGroup:
    """A gang for Coscheduling: pods labelled ``scheduling.x-k8s.io/pod-group: <name>``."""

    namespace: str
    name: str
    min_member: int
    min_resources: Resources | None  # None when the spec has no minResources
    schedule_timeout_seconds: int | None
    creation_time: float | None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @classmethod
    def parse(cls, d: Any, path: str = "") -> PodGroup:
        m = as_map(d, path)
        namespace, name, created = _scheduling_meta(m, path, "PodGroup")
        spec, sp = child(m, path, "spec")
        raw_min = spec.get("minResources")
        min_resources = None if raw_min is None else parse_resource_list(raw_min, join_path(sp, "minResources"))
        for k, v in (min_resources or {}).items():
            if v < 0:
                raise InputError("must be greater than or equal to 0", path=join_path(sp, f"minResources.{k}"))
        return cls(
            namespace,
            name,
            as_int32(spec.get("minMember"), join_path(sp, "minMember"), 0, 0) or 0,
            min_resources,
            as_int32(spec.get("scheduleTimeoutSeconds"), join_path(sp, "scheduleTimeoutSeconds"), None, 0),
            created,
        )


@dataclass(frozen=True, slots=True)
class ElasticQuota:
    """CapacityScheduling's per-namespace quota: guaranteed ``min`` and ceiling ``max``."""

    namespace: str
    name: str
    min: Resources | None  # None when the spec has no min (every resource 0)
    max: Resources | None  # None when the spec has no max (unlimited)

    @classmethod
    def parse(cls, d: Any, path: str = "") -> ElasticQuota:
        m = as_map(d, path)
        namespace, name, _ = _scheduling_meta(m, path, "ElasticQuota")
        spec, sp = child(m, path, "spec")
        out: dict[str, Resources | None] = {}
        for fld in ("min", "max"):
            raw = spec.get(fld)
            rl = None if raw is None else parse_resource_list(raw, join_path(sp, fld))
            for k, v in (rl or {}).items():
                if v < 0:
                    raise InputError("must be greater than or equal to 0", path=join_path(sp, f"{fld}.{k}"))
            out[fld] = rl
        lo, hi = out["min"], out["max"]
        if lo is not None and hi is not None:
            for k, v in lo.items():
                if k in hi and v > hi[k]:
                    shown = f"{format_quantity(k, v)} must not exceed max {format_quantity(k, hi[k])}"
                    raise InputError(f"min {shown}", path=join_path(sp, f"min.{k}"))
        return cls(namespace, name, lo, hi)
