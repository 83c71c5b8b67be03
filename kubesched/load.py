"""Read Kubernetes objects from YAML/JSON files: multi-document, ``kind: List``, kubectl dumps.

Objects of the kinds scheduling reads are judged as the API server judges them before they are
parsed: strict decoding (``schema``: unknown fields, wrong types, wrong apiVersion), validation
(``validation``) and the Priority admission plugin (``resolve_priorities``). Names must be
unique per kind and namespace, as in a cluster.

``validate`` is kubectl's ``--validate``: ``strict`` (the default) refuses an object with an
unknown field or one the API server's validation refuses; ``warn`` loads it, with one warning
per problem (an unknown field is dropped, as the API server drops it); ``ignore`` loads it
without a word. What no mode lets through is what no object can be built from, or no cluster
can hold: a document that is no YAML or JSON, an unknown kind or a wrong apiVersion, a value of
the wrong JSON type, what parsing refuses (an unparsable quantity, an unknown selector
operator, ...), two objects of one name, the int64 bounds of requests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched import documents
from kubesched.api import field_validation, schema, storage_validation, validation
from kubesched.api.fields import as_map
from kubesched.api.names import is_dns1035_label, is_dns1123_label, is_dns1123_subdomain
from kubesched.api.objects import (
    ElasticQuota,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PodGroup,
    PriorityClass,
)
from kubesched.api.quantity import INT64_MAX, INT64_MIN
from kubesched.api.resources import add_into, check_int64
from kubesched.api.selectors import LabelSelector
from kubesched.api.storage import EPHEMERAL, STORAGE_KINDS, PersistentVolumeClaim, StorageClass
from kubesched.api.storage_admission import admit_claims, check_unique_storage, ephemeral_claim
from kubesched.dra import load as dra_load
from kubesched.dra.store import DraObjects
from kubesched.dra.validation import pod_claims
from kubesched.errors import InputError, join_path
from kubesched.gpu.model import GPU_COUNT, MAX_GPUS_PER_NODE
from kubesched.heap import paused_gc

# Kinds we read; other well-known kinds in a cluster dump are skipped, unknown kinds rejected.
WORKLOAD_KINDS = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet")
#: kinds that hold a pod template, not pods: their controllers create the pods (counted in ``templates``)
TEMPLATE_KINDS = frozenset({"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob", "ReplicationController"})
IGNORED_KINDS = frozenset(
    {
        "Deployment", "DaemonSet", "Job", "CronJob", "ConfigMap", "Secret", "ServiceAccount", "Endpoints",
        "EndpointSlice", "Event", "Lease", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding", "Ingress",
        "NetworkPolicy", "LimitRange", "ResourceQuota", "HorizontalPodAutoscaler", "CustomResourceDefinition",
        "ControllerRevision", "VolumeAttributesClass",
    }
)
#: apiVersion of each kind read (a missing apiVersion is accepted; another one is an error).
API_VERSIONS: dict[str, str] = {
    **schema.API_VERSIONS,
    "Service": "v1",
    "ReplicationController": "v1",
    "ReplicaSet": "apps/v1",
    "StatefulSet": "apps/v1",
}


def _pod(m: dict, path: str, report: field_validation.Report = field_validation.raise_first) -> None:
    validation.pod(m, path, report)
    storage_validation.pod_volumes_checked(m, path, report)


#: API-server validation of each kind read (after the schema check of the kinds it covers).
VALIDATE: dict[str, Callable[..., None]] = {
    "Pod": _pod,
    "Node": validation.node,
    "Namespace": validation.namespace,
    "PriorityClass": validation.priority_class,
    "PodDisruptionBudget": validation.pdb,
    **storage_validation.VALIDATE_STORAGE,
    "Service": validation.metadata_of(is_dns1035_label),
    "ReplicationController": validation.metadata_of(is_dns1123_subdomain),
    "ReplicaSet": validation.metadata_of(is_dns1123_subdomain),
    "StatefulSet": validation.metadata_of(is_dns1123_label),
    "PodGroup": validation.metadata_of(is_dns1123_subdomain),
    "ElasticQuota": validation.metadata_of(is_dns1123_subdomain),
}
#: kubectl's --validate modes: refuse, warn and load, load.
STRICT, WARN, IGNORE = "strict", "warn", "ignore"
VALIDATE_MODES = (STRICT, WARN, IGNORE)


@dataclass
class ClusterObjects:
    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    namespaces: list[Namespace] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)
    # (kind, namespace, name, selector) of Services, RCs, ReplicaSets, StatefulSets
    workload_selectors: list[tuple[str, str, str, LabelSelector]] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    # scheduler-plugins objects (scheduling.x-k8s.io/v1alpha1): Coscheduling, CapacityScheduling
    pod_groups: list[PodGroup] = field(default_factory=list)
    elastic_quotas: list[ElasticQuota] = field(default_factory=list)
    # PVs, PVCs, StorageClasses, CSINodes, CSIDrivers, CSIStorageCapacities, VolumeAttachments
    storage: list[Any] = field(default_factory=list)
    # resource.k8s.io/v1: DeviceClasses, ResourceSlices, ResourceClaims, ResourceClaimTemplates
    dra: DraObjects = field(default_factory=DraObjects)
    skipped: dict[str, int] = field(default_factory=dict)
    #: objects of TEMPLATE_KINDS read, by kind (a dump of them alone has no pod to schedule)
    templates: dict[str, int] = field(default_factory=dict)
    #: Where each Pod, Node, Namespace, PriorityClass and storage object came from (file, field path), by id().
    origins: dict[int, tuple[str, str]] = field(default_factory=dict)
    #: Admitted-but-suspicious input (a pod naming an unknown PriorityClass), one line each.
    warnings: list[str] = field(default_factory=list)

    def pending(self) -> list[Pod]:
        """The pods a scheduler takes from these objects: unbound and not terminal
        (``Snapshot.of`` places the bound ones)."""
        return [p for p in self.pods if not p.node_name and not p.terminal]

    def extend(self, other: ClusterObjects) -> None:
        self.nodes += other.nodes
        self.pods += other.pods
        self.namespaces += other.namespaces
        self.priority_classes += other.priority_classes
        self.workload_selectors += other.workload_selectors
        self.pdbs += other.pdbs
        self.pod_groups += other.pod_groups
        self.elastic_quotas += other.elastic_quotas
        self.storage += other.storage
        self.dra.extend(other.dra)
        for k, v in other.skipped.items():
            self.skipped[k] = self.skipped.get(k, 0) + v
        for k, v in other.templates.items():
            self.templates[k] = self.templates.get(k, 0) + v
        self.origins.update(other.origins)
        self.warnings += other.warnings


def read_documents(path: str) -> list[tuple[str, Any]]:
    """(field path, document) pairs from a YAML or JSON file; malformed input -> InputError."""
    docs = documents.read_documents(path, keep_empty=True)
    multi = len(docs) > 1
    return [(f"documents[{i}]" if multi else "", d) for i, d in enumerate(docs) if d is not None]


def kind_items(path: str, doc: Any) -> list[tuple[str, dict]]:
    """(field path, object) pairs of a document: Lists are flattened, each item names its kind."""
    m = as_map(doc, path or "document")
    kind = m.get("kind")
    if not isinstance(kind, str) or not kind:
        raise InputError("kind is required", path=f"{path}.kind" if path else "kind")
    if kind == "List" or kind.endswith("List"):
        items = m.get("items")
        if items is None:
            return []
        if not isinstance(items, list):
            raise InputError("expected a list", path=f"{path}.items" if path else "items")
        out = []
        item_kind = kind[:-4] if kind != "List" else None
        for i, it in enumerate(items):
            ip = f"{path}.items[{i}]" if path else f"items[{i}]"
            itm = as_map(it, ip)
            if item_kind and "kind" not in itm:  # NodeList items may omit kind
                itm = {**itm, "kind": item_kind}
            out.extend(kind_items(ip, itm))
        return out
    return [(path, m)]


def _selector_of(kind: str, m: dict, path: str) -> LabelSelector | None:
    spec = as_map(m.get("spec"), f"{path}.spec")
    sel = spec.get("selector")
    if sel is None:
        return None
    if kind in ("Service", "ReplicationController"):  # plain label maps
        return LabelSelector.parse({"matchLabels": sel}, f"{path}.spec.selector")
    return LabelSelector.parse(sel, f"{path}.spec.selector")


def parse_objects(path: str, docs: list[tuple[str, Any]], validate: str = STRICT) -> ClusterObjects:
    """The objects of one file's documents, judged as ``validate`` says (see the module's doc)."""
    try:
        return _parse_objects(path, docs, validate)
    except InputError as e:
        raise InputError(e.reason, source=path, path=e.path) from None


def _bounded_gpus(node: Node, path: str) -> Node:
    """The GPU plugins keep one column per GPU: a node's GPU count is bounded."""
    gpus = node.allocatable.get(GPU_COUNT, 0)
    if gpus > MAX_GPUS_PER_NODE:
        status = node.raw.get("status") or {}
        field = "allocatable" if status.get("allocatable") is not None else "capacity"
        raise InputError(
            f"{gpus} GPUs, more than a node can have ({MAX_GPUS_PER_NODE})",
            path=join_path(path, f"status.{field}.{GPU_COUNT}"),
        )
    return node


