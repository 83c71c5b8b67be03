"""The DRA objects of one cluster as the scheduler's listers see them (upstream's
SharedDRAManager: DeviceClasses, ResourceSlices, ResourceClaims with the assume cache and the
allocations in flight), and the claims the resourceclaim controller makes from templates.

Offline, this store is the in-memory cluster's copy too: DynamicResources' PreBind writes a
claim's allocation and reservation here (``write_claim``), as kube-scheduler writes them through
the API, so later pods see the devices taken and share a claim that is already allocated.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from kubesched.api.objects import Pod
from kubesched.dra.allocator import DeviceID, MatchCache
from kubesched.dra.objects import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice

#: The annotation the resourceclaim controller puts on a claim it makes for a pod.
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
#: utilrand's alphabet (no vowels, no confusable digits), which GenerateName suffixes use.
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


@dataclass
class DraObjects:
    """What a cluster dump holds of resource.k8s.io (the loader's collection)."""

    classes: list[DeviceClass] = field(default_factory=list)
    slices: list[ResourceSlice] = field(default_factory=list)
    claims: list[ResourceClaim] = field(default_factory=list)
    templates: list[ResourceClaimTemplate] = field(default_factory=list)

    def extend(self, other: DraObjects) -> None:
        self.classes += other.classes
        self.slices += other.slices
        self.claims += other.claims
        self.templates += other.templates


class DraState:
    """The listers: classes by name, slices, claims and templates by ``namespace/name``."""

    def __init__(self) -> None:
        self.classes: dict[str, DeviceClass] = {}
        self.slices: dict[str, ResourceSlice] = {}
        self.claims: dict[str, ResourceClaim] = {}
        self.templates: dict[str, ResourceClaimTemplate] = {}
        # claim uid -> the claim with the allocation Reserve made, until PreBind writes it or
        # Unreserve drops it (SignalClaimPendingAllocation)
        self.in_flight: dict[str, ResourceClaim] = {}
        self.matches = MatchCache()
        self.generation = 0
        self._allocated: tuple[int, set[DeviceID]] | None = None
        #: False where nothing feeds this store (the extender, whose caller's own DynamicResources
        #: judges claims): the plugin then takes no part rather than find every claim missing
        self.tracked = True
        # live, a binding worker assumes a claim it wrote while the scheduling thread applies the
        # informer's claims: a newer version must not be replaced by an older one in between
        self._claims_lock = threading.Lock()
        self._generation_lock = threading.Lock()

    def __bool__(self) -> bool:
        return bool(self.classes or self.slices or self.claims or self.templates)

    def add(self, objs: DraObjects) -> None:
        for c in objs.classes:
            self.classes[c.name] = c
        for s in objs.slices:
            self.slices[s.name] = s
        for c in objs.claims:
            self.claims[c.key] = c
        for t in objs.templates:
            self.templates[t.key] = t
        self._bump()

    def _bump(self) -> None:
        with self._generation_lock:  # live, a binding worker writes too: no increment may be lost
            self.generation += 1

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.claims.get(f"{namespace}/{name}")

    def write_claim(self, claim: ResourceClaim) -> None:
        """A claim's update reached the cluster (UpdateStatus); the store follows."""
        self.claims[claim.key] = claim
        self._bump()

    def put_claim(self, claim: ResourceClaim) -> bool:
        """The assume cache's rule for a claim seen live (the informer's, or the API's answer to
        PreBind's write): kept unless the store holds a newer resourceVersion of it. True when
        stored."""
        with self._claims_lock:
            cur = self.claims.get(claim.key)
            if cur is not None and cur.uid == claim.uid and _version(cur) > _version(claim):
                return False
            self.claims[claim.key] = claim
        self._bump()
        return True

    def put(self, obj: DeviceClass | ResourceSlice) -> None:
        """A DeviceClass or ResourceSlice added or changed (live)."""
        if isinstance(obj, DeviceClass):
            self.classes[obj.name] = obj
        else:
            self.slices[obj.name] = obj
        self._bump()

    def remove(self, obj: DeviceClass | ResourceSlice | ResourceClaim) -> None:
        """An object deleted (live)."""
        if isinstance(obj, DeviceClass):
            self.classes.pop(obj.name, None)
        elif isinstance(obj, ResourceSlice):
            self.slices.pop(obj.name, None)
        else:
            with self._claims_lock:
                self.claims.pop(obj.key, None)
        self._bump()

    def signal_pending(self, claim: ResourceClaim) -> None:
        self.in_flight[claim.uid] = claim
        self._bump()

    def remove_pending(self, uid: str) -> bool:
        if self.in_flight.pop(uid, None) is None:
            return False
        self._bump()
        return True

    def allocated_devices(self) -> set[DeviceID]:
        """ListAllAllocatedDevices: devices of allocated claims (admin access holds none) and of
        allocations in flight."""
        generation = self.generation  # read first: a change made while this runs is seen next time
        if self._allocated is not None and self._allocated[0] == generation:
            return self._allocated[1]
        out: set[DeviceID] = set()
        for claim in (*self.claims.values(), *self.in_flight.values()):
            if claim.allocation is None:
                continue
            for r in claim.allocation.results:
                if not r.admin_access:
                    out.add(r.device_id)
        self._allocated = (generation, out)
        return out


def _version(claim: ResourceClaim) -> int:
    rv = (claim.raw.get("metadata") or {}).get("resourceVersion")
    try:
        return int(rv) if rv else 0
    except (TypeError, ValueError):
        return 0


def generated_claim_name(pod: Pod, pod_claim: str) -> str:
    """The name the resourceclaim controller gives a claim it makes from a template:
    GenerateName ``<pod>-<pod claim>-`` (both cut in proportion past 57 characters) and five
    characters. Offline the five characters come from a hash of the pod and its claim instead of
    utilrand, so the same input gets the same names."""
    base = f"{pod.name}-{pod_claim}-"
    if len(base) > 57:
        base = pod.name[: len(pod.name) * 57 // len(base)] + "-" + pod_claim[: len(pod_claim) * 57 // len(base)]
    digest = hashlib.sha256(f"{pod.namespace}/{pod.name}/{pod.uid}/{pod_claim}".encode()).digest()
    return base + "".join(_SUFFIX_ALPHABET[b % len(_SUFFIX_ALPHABET)] for b in digest[:5])


def claim_from_template(pod: Pod, pod_claim: str, template: ResourceClaimTemplate) -> ResourceClaim:
    """The ResourceClaim the resourceclaim controller creates for ``pod``: the template's spec and
    metadata, owned (controller) by the pod, annotated with the pod's claim name."""
    name = generated_claim_name(pod, pod_claim)
    tmeta = (template.raw.get("spec") or {}).get("metadata") or {}
    metadata = {
        **{k: v for k, v in tmeta.items() if k in ("labels", "annotations")},
        "name": name,
        "namespace": pod.namespace,
        "annotations": {**(tmeta.get("annotations") or {}), POD_CLAIM_NAME_ANNOTATION: pod_claim},
        "ownerReferences": [
            {"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid, "controller": True, "blockOwnerDeletion": True}
        ],
    }
    raw = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": metadata,
        "spec": (template.raw.get("spec") or {}).get("spec") or {},
    }
    return ResourceClaim.parse(raw, f"ResourceClaim {pod.namespace}/{name}")


def make_template_claims(pods: Iterable[Pod], objs: DraObjects) -> list[str]:
    """The resourceclaim controller, once: for each pod that is not finished, a claim for every
    template reference that ``status.resourceClaimStatuses`` does not resolve yet, recorded there.
    A reference to a template the input lacks stays unresolved (the pod then waits, as in a
    cluster). Returns one warning per such reference."""
    templates = {t.key: t for t in objs.templates}
    existing = {c.key for c in objs.claims}
    warnings = []
    for pod in pods:
        if pod.terminal:
            continue
        for ref in pod.resource_claims:
            if ref.template_name is None or ref.name in pod.resource_claim_statuses:
                continue
            template = templates.get(f"{pod.namespace}/{ref.template_name}")
            if template is None:
                warnings.append(
                    f"pod {pod.key}: spec.resourceClaims {ref.name} names ResourceClaimTemplate "
                    f'"{ref.template_name}", which the input lacks: its claim is not made'
                )
                continue
            claim = claim_from_template(pod, ref.name, template)
            if claim.key not in existing:
                objs.claims.append(claim)
                existing.add(claim.key)
            pod.resource_claim_statuses[ref.name] = claim.name
    return warnings
