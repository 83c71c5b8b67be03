"""The volume binder behind VolumeBinding (upstream's volumebinding/binder.go, v1.36).

``VolumeBinder`` sorts a pod's claims (PreFilter: GetPodVolumeClaims), finds for a node the
PVs its unbound claims can bind to or the provisioning they need (Filter: FindPodVolumes),
assumes the chosen bindings in its assume cache (Reserve: AssumePodVolumes) so that later cycles
see them before they are written, reverts them (Unreserve) and writes them (PreBind:
BindPodVolumes).

Offline (the in-memory cluster) the store in ``snap.storage`` is the API server: writing a
binding replaces the PV and PVC there and does what the PV controller and an external
provisioner then do (``complete_binding``), so PreBind returns at once with every claim bound.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType

from kubesched.api.csi_migration import migrated_on_node, pv_migration
from kubesched.api.objects import Node, Pod
from kubesched.api.selectors import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kubesched.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_SELECTED_NODE,
    ANN_STORAGE_PROVISIONER,
    CLAIM_BOUND,
    CLAIM_LOST,
    EPHEMERAL,
    NOT_SUPPORTED_PROVISIONER,
    PVC,
    VOLUME_AVAILABLE,
    VOLUME_BOUND,
    ClaimRef,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    match_topology_terms,
)
from kubesched.framework.status import PluginError
from kubesched.state.storage import Storage, not_found

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) had volume node affinity conflict"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"


@dataclass(frozen=True, slots=True)
class BindingInfo:
    """A PVC and the PV proposed for it."""

    pvc: PersistentVolumeClaim
    pv: PersistentVolume


@dataclass(frozen=True, slots=True)
class DynamicProvision:
    """A PVC to provision, with the CSIStorageCapacity that has room for it (when checked)."""

    pvc: PersistentVolumeClaim
    node_capacity: CSIStorageCapacity | None = None


@dataclass(slots=True)
class PodVolumes:
    """The pod's volumes for one node: static bindings and claims to provision."""

    static_bindings: list[BindingInfo] = field(default_factory=list)
    dynamic_provisions: list[DynamicProvision] = field(default_factory=list)


@dataclass(slots=True)
class PodVolumeClaims:
    """GetPodVolumeClaims: the pod's claims by kind, and the PVs of the delayed claims' classes."""

    bound: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_delay_binding: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_immediate: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_volumes_delay_binding: dict[str, list[PersistentVolume]] = field(default_factory=dict)


def check_node_affinity(pv: PersistentVolume, labels: Mapping[str, str]) -> bool:
    """CheckNodeAffinity: the PV's required node affinity holds for a node with these labels
    (matched as upstream matches them, by labels alone: matchFields see no node name)."""
    return pv.node_affinity is None or pv.node_affinity.matches(labels, "")