def _int64_requests(pod: Pod, path: str) -> Pod:
    """kube-scheduler adds a pod's container requests in int64: their total must fit."""
    if max(pod.non_zero_cpu, pod.non_zero_mem) > INT64_MAX or any(v > INT64_MAX or v < INT64_MIN for v in pod.requests.values()):
        check_int64(_amounts(pod), join_path(path, "spec"), "the pod's requests")
    return pod


def _reporter(validate: str, warnings: list[str], source: str) -> field_validation.Report | None:
    """Where ``validate`` sends a problem: nowhere else than up (strict: None), to the warnings,
    or nowhere."""
    if validate == STRICT:
        return None
    if validate == WARN:
        return lambda e: warnings.append(str(InputError(e.reason, source=source, path=e.path)))
    return lambda e: None


def _judge(kind: str, m: dict, path: str, validate: str, report: field_validation.Report | None) -> None:
    """The API server's strict decoding and validation of one object, as ``validate`` says;
    ``report``: ``_reporter``'s."""
    if kind in schema.API_VERSIONS:
        schema.check(kind, m, path, unknown=report)
    if kind not in VALIDATE:
        return
    if validate == STRICT:
        VALIDATE[kind](m, path)
    elif validate == WARN:
        VALIDATE[kind](m, path, report)


