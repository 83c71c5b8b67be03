"""Reading resource.k8s.io/v1 objects from cluster files (``kubesched.load`` calls in here)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubesched.api.objects import Pod
from kubesched.dra import validation
from kubesched.dra.claims import ResourceClaim, ResourceClaimTemplate
from kubesched.dra.objects import DeviceClass, ResourceSlice
from kubesched.dra.store import DraObjects, make_template_claims
from kubesched.errors import InputError

#: kind -> (API-server validation, parse, the DraObjects list it goes to)
KINDS: dict[str, tuple[Callable[[dict, str], None], Callable[..., Any], str]] = {
    "DeviceClass": (validation.device_class, DeviceClass.parse, "classes"),
    "ResourceSlice": (validation.resource_slice, ResourceSlice.parse, "slices"),
    "ResourceClaim": (validation.resource_claim, ResourceClaim.parse, "claims"),
    "ResourceClaimTemplate": (validation.resource_claim_template, ResourceClaimTemplate.parse, "templates"),
}


def add(objs: DraObjects, kind: str, m: dict, path: str) -> None:
    """Parse one validated object of a DRA kind into ``objs``."""
    _, parse, bucket = KINDS[kind]
    getattr(objs, bucket).append(parse(m, path))


def finish(objs: DraObjects, pods: list[Pod], source: str) -> list[str]:
    """Names unique per kind (and namespace), then the claims of template references
    (``make_template_claims``); returns its warnings."""
    for kind, items, key in (
        ("DeviceClass", objs.classes, lambda o: o.name),
        ("ResourceSlice", objs.slices, lambda o: o.name),
        ("ResourceClaim", objs.claims, lambda o: o.key),
        ("ResourceClaimTemplate", objs.templates, lambda o: o.key),
    ):
        seen: set[str] = set()
        for obj in items:
            k = key(obj)
            if k in seen:
                raise InputError(f'duplicate {kind} "{k}"', source=source or None)
            seen.add(k)
    return make_template_claims(pods, objs)
