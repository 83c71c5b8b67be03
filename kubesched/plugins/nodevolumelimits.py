"""NodeVolumeLimits: a node's CSI drivers attach at most ``allocatable.count`` volumes each.

As kube-scheduler v1.36's nodevolumelimits plugin (CSILimits). The pod's volumes that a CSI
driver attaches (claims, by their bound PV or, unbound, by their StorageClass's provisioner;
generic ephemeral volumes; inline in-tree volumes migrated to CSI on the node) are counted per
driver with the volumes of the pods already on the node and those its VolumeAttachments hold;
a volume the node already has (by driver and volume handle) costs nothing more. Over the limit
its CSINode gives the driver: Unschedulable.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.csi_migration import (
    BY_PLUGIN,
    inline_migration,
    migrated_on_node,
    pv_migration,
)
from kubesched.api.storage import EPHEMERAL, PVC, CSINode, PersistentVolumeClaim, PodVolume, VolumeAttachment
from kubesched.framework.interfaces import NOT_INVOLVED, FilterPlugin, PreFilterPlugin, Signature, SignPlugin
from kubesched.framework.status import Code, FilterResult, PluginError, PreFilterResult, Status
from kubesched.state.storage import not_found

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.state.snapshot import Snapshot
    from kubesched.state.storage import Storage

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
#: The volume handle of an unbound claim is this prefix and the claim (upstream: a random prefix
#: per plugin, so that it collides with no real handle).
UNBOUND_PREFIX = "kubesched-unbound-claim-2f9c1e7d"


class ClaimNotFound(Exception):
    """The new pod's claim does not exist: the pod cannot run until it is created."""


def counts_volumes(pod: Pod) -> bool:
    """PreFilter's test: a claim, a generic ephemeral volume or a migratable inline volume."""
    return any(v.source == PVC or v.source == EPHEMERAL or inline_migration(v) is not None for v in pod.volumes)