def _mode_mismatch(pvc: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    return pvc.volume_mode != pv.volume_mode  # both default to Filesystem


def find_matching_volume(
    claim: PersistentVolumeClaim,
    volumes: list[PersistentVolume],
    node: Node,
    excluded: Mapping[str, PersistentVolume],
) -> PersistentVolume | None:
    """volume.FindMatchingVolume on the scheduler's path: a PV pre-bound to the claim (if its
    node affinity holds, else none), or the smallest available PV of the claim's class, size,
    mode, attributes class, selector, access modes and node affinity."""
    requested = claim.request or Fraction(0)
    requested_class = claim.storage_class
    smallest: PersistentVolume | None = None
    for volume in volumes:
        if volume.name in excluded:
            continue
        if volume.claim_ref is not None and not volume.bound_to(claim):
            continue
        size = volume.capacity or Fraction(0)
        if size < requested:
            continue
        if _mode_mismatch(claim, volume):
            continue
        if claim.volume_attributes_class != volume.volume_attributes_class:
            continue
        if volume.deleting:
            continue
        affinity_ok = check_node_affinity(volume, node.labels)
        if volume.bound_to(claim):
            return volume if affinity_ok else None  # a pre-bound PV that does not fit: no match
        if volume.phase != VOLUME_AVAILABLE:
            continue
        if claim.selector is not None and not claim.selector.matches(volume.labels):
            continue
        if volume.storage_class != requested_class or not affinity_ok:
            continue
        if not set(claim.access_modes) <= set(volume.access_modes):  # CheckAccessModes
            continue
        if smallest is None or (smallest.capacity or Fraction(0)) > size:
            smallest = volume
    return smallest


@dataclass(slots=True)
class FindResult:
    """FindPodVolumes: the node's PodVolumes, or why the node cannot take the pod's volumes."""

    volumes: PodVolumes
    reasons: list[str]


class VolumeBinder:
    """The binder of one VolumeBinding plugin, with its assume cache (the PVs and PVCs Reserve
    assumed, by name and by namespace/name, over the store's objects)."""

    def __init__(self) -> None:
        self.assumed_pvs: dict[str, PersistentVolume] = {}
        self.assumed_pvcs: dict[tuple[str, str], PersistentVolumeClaim] = {}

    # ---- the assume caches' views ------------------------------------------------------
    def get_pv(self, storage: Storage, name: str) -> PersistentVolume | None:
        return self.assumed_pvs.get(name) or storage.pvs.get(name)

    def get_pvc(self, storage: Storage, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.assumed_pvcs.get((namespace, name)) or storage.pvc(namespace, name)

    def list_pvs(self, storage: Storage, class_name: str) -> list[PersistentVolume]:
        """pvCache.ListPVs: the PVs of a class, as assumed."""
        return [self.assumed_pvs.get(pv.name, pv) for pv in storage.pvs_of_class(class_name)]

    # ---- PreFilter ---------------------------------------------------------------------
    def get_pod_volume_claims(self, pod: Pod, storage: Storage) -> PodVolumeClaims:
        """GetPodVolumeClaims. Raises PluginError where upstream returns an error."""
        out = PodVolumeClaims()
        for vol in pod.volumes:
            if not vol.uses_claim:
                continue
            pvc = self.get_pvc(storage, pod.namespace, vol.claim_name)
            if pvc is None:
                raise PluginError(f'error getting PVC "{pod.namespace}/{vol.claim_name}": not found')
            if vol.source == EPHEMERAL and pvc.controller_uid != pod.uid:
                raise PluginError(not_owned(pvc, pod))
            if pvc.fully_bound:
                out.bound.append(pvc)
            elif is_delay_binding(pvc, storage) and not pvc.volume_name:
                out.unbound_delay_binding.append(pvc)
            else:  # prebound claims count as immediate: they should be bound already
                out.unbound_immediate.append(pvc)
        for pvc in out.unbound_delay_binding:
            out.unbound_volumes_delay_binding[pvc.storage_class] = self.list_pvs(storage, pvc.storage_class)
        return out

    # ---- Filter ------------------------------------------------------------------------
    def find_pod_volumes(self, pod: Pod, claims: PodVolumeClaims, node: Node, storage: Storage) -> FindResult:
        """FindPodVolumes for one node. Raises PluginError where upstream returns an error."""
        volumes = PodVolumes()
        bound_ok = unbound_ok = sufficient = pvs_found = True
        if claims.bound:
            bound_ok, pvs_found = self._check_bound_claims(claims.bound, node, storage)
        if claims.unbound_delay_binding:
            unbound_ok, sufficient = self._check_unbound(pod, claims, node, storage, volumes)
        reasons = []
        if not bound_ok:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not sufficient:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return FindResult(volumes, reasons)

    def _check_bound_claims(
        self, claims: list[PersistentVolumeClaim], node: Node, storage: Storage
    ) -> tuple[bool, bool]:
        """checkBoundClaims: (node affinity satisfied, PVs found)."""
        csi_node = storage.csi_nodes.get(node.name)
        for pvc in claims:
            pv = self.get_pv(storage, pvc.volume_name)
            if pv is None:
                return True, False
            pv = self.translated(pv, csi_node.migrated_plugins if csi_node else None, storage)
            if not check_node_affinity(pv, node.labels):
                return False, True
        return True, True

    @staticmethod
    def translated(pv: PersistentVolume, migrated_plugins: frozenset[str] | None, storage: Storage) -> PersistentVolume:
        """tryTranslatePVToCSI: an in-tree PV migrated on the node, as its CSI driver sees it."""
        migration = pv_migration(pv)
        if migration is None or not migrated_on_node(migration, migrated_plugins, annotation=True):
            return pv
        out = storage.translated(pv, migration)
        if out is None:
            raise PluginError(f"could not translate pv: invalid volume id of pv {pv.name}")
        return out

    def _check_unbound(
        self, pod: Pod, claims: PodVolumeClaims, node: Node, storage: Storage, volumes: PodVolumes
    ) -> tuple[bool, bool]:
        """The delayed claims: (unbound volumes satisfied, sufficient storage)."""
        to_match: list[PersistentVolumeClaim] = []
        to_provision: list[PersistentVolumeClaim] = []
        for claim in claims.unbound_delay_binding:
            selected = claim.annotations.get(ANN_SELECTED_NODE)
            if selected is not None:
                if selected != node.name:
                    return False, True  # provisioning was started for another node
                to_provision.append(claim)
            else:
                to_match.append(claim)
        unbound_ok = True
        if to_match:
            # sort by increasing size request, to get the smallest fits
            to_match.sort(key=lambda c: c.request or Fraction(0))
            chosen: dict[str, PersistentVolume] = {}
            for pvc in to_match:
                pvs = claims.unbound_volumes_delay_binding.get(pvc.storage_class, [])
                pv = find_matching_volume(pvc, pvs, node, chosen)
                if pv is None:
                    to_provision.append(pvc)
                    unbound_ok = False
                    continue
                chosen[pv.name] = pv
                volumes.static_bindings.append(BindingInfo(pvc, pv))
        if to_provision:
            return self._check_volume_provisions(to_provision, node, storage, volumes)
        return unbound_ok, True

    def _check_volume_provisions(
        self, claims: list[PersistentVolumeClaim], node: Node, storage: Storage, volumes: PodVolumes
    ) -> tuple[bool, bool]:
        """checkVolumeProvisions: every claim left can be provisioned for the node."""
        provisions = []
        for claim in claims:
            class_name = claim.storage_class
            if not class_name:
                raise PluginError(f'no class for claim "{claim.key}"')
            sc = storage.classes.get(class_name)
            if sc is None:
                raise PluginError(f'failed to find storage class "{class_name}"')
            if not sc.provisioner or sc.provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True
            if not match_topology_terms(sc.allowed_topologies, node.labels):
                return False, True
            sufficient, capacity = has_enough_capacity(claim, sc, node, storage)
            if not sufficient:
                return True, False
            provisions.append(DynamicProvision(claim, capacity))
        volumes.dynamic_provisions = provisions
        return True, True

    # ---- Reserve / Unreserve -----------------------------------------------------------
    def pod_volumes_bound(self, pod: Pod, storage: Storage) -> bool:
        """arePodVolumesBound: every claim of the pod is fully bound (in the assume cache)."""
        for vol in pod.volumes:
            if vol.uses_claim:
                pvc = self.get_pvc(storage, pod.namespace, vol.claim_name)
                if pvc is None or not pvc.fully_bound:
                    return False
        return True

    def assume_pod_volumes(self, pod: Pod, node_name: str, volumes: PodVolumes, storage: Storage) -> bool:
        """AssumePodVolumes: the chosen PVs pre-bound to their claims and the claims to provision
        annotated with the node, in the assume cache; True when every claim is already bound."""
        if self.pod_volumes_bound(pod, storage):
            return True
        bindings = []
        for b in volumes.static_bindings:
            pv, dirty = bind_volume_to_claim(b.pv, b.pvc)
            if dirty:
                self.assumed_pvs[pv.name] = pv
            bindings.append(BindingInfo(b.pvc, pv))
        provisions = []
        for p in volumes.dynamic_provisions:
            claim = p.pvc.with_annotations({ANN_SELECTED_NODE: node_name})
            self.assumed_pvcs[(claim.namespace, claim.name)] = claim
            provisions.append(DynamicProvision(claim, p.node_capacity))
        volumes.static_bindings, volumes.dynamic_provisions = bindings, provisions
        return False

    def revert_assumed_pod_volumes(self, volumes: PodVolumes) -> None:
        for b in volumes.static_bindings:
            self.assumed_pvs.pop(b.pv.name, None)
        for p in volumes.dynamic_provisions:
            self.assumed_pvcs.pop((p.pvc.namespace, p.pvc.name), None)

    # ---- PreBind -----------------------------------------------------------------------
    def bind_pod_volumes(self, pod: Pod, node: Node, volumes: PodVolumes, storage: Storage) -> None:
        """BindPodVolumes offline: write the assumed PVs and claims, then complete what the PV
        controller and the external provisioner do (the claims end up bound), and drop the
        assumptions, which the store now holds."""
        for b in volumes.static_bindings:
            storage.add(b.pv)
            self.assumed_pvs.pop(b.pv.name, None)
        for p in volumes.dynamic_provisions:
            storage.add(p.pvc)
            self.assumed_pvcs.pop((p.pvc.namespace, p.pvc.name), None)
        for b in volumes.static_bindings:
            complete_static_binding(b.pv, storage)
        for p in volumes.dynamic_provisions:
            complete_provisioning(p.pvc, node, storage)


def not_owned(pvc: PersistentVolumeClaim, pod: Pod) -> str:
    """ephemeral.VolumeIsForPod's error."""
    return f"PVC {pvc.namespace}/{pvc.name} was not created for pod {pod.namespace}/{pod.name} (pod is not owner)"


def is_delay_binding(pvc: PersistentVolumeClaim, storage: Storage) -> bool:
    """IsDelayBindingMode: the claim's class binds at the first consumer (a claim without a
    class, or of a class that does not exist, binds at once). Raises where the class has no mode."""
    class_name = pvc.storage_class
    if not class_name:
        return False
    sc = storage.classes.get(class_name)
    if sc is None:
        return False
    if sc.binding_mode is None:
        raise PluginError(f'VolumeBindingMode not set for StorageClass "{class_name}"')
    return sc.wait_for_first_consumer


def has_enough_capacity(
    claim: PersistentVolumeClaim, sc: StorageClass, node: Node, storage: Storage
) -> tuple[bool, CSIStorageCapacity | None]:
    """hasEnoughCapacity: a CSI driver that publishes its capacity (CSIDriver storageCapacity)
    must have a CSIStorageCapacity of the class, reachable from the node, with room for the claim."""
    if claim.request is None:
        return True, None
    driver = storage.csi_drivers.get(sc.provisioner)
    if driver is None or not driver.storage_capacity:
        return True, None
    for capacity in storage.capacities.values():
        limit = capacity.volume_limit
        if (
            capacity.storage_class == sc.name
            and limit is not None
            and limit >= claim.request
            and capacity.node_topology is not None
            and capacity.node_topology.matches(node.labels)
        ):
            return True, capacity
    return False, None


def bind_volume_to_claim(pv: PersistentVolume, claim: PersistentVolumeClaim) -> tuple[PersistentVolume, bool]:
    """GetBindVolumeToClaim: the PV bound to the claim (claimRef with its uid; the bound-by-
    controller annotation unless the user pre-bound it), and whether anything changed."""
    set_by_controller = not pv.bound_to(claim)
    dirty = False
    ref = pv.claim_ref
    if ref is None or (ref.name, ref.namespace, ref.uid) != (claim.name, claim.namespace, claim.uid):
        pv = dataclasses.replace(pv, claim_ref=ClaimRef(claim.namespace, claim.name, claim.uid))
        dirty = True
    if set_by_controller and ANN_BOUND_BY_CONTROLLER not in pv.annotations:
        pv = dataclasses.replace(pv, annotations=MappingProxyType({**pv.annotations, ANN_BOUND_BY_CONTROLLER: "yes"}))
        dirty = True
    return pv, dirty


def _bound_claim(claim: PersistentVolumeClaim, pv: PersistentVolume, extra: Mapping[str, str]) -> PersistentVolumeClaim:
    """The claim as the PV controller leaves it once bound to ``pv``."""
    annotations = {**claim.annotations, ANN_BIND_COMPLETED: "yes", ANN_BOUND_BY_CONTROLLER: "yes", **extra}
    return dataclasses.replace(claim, volume_name=pv.name, phase=CLAIM_BOUND, annotations=MappingProxyType(annotations))


def complete_static_binding(pv: PersistentVolume, storage: Storage) -> None:
    """The PV controller's side of a binding the scheduler pre-bound: the PV Bound, the claim
    bound to it."""
    ref = pv.claim_ref
    assert ref is not None
    claim = storage.pvc(ref.namespace, ref.name)
    storage.add(dataclasses.replace(pv, phase=VOLUME_BOUND))
    if claim is not None and not claim.fully_bound:
        storage.add(_bound_claim(claim, pv, {}))


def provisioned_volume(claim: PersistentVolumeClaim, node: Node, storage: Storage) -> PersistentVolume:
    """The PV an external provisioner creates for a claim the scheduler annotated with a node:
    named ``pvc-<claim uid>``, of the claim's size, modes and class, bound to the claim, a CSI
    volume of the class's provisioner, and constrained to the node's value of each topology key
    the driver's CSINode entry lists (the accessible topology of a CSI CreateVolume)."""
    sc = storage.classes.get(claim.storage_class)
    provisioner = sc.provisioner if sc is not None else ""
    name = f"pvc-{claim.uid}"
    labels = node.labels
    csi_node = storage.csi_nodes.get(node.name)
    keys = csi_node.drivers[provisioner].topology_keys if csi_node and provisioner in csi_node.drivers else ()
    reqs = tuple(NodeSelectorRequirement(k, "In", frozenset({labels[k]})) for k in keys if k in labels)
    return PersistentVolume(
        name=name,
        labels=MappingProxyType({}),
        annotations=MappingProxyType({ANN_DYNAMICALLY_PROVISIONED: provisioner, ANN_BOUND_BY_CONTROLLER: "yes"}),
        capacity=claim.request,
        access_modes=claim.access_modes,
        volume_mode=claim.volume_mode,
        spec_class=claim.storage_class,
        claim_ref=ClaimRef(claim.namespace, claim.name, claim.uid),
        node_affinity=NodeSelector((NodeSelectorTerm(reqs),)) if reqs else None,
        phase=VOLUME_BOUND,
        source="csi",
        source_fields=MappingProxyType({"driver": provisioner, "volumeHandle": name}),
        volume_attributes_class=claim.volume_attributes_class,
    )


def complete_provisioning(claim: PersistentVolumeClaim, node: Node, storage: Storage) -> None:
    """The external provisioner and the PV controller: a PV for the claim, the claim bound to it."""
    pv = provisioned_volume(claim, node, storage)
    storage.add(pv)
    sc = storage.classes.get(claim.storage_class)
    extra = {ANN_STORAGE_PROVISIONER: sc.provisioner} if sc is not None else {}
    storage.add(_bound_claim(claim, pv, extra))


def pod_claims_status(pod: Pod, storage: Storage) -> str | None:
    """podHasPVCs' errors: the message that makes the pod unschedulable (a claim missing, lost,
    being deleted, or not the pod's own ephemeral claim), or None when the claims are usable.
    Only persistentVolumeClaim and ephemeral volumes count."""
    for vol in pod.volumes:
        if vol.source not in (PVC, EPHEMERAL):
            continue
        pvc = storage.pvc(pod.namespace, vol.claim_name)
        if pvc is None:
            if vol.source == EPHEMERAL:
                return f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{vol.claim_name}"'
            return not_found(PersistentVolumeClaim, vol.claim_name)
        if pvc.phase == CLAIM_LOST:
            return f'persistentvolumeclaim "{pvc.name}" bound to non-existent persistentvolume "{pvc.volume_name}"'
        if pvc.deleting:
            return f'persistentvolumeclaim "{pvc.name}" is being deleted'
        if vol.source == EPHEMERAL and pvc.controller_uid != pod.uid:
            return not_owned(pvc, pod)
    return None

