"""What the PV controller and an external provisioner do once the scheduler has written its
choice (kubesched's stand-in for them offline, where the snapshot's stores are the cluster):
a PV pre-bound to a claim becomes Bound and the claim bound to it; a claim annotated with a
selected node gets a PV provisioned there and is bound to it."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType

from kubesched.api.objects import Node
from kubesched.api.selectors import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kubesched.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_STORAGE_PROVISIONER,
    CLAIM_BOUND,
    VOLUME_BOUND,
    ClaimRef,
    PersistentVolume,
    PersistentVolumeClaim,
)
from kubesched.state.storage import Storage


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
