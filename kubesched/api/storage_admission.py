"""What happens to storage objects on their way into a cluster besides validation: the
DefaultStorageClass admission plugin (``admit_claims``), one object per kind and name
(``check_unique_storage``), and the ephemeral volume controller's claim for a generic ephemeral
volume (``ephemeral_claim``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from kubesched.api.fields import as_map
from kubesched.api.storage import (
    BETA_STORAGE_CLASS_ANNOTATION,
    CSIStorageCapacity,
    PersistentVolumeClaim,
    PodVolume,
    StorageClass,
)
from kubesched.errors import InputError


def default_class(classes: list[StorageClass]) -> StorageClass | None:
    """GetDefaultClass: of the classes annotated as the default, the newest (then by name)."""
    defaults = [c for c in classes if c.is_default]
    if not defaults:
        return None
    newest = max(c.creation_time for c in defaults)
    return min((c for c in defaults if c.creation_time == newest), key=lambda c: c.name)


def admit_claims(claims: list[PersistentVolumeClaim], classes: list[StorageClass]) -> list[PersistentVolumeClaim]:
    """The DefaultStorageClass admission plugin: a claim created without a class (neither
    ``spec.storageClassName`` nor the beta annotation) gets the default StorageClass, if there is
    one. Claims in a cluster dump were admitted already and keep what they have."""
    default = default_class(classes)
    if default is None:
        return claims
    return [
        dataclasses.replace(c, spec_class=default.name)
        if c.spec_class is None and BETA_STORAGE_CLASS_ANNOTATION not in c.annotations
        else c
        for c in claims
    ]


def check_unique_storage(objects: list[Any], origins: Mapping[int, tuple[str, str]]) -> None:
    """A cluster holds one object per kind and name (and namespace, for claims and capacities)."""
    seen: dict[tuple[str, str], Any] = {}
    for obj in objects:
        namespaced = isinstance(obj, PersistentVolumeClaim | CSIStorageCapacity)
        key = (type(obj).__name__, f"{obj.namespace}/{obj.name}" if namespaced else obj.name)
        first = seen.get(key)
        if first is not None:
            where = origins.get(id(obj), ("", ""))
            at = ": ".join(p for p in origins.get(id(first), ()) if p)
            raise InputError(
                f'duplicate {key[0]} "{key[1]}"' + (f" (first at {at})" if at else ""),
                source=where[0] or None,
                path=where[1] or None,
            )
        seen[key] = obj


def ephemeral_claim(namespace: str, pod_name: str, pod_uid: str, volume: PodVolume) -> PersistentVolumeClaim:
    """The claim the ephemeral volume controller creates for a generic ephemeral volume: named
    ``<pod>-<volume>``, in the pod's namespace, controlled by the pod, from the volume's
    ``volumeClaimTemplate``."""
    template = as_map(volume.fields.get("volumeClaimTemplate"), "volumeClaimTemplate")
    md = as_map(template.get("metadata"), "volumeClaimTemplate.metadata")
    owner = {"apiVersion": "v1", "kind": "Pod", "name": pod_name, "uid": pod_uid, "controller": True, "blockOwnerDeletion": True}
    wire = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": volume.claim_name,
            "namespace": namespace,
            "labels": md.get("labels") or {},
            "annotations": md.get("annotations") or {},
            "ownerReferences": [owner],
        },
        "spec": template.get("spec") or {},
    }
    return PersistentVolumeClaim.parse(wire)
