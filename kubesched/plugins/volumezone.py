"""VolumeZone: a pod's bound PersistentVolumes must be in the node's zone and region.

As kube-scheduler v1.36's volumezone plugin: PreFilter reads the zone and region labels of the
PVs bound to the pod's persistentVolumeClaim volumes (claims of WaitForFirstConsumer classes
that are not bound yet are VolumeBinding's business); Filter lets a node through when it has no
topology label at all, else requires each PV label's value set (``a__b`` lists several zones)
to hold the node's label (a beta PV label also matches the node's GA one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.storage import PVC, PersistentVolume, PersistentVolumeClaim, StorageClass
from kubesched.framework.interfaces import NOT_INVOLVED, FilterPlugin, PreFilterPlugin, Signature, SignPlugin
from kubesched.framework.status import Code, FilterResult, PreFilterResult, Status
from kubesched.state.storage import not_found

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.state.snapshot import Snapshot

NAME = "VolumeZone"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_CONFLICT = "node(s) had no available volume zone"
MULTI_ZONE_DELIMITER = "__"

LABEL_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
#: The PV labels read, in upstream's order.
TOPOLOGY_LABELS = (LABEL_BETA_ZONE, LABEL_BETA_REGION, LABEL_ZONE, LABEL_REGION)
_TO_GA = {LABEL_BETA_REGION: LABEL_REGION, LABEL_BETA_ZONE: LABEL_ZONE}


@dataclass(frozen=True, slots=True)
class PVTopology:
    """One topology label of a bound PV: the node's label ``key`` must be one of ``values``."""

    pv_name: str
    key: str
    values: frozenset[str]


def label_zones(value: str) -> frozenset[str] | None:
    """volumehelpers.LabelZonesToSet: ``a__b`` -> {a, b}; None when an entry is empty."""
    zones = [z.strip() for z in value.split(MULTI_ZONE_DELIMITER)]
    if any(not z for z in zones):
        return None
    return frozenset(zones)


def pv_topologies(pv: PersistentVolume) -> list[PVTopology]:
    """getPVTopologies: the PV's zone and region labels (a label that does not parse is ignored)."""
    out = []
    for key in TOPOLOGY_LABELS:
        value = pv.labels.get(key)
        if value is not None and (zones := label_zones(value)) is not None:
            out.append(PVTopology(pv.name, key, zones))
    return out


def _unresolvable(message: str) -> Status:
    return Status(Code.UnschedulableAndUnresolvable, (message,), NAME)


def pod_pv_topologies(pod: Pod, snap: Snapshot) -> list[PVTopology] | Status:
    """getPVbyPod: the topologies of the PVs bound to the pod's claims, or the status that
    rejects the pod (a claim, class or PV missing; an unbound claim of an Immediate class)."""
    storage = snap.storage
    out: list[PVTopology] = []
    for vol in pod.volumes:
        if vol.source != PVC:
            continue
        if not vol.claim_name:
            return _unresolvable("PersistentVolumeClaim had no name")
        pvc = storage.pvc(pod.namespace, vol.claim_name)
        if pvc is None:
            return _unresolvable(not_found(PersistentVolumeClaim, vol.claim_name))
        if not pvc.volume_name:
            class_name = pvc.storage_class
            if not class_name:
                return _unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
            sc = storage.classes.get(class_name)
            if sc is None:
                return _unresolvable(not_found(StorageClass, class_name))
            if sc.binding_mode is None:
                return _unresolvable(f'VolumeBindingMode not set for StorageClass "{class_name}"')
            if sc.wait_for_first_consumer:
                continue  # unbound volumes are VolumeBinding's
            return _unresolvable("PersistentVolume had no name")
        pv = storage.pvs.get(pvc.volume_name)
        if pv is None:
            return _unresolvable(not_found(PersistentVolume, pvc.volume_name))
        out.extend(pv_topologies(pv))
    return out


def node_fits(labels: dict[str, str], topologies: list[PVTopology]) -> bool:
    """Filter for one node: no topology label on the node (a single-zone cluster) fits."""
    if not any(k in labels for k in TOPOLOGY_LABELS):
        return True
    for t in topologies:
        value = labels.get(t.key)
        if value is None:  # a beta PV label also matches the node's GA label
            value = labels.get(_TO_GA.get(t.key, t.key))
        if value is None or value not in t.values:
            return False
    return True


class VolumeZone(PreFilterPlugin, FilterPlugin, SignPlugin):
    name = NAME
    # a new WaitForFirstConsumer class, a node's labels, a claim created or bound, a PV's labels
    events_to_register = frozenset(
        {
            "StorageClassAdd",
            "NodeAdd",
            "NodeUpdate",
            "PersistentVolumeClaimAdd",
            "PersistentVolumeClaimUpdate",
            "PersistentVolumeAdd",
            "PersistentVolumeUpdate",
        }
    )

    needs_pod_field = "storage_volumes"

    def sign_pod(self, pod: Pod, snap: Snapshot) -> Signature | None:
        """A pod without persistentVolumeClaim volumes takes no part; the others read the
        storage objects, which the equivalence cache does not follow."""
        if not pod.volumes or not snap.storage.tracked or not any(v.source == PVC for v in pod.volumes):
            return NOT_INVOLVED
        return None

    def pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot) -> PreFilterResult | Status | None:
        if not pod.volumes or not snap.storage.tracked:
            return Status(Code.Skip, plugin=NAME)
        topologies = pod_pv_topologies(pod, snap)
        if isinstance(topologies, Status):
            return topologies
        if not topologies:
            return Status(Code.Skip, plugin=NAME)
        state.write(PRE_FILTER_STATE_KEY, topologies)
        return None

    def add_pod(self, state: CycleState, pod: Pod, added: Pod, row: int, snap: Snapshot) -> None:
        """No PreFilterExtensions upstream: the state does not depend on other pods."""

    def remove_pod(self, state: CycleState, pod: Pod, removed: Pod, row: int, snap: Snapshot) -> None:
        """No PreFilterExtensions upstream: the state does not depend on other pods."""

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        """UnschedulableAndUnresolvable on a node outside a PV's zone or region."""
        n = len(rows)
        if not pod.volumes:
            return FilterResult.all_pass(n)
        topologies = state.read(PRE_FILTER_STATE_KEY)
        if topologies is None:  # PreFilter skipped or disabled: compute here, as upstream falls back
            topologies = pod_pv_topologies(pod, snap) if snap.storage.tracked else []
            if isinstance(topologies, Status):
                return FilterResult.from_statuses([topologies] * n)
        nodes = snap.nodes
        fail = np.fromiter((not node_fits(nodes[r].labels, topologies) for r in rows.tolist()), bool, n)
        return FilterResult.from_mask(fail, ERR_REASON_CONFLICT, Code.UnschedulableAndUnresolvable)
