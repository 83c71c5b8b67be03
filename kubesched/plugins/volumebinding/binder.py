"""The volume binder behind VolumeBinding (upstream's volumebinding/binder.go, v1.36).

``VolumeBinder`` sorts a pod's claims (PreFilter: GetPodVolumeClaims), finds for a node the
PVs its unbound claims can bind to or the provisioning they need (Filter: FindPodVolumes),
assumes the chosen bindings in its assume cache (Reserve: AssumePodVolumes) so that later cycles
see them before they are written, reverts them (Unreserve) and writes them (PreBind:
BindPodVolumes) through the cluster's ``ObjectAPI``, then waits until the claims are bound
(checkBindings over the API's objects).

Offline (``kubesched.cluster.store``) the store in ``snap.storage`` is the API server, and the PV
controller and an external provisioner answer a write at once, so PreBind returns with every
claim bound. Live the writes are API updates and the wait follows the informers.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import Any, TypeVar

from kubesched.api.csi_migration import migrated_on_node, pv_migration, translate_pv
from kubesched.api.objects import Node, Pod
from kubesched.api.storage import (
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    CLAIM_LOST,
    EPHEMERAL,
    NOT_SUPPORTED_PROVISIONER,
    PVC,
    VOLUME_AVAILABLE,
    ClaimRef,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    match_topology_terms,
)
from kubesched.cluster.api import ObjectAPI, WriteError
from kubesched.framework.status import PluginError
from kubesched.state.storage import Storage, not_found

K = TypeVar("K")
V = TypeVar("V")

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
        self.assumed_pvs: AssumeCache[str, PersistentVolume] = AssumeCache()
        self.assumed_pvcs: AssumeCache[tuple[str, str], PersistentVolumeClaim] = AssumeCache()
        #: seconds between two looks at the API objects while PreBind waits (upstream polls every
        #: second; live, a change seen by the informers ends a wait at once)
        self.poll_interval = 1.0

    # ---- the assume caches' views ------------------------------------------------------
    def get_pv(self, storage: Storage, name: str) -> PersistentVolume | None:
        return self.assumed_pvs.latest(name, storage.pvs.get(name))

    def get_pvc(self, storage: Storage, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.assumed_pvcs.latest((namespace, name), storage.pvc(namespace, name))

    def list_pvs(self, storage: Storage, class_name: str) -> list[PersistentVolume]:
        """pvCache.ListPVs: the PVs of a class, as assumed."""
        out = []
        for pv in storage.pvs_of_class(class_name):
            latest = self.assumed_pvs.latest(pv.name, pv)
            assert latest is not None
            out.append(latest)
        return out

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
    def translated(
        pv: PersistentVolume, migrated_plugins: frozenset[str] | None, storage: Storage | None = None
    ) -> PersistentVolume:
        """tryTranslatePVToCSI: an in-tree PV migrated on the node, as its CSI driver sees it
        (kept by ``storage`` when the PV is one of its own)."""
        migration = pv_migration(pv)
        if migration is None or not migrated_on_node(migration, migrated_plugins, annotation=True):
            return pv
        out = storage.translated(pv, migration) if storage is not None else translate_pv(pv, migration)
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
                self.assumed_pvs.assume(pv.name, pv, over=storage.pvs.get(pv.name))
            bindings.append(BindingInfo(b.pvc, pv))
        provisions = []
        for p in volumes.dynamic_provisions:
            claim = p.pvc.with_annotations({ANN_SELECTED_NODE: node_name})
            key = (claim.namespace, claim.name)
            self.assumed_pvcs.assume(key, claim, over=storage.pvc(*key))
            provisions.append(DynamicProvision(claim, p.node_capacity))
        volumes.static_bindings, volumes.dynamic_provisions = bindings, provisions
        return False

    def revert_assumed_pod_volumes(self, volumes: PodVolumes) -> None:
        for b in volumes.static_bindings:
            self.assumed_pvs.restore(b.pv.name)
        for p in volumes.dynamic_provisions:
            self.assumed_pvcs.restore((p.pvc.namespace, p.pvc.name))

    # ---- PreBind -----------------------------------------------------------------------
    def bind_pod_volumes(
        self, pod: Pod, node_name: str, volumes: PodVolumes, api: ObjectAPI, timeout: float, storage: Storage
    ) -> None:
        """BindPodVolumes: write the chosen PVs and claims through ``api`` (bindAPIUpdate), then
        wait, up to ``timeout`` seconds, until the PV controller (and an external provisioner)
        has bound every claim (checkBindings). PluginError with upstream's message when a write
        fails, a binding goes wrong or the wait times out."""
        try:
            bindings, provisions = self._bind_api_update(volumes, api)
        except WriteError as e:
            raise PluginError(str(e)) from None
        deadline = time.monotonic() + timeout
        while True:
            try:
                done = check_bindings(pod, node_name, bindings, provisions, api, self)
            except PluginError as e:
                raise PluginError(f"binding volumes: {e}") from None
            if done:
                break
            left = deadline - time.monotonic()
            if left <= 0 or not api.wait_for_change(min(left, self.poll_interval)):
                raise PluginError("binding volumes: context deadline exceeded")
        # the store has caught up with what was written: end those assumptions now
        for b in bindings:
            self.assumed_pvs.latest(b.pv.name, storage.pvs.get(b.pv.name))
        for c in provisions:
            self.assumed_pvcs.latest((c.namespace, c.name), storage.pvc(c.namespace, c.name))

    def _bind_api_update(
        self, volumes: PodVolumes, api: ObjectAPI
    ) -> tuple[list[BindingInfo], list[PersistentVolumeClaim]]:
        """bindAPIUpdate: update each PV (claimRef), then each claim to provision (the selected
        node); the objects the API returned, for checkBindings. On a failure the assumptions not
        written yet are reverted (the ones written stay until the informer shows them)."""
        bindings: list[BindingInfo] = []
        provisions: list[PersistentVolumeClaim] = []
        try:
            for b in volumes.static_bindings:
                bindings.append(BindingInfo(b.pvc, api.update_pv(b.pv)))
            for p in volumes.dynamic_provisions:
                provisions.append(api.update_pvc(p.pvc))
        finally:
            for b in volumes.static_bindings[len(bindings) :]:
                self.assumed_pvs.restore(b.pv.name)
            for p in volumes.dynamic_provisions[len(provisions) :]:
                self.assumed_pvcs.restore((p.pvc.namespace, p.pvc.name))
        return bindings, provisions


def check_bindings(
    pod: Pod,
    node_name: str,
    bindings: list[BindingInfo],
    provisions: list[PersistentVolumeClaim],
    api: ObjectAPI,
    binder: VolumeBinder,
) -> bool:
    """checkBindings: True when every claim PreBind wrote is fully bound in the API objects;
    PluginError when the binding must fail and the pod be retried."""
    node = api.node(node_name)
    if node is None:
        raise PluginError(f'failed to get node "{node_name}": node "{node_name}" not found')
    csi_node = api.csi_node(node_name)
    migrated = csi_node.migrated_plugins if csi_node is not None else None
    if not api.pod_exists(pod):
        raise PluginError(f'pod does not exist any more: pod "{pod.name}" not found')
    for b in bindings:
        pv = api.pv(b.pv.name)
        if pv is None:
            raise PluginError(f'failed to check binding: could not find v1.PersistentVolume "{b.pv.name}"')
        pvc = api.pvc(b.pvc.namespace, b.pvc.name)
        if pvc is None:
            raise PluginError(f'failed to check binding: could not find v1.PersistentVolumeClaim "{b.pvc.key}"')
        if _older(pv, b.pv):
            return False  # the informer has not shown our update yet
        pv = binder.translated(pv, migrated)
        if not check_node_affinity(pv, node.labels):
            raise PluginError(f'pv "{pv.name}" node affinity doesn\'t match node "{node_name}": no matching NodeSelectorTerms')
        if pv.claim_ref is None or not pv.claim_ref.uid:
            raise PluginError(f'ClaimRef got reset for pv "{pv.name}"')
        if not pvc.fully_bound:
            return False
    for claim in provisions:
        pvc = api.pvc(claim.namespace, claim.name)
        if pvc is None:
            raise PluginError(f'failed to check provisioning pvc: could not find v1.PersistentVolumeClaim "{claim.key}"')
        if _older(pvc, claim):
            return False
        if not pvc.annotations and pvc.raw and (pvc.raw.get("metadata") or {}).get("annotations") is None:
            raise PluginError(f'selectedNode annotation reset for PVC "{pvc.name}"')
        if pvc.annotations.get(ANN_SELECTED_NODE) != node_name:
            # a provisioner that failed removes the annotation to make the scheduler retry
            raise PluginError(f'provisioning failed for PVC "{pvc.name}"')
        if pvc.volume_name:
            pv = api.pv(pvc.volume_name)
            if pv is None:
                return False  # not seen yet (or deleted: the claim will be unbound)
            pv = binder.translated(pv, migrated)
            if not check_node_affinity(pv, node.labels):
                raise PluginError(
                    f'pv "{pv.name}" node affinity doesn\'t match node "{node_name}": no matching NodeSelectorTerms'
                )
        if not pvc.fully_bound:
            return False
    return True


def _newer(stored: Any, over: Any) -> bool:
    """The store's object replaced the one an assumption was made over: a higher resourceVersion
    (an informer's relist redelivers the same one), or any other object where there is none."""
    a, b = resource_version(stored), resource_version(over)
    return a is None or b is None or a > b


def _older(seen: Any, written: Any) -> bool:
    """versioner.CompareResourceVersion(written, seen) > 0: the API object is older than the
    one the update returned."""
    a, b = resource_version(seen), resource_version(written)
    return a is not None and b is not None and a < b


def resource_version(obj: Any) -> int | None:
    """An object's metadata.resourceVersion as the API server's versioner reads it (None
    offline, where objects carry none)."""
    if obj is None:
        return None
    rv = (obj.raw.get("metadata") or {}).get("resourceVersion")
    try:
        return int(rv) if rv else None
    except (TypeError, ValueError):
        return None


class AssumeCache(Mapping[K, V]):
    """Upstream's assume cache over one kind (read-only as a mapping: key -> assumed object).
    An assumption is made over the object the store held then; it ends when the store holds a
    newer one (the informer delivered an update: one with a higher resourceVersion, or, offline
    where objects carry none, any other object) or when it is restored (Unreserve, a failed
    write). Until then lookups answer the assumed object."""

    def __init__(self) -> None:
        self._assumed: dict[K, V] = {}
        self._over: dict[K, V | None] = {}

    def __getitem__(self, key: K) -> V:
        return self._assumed[key]

    def __iter__(self) -> Iterator[K]:
        return iter(list(self._assumed))

    def __len__(self) -> int:
        return len(self._assumed)

    def assume(self, key: K, obj: V, over: V | None) -> None:
        self._assumed[key] = obj
        self._over[key] = over

    def restore(self, key: K) -> None:
        self._assumed.pop(key, None)
        self._over.pop(key, None)

    def latest(self, key: K, stored: V | None) -> V | None:
        """The assumed object, or ``stored`` once the store has moved past the assumption."""
        mine = self._assumed.get(key)
        if mine is None:
            return stored
        over = self._over.get(key)
        if stored is None or (stored is not over and _newer(stored, over)):
            self.restore(key)
            return stored
        return mine


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

