"""The cluster's storage objects as the volume plugins list them (upstream's PV, PVC,
StorageClass, CSINode, CSIDriver, CSIStorageCapacity and VolumeAttachment listers).

The snapshot owns one ``Storage`` (``snap.storage``). Offline it is also the API server's copy:
VolumeBinding's PreBind replaces a PV or PVC here, as an API update would, and the listeners
hear the cluster event (``PersistentVolumeClaimUpdate``, ...) that upstream's informers would
deliver to the scheduling queue.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from kubesched.api.csi_migration import Migration, translate_pv
from kubesched.api.storage import (
    PVC,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)
from kubesched.api.storage_admission import check_unique_storage

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.state.snapshot import Snapshot

#: How kube-scheduler's informer listers name each kind in a NotFound error
#: (``<resource> "<name>" not found``: client-go's listers use the singular resource).
RESOURCE_NAMES = {
    PersistentVolume: "persistentvolume",
    PersistentVolumeClaim: "persistentvolumeclaim",
    StorageClass: "storageclass.storage.k8s.io",
    CSINode: "csinode.storage.k8s.io",
    CSIDriver: "csidriver.storage.k8s.io",
}


def not_found(kind: type, name: str) -> str:
    """apierrors.NewNotFound's message, as a lister's Get returns it."""
    return f'{RESOURCE_NAMES[kind]} "{name}" not found'


class Storage:
    """The storage objects of one cluster, by name (PVs, classes, CSI objects) or by
    (namespace, name) (claims, capacities)."""

    def __init__(self) -> None:
        self.pvs: dict[str, PersistentVolume] = {}
        self.pvcs: dict[tuple[str, str], PersistentVolumeClaim] = {}
        self.classes: dict[str, StorageClass] = {}
        self.csi_nodes: dict[str, CSINode] = {}
        self.csi_drivers: dict[str, CSIDriver] = {}
        self.capacities: dict[tuple[str, str], CSIStorageCapacity] = {}
        self.attachments: dict[str, VolumeAttachment] = {}
        self.generation = 0  # bumps on every change
        #: False where nothing feeds this store (the extender, whose caller's own volume plugins
        #: judge volumes; the autoscaler's one listing): the volume plugins then take no part
        #: rather than find every claim missing
        self.tracked = True
        #: who hears the cluster events of changes made here (the scheduling queue)
        self.listeners: list[Callable[[str], Any]] = []
        # PV name -> (the PV, the migration, its CSI translation): ``translated``
        self._translated: dict[str, tuple[PersistentVolume, Migration, PersistentVolume | None]] = {}
        # (generation, node name -> its VolumeAttachments): ``attachments_on``
        self._by_node: tuple[int, dict[str, list[VolumeAttachment]]] = (-1, {})

    def __len__(self) -> int:
        return sum(
            len(d)
            for d in (self.pvs, self.pvcs, self.classes, self.csi_nodes, self.csi_drivers, self.capacities, self.attachments)
        )

    # ---- lookups (the listers' Get) ----------------------------------------------------
    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.pvcs.get((namespace, name))

    def pvs_of_class(self, class_name: str) -> list[PersistentVolume]:
        """pvCache.ListPVs: the PVs of a storage class (by GetPersistentVolumeClass)."""
        return [pv for pv in self.pvs.values() if pv.storage_class == class_name]

    def translated(self, pv: PersistentVolume, migration: Migration) -> PersistentVolume | None:
        """``translate_pv(pv, migration)``, kept per PV: a PV object never changes (an update is
        a new object), and VolumeBinding and NodeVolumeLimits translate the same in-tree PVs on
        every node they judge."""
        hit = self._translated.get(pv.name)
        if hit is None or hit[0] is not pv or hit[1] is not migration:
            hit = self._translated[pv.name] = (pv, migration, translate_pv(pv, migration))
        return hit[2]

    def attachments_on(self, node_name: str) -> list[VolumeAttachment]:
        """The node's VolumeAttachments, from an index rebuilt after a change (NodeVolumeLimits
        asks once per node per cycle: a scan of every attachment each time is quadratic)."""
        if self._by_node[0] != self.generation:
            index: dict[str, list[VolumeAttachment]] = {}
            for va in self.attachments.values():
                index.setdefault(va.node_name, []).append(va)
            self._by_node = (self.generation, index)
        return list(self._by_node[1].get(node_name, ()))

    # ---- changes -----------------------------------------------------------------------
    def add(self, obj: Any) -> None:
        """Add a parsed storage object (a new one, or one replacing its namesake); listeners hear
        ``<Kind>Add`` or ``<Kind>Update``."""
        table, key = self._table(obj)
        event = _event(type(obj).__name__, key in table)
        table[key] = obj
        self.generation += 1
        for listener in self.listeners:
            listener(event)

    def remove(self, obj: Any) -> None:
        """Forget a storage object (its informer saw it deleted); listeners hear ``<Kind>Delete``."""
        table, key = self._table(obj)
        if table.pop(key, None) is None:
            return
        self.generation += 1
        for listener in self.listeners:
            listener(f"{type(obj).__name__}Delete")

    def _table(self, obj: Any) -> tuple[dict, Any]:
        where = _TABLES.get(type(obj))
        if where is None:
            raise TypeError(f"not a storage object: {type(obj).__name__}")
        attr, namespaced = where
        return getattr(self, attr), ((obj.namespace, obj.name) if namespaced else obj.name)

    def load(self, objects: Iterable[Any], origins: dict[int, tuple[str, str]] | None = None) -> None:
        """Add the objects of a cluster dump (names unique per kind, as in a cluster)."""
        objects = list(objects)
        check_unique_storage(objects, origins or {})
        for obj in objects:
            self.add(obj)


#: each kind's table in ``Storage``, and whether it is keyed by (namespace, name) rather than name
_TABLES: dict[type, tuple[str, bool]] = {
    PersistentVolume: ("pvs", False),
    PersistentVolumeClaim: ("pvcs", True),
    StorageClass: ("classes", False),
    CSINode: ("csi_nodes", False),
    CSIDriver: ("csi_drivers", False),
    CSIStorageCapacity: ("capacities", True),
    VolumeAttachment: ("attachments", False),
}


def _event(kind: str, existed: bool) -> str:
    return f"{kind}{'Update' if existed else 'Add'}"


def claim_keys(pod: Pod) -> list[str]:
    """The ``namespace/name`` of the PVCs a pod's persistentVolumeClaim volumes name (what
    NodeInfo.PVCRefCounts counts: generic ephemeral volumes are not included)."""
    return [f"{pod.namespace}/{v.claim_name}" for v in pod.volumes if v.source == PVC]


def claims_in_use(snap: Snapshot) -> Counter[str]:
    """SharedLister.StorageInfos: how many assigned pods use each PVC (``namespace/name``),
    kept up to date with the pods that come and go (the memo's row log)."""

    def row_counts(row: int) -> Counter[str]:
        c: Counter[str] = Counter()
        for p in snap.pods_on[row].values():
            if p.volumes:
                c.update(claim_keys(p))
        return c

    def build(_old: Any) -> tuple[Counter[str], dict[int, Counter[str]]]:
        per_row = {r: c for r in range(snap.n) if (c := row_counts(r))}
        total: Counter[str] = Counter()
        for c in per_row.values():
            total.update(c)
        return total, per_row

    def update(value: tuple[Counter[str], dict[int, Counter[str]]], rows: list[int]) -> None:
        total, per_row = value
        for row in set(rows):
            if row >= snap.n:
                continue
            total.subtract(per_row.pop(row, Counter()))
            fresh = row_counts(row)
            if fresh:
                per_row[row] = fresh
                total.update(fresh)
        for k in [k for k, v in total.items() if v <= 0]:
            del total[k]

    return snap.memo.follow(("storage/claims-in-use",), build, update)[0]
