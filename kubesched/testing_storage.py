"""Builders of storage objects and pod volumes for tests and examples, as wire-format dicts
(the counterpart of ``kubesched.testing`` for the volume plugins' objects; upstream's
st.MakePersistentVolume() and friends)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from kubesched.api.storage import STORAGE_KINDS

if TYPE_CHECKING:
    from kubesched.state.snapshot import Snapshot


def pvc_volume(claim: str, name: str | None = None, *, read_only: bool = False) -> dict[str, Any]:
    """A pod volume using a claim (st.MakePod().PVC(claim) names the volume after the claim)."""
    src: dict[str, Any] = {"claimName": claim}
    if read_only:
        src["readOnly"] = True
    return {"name": name or claim.lower().replace("_", "-"), "persistentVolumeClaim": src}


def ephemeral_volume(name: str, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    """A generic ephemeral volume (its claim is ``<pod>-<name>``)."""
    template = {"spec": spec or {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    return {"name": name, "ephemeral": {"volumeClaimTemplate": template}}


def make_pv(
    name: str,
    *,
    labels: dict[str, str] | None = None,
    capacity: str | None = "1Gi",
    access_modes: Iterable[str] = ("ReadWriteOnce",),
    storage_class: str | None = None,
    claim: tuple[str, str] | tuple[str, str, str] | None = None,
    node_affinity: list[dict[str, Any]] | None = None,
    phase: str | None = "Available",
    source: dict[str, Any] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A PersistentVolume; ``claim``: (namespace, name[, uid]) of its claimRef; ``node_affinity``:
    the required node selector terms; ``source``: one PersistentVolumeSource member (default: a
    CSI volume of driver ``csi.example.com`` named after the PV)."""
    spec: dict[str, Any] = {
        "accessModes": list(access_modes),
        **(source or {"csi": {"driver": "csi.example.com", "volumeHandle": name}}),
    }
    if capacity is not None:
        spec["capacity"] = {"storage": capacity}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    if claim is not None:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1], **({"uid": claim[2]} if len(claim) > 2 else {})}
    if node_affinity is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": node_affinity}}
    return _volume_object("PersistentVolume", {"name": name, "labels": labels or {}, "annotations": annotations or {}}, spec, phase)


def _volume_object(kind: str, metadata: dict[str, Any], spec: dict[str, Any], phase: str | None) -> dict[str, Any]:
    """A PV or PVC manifest, with ``status.phase`` when given."""
    d: dict[str, Any] = {"apiVersion": "v1", "kind": kind, "metadata": metadata, "spec": spec}
    if phase is not None:
        d["status"] = {"phase": phase}
    return d


def make_pvc(
    name: str,
    *,
    namespace: str = "default",
    volume_name: str | None = None,
    storage_class: str | None = None,
    request: str | None = "1Gi",
    access_modes: Iterable[str] = ("ReadWriteOnce",),
    annotations: dict[str, str] | None = None,
    uid: str | None = None,
    phase: str | None = None,
    selector: dict[str, Any] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": list(access_modes)}
    if request is not None:
        spec["resources"] = {"requests": {"storage": request}}
    if volume_name is not None:
        spec["volumeName"] = volume_name
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    if selector is not None:
        spec["selector"] = selector
    return _volume_object("PersistentVolumeClaim", {"name": name, "namespace": namespace, "uid": uid or f"pvc-{namespace}-{name}", "annotations": annotations or {}}, spec, phase)


def make_storage_class(
    name: str,
    *,
    provisioner: str = "csi.example.com",
    mode: str | None = "Immediate",
    allowed_topologies: list[dict[str, list[str]]] | None = None,
    default: bool = False,
) -> dict[str, Any]:
    """A StorageClass; ``allowed_topologies``: one {key: values} mapping per term."""
    d: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
    }
    if mode is not None:
        d["volumeBindingMode"] = mode
    if allowed_topologies is not None:
        d["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": k, "values": v} for k, v in term.items()]} for term in allowed_topologies
        ]
    if default:
        d["metadata"]["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    return d


def make_csi_node(
    name: str,
    drivers: dict[str, int | None],
    *,
    topology_keys: dict[str, list[str]] | None = None,
    migrated_plugins: Iterable[str] = (),
) -> dict[str, Any]:
    """A CSINode; ``drivers``: driver name -> attach limit (None: the driver reports none)."""
    out = []
    for driver, count in drivers.items():
        d: dict[str, Any] = {"name": driver, "nodeID": name, "topologyKeys": (topology_keys or {}).get(driver, [])}
        if count is not None:
            d["allocatable"] = {"count": count}
        out.append(d)
    md: dict[str, Any] = {"name": name}
    if migrated_plugins:
        md["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": ",".join(migrated_plugins)}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": md, "spec": {"drivers": out}}


def with_storage(snap: Snapshot, *objects: dict[str, Any]) -> Snapshot:
    """``snap`` with the storage objects (wire dicts) added to its store."""
    snap.storage.load(STORAGE_KINDS[o["kind"]](o) for o in objects)
    return snap
