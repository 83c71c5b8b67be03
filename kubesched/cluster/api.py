"""The API calls of the binding cycle besides the binding itself: what VolumeBinding's PreBind
writes (a PV's claimRef, a claim's selected node) and then reads until the PV controller has bound
the claims, and what DynamicResources writes into ResourceClaims (finalizer, allocation,
reservedFor), with the conflicts a resourceVersion brings.

Plugins reach it as ``handle.api``. Two implementations answer it: ``kubesched.cluster.store.
StoreAPI`` offline (the snapshot's stores are the API server, and the PV controller and an external
provisioner answer a write at once) and ``kubesched.live.objects.LiveObjects`` for ``kubesched run``
(the Kubernetes API for writes, the informers' caches for reads).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from kubesched.api.objects import Node, Pod
    from kubesched.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim
    from kubesched.dra.claims import ResourceClaim


class WriteError(Exception):
    """The API refused a call; the message is its answer (a metav1.Status message)."""


class Conflict(WriteError):
    """409 Conflict: the object changed since it was read (its resourceVersion is stale)."""


class ObjectAPI(Protocol):
    # ---- reads: the API objects as the informers last saw them (upstream's GetAPIPV/GetAPIPVC
    # and listers), not the scheduler's assumptions
    def pv(self, name: str) -> PersistentVolume | None: ...

    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None: ...

    def node(self, name: str) -> Node | None: ...

    def csi_node(self, name: str) -> CSINode | None: ...

    def pod_exists(self, pod: Pod) -> bool:
        """The pod lister still has the pod (by namespace and name)."""
        ...

    def wait_for_change(self, timeout: float) -> bool:
        """Block until the objects read above may have changed, at most ``timeout`` seconds;
        False when nothing can change them any more (offline: every controller has answered)."""
        ...

    # ---- writes (PUT, with the object's resourceVersion): the object the API returned, or
    # WriteError / Conflict
    def update_pv(self, pv: PersistentVolume) -> PersistentVolume: ...

    def update_pvc(self, pvc: PersistentVolumeClaim) -> PersistentVolumeClaim: ...

    def get_claim(self, namespace: str, name: str) -> ResourceClaim:
        """A GET of the claim (after a conflict); WriteError when it cannot be read."""
        ...

    def update_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """Update the claim (its metadata: the finalizer)."""
        ...

    def update_claim_status(self, claim: ResourceClaim) -> ResourceClaim:
        """Update the claim's status subresource (allocation, reservedFor)."""
        ...

    def remove_claim_reservation(self, claim: ResourceClaim, pod_uid: str) -> None:
        """Drop the pod's entry from the claim's reservedFor (Unreserve's patch)."""
        ...