def _parse_objects(source: str, docs: list[tuple[str, Any]], validate: str = STRICT) -> ClusterObjects:
    out = ClusterObjects()
    report = _reporter(validate, out.warnings, source)
    for dpath, doc in docs:
        for ipath, m in kind_items(dpath, doc):
            kind = m["kind"]
            want = API_VERSIONS.get(kind)
            api = m.get("apiVersion")
            if want is not None and api is not None and api != want:
                raise InputError(
                    f'{kind} is served as apiVersion "{want}", not "{api}"',
                    path=f"{ipath}.apiVersion" if ipath else "apiVersion",
                )
            if kind in VALIDATE or kind in schema.API_VERSIONS:
                _judge(kind, m, ipath, validate, report)
            if kind in TEMPLATE_KINDS:
                out.templates[kind] = out.templates.get(kind, 0) + 1
            if kind == "Node":
                out.nodes.append(_bounded_gpus(Node.parse(m, ipath), ipath))
                out.origins[id(out.nodes[-1])] = (source, ipath)
            elif kind == "Pod":
                # the claims' checks are the DRA parser's footing: made under every --validate mode
                pod_claims(m.get("spec") or {}, join_path(ipath, "spec"))
                out.pods.append(_int64_requests(Pod.parse(m, ipath), ipath))
                out.origins[id(out.pods[-1])] = (source, ipath)
            elif kind == "Namespace":
                out.namespaces.append(Namespace.parse(m, ipath))
                out.origins[id(out.namespaces[-1])] = (source, ipath)
            elif kind == "PriorityClass":
                out.priority_classes.append(PriorityClass.parse(m, ipath))
                out.origins[id(out.priority_classes[-1])] = (source, ipath)
            elif kind == "PodDisruptionBudget":
                out.pdbs.append(PodDisruptionBudget.parse(m, ipath))
            elif kind == "PodGroup":
                out.pod_groups.append(PodGroup.parse(m, ipath))
            elif kind == "ElasticQuota":
                out.elastic_quotas.append(ElasticQuota.parse(m, ipath))
            elif kind in STORAGE_KINDS:
                out.storage.append(STORAGE_KINDS[kind](m, ipath))
                out.origins[id(out.storage[-1])] = (source, ipath)
            elif kind in dra_load.KINDS:
                dra_load.KINDS[kind][0](m, ipath)  # strict under every --validate mode: parse relies on it
                dra_load.add(out.dra, kind, m, ipath)
            elif kind in WORKLOAD_KINDS:
                sel = _selector_of(kind, m, ipath)
                md = as_map(m.get("metadata"), ipath)
                ns = md.get("namespace") or "default"
                if sel is not None:
                    out.workload_selectors.append((kind, ns, str(md.get("name") or ""), sel))
            elif kind in IGNORED_KINDS:
                out.skipped[kind] = out.skipped.get(kind, 0) + 1
            elif kind == "KubeSchedulerConfiguration":
                raise InputError(
                    "a KubeSchedulerConfiguration is the scheduler's configuration: give it with --config, not -f",
                    path=f"{ipath}.kind" if ipath else "kind",
                )
            else:
                raise InputError(f'unknown kind "{kind}"', path=f"{ipath}.kind" if ipath else "kind")
    return out


