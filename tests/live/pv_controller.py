"""A minimal PV controller and CSI provisioner for the test API server (what kube-controller-
manager and an external-provisioner sidecar do in a real cluster), written against the test
server's own object API and independent of kubesched's code:

- a claim annotated ``volume.kubernetes.io/selected-node`` by the scheduler, of a class with a
  provisioner, gets a PV named ``pvc-<claim uid>`` in the node's zone, and is bound to it;
- a PV the scheduler pre-bound (``spec.claimRef`` with the claim's uid) gets its claim bound.

``fail`` makes the provisioner give up instead, as a real one signals it: it removes the
selected-node annotation from the claim.
"""

from __future__ import annotations

import threading
from typing import Any

from tests.kubeapi import KubeAPIServer
from tests.kubeapi.errors import APIError

SELECTED_NODE = "volume.kubernetes.io/selected-node"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ZONE = "topology.kubernetes.io/zone"


class PVController:
    def __init__(self, api: KubeAPIServer, *, period: float = 0.01, fail: bool = False) -> None:
        self.api = api
        self.period = period
        self.fail = fail
        self.provisioned: list[str] = []  # PV names, in order
        self.bound: list[str] = []  # claim names bound, in order
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pv-controller", daemon=True)

    def __enter__(self) -> PVController:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            try:
                self._sync()
            except APIError:
                pass  # a conflict with another writer: the next pass sees the new object

    def _sync(self) -> None:
        if True:
            for claim in self.api.list("PersistentVolumeClaim"):
                ann = claim["metadata"].get("annotations") or {}
                if BIND_COMPLETED in ann:
                    continue
                if ann.get(SELECTED_NODE) and not claim["spec"].get("volumeName"):
                    self._provision(claim, ann[SELECTED_NODE])
                    continue
                pv = self._prebound_pv(claim)
                if pv is not None:
                    self._bind(claim, pv, {})

    def _prebound_pv(self, claim: dict[str, Any]) -> dict[str, Any] | None:
        md = claim["metadata"]
        for pv in self.api.list("PersistentVolume"):
            ref = pv["spec"].get("claimRef") or {}
            if (ref.get("namespace"), ref.get("name"), ref.get("uid")) == (md["namespace"], md["name"], md["uid"]):
                return pv
        return None

    def _provision(self, claim: dict[str, Any], node_name: str) -> None:
        md = claim["metadata"]
        sc = self.api.get("StorageClass", claim["spec"].get("storageClassName") or "")
        if sc is None or not sc.get("provisioner"):
            return
        if self.fail:
            ann = {k: v for k, v in md["annotations"].items() if k != SELECTED_NODE}
            self.api.update({**claim, "metadata": {**md, "annotations": ann}})
            return
        node = self.api.get("Node", node_name) or {"metadata": {}}
        zone = (node["metadata"].get("labels") or {}).get(ZONE)
        name = f"pvc-{md['uid']}"
        spec: dict[str, Any] = {
            "capacity": {"storage": claim["spec"]["resources"]["requests"]["storage"]},
            "accessModes": claim["spec"].get("accessModes") or ["ReadWriteOnce"],
            "storageClassName": sc["metadata"]["name"],
            "persistentVolumeReclaimPolicy": "Delete",
            "claimRef": {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": md["namespace"],
                         "name": md["name"], "uid": md["uid"]},
            "csi": {"driver": sc["provisioner"], "volumeHandle": name},
        }
        if zone:
            spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}]}}
        pv = self.api.create({"apiVersion": "v1", "kind": "PersistentVolume",
                              "metadata": {"name": name, "annotations": {"pv.kubernetes.io/provisioned-by": sc["provisioner"]}},
                              "spec": spec, "status": {"phase": "Bound"}})
        self.provisioned.append(name)
        self._bind(claim, pv, {PROVISIONER: sc["provisioner"]})

    def _bind(self, claim: dict[str, Any], pv: dict[str, Any], extra: dict[str, str]) -> None:
        md = claim["metadata"]
        ann = {**(md.get("annotations") or {}), BIND_COMPLETED: "yes", BOUND_BY_CONTROLLER: "yes", **extra}
        self.api.update({**pv, "status": {"phase": "Bound"}})
        self.api.update({**claim, "metadata": {**md, "annotations": ann},
                         "spec": {**claim["spec"], "volumeName": pv["metadata"]["name"]},
                         "status": {"phase": "Bound", "accessModes": pv["spec"].get("accessModes"),
                                    "capacity": pv["spec"]["capacity"]}})
        self.bound.append(md["name"])
