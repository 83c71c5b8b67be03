"""The offline ``ObjectAPI`` (kubesched.cluster.api): the snapshot's stores are the API server.

A write replaces the object in ``snap.storage`` or ``snap.dra`` (the storage store tells the
scheduling queue, as an informer would), and the controllers that would answer it in a cluster
answer at once (kubesched.cluster.controllers): a PV pre-bound to a claim is bound, a claim
annotated with a selected node is provisioned there. So VolumeBinding's PreBind finds every claim
bound as soon as it has written, and never waits. Nothing conflicts: one thread writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubesched.api.storage import ANN_SELECTED_NODE
from kubesched.cluster.api import WriteError
from kubesched.cluster.controllers import complete_provisioning, complete_static_binding

if TYPE_CHECKING:
    from kubesched.api.objects import Node, Pod
    from kubesched.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim
    from kubesched.dra.claims import ResourceClaim
    from kubesched.state.snapshot import Snapshot


class StoreAPI:
    def __init__(self, snapshot: Snapshot) -> None:
        self.snap = snapshot

    # ---- reads -------------------------------------------------------------------------
    def pv(self, name: str) -> PersistentVolume | None:
        return self.snap.storage.pvs.get(name)

    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.snap.storage.pvc(namespace, name)

    def node(self, name: str) -> Node | None:
        row = self.snap.row_of.get(name)
        return self.snap.nodes[row] if row is not None else None

    def csi_node(self, name: str) -> CSINode | None:
        return self.snap.storage.csi_nodes.get(name)

    def pod_exists(self, pod: Pod) -> bool:
        return True  # offline, a pod in its binding cycle is not deleted meanwhile

    def wait_for_change(self, timeout: float) -> bool:
        return False  # every controller answered when it was written to

    # ---- volumes -----------------------------------------------------------------------
    def update_pv(self, pv: PersistentVolume) -> PersistentVolume:
        storage = self.snap.storage
        storage.add(pv)
        if pv.claim_ref is not None:
            complete_static_binding(pv, storage)
        return storage.pvs[pv.name]

    def update_pvc(self, pvc: PersistentVolumeClaim) -> PersistentVolumeClaim:
        storage = self.snap.storage
        storage.add(pvc)
        node = self.node(pvc.annotations.get(ANN_SELECTED_NODE, ""))
        if node is not None and not pvc.volume_name:
            complete_provisioning(pvc, node, storage)
        out = storage.pvc(pvc.namespace, pvc.name)
        assert out is not None
        return out

    # ---- claims ------------------------------------------------------------------------
    def get_claim(self, namespace: str, name: str) -> ResourceClaim:
        claim = self.snap.dra.claim(namespace, name)
        if claim is None:
            raise WriteError(f'resourceclaims.resource.k8s.io "{name}" not found')
        return claim

    def update_claim(self, claim: ResourceClaim) -> ResourceClaim:
        self.get_claim(claim.namespace, claim.name)
        self.snap.dra.write_claim(claim)
        return claim

    def update_claim_status(self, claim: ResourceClaim) -> ResourceClaim:
        return self.update_claim(claim)

    def remove_claim_reservation(self, claim: ResourceClaim, pod_uid: str) -> None:
        current = self.snap.dra.claim(claim.namespace, claim.name)
        if current is not None and current.reserved_for_pod(pod_uid):
            kept = tuple(r for r in current.reserved_for if r.uid != pod_uid)
            self.snap.dra.write_claim(current.with_status(current.allocation, kept))
