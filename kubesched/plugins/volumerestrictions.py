"""VolumeRestrictions: in-tree disks a node's pods already mount, and ReadWriteOncePod claims.

As kube-scheduler v1.36's volumerestrictions plugin. Filter fails a node (Unschedulable, so
preemption may free it) where an assigned pod mounts the same GCE PD (unless both read-only),
AWS EBS volume, iSCSI IQN (unless both read-only) or Ceph RBD image (an overlapping monitor, the
same pool and image, unless both read-only); and fails every node while an assigned pod uses one
of the pod's ReadWriteOncePod claims (PreFilter counts them; AddPod/RemovePod keep the count
right in preemption's dry runs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.storage import (
    AWS_EBS,
    GCE_PD,
    ISCSI,
    PVC,
    RBD,
    READ_WRITE_ONCE_POD,
    PersistentVolumeClaim,
    PodVolume,
)
from kubesched.framework.interfaces import NOT_INVOLVED, FilterPlugin, PreFilterPlugin, Signature, SignPlugin
from kubesched.framework.status import Code, FilterResult, PreFilterResult, Status
from kubesched.state.storage import claims_in_use, not_found

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.state.snapshot import Snapshot

NAME = "VolumeRestrictions"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)
#: The in-tree sources whose mounts conflict across pods on one node (needsRestrictionsCheck).
CHECKED_SOURCES = frozenset({GCE_PD, AWS_EBS, RBD, ISCSI})


@dataclass(slots=True)
class PreFilterState:
    """The pod's ReadWriteOncePod claims and how many assigned pods use them."""

    read_write_once_pod_claims: frozenset[str]
    conflicting_refs: int

    def clone(self) -> PreFilterState:
        return PreFilterState(self.read_write_once_pod_claims, self.conflicting_refs)

    def refs_of(self, pod: Pod) -> int:
        """conflictingPVCRefCountForPod: the pod's persistentVolumeClaim volumes naming one of
        the claims (by name alone, as upstream)."""
        return sum(1 for v in pod.volumes if v.source == PVC and v.claim_name in self.read_write_once_pod_claims)


def _overlap(a: object, b: object) -> bool:
    return bool(set(a or ()) & set(b or ()))  # type: ignore[call-overload]


def volumes_conflict(volume: PodVolume, other: Pod) -> bool:
    """isVolumeConflict: does ``volume`` collide with one of ``other``'s volumes?"""
    f = volume.fields
    for ev in other.volumes:
        if ev.source != volume.source:
            continue
        e = ev.fields
        both_read_only = bool(f.get("readOnly")) and bool(e.get("readOnly"))
        if volume.source == GCE_PD:
            if f.get("pdName") == e.get("pdName") and not both_read_only:
                return True
        elif volume.source == AWS_EBS:
            if f.get("volumeID") == e.get("volumeID"):
                return True
        elif volume.source == ISCSI:
            if f.get("iqn") == e.get("iqn") and not both_read_only:
                return True
        elif volume.source == RBD:
            same = (f.get("pool") or "rbd") == (e.get("pool") or "rbd") and f.get("image") == e.get("image")
            if same and _overlap(f.get("monitors"), e.get("monitors")) and not both_read_only:
                return True
    return False


def satisfies_volume_conflicts(pod: Pod, node_pods: list[Pod]) -> bool:
    """satisfyVolumeConflicts: none of the pod's checked volumes collides on the node."""
    for v in pod.volumes:
        if v.source in CHECKED_SOURCES and any(volumes_conflict(v, p) for p in node_pods if p.volumes):
            return False
    return True


class VolumeRestrictions(PreFilterPlugin, FilterPlugin, SignPlugin):
    name = NAME
    # a pod releasing the disk or the claim, a new node, the claim created (to read its modes)
    events_to_register = frozenset({"AssignedPodDelete", "NodeAdd", "PersistentVolumeClaimAdd"})

    needs_pod_field = "storage_volumes"

    def sign_pod(self, pod: Pod, snap: Snapshot) -> Signature | None:
        """A pod without claims or checked in-tree disks takes no part; the others read the
        claims and the pods using them, which the equivalence cache does not follow."""
        if (
            not pod.volumes
            or not snap.storage.tracked
            or not any(v.source == PVC or v.source in CHECKED_SOURCES for v in pod.volumes)
        ):
            return NOT_INVOLVED
        return None

    def pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot) -> PreFilterResult | Status | None:
        if not pod.volumes or not snap.storage.tracked:
            return Status(Code.Skip, plugin=NAME)
        needs_check = any(v.source in CHECKED_SOURCES for v in pod.volumes)
        rwop: set[str] = set()
        for v in pod.volumes:
            if v.source != PVC:
                continue
            pvc = snap.storage.pvc(pod.namespace, v.claim_name)
            if pvc is None:
                return Status(Code.UnschedulableAndUnresolvable, (not_found(PersistentVolumeClaim, v.claim_name),), NAME)
            if READ_WRITE_ONCE_POD in pvc.access_modes:
                rwop.add(pvc.name)
        conflicts = 0
        if rwop:
            in_use = claims_in_use(snap)
            conflicts = sum(1 for name in rwop if in_use.get(f"{pod.namespace}/{name}", 0) > 0)
        if not needs_check and conflicts == 0:
            return Status(Code.Skip, plugin=NAME)
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(frozenset(rwop), conflicts))
        return None

    def _state(self, state: CycleState) -> PreFilterState | Status:
        s = state.read(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState', NAME)
        return s

    def add_pod(self, state: CycleState, pod: Pod, added: Pod, row: int, snap: Snapshot) -> Status | None:
        s = self._state(state)
        if isinstance(s, Status):
            return s
        s.conflicting_refs += s.refs_of(added)
        return None

    def remove_pod(self, state: CycleState, pod: Pod, removed: Pod, row: int, snap: Snapshot) -> Status | None:
        s = self._state(state)
        if isinstance(s, Status):
            return s
        s.conflicting_refs -= s.refs_of(removed)
        return None

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        """The disk conflict first (per node), then the ReadWriteOncePod conflict (every node)."""
        n = len(rows)
        rows_list = rows.tolist()
        pods_on = snap.pods_on
        disk = np.zeros(n, bool)
        if any(v.source in CHECKED_SOURCES for v in pod.volumes):
            for i, r in enumerate(rows_list):
                disk[i] = not satisfies_volume_conflicts(pod, list(pods_on[r].values()))
        s = self._state(state)
        if isinstance(s, Status):
            return FilterResult.from_statuses(
                [Status(Code.Unschedulable, (ERR_REASON_DISK_CONFLICT,)) if d else s for d in disk.tolist()]
            )
        rwop = np.full(n, s.conflicting_refs > 0) & ~disk
        return FilterResult.from_masks(
            [
                (disk, ERR_REASON_DISK_CONFLICT, Code.Unschedulable),
                (rwop, ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT, Code.Unschedulable),
            ],
            n,
        )