def load_cluster(paths: list[str], validate: str = STRICT) -> ClusterObjects:
    """Read every file, then check names are unique and resolve pod priorities (admission)."""
    with paused_gc():
        return objects_of([(p, read_documents(p)) for p in paths], validate)


def objects_of(docs: list[tuple[str, list[tuple[str, Any]]]], validate: str = STRICT) -> ClusterObjects:
    """The objects of documents already read ((file, ``read_documents``'s) pairs), as
    ``load_cluster`` makes them: each file parsed, then the checks across objects (``finish_objects``)."""
    objs = ClusterObjects()
    with paused_gc():
        for p, d in docs:
            objs.extend(parse_objects(p, d, validate))
        return finish_objects(objs, [p for p, _ in docs])


def finish_objects(objs: ClusterObjects, paths: list[str]) -> ClusterObjects:
    """What the API server checks across objects: names unique per kind (and namespace), pod
    priorities from PriorityClasses (admission), one PodGroup per name and ElasticQuota per
    namespace, and int64 totals of the pods bound to each node (``paths``: where the objects
    came from, for the messages); then the claims the resourceclaim controller makes from
    ResourceClaimTemplates (``kubesched.dra.store.make_template_claims``)."""
    check_unique(objs)
    resolve_priorities(objs)
    admit_storage(objs)
    _check_unique_scheduling_objects(objs, paths)
    check_node_totals(objs)
    objs.warnings += dra_load.finish(objs.dra, objs.pods, ", ".join(paths))
    return objs


def admit_storage(objs: ClusterObjects) -> None:
    """What the cluster does with storage before scheduling: the ephemeral volume controller
    creates the claims of pending pods' generic ephemeral volumes (when the input has none of
    that name), the DefaultStorageClass admission plugin gives the default class to claims that
    name none, names are unique per kind. A pending pod's claim missing from the input is a
    warning (the pod will be unschedulable, as kube-scheduler finds no such claim)."""
    claims = {(o.namespace, o.name) for o in objs.storage if isinstance(o, PersistentVolumeClaim)}
    for pod in objs.pods:
        if not pod.volumes or pod.node_name or pod.terminal:
            continue
        for vol in pod.volumes:
            if not vol.uses_claim or (pod.namespace, vol.claim_name) in claims:
                continue
            if vol.source == EPHEMERAL:
                claim = ephemeral_claim(pod.namespace, pod.name, pod.uid, vol)
                objs.storage.append(claim)
                objs.origins[id(claim)] = objs.origins.get(id(pod), ("", ""))
                claims.add((pod.namespace, vol.claim_name))
            else:
                objs.warnings.append(
                    f'pod {pod.key}: volume "{vol.name}" uses PersistentVolumeClaim "{vol.claim_name}", which the '
                    "input does not define (kube-scheduler finds no such claim: the pod is unschedulable)"
                )
    check_unique_storage(objs.storage, objs.origins)
    classes = [o for o in objs.storage if isinstance(o, StorageClass)]
    admitted = iter(admit_claims([o for o in objs.storage if isinstance(o, PersistentVolumeClaim)], classes))
    for i, obj in enumerate(objs.storage):
        if isinstance(obj, PersistentVolumeClaim):
            new = next(admitted)
            if new is not obj:
                objs.origins[id(new)] = objs.origins.get(id(obj), ("", ""))
                objs.storage[i] = new


def check_node_totals(objs: ClusterObjects) -> None:
    """The requests of the pods bound to a node must add up within int64, as the node's
    requested amounts are kept in int64 (Go would wrap around)."""
    nodes = {n.name for n in objs.nodes}
    totals: dict[str, dict[str, int]] = {}
    last: dict[str, Pod] = {}
    for pod in objs.pods:
        if pod.terminal or pod.node_name not in nodes:
            continue
        add_into(totals.setdefault(pod.node_name, {}), _amounts(pod))
        last[pod.node_name] = pod
    for name, acc in totals.items():
        try:
            check_int64(acc, "", f"the requests of the pods bound to node {name}")
        except InputError as e:
            source, path = objs.origins.get(id(last[name]), ("", ""))
            raise InputError(e.reason, source=source or None, path=join_path(path, "spec.nodeName")) from None


