"""Read Kubernetes objects from YAML/JSON files: multi-document, ``kind: List``, kubectl dumps."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubesched.api.fields import as_map
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

# Kinds we read; other well-known kinds in a cluster dump are skipped, unknown kinds rejected.
WORKLOAD_KINDS = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet")
IGNORED_KINDS = frozenset(
    {
        "Deployment", "DaemonSet", "Job", "CronJob", "ConfigMap", "Secret", "ServiceAccount", "Endpoints",
        "EndpointSlice", "Event", "Lease", "PersistentVolume", "PersistentVolumeClaim", "StorageClass",
        "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding", "Ingress",
        "NetworkPolicy", "LimitRange", "ResourceQuota", "HorizontalPodAutoscaler", "CustomResourceDefinition",
        "KubeSchedulerConfiguration", "ControllerRevision", "CSINode", "CSIDriver", "VolumeAttachment",
    }
)


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
    skipped: dict[str, int] = field(default_factory=dict)

    def extend(self, other: ClusterObjects) -> None:
        self.nodes += other.nodes
        self.pods += other.pods
        self.namespaces += other.namespaces
        self.priority_classes += other.priority_classes
        self.workload_selectors += other.workload_selectors
        self.pdbs += other.pdbs
        self.pod_groups += other.pod_groups
        self.elastic_quotas += other.elastic_quotas
        for k, v in other.skipped.items():
            self.skipped[k] = self.skipped.get(k, 0) + v


def read_documents(path: str) -> list[tuple[str, Any]]:
    """(field path, document) pairs from a YAML or JSON file; malformed input -> InputError."""
    p = Path(path)
    try:
        text = p.read_text() if path != "-" else __import__("sys").stdin.read()
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", source=path) from None
    if p.suffix == ".json":
        try:
            docs = [json.loads(text)]
        except json.JSONDecodeError as e:
            raise InputError(f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}", source=path) from None
    else:
        try:
            docs = [d for d in yaml.safe_load_all(text)]
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
            problem = getattr(e, "problem", None) or str(e).splitlines()[0]
            raise InputError(f"invalid YAML{where}: {problem}", source=path) from None
    out: list[tuple[str, Any]] = []
    multi = len(docs) > 1
    for i, d in enumerate(docs):
        if d is None:
            continue
        out.append((f"documents[{i}]" if multi else "", d))
    return out


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


def parse_objects(path: str, docs: list[tuple[str, Any]]) -> ClusterObjects:
    try:
        return _parse_objects(docs)
    except InputError as e:
        raise InputError(e.reason, source=path, path=e.path) from None


def _parse_objects(docs: list[tuple[str, Any]]) -> ClusterObjects:
    out = ClusterObjects()
    for dpath, doc in docs:
        for ipath, m in kind_items(dpath, doc):
            kind = m["kind"]
            if kind == "Node":
                out.nodes.append(Node.parse(m, ipath))
            elif kind == "Pod":
                out.pods.append(Pod.parse(m, ipath))
            elif kind == "Namespace":
                out.namespaces.append(Namespace.parse(m, ipath))
            elif kind == "PriorityClass":
                out.priority_classes.append(PriorityClass.parse(m, ipath))
            elif kind == "PodDisruptionBudget":
                out.pdbs.append(PodDisruptionBudget.parse(m, ipath))
            elif kind == "PodGroup":
                out.pod_groups.append(PodGroup.parse(m, ipath))
            elif kind == "ElasticQuota":
                out.elastic_quotas.append(ElasticQuota.parse(m, ipath))
            elif kind in WORKLOAD_KINDS:
                sel = _selector_of(kind, m, ipath)
                md = as_map(m.get("metadata"), ipath)
                ns = md.get("namespace") or "default"
                if sel is not None:
                    out.workload_selectors.append((kind, ns, str(md.get("name") or ""), sel))
            elif kind in IGNORED_KINDS:
                out.skipped[kind] = out.skipped.get(kind, 0) + 1
            else:
                raise InputError(f'unknown kind "{kind}"', path=f"{ipath}.kind" if ipath else "kind")
    return out


def load_cluster(paths: list[str]) -> ClusterObjects:
    """Read every file, then resolve pod priorities from PriorityClasses (admission's job)."""
    objs = ClusterObjects()
    for p in paths:
        objs.extend(parse_objects(p, read_documents(p)))
    return finish_objects(objs, paths)


def finish_objects(objs: ClusterObjects, paths: list[str]) -> ClusterObjects:
    """Resolve priorities and refuse duplicate nodes, PodGroups and ElasticQuotas (``paths``:
    where the objects came from, for the message)."""
    resolve_priorities(objs)
    seen: set[str] = set()
    for n in objs.nodes:
        if n.name in seen:
            raise InputError(f'duplicate node "{n.name}"', source=", ".join(paths))
        seen.add(n.name)
    _check_unique_scheduling_objects(objs, paths)
    return objs


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
    classes = {pc.name: pc for pc in objs.priority_classes}
    default = next((pc for pc in objs.priority_classes if pc.global_default), None)
    for pod in objs.pods:
        if "priority" in (pod.raw.get("spec") or {}):
            continue
        pc = classes.get(pod.priority_class_name) if pod.priority_class_name else default
        if pc is not None:
            pod.priority = pc.value
            if "preemptionPolicy" not in (pod.raw.get("spec") or {}):
                pod.preemption_policy = pc.preemption_policy
