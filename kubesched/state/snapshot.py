"""The columnar cluster state every plugin reads: numpy arrays over node rows.

One object serves as kube-scheduler's cache and snapshot: the scheduling cycle is
single-threaded, so assume/forget/bind/delete update one row in place instead of copying
NodeInfos each cycle. Rows are insertion order; ``order`` is kube-scheduler's node-tree
order (zones interleaved), which is the order nodes are evaluated in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from kubesched.api.objects import ElasticQuota, HostPort, Namespace, Node, Pod, PodDisruptionBudget, PodGroup
from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubesched.api.selectors import LabelSelector
from kubesched.api.taints import Taint
from kubesched.dra.store import DraObjects, DraState
from kubesched.state.labels import LabelIndex
from kubesched.state.matchcount import MatchCounts
from kubesched.state.memo import Memo
from kubesched.state.pods import PodIndex
from kubesched.state.storage import Storage
from kubesched.state.trial import ADD_NODE, ADD_POD, ADOPT, NAMESPACE, REMOVE_ORPHAN, UPDATE_NODE, Trial


class ObjectsOf(Protocol):
    """What ``Snapshot.of`` reads of loaded cluster objects (``kubesched.load.ClusterObjects``,
    a layer above this one: it parses the GPU and DRA objects too)."""

    nodes: list[Node]
    pods: list[Pod]
    namespaces: list[Namespace]
    workload_selectors: list[tuple[str, str, str, LabelSelector]]
    pdbs: list[PodDisruptionBudget]
    pod_groups: list[PodGroup]
    elastic_quotas: list[ElasticQuota]
    storage: list[Any]
    dra: DraObjects
    origins: dict[int, tuple[str, str]]


REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
BASE_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)


def zone_key(labels: dict[str, str]) -> str:
    """utilnode.GetZoneKey: region and zone joined; '' when neither is set."""
    region = next((labels[k] for k in REGION_LABELS if k in labels), "")
    zone = next((labels[k] for k in ZONE_LABELS if k in labels), "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


@dataclass(slots=True)
class NodeInfo:
    """A per-node view (for per-node plugins, the oracle and explain output)."""

    node: Node
    pods: list[Pod]
    requested: dict[str, int]
    non_zero_cpu: int
    non_zero_mem: int
    used_ports: list[HostPort] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def allocatable(self) -> dict[str, int]:
        return self.node.allocatable


class Snapshot:
    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.n = 0  # len(nodes), read on every cycle: kept as a plain attribute
        self.row_of: dict[str, int] = {}
        self.labels = LabelIndex()
        self.resources: list[str] = list(BASE_RESOURCES)
        self.res_index: dict[str, int] = {r: i for i, r in enumerate(self.resources)}
        cap = 64
        self._alloc = np.zeros((cap, len(self.resources)), np.int64)
        self._req = np.zeros((cap, len(self.resources)), np.int64)
        self._nz = np.zeros((cap, 2), np.int64)
        self._unsched = np.zeros(cap, bool)
        self._taint_set = np.zeros(cap, np.int32)
        self.taint_sets: list[tuple[Taint, ...]] = [()]
        self._taint_set_ids: dict[tuple[Taint, ...], int] = {(): 0}
        self.pods_on: list[dict[str, Pod]] = []
        self.ports_on: list[list[HostPort]] = []
        self.pods = PodIndex()
        # Per-query matching-pod counts, updated on every pod add/remove (cleared on node changes).
        self.match_counts = MatchCounts(self.labels, self.pods)
        self.pod_by_uid: dict[str, Pod] = {}
        self.orphans: dict[str, Pod] = {}  # pods bound to a node we do not know (yet)
        self.namespaces: dict[str, dict[str, str]] = {}
        # (kind, namespace, name, selector) of Services, ReplicationControllers, ReplicaSets and
        # StatefulSets: PodTopologySpread's system default constraints derive selectors from them.
        self.workload_selectors: list[tuple[str, str, str, LabelSelector]] = []
        self.pdbs: list[PodDisruptionBudget] = []  # read by DefaultPreemption
        # scheduler-plugins objects: PodGroups by (namespace, name) for Coscheduling, the
        # ElasticQuota of each namespace for CapacityScheduling
        self.pod_groups: dict[tuple[str, str], PodGroup] = {}
        self.elastic_quotas: dict[str, ElasticQuota] = {}
        self.storage = Storage()  # PVs, PVCs, StorageClasses, CSI objects: read by the volume plugins
        # resource.k8s.io objects (DynamicResources' listers)
        self.dra = DraState()
        self.affinity_pods: dict[str, Pod] = {}  # assigned pods with any (anti-)affinity
        self.anti_affinity_pods: dict[str, Pod] = {}  # ... with required anti-affinity
        # uids of pods with affinity terms added or removed, in order, so indexes of their terms
        # catch up without diffing ``affinity_pods``; a truncation bumps ``affinity_log_epoch``.
        self.affinity_log: list[str] = []
        self.affinity_log_epoch = 0
        self._ns_matching: dict[LabelSelector, tuple[int, int, frozenset[str]]] = {}
        self.generation = 0  # bumps on any change
        # What derived values depend on (``kubesched.state.memo``): each bumps when its part changes.
        self.node_generation = 0  # nodes added, removed or changed
        self.pod_generation = 0  # assigned pods added or removed
        self.namespace_generation = 0
        self.affinity_generation = 0  # assigned pods with affinity terms added or removed
        # The rows whose pods changed, in order, since ``structure`` last bumped (nodes or
        # namespaces changed): what per-row caches (the equivalence cache, ``Memo.follow``) replay.
        self.changed_rows: list[int] = []
        self.structure = 0
        self.memo = Memo(self)
        self._order: np.ndarray | None = None
        self._order_pos = np.zeros(0, np.int64)
        self._trial: Trial | None = None  # the innermost open ``trial()``: its changes are journalled

    # ---- built from objects, copied, tried ------------------------------------------
    @classmethod
    def of(
        cls, objs: ObjectsOf, *, nodes: Iterable[Node] | None = None, pods: Iterable[Pod] | None = None
    ) -> Snapshot:
        """The snapshot of loaded cluster objects: namespaces, workload selectors, PDBs, pod groups,
        elastic quotas, storage and DRA objects, the nodes, and the assigned pods that are not
        terminal (pods bound to an unknown node wait as orphans). ``nodes`` and ``pods`` replace
        ``objs``' own (a run's start state, an extender request's nodes)."""
        snap = cls()
        for ns in objs.namespaces:
            snap.set_namespace(ns.name, ns.labels)
        snap.workload_selectors.extend(objs.workload_selectors)
        snap.pdbs.extend(objs.pdbs)
        snap.pod_groups.update(((pg.namespace, pg.name), pg) for pg in objs.pod_groups)
        snap.elastic_quotas.update((eq.namespace, eq) for eq in objs.elastic_quotas)
        snap.storage.load(objs.storage, objs.origins)
        snap.dra.add(objs.dra)  # before the nodes: GPUs in ResourceSlices are theirs
        for node in objs.nodes if nodes is None else nodes:
            snap.add_node(node)
        for pod in objs.pods if pods is None else pods:
            if pod.node_name and not pod.terminal:
                snap.add_pod(pod)
        return snap

    def copy(self, nodes: Iterable[Node] | None = None, *, pods: bool = True) -> Snapshot:
        """A snapshot of its own over the same cluster objects (namespaces, workload selectors,
        PDBs, pod groups, elastic quotas; the storage and DRA stores are shared, not copied).
        ``nodes`` None: the same nodes and pods, their columns and indexes copied as arrays (no
        pod is added again). Else those nodes, with every assigned pod added again when ``pods``
        (pods on nodes not among them wait as orphans). Derived values (the memo, match counts)
        start empty."""
        out = Snapshot()
        for name, labels in self.namespaces.items():
            out.set_namespace(name, labels)
        out.workload_selectors.extend(self.workload_selectors)
        out.pdbs.extend(self.pdbs)
        out.pod_groups.update(self.pod_groups)
        out.elastic_quotas.update(self.elastic_quotas)
        out.storage, out.dra = self.storage, self.dra
        if nodes is not None:
            for node in nodes:
                out.add_node(node)
            if pods:
                for pod in [*self.pod_by_uid.values(), *self.orphans.values()]:
                    out.add_pod(pod)
            return out
        out.nodes, out.n, out.row_of = list(self.nodes), self.n, dict(self.row_of)
        out.labels = self.labels.copy()
        out.resources, out.res_index = list(self.resources), dict(self.res_index)
        for attr in ("_alloc", "_req", "_nz", "_unsched", "_taint_set"):
            setattr(out, attr, getattr(self, attr).copy())
        out.taint_sets, out._taint_set_ids = list(self.taint_sets), dict(self._taint_set_ids)
        out.pods_on = [dict(on) for on in self.pods_on]
        out.ports_on = [list(on) for on in self.ports_on]
        out.pods = self.pods.copy()
        out.match_counts = MatchCounts(out.labels, out.pods)
        out.pod_by_uid, out.orphans = dict(self.pod_by_uid), dict(self.orphans)
        out.affinity_pods, out.anti_affinity_pods = dict(self.affinity_pods), dict(self.anti_affinity_pods)
        return out

    @contextmanager
    def trial(self) -> Iterator[Trial]:
        """``with snap.trial():`` the pods added, removed or bound, the nodes added or updated and
        the namespaces set inside the block are journalled and undone when it ends (exception or
        not), so the snapshot holds the same nodes and pods in the same rows and order as before. Trials nest; ``keep()`` on the yielded trial keeps its changes (an
        enclosing trial undoes them with its own). The cost is proportional to the changes, not the cluster.
        Not journalled: node removals (refused inside a trial), the storage and DRA stores (a
        what-if that binds volumes or allocates claims runs on a copy), and the change counters,
        which move on so that values derived during the trial are not taken for current ones."""
        t = Trial(self._trial)
        self._trial = t
        try:
            yield t
        finally:
            self._trial = None  # the undo steps are not journalled
            try:
                t.close(self)
            finally:
                self._trial = t.parent

    # ---- sizes and column views ------------------------------------------------------
    def __len__(self) -> int:
        return len(self.nodes)

    @property
    def alloc(self) -> np.ndarray:
        """(N, R) allocatable; column ``res_index['pods']`` is the allowed pod count."""
        return self._alloc[: self.n]

    @property
    def requested(self) -> np.ndarray:
        """(N, R) summed effective requests of assigned pods; the pods column counts pods."""
        return self._req[: self.n]

    @property
    def non_zero_requested(self) -> np.ndarray:
        """(N, 2) milli-CPU and memory with scoring defaults for missing requests."""
        return self._nz[: self.n]

    @property
    def unschedulable(self) -> np.ndarray:
        return self._unsched[: self.n]

    @property
    def taint_set_ids(self) -> np.ndarray:
        """Nodes with identical taint lists share an id into ``taint_sets``."""
        return self._taint_set[: self.n]

    @property
    def order(self) -> np.ndarray:
        """Rows in node-tree order: round-robin over zones, insertion order within a zone."""
        if self._order is None:
            zones: dict[str, list[int]] = {}
            for row, node in enumerate(self.nodes):
                zones.setdefault(zone_key(node.labels), []).append(row)
            lists = list(zones.values())
            out: list[int] = []
            depth = max((len(z) for z in lists), default=0)
            if len(lists) == 1:
                out = lists[0]
            else:
                for i in range(depth):
                    out.extend(z[i] for z in lists if i < len(z))
            self._order = np.asarray(out, np.intp)  # row indexes: intp, as numpy indexes with
            self._order_pos = np.empty(len(out), np.int64)
            self._order_pos[self._order] = np.arange(len(out))
        return self._order

    @property
    def order_positions(self) -> np.ndarray:
        """Row -> its position in ``order``."""
        _ = self.order
        return self._order_pos

    def col(self, resource: str) -> int:
        """Column of a resource, adding it (zeros) the first time it is seen."""
        i = self.res_index.get(resource)
        if i is None:
            i = len(self.resources)
            self.resources.append(resource)
            self.res_index[resource] = i
            self._alloc = np.hstack([self._alloc, np.zeros((len(self._alloc), 1), np.int64)])
            self._req = np.hstack([self._req, np.zeros((len(self._req), 1), np.int64)])
        return i

    def _grow(self) -> None:
        cap = len(self._unsched) * 2
        for attr in ("_alloc", "_req", "_nz", "_unsched", "_taint_set"):
            old = getattr(self, attr)
            new = np.zeros((cap, *old.shape[1:]), old.dtype)
            new[: len(old)] = old
            setattr(self, attr, new)

    def _changed(self, nodes: bool = False, row: int | None = None) -> None:
        """Bump the counters of what changed: the nodes, the pods of ``row``, or (neither) the namespaces."""
        self.generation += 1
        if nodes:
            self.node_generation += 1
            self.match_counts.clear()
        if row is not None:
            self.pod_generation += 1
            if len(self.changed_rows) < 1_000_000:
                self.changed_rows.append(row)
                return
        self.structure += 1  # the per-row log restarts
        self.changed_rows.clear()

    # ---- nodes -----------------------------------------------------------------------
    def _taint_id(self, taints: tuple[Taint, ...]) -> int:
        tid = self._taint_set_ids.get(taints)
        if tid is None:
            tid = self._taint_set_ids[taints] = len(self.taint_sets)
            self.taint_sets.append(taints)
        return tid

    def _write_node_row(self, row: int, node: Node) -> None:
        self._alloc[row] = 0
        for name, amount in node.allocatable.items():
            c = self.col(name)  # may widen the arrays: index after
            self._alloc[row, c] = amount
        self._unsched[row] = node.unschedulable
        self._taint_set[row] = self._taint_id(node.taints)

    def add_node(self, node: Node) -> int:
        if node.name in self.row_of:
            self.update_node(node)
            return self.row_of[node.name]
        if self._trial is not None:
            self._trial.ops.append((ADD_NODE, node.name))
        row = len(self.nodes)
        if row == len(self._unsched):
            self._grow()
        self.nodes.append(node)
        self.n = len(self.nodes)
        self.row_of[node.name] = row
        self.labels.append(node.labels, node.name)
        self._req[row] = 0
        self._nz[row] = 0
        self.pods_on.append({})
        self.ports_on.append([])
        self._write_node_row(row, node)
        self._order = None
        self._changed(nodes=True)
        for uid, pod in list(self.orphans.items()):
            if pod.node_name == node.name:
                del self.orphans[uid]
                if self._trial is not None:
                    self._trial.ops.append((ADOPT, pod))
                self.add_pod(pod)
        return row

    def update_node(self, node: Node) -> None:
        row = self.row_of[node.name]
        old = self.nodes[row]
        if self._trial is not None:
            self._trial.ops.append((UPDATE_NODE, old))
        self.nodes[row] = node
        if old.labels != node.labels:
            self.labels.update(row, node.labels)
            if zone_key(old.labels) != zone_key(node.labels):
                self._order = None
        self._write_node_row(row, node)
        self._changed(nodes=True)

    def remove_node(self, name: str) -> None:
        """Remove a node; its pods wait in ``orphans`` in case the node comes back."""
        if self._trial is not None:
            raise RuntimeError(f"node {name!r} cannot be removed inside a trial (its rows could not be put back)")
        row = self.row_of[name]
        for pod in list(self.pods_on[row].values()):
            self.remove_pod(pod.uid)
            self.orphans[pod.uid] = pod
        del self.row_of[name]
        last = len(self.nodes) - 1
        self.labels.swap_remove(row)
        if row != last:
            moved = self.nodes[last]
            self.nodes[row] = moved
            self.row_of[moved.name] = row
            for attr in ("_alloc", "_req", "_nz", "_unsched", "_taint_set"):
                arr = getattr(self, attr)
                arr[row] = arr[last]
            self.pods_on[row] = self.pods_on[last]
            self.ports_on[row] = self.ports_on[last]
            self.pods.renumber_node(last, row)
        self.nodes.pop()
        self.n = len(self.nodes)
        self.pods_on.pop()
        self.ports_on.pop()
        self._order = None
        self._changed(nodes=True)

    # ---- pods ------------------------------------------------------------------------
    def add_pod(self, pod: Pod) -> None:
        """Account an assigned (bound or assumed) pod on ``pod.node_name``."""
        if pod.uid in self.pod_by_uid:
            self.remove_pod(pod.uid)
        if self._trial is not None:
            self._trial.ops.append((ADD_POD, pod.uid))
        row = self.row_of.get(pod.node_name)
        if row is None:
            self.orphans[pod.uid] = pod
            return
        for name in pod.requests:
            if name not in self.res_index:
                self.col(name)  # may widen the arrays: take the row view after
        req = self._req[row]
        for name, amount in pod.requests.items():
            req[self.res_index[name]] += amount
        self._req[row, self.res_index[PODS]] += 1
        self._nz[row, 0] += pod.non_zero_cpu
        self._nz[row, 1] += pod.non_zero_mem
        self.pods_on[row][pod.uid] = pod
        if pod.host_ports:
            self.ports_on[row].extend(pod.host_ports)
        self.pods.add(pod, row)
        self.match_counts.on_pod(pod, row, 1)
        self.pod_by_uid[pod.uid] = pod
        if pod.has_affinity_terms:
            self.affinity_pods[pod.uid] = pod
            self._log_affinity(pod.uid)
            if pod.has_required_anti_affinity:
                self.anti_affinity_pods[pod.uid] = pod
        # Plugins reading other nodes' pods run fresh every cycle (their indexes follow
        # ``affinity_log`` and ``match_counts``), so only this row's cached verdicts go stale.
        self._changed(row=row)

    def remove_pod(self, uid: str) -> Pod | None:
        pod = self.pod_by_uid.pop(uid, None)
        if pod is None:
            pod = self.orphans.pop(uid, None)
            if pod is not None and self._trial is not None:
                self._trial.ops.append((REMOVE_ORPHAN, pod))
            return pod
        row = self.row_of[pod.node_name]
        if self._trial is not None:
            self._trial.removed(pod, self.pods_on[row])
        req = self._req[row]
        for name, amount in pod.requests.items():
            req[self.res_index[name]] -= amount
        self._req[row, self.res_index[PODS]] -= 1
        self._nz[row, 0] -= pod.non_zero_cpu
        self._nz[row, 1] -= pod.non_zero_mem
        del self.pods_on[row][uid]
        if pod.host_ports:
            ports = self.ports_on[row]
            for hp in pod.host_ports:
                ports.remove(hp)
        self.pods.remove(uid)
        self.match_counts.on_pod(pod, row, -1)
        if self.affinity_pods.pop(uid, None) is not None:
            self.anti_affinity_pods.pop(uid, None)
            self._log_affinity(uid)
        self._changed(row=row)
        return pod

    def _log_affinity(self, uid: str) -> None:
        self.affinity_generation += 1
        if len(self.affinity_log) >= 100_000:
            self.affinity_log.clear()
            self.affinity_log_epoch += 1
        self.affinity_log.append(uid)

    def set_namespace(self, name: str, labels: dict[str, str]) -> None:
        if self._trial is not None:
            self._trial.ops.append((NAMESPACE, name, self.namespaces.get(name)))
        self.namespaces[name] = labels
        self.namespace_generation += 1
        self._changed()

    def remove_namespace(self, name: str) -> None:
        if name in self.namespaces and self._trial is not None:
            self._trial.ops.append((NAMESPACE, name, self.namespaces[name]))
        if self.namespaces.pop(name, None) is not None:
            self.namespace_generation += 1
            self._changed()

    # ---- views -----------------------------------------------------------------------
    def node_info(self, row: int) -> NodeInfo:
        requested = {r: int(v) for r, v in zip(self.resources, self._req[row], strict=True) if v}
        return NodeInfo(
            self.nodes[row],
            list(self.pods_on[row].values()),
            requested,
            int(self._nz[row, 0]),
            int(self._nz[row, 1]),
            list(self.ports_on[row]),
        )

    def rows_of(self, names: Iterable[str]) -> np.ndarray:
        return np.fromiter((self.row_of[n] for n in names if n in self.row_of), np.intp)

    def namespaces_matching(self, selector) -> frozenset[str]:  # noqa: ANN001
        """Namespaces (known objects, or seen on pods) whose labels match a LabelSelector.

        Cached per selector until a namespace changes or pods show up in a new namespace.
        """
        stamp = (self.namespace_generation, len(self.pods.ns_codes))
        hit = self._ns_matching.get(selector)
        if hit is not None and hit[:2] == stamp:
            return hit[2]
        names = set(self.namespaces) | set(self.pods.ns_codes)
        out = frozenset(ns for ns in names if selector.matches(self.namespaces.get(ns, {})))
        if len(self._ns_matching) >= 64:
            self._ns_matching.clear()
        self._ns_matching[selector] = (*stamp, out)
        return out