def _amounts(pod: Pod) -> dict[str, int]:
    """What kube-scheduler adds up per pod: its requests and its non-zero scoring requests."""
    return {**pod.requests, "cpu (scoring)": pod.non_zero_cpu, "memory (scoring)": pod.non_zero_mem}


def _origin_error(objs: ClusterObjects, obj: object, message: str) -> InputError:
    source, path = objs.origins.get(id(obj), ("", ""))
    return InputError(message, source=source or None, path=path or None)


def check_unique(objs: ClusterObjects) -> None:
    """A cluster holds one Node, Namespace and PriorityClass per name and one Pod per namespace/name."""
    groups: list[tuple[str, list[Any], Any]] = [
        ("Node", objs.nodes, lambda o: o.name),
        ("Namespace", objs.namespaces, lambda o: o.name),
        ("PriorityClass", objs.priority_classes, lambda o: o.name),
        ("Pod", objs.pods, lambda o: o.key),
    ]
    for kind, items, key in groups:
        seen: dict[str, object] = {}
        for obj in items:
            k = key(obj)
            if k in seen:
                first = ": ".join(p for p in objs.origins.get(id(seen[k]), ()) if p)
                raise _origin_error(objs, obj, f'duplicate {kind} "{k}"' + (f" (first at {first})" if first else ""))
            seen[k] = obj


def _check_unique_scheduling_objects(objs: ClusterObjects, paths: list[str]) -> None:
    """One PodGroup per namespace/name; one ElasticQuota per namespace (CapacityScheduling reads one)."""
    groups: set[str] = set()
    for pg in objs.pod_groups:
        if pg.key in groups:
            raise InputError(f'duplicate PodGroup "{pg.key}"', source=", ".join(paths))
        groups.add(pg.key)
    quotas: dict[str, str] = {}
    for eq in objs.elastic_quotas:
        if eq.namespace in quotas:
            raise InputError(
                f'namespace "{eq.namespace}" has two ElasticQuotas ("{quotas[eq.namespace]}", "{eq.name}"); '
                "at most one per namespace",
                source=", ".join(paths),
            )
        quotas[eq.namespace] = eq.name


def resolve_priorities(objs: ClusterObjects) -> None:
    """The Priority admission plugin: a pod's priority and preemption policy come from the
    PriorityClass it names (the built-in ``system-*`` classes included), else from the global
    default class, else 0. A pod that already carries ``spec.priority`` (every pod in a cluster
    dump) keeps it. A class name the input does not define is a warning, not an error: dumps
    often leave PriorityClasses out; the pod keeps its ``spec.priority``."""
    defaults = [pc for pc in objs.priority_classes if pc.global_default]
    if len(defaults) > 1:
        raise _origin_error(
            objs,
            defaults[1],
            f"PriorityClass {defaults[0].name} is already marked as default. Only one default can exist",
        )
    classes: dict[str, tuple[int, str]] = {
        name: (value, "PreemptLowerPriority") for name, value in validation.SYSTEM_PRIORITY_CLASSES.items()
    }
    classes.update({pc.name: (pc.value, pc.preemption_policy) for pc in objs.priority_classes})
    default = (defaults[0].value, defaults[0].preemption_policy) if defaults else None
    for pod in objs.pods:
        spec = pod.raw.get("spec") or {}
        name = pod.priority_class_name
        resolved = classes.get(name) if name else default
        if resolved is None:
            if name:
                objs.warnings.append(
                    f'pod {pod.key}: spec.priorityClassName "{name}" names no PriorityClass in the input '
                    f"(the API server would refuse the pod); its priority is {pod.priority}"
                )
            continue
        value, policy = resolved
        if spec.get("priority") is None:
            pod.priority = value
        elif name and spec["priority"] != value:
            objs.warnings.append(
                f"pod {pod.key}: spec.priority {spec['priority']} differs from PriorityClass {name} ({value}); "
                f"kube-scheduler uses spec.priority"
            )
        if spec.get("preemptionPolicy") is None:
            pod.preemption_policy = policy
