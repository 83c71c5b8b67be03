"""A pod's references to ResourceClaims (core/v1 ``spec.resourceClaims``, the claims its
templates produced in ``status.resourceClaimStatuses``, and its containers' ``resources.claims``).

The claims themselves are resource.k8s.io objects: ``kubesched.dra.objects``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubesched.api.fields import as_str, maps
from kubesched.errors import join_path


@dataclass(frozen=True, slots=True)
class PodClaimRef:
    """PodResourceClaim: a claim by name, or one made from a template for this pod."""

    name: str
    claim_name: str | None
    template_name: str | None


def parse_pod_claims(spec: dict[str, Any], status: dict[str, Any], path: str) -> tuple[tuple[PodClaimRef, ...], dict[str, str | None]]:
    """``spec.resourceClaims`` and ``status.resourceClaimStatuses`` (pod claim name -> the
    generated claim's name, None when none was needed) of a pod."""
    sp = join_path(path, "spec.resourceClaims")
    refs = []
    for rm, ip in maps(spec.get("resourceClaims"), sp):
        claim, template = rm.get("resourceClaimName"), rm.get("resourceClaimTemplateName")
        refs.append(
            PodClaimRef(
                as_str(rm.get("name"), join_path(ip, "name")),
                None if claim is None else as_str(claim, join_path(ip, "resourceClaimName")),
                None if template is None else as_str(template, join_path(ip, "resourceClaimTemplateName")),
            )
        )
    stp = join_path(path, "status.resourceClaimStatuses")
    statuses: dict[str, str | None] = {}
    for smap, ip in maps(status.get("resourceClaimStatuses"), stp):
        generated = smap.get("resourceClaimName")
        statuses[as_str(smap.get("name"), join_path(ip, "name"))] = (
            None if generated is None else as_str(generated, join_path(ip, "resourceClaimName"))
        )
    return tuple(refs), statuses
