"""A pod's claims as the plugin finds them (k8s.io/dynamic-resource-allocation/resourceclaim and
the plugin's foreachPodResourceClaim), with upstream's error texts."""

from __future__ import annotations

from kubesched.api.objects import Pod
from kubesched.dra.claims import ResourceClaim
from kubesched.dra.store import DraState


class ClaimUnavailable(Exception):
    """A claim the pod needs is missing, being deleted or not the pod's: the pod cannot be
    scheduled until a claim event (the text is the status message)."""


def claim_name(pod: Pod, index: int) -> tuple[str | None, bool]:
    """resourceclaim.Name: (the claim's name, whether its owner must be checked); None when the
    pod's template needed no claim."""
    ref = pod.resource_claims[index]
    if ref.claim_name is not None:
        return ref.claim_name, False
    if ref.template_name is not None:
        if ref.name in pod.resource_claim_statuses:
            return pod.resource_claim_statuses[ref.name], True
        raise ClaimUnavailable(f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet')
    raise ClaimUnavailable(
        f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{ref.name}": none of the supported fields are set'
    )


def pod_claims(pod: Pod, dra: DraState) -> list[ResourceClaim]:
    """podResourceClaims: every claim of the pod, in ``spec.resourceClaims`` order."""
    out = []
    for i in range(len(pod.resource_claims)):
        name, check_owner = claim_name(pod, i)
        if name is None:
            continue
        claim = dra.claim(pod.namespace, name)
        if claim is None:
            raise ClaimUnavailable(f'resourceclaim.resource.k8s.io "{name}" not found')
        if claim.deleting:
            raise ClaimUnavailable(f'resourceclaim "{claim.name}" is being deleted')
        if check_owner and not is_for_pod(pod, claim):
            raise ClaimUnavailable(
                f"ResourceClaim {claim.namespace}/{claim.name} was not created for pod {pod.namespace}/{pod.name} (pod is not owner)"
            )
        out.append(claim)
    return out


def is_for_pod(pod: Pod, claim: ResourceClaim) -> bool:
    """resourceclaim.IsForPod: the claim's controller is the pod (by uid)."""
    c = claim.controller
    return claim.namespace == pod.namespace and c is not None and c.uid == pod.uid
