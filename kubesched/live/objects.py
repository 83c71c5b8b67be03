"""The live ``ObjectAPI`` (kubesched.cluster.api): PreBind's calls besides the binding, against the
Kubernetes API, and what it reads back through the informers.

Writes are PUTs of the whole object carrying the resourceVersion the scheduler last saw, so a
change made meanwhile by anyone else (another scheduler, a controller, a user) is a 409 Conflict
rather than a lost update. Reads are the informers' caches, fresher than the scheduler's snapshot
(which takes changes between scheduling attempts). Called from binding workers (and PostFilter
on the scheduling thread): dict reads of the caches need no lock; ``wait_for_change`` sleeps until
an informer reports a PV, PVC or pod change.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from kubesched.cluster.api import Conflict, WriteError
from kubesched.live.client import STRATEGIC_MERGE_PATCH, ApiError, KubeClient
from kubesched.live.resources import PVCS, PVS, RESOURCE_CLAIMS, decode

if TYPE_CHECKING:
    from kubesched.api.objects import Node, Pod
    from kubesched.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim
    from kubesched.dra.claims import ResourceClaim
    from kubesched.live.informer import Informer

#: the kinds whose changes may end a wait for volume bindings
WATCHED_FOR_BINDINGS = frozenset({"PersistentVolume", "PersistentVolumeClaim", "Pod"})


def _q(s: str) -> str:
    return quote(s, safe="")


def pv_body(pv: PersistentVolume) -> dict[str, Any]:
    """The PV as an update sends it: its API object with the claimRef and annotations the
    scheduler set (GetBindVolumeToClaim)."""
    raw = dict(pv.raw)
    meta = {**(raw.get("metadata") or {}), "annotations": dict(pv.annotations)}
    spec = dict(raw.get("spec") or {})
    ref = pv.claim_ref
    if ref is not None:
        spec["claimRef"] = {
            **(spec.get("claimRef") or {}),
            "kind": "PersistentVolumeClaim",
            "apiVersion": "v1",
            "namespace": ref.namespace,
            "name": ref.name,
            "uid": ref.uid,
        }
    return {**raw, "apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec}


def pvc_body(pvc: PersistentVolumeClaim) -> dict[str, Any]:
    """The claim as an update sends it: its API object with the scheduler's annotations (the
    selected node)."""
    raw = dict(pvc.raw)
    meta = {**(raw.get("metadata") or {}), "annotations": dict(pvc.annotations)}
    return {**raw, "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta}


def claim_body(claim: ResourceClaim) -> dict[str, Any]:
    return {**claim.raw, "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim"}


def _error(e: ApiError) -> WriteError:
    message = e.message or str(e)
    return Conflict(message) if e.status == 409 else WriteError(message)


class LiveObjects:
    def __init__(self, client: KubeClient, informers: dict[str, Informer]) -> None:
        self.client = client
        self.informers = informers  # kind -> its informer (``store`` is replaced on a relist)
        self._changed = threading.Condition()
        self._seq = 0

    # ---- what the informers report -------------------------------------------------------
    def notify(self, kinds: set[str]) -> None:
        """Called from informer threads after their caches changed."""
        if kinds & WATCHED_FOR_BINDINGS:
            with self._changed:
                self._seq += 1
                self._changed.notify_all()

    def _store(self, kind: str) -> dict[str, Any]:
        inf = self.informers.get(kind)
        return inf.store if inf is not None else {}

    def pv(self, name: str) -> PersistentVolume | None:
        return self._store("PersistentVolume").get(name)

    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self._store("PersistentVolumeClaim").get(f"{namespace}/{name}")

    def node(self, name: str) -> Node | None:
        return self._store("Node").get(name)

    def csi_node(self, name: str) -> CSINode | None:
        return self._store("CSINode").get(name)

    def pod_exists(self, pod: Pod) -> bool:
        return f"{pod.namespace}/{pod.name}" in self._store("Pod")

    def wait_for_change(self, timeout: float) -> bool:
        with self._changed:
            seq = self._seq
            self._changed.wait_for(lambda: self._seq != seq, timeout)
        return True

    # ---- writes --------------------------------------------------------------------------
    def _put(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            return self.client.request("PUT", path, body=body).body
        except ApiError as e:
            raise _error(e) from None

    def update_pv(self, pv: PersistentVolume) -> PersistentVolume:
        return decode(PVS, self._put(f"/api/v1/persistentvolumes/{_q(pv.name)}", pv_body(pv)))

    def update_pvc(self, pvc: PersistentVolumeClaim) -> PersistentVolumeClaim:
        path = f"/api/v1/namespaces/{_q(pvc.namespace)}/persistentvolumeclaims/{_q(pvc.name)}"
        return decode(PVCS, self._put(path, pvc_body(pvc)))

    @staticmethod
    def _claim_path(namespace: str, name: str, sub: str = "") -> str:
        path = f"/apis/resource.k8s.io/v1/namespaces/{_q(namespace)}/resourceclaims/{_q(name)}"
        return f"{path}/{sub}" if sub else path

    def get_claim(self, namespace: str, name: str) -> ResourceClaim:
        try:
            raw = self.client.request("GET", self._claim_path(namespace, name)).body
        except ApiError as e:
            raise _error(e) from None
        return decode(RESOURCE_CLAIMS, raw)

    def update_claim(self, claim: ResourceClaim) -> ResourceClaim:
        return decode(RESOURCE_CLAIMS, self._put(self._claim_path(claim.namespace, claim.name), claim_body(claim)))

    def update_claim_status(self, claim: ResourceClaim) -> ResourceClaim:
        path = self._claim_path(claim.namespace, claim.name, "status")
        return decode(RESOURCE_CLAIMS, self._put(path, claim_body(claim)))

    def remove_claim_reservation(self, claim: ResourceClaim, pod_uid: str) -> None:
        """Unreserve's strategic merge patch: the pod's reservedFor entry deleted by uid, the
        claim's uid as a precondition (a claim recreated by that name is left alone)."""
        patch = {"metadata": {"uid": claim.uid}, "status": {"reservedFor": [{"$patch": "delete", "uid": pod_uid}]}}
        try:
            self.client.request(
                "PATCH", self._claim_path(claim.namespace, claim.name, "status"), body=patch, content_type=STRATEGIC_MERGE_PATCH
            )
        except ApiError as e:
            raise _error(e) from None