class CSILimits(PreFilterPlugin, FilterPlugin, SignPlugin):
    name = NAME
    # a new CSINode (or its limits raised), a pod releasing volumes, the claim created, an attachment gone
    events_to_register = frozenset(
        {"CSINodeAdd", "CSINodeUpdate", "AssignedPodDelete", "PersistentVolumeClaimAdd", "VolumeAttachmentDelete"}
    )

    needs_pod_field = "storage_volumes"

    def sign_pod(self, pod: Pod, snap: Snapshot) -> Signature | None:
        """A pod with no volume a CSI driver attaches takes no part; the others read the node's
        pods and the storage objects, which the equivalence cache does not follow."""
        return NOT_INVOLVED if not pod.volumes or not snap.storage.tracked or not counts_volumes(pod) else None

    def pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot) -> PreFilterResult | Status | None:
        if not snap.storage.tracked or not counts_volumes(pod):
            return Status(Code.Skip, plugin=NAME)
        return None

    def add_pod(self, state: CycleState, pod: Pod, added: Pod, row: int, snap: Snapshot) -> None:
        """No PreFilterExtensions upstream: Filter reads the node's pods itself."""

    def remove_pod(self, state: CycleState, pod: Pod, removed: Pod, row: int, snap: Snapshot) -> None:
        """No PreFilterExtensions upstream: Filter reads the node's pods itself."""

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        if not pod.volumes:
            return FilterResult.all_pass(len(rows))
        # The pod's own volumes depend on the node only through its CSINode's migrated plugins
        # (None: no CSINode), so they are found once per such set rather than once per node.
        mine: dict[frozenset[str] | None, dict[str, str] | Status] = {}
        return FilterResult.from_statuses([self.filter_node(pod, snap, int(r), mine) for r in rows.tolist()])

    def filter_node(
        self, pod: Pod, snap: Snapshot, row: int, mine: dict[frozenset[str] | None, dict[str, str] | Status] | None = None
    ) -> Status:
        storage = snap.storage
        node = snap.nodes[row]
        csi_node = storage.csi_nodes.get(node.name)
        found = self.pod_volumes(pod, csi_node, storage, {} if mine is None else mine)
        if isinstance(found, Status):
            return found
        new = dict(found)  # the node's own volumes are taken out of this copy below
        if not new:
            return Status(plugin=NAME)
        limits = volume_limits(csi_node)
        if not limits:
            return Status(plugin=NAME)
        attached: dict[str, str] = {}
        try:
            for p in snap.pods_on[row].values():
                if p.volumes:
                    self.attachable_volumes(p, csi_node, storage, attached, new_pod=False)
        except PluginError as e:
            return Status.error(str(e), NAME)
        for unique in attached:  # a volume the node already has costs nothing more
            new.pop(unique, None)
        for va in storage.attachments_on(node.name):
            info = self.attachment_volume(va, storage)
            if info is not None and info[0] not in attached:
                attached[info[0]] = info[1]
        attached_count = Counter(attached.values())
        for driver, count in Counter(new.values()).items():
            limit = limits.get(driver)
            if limit is not None and attached_count[driver] + count > limit:
                return Status(Code.Unschedulable, (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,), NAME)
        return Status(plugin=NAME)

    @classmethod
    def pod_volumes(
        cls,
        pod: Pod,
        csi_node: CSINode | None,
        storage: Storage,
        memo: dict[frozenset[str] | None, dict[str, str] | Status],
    ) -> dict[str, str] | Status:
        """The new pod's attachable volumes on a node with this CSINode, or the Status that ends
        Filter there (a missing claim, a broken volume), kept in ``memo`` by migrated plugins."""
        key = csi_node.migrated_plugins if csi_node is not None else None
        hit = memo.get(key)
        if hit is not None:
            return hit
        new: dict[str, str] = {}
        try:
            cls.attachable_volumes(pod, csi_node, storage, new, new_pod=True)
        except ClaimNotFound as e:
            memo[key] = Status(Code.UnschedulableAndUnresolvable, (str(e),), NAME)
        except PluginError as e:
            memo[key] = Status.error(str(e), NAME)
        else:
            memo[key] = new
        return memo[key]

    @classmethod
    def attachable_volumes(
        cls, pod: Pod, csi_node: CSINode | None, storage: Storage, result: dict[str, str], *, new_pod: bool
    ) -> None:
        """filterAttachableVolumes: ``driver/handle`` -> driver of the pod's attachable volumes."""
        for v in pod.volumes:
            if v.source == PVC or v.source == EPHEMERAL:
                name = v.claim_name
            else:
                cls._inline(v, csi_node, result)
                continue
            if not name:
                raise PluginError("PersistentVolumeClaim had no name")
            pvc = storage.pvc(pod.namespace, name)
            if pvc is None:
                if new_pod:  # the pod cannot run without it
                    raise ClaimNotFound(
                        f"looking up PVC {pod.namespace}/{name}: {not_found(PersistentVolumeClaim, name)}"
                    )
                continue  # not counted: nothing says it belongs to the running pod
            if v.source == EPHEMERAL and pvc.controller_uid != pod.uid:
                raise PluginError(
                    f"PVC {pvc.namespace}/{pvc.name} was not created for pod {pod.namespace}/{pod.name} (pod is not owner)"
                )
            driver, handle = cls.claim_driver_info(csi_node, pvc, storage)
            if driver and handle:
                result[f"{driver}/{handle}"] = driver

    @staticmethod
    def _inline(volume: PodVolume, csi_node: CSINode | None, result: dict[str, str]) -> None:
        """checkAttachableInlineVolume: an inline in-tree volume counts once migrated on the node."""
        migration = inline_migration(volume)
        if migration is None:
            return
        if not migrated_on_node(migration, csi_node.migrated_plugins if csi_node else None, annotation=False):
            return
        handle = migration.volume_handle(volume.fields)
        if handle is None:
            raise PluginError(f"converting volume({volume.name}) from inline to csi: invalid volume id")
        result[f"{migration.driver}/{handle}"] = migration.driver

    @classmethod
    def claim_driver_info(cls, csi_node: CSINode | None, pvc: PersistentVolumeClaim, storage: Storage) -> tuple[str, str]:
        """getCSIDriverInfo: the bound PV's CSI driver and handle (translated when in-tree and
        migrated); an unbound claim (or one whose PV is missing) counts through its class."""
        pv = storage.pvs.get(pvc.volume_name) if pvc.volume_name else None
        if pv is None:
            return cls._driver_info_from_class(csi_node, pvc, storage)
        csi = pv.csi
        if csi is not None:
            return csi
        migration = pv_migration(pv)
        if migration is None:
            return "", ""
        if not migrated_on_node(migration, csi_node.migrated_plugins if csi_node else None, annotation=False):
            return "", ""
        translated = storage.translated(pv, migration)
        return translated.csi if translated is not None and translated.csi else ("", "")

    @staticmethod
    def _driver_info_from_class(csi_node: CSINode | None, pvc: PersistentVolumeClaim, storage: Storage) -> tuple[str, str]:
        """getCSIDriverInfoFromSC: the class's provisioner and a handle of the claim's own."""
        sc = storage.classes.get(pvc.storage_class) if pvc.storage_class else None
        if sc is None:  # no class: an immediate claim, bound before scheduling; not counted
            return "", ""
        handle = f"{UNBOUND_PREFIX}-{pvc.namespace}/{pvc.name}"
        migration = BY_PLUGIN.get(sc.provisioner)
        if migration is not None:
            if not migrated_on_node(migration, csi_node.migrated_plugins if csi_node else None, annotation=False):
                return "", ""
            return migration.driver, handle
        return sc.provisioner, handle

    @staticmethod
    def attachment_volume(va: VolumeAttachment, storage: Storage) -> tuple[str, str] | None:
        """(``driver/handle``, driver) of a VolumeAttachment's volume, None when unknown."""
        if va.pv_name is not None:
            pv = storage.pvs.get(va.pv_name)
            if pv is None:
                return None
            csi = pv.csi
            if csi is None:
                migration = pv_migration(pv)
                translated = storage.translated(pv, migration) if migration is not None and migration.translated else None
                csi = translated.csi if translated is not None else None
            if csi is None or not csi[0] or not csi[1]:
                return None
            return f"{csi[0]}/{csi[1]}", csi[0]
        inline = va.inline_csi
        if inline is None or not inline[0]:
            return None
        return f"{inline[0]}/{inline[1]}", inline[0]


def volume_limits(csi_node: CSINode | None) -> dict[str, int]:
    """getVolumeLimits: the attach limit of each CSI driver on the node (CSINode allocatable.count)."""
    if csi_node is None:
        return {}
    return {d.name: d.count for d in csi_node.drivers.values() if d.count is not None}
