"""The working copy of an opened cluster file: the objects `kubesched ui` lets the page create,
edit and delete before it re-runs the scheduling (as kube-scheduler-simulator does).

The copy holds each object as its YAML/JSON mapping, in the order of the input; the file on disk
is never written ("download" exports the copy as a List that `kubesched schedule -f` reads).
Every change is judged before it is kept: the object alone as the API server judges it (the same
strict decoding and validation as a file), then the whole copy across objects (names unique,
priorities, storage and claims admitted: ``kubesched.load.objects_of``). A refused change
leaves the copy as it was, and its one-line error names the object and the field.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import yaml

from kubesched import documents
from kubesched.errors import InputError
from kubesched.load import STRICT, ClusterObjects, kind_items, objects_of

#: the kinds a cluster dump holds whose objects live in a namespace ("default" when none is given);
#: every other kind is cluster-scoped
NAMESPACED = frozenset(
    {
        "Pod", "PersistentVolumeClaim", "CSIStorageCapacity", "ResourceClaim", "ResourceClaimTemplate",
        "PodDisruptionBudget", "PodGroup", "ElasticQuota", "Service", "ReplicationController", "ReplicaSet",
        "StatefulSet", "Deployment", "DaemonSet", "Job", "CronJob", "ConfigMap", "Secret", "ServiceAccount",
        "Endpoints", "EndpointSlice", "Event", "Lease", "Role", "RoleBinding", "Ingress", "NetworkPolicy",
        "LimitRange", "ResourceQuota", "HorizontalPodAutoscaler", "ControllerRevision",
    }
)
BODY = "request body"  # what a change's errors name as their source before the object is known


@dataclass(frozen=True)
class Ref:
    """Which object: its kind, namespace ("" when cluster-scoped) and name."""

    kind: str
    namespace: str
    name: str

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def __str__(self) -> str:
        return f"{self.kind} {self.key}"

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "namespace": self.namespace, "name": self.name}


def ref_of(m: dict[str, Any]) -> Ref:
    """The Ref of a mapping that ``kind_items`` gave (so it has a kind)."""
    md = m.get("metadata")
    md = md if isinstance(md, dict) else {}
    name, ns = md.get("name"), md.get("namespace")
    namespace = (ns if isinstance(ns, str) and ns else "default") if m["kind"] in NAMESPACED else ""
    return Ref(m["kind"], namespace, name if isinstance(name, str) else "")


def parse_one(text: str) -> dict[str, Any]:
    """The one object of a change's YAML or JSON text (not a List: one object per change)."""
    try:
        docs = documents.load_documents(text, BODY)
    except InputError as e:  # the text is no YAML: the field is the request's body
        raise InputError(e.reason, path="body") from None
    if len(docs) != 1:
        raise InputError(f"expected one object, got {len(docs)} documents", source=BODY, path="body")
    items = kind_items("", docs[0])
    if len(items) != 1 or items[0][0]:  # a List's items have paths
        raise InputError("expected one object, not a List: create each object on its own", source=BODY, path="kind")
    m = items[0][1]
    if not ref_of(m).name:
        raise InputError(f"{m['kind']}: metadata.name is required", source=BODY, path="metadata.name")
    return m


class WorkingCopy:
    """The objects of an opened cluster as the page edited them. ``validate``: the --validate
    mode the cluster was opened with (every change is judged by it). Changes take the lock, so
    two at once are judged one after the other, each against the copy the other left."""

    def __init__(self, items: list[dict[str, Any]], validate: str = STRICT) -> None:
        self._items = list(items)
        self.validate = validate
        self.lock = threading.Lock()
        self.changes = 0  # changes kept since the cluster was opened
        self.ran = 0  # ``changes`` when the shown run's objects were taken

    @classmethod
    def of(cls, docs: list[tuple[str, list[tuple[str, Any]]]], validate: str = STRICT) -> WorkingCopy:
        """From documents as read ((file, ``read_documents``'s) pairs): Lists flattened to their objects."""
        return cls([m for _, d in docs for path, doc in d for _, m in kind_items(path, doc)], validate)

    def refs(self) -> list[Ref]:
        with self.lock:
            return [ref_of(m) for m in self._items]

    def get(self, ref: Ref) -> dict[str, Any]:
        with self.lock:
            return self._items[self._index(ref)]

    def yaml_of(self, ref: Ref) -> str:
        return yaml.safe_dump(self.get(ref), sort_keys=False)

    def create(self, text: str) -> Ref:
        m = parse_one(text)
        ref = ref_of(m)
        with self.lock:
            if self._find(ref) is not None:
                raise InputError(f"{ref} already exists: edit it, or give the new one another name", source=BODY, path="metadata.name")
            self._commit([*self._items, m])
        return ref

    def replace(self, ref: Ref, text: str) -> Ref:
        """``ref``'s object replaced by ``text``'s, in its place (renaming it is allowed)."""
        m = parse_one(text)
        new = ref_of(m)
        with self.lock:
            at = self._index(ref)
            if new != ref and self._find(new) is not None:
                raise InputError(f"{new} already exists", source=BODY, path="metadata.name")
            self._commit([*self._items[:at], m, *self._items[at + 1 :]])
        return new

    def delete(self, ref: Ref) -> None:
        with self.lock:
            at = self._index(ref)
            self._commit([*self._items[:at], *self._items[at + 1 :]])

    def take(self) -> tuple[ClusterObjects, int]:
        """The copy's objects, parsed afresh (a run changes what it is given), and the change count."""
        with self.lock:
            items, changes = list(self._items), self.changes
        return self._objects(items), changes

    def dump(self) -> str:
        """The copy as one YAML List, which `kubesched schedule -f` reads."""
        from kubesched.ui.interop import dump_list

        with self.lock:
            return dump_list(list(self._items))

    # ---- inside the lock ------------------------------------------------------------------
    def _find(self, ref: Ref) -> int | None:
        for i, m in enumerate(self._items):
            if ref_of(m) == ref:
                return i
        return None

    def _index(self, ref: Ref) -> int:
        at = self._find(ref)
        if at is None:
            raise InputError(f"no {ref} in the working copy", path="name")
        return at

    def _commit(self, items: list[dict[str, Any]]) -> None:
        self._objects(items)  # raises, and nothing is kept, when the change is refused
        self._items = items
        self.changes += 1

    def _objects(self, items: list[dict[str, Any]]) -> ClusterObjects:
        """Each object judged on its own (its errors name it), then all of them together."""
        return objects_of([(str(ref_of(m)), [("", m)]) for m in items], self.validate)
