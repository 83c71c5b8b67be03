"""The DRA objects of one cluster as the scheduler's listers see them (upstream's
SharedDRAManager: DeviceClasses, ResourceSlices, ResourceClaims with the assume cache and the
allocations in flight), and the claims the resourceclaim controller makes from templates.

Offline, this store is the in-memory cluster's copy too: DynamicResources' PreBind writes a
claim's allocation and reservation here (``write_claim``), as kube-scheduler writes them through
the API, so later pods see the devices taken and share a claim that is already allocated. What
the devices' holders hold is kept up to date claim by claim (``allocated_devices``,
``consumed_capacity``), not gathered from every claim per cycle. The offline clusters (``schedule``,
``simulate``, the FGD experiment) also play the resourceclaim controller: ``create_pod_claims``
when a pod is created, ``release_pod`` when it is gone.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from kubesched.api.objects import Pod
from kubesched.dra.caches import AllocationCache, MatchCache
from kubesched.dra.capacity import Consumed
from kubesched.dra.claims import ResourceClaim, ResourceClaimTemplate
from kubesched.dra.objects import FINALIZER, DeviceClass, ResourceSlice
from kubesched.dra.pools import DeviceID, SliceIndex

#: CEL verdicts depend on the expression and the device's content alone: one cache for every
#: store of the process (a worker of ``experiment fgd`` builds a cluster per run)
SHARED_MATCHES = MatchCache()
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
        self.matches = SHARED_MATCHES
        self.generation = 0
        self.slice_generation = 0  # bumps when slices come or go (what describes the devices)
        self._index: tuple[int, SliceIndex] | None = None
        # What allocated claims and allocations in flight hold: devices held whole (with how
        # many claims hold each), and per shared device the capacity its shares consume.
        self._holders: dict[DeviceID, int] = {}
        self._consumed: dict[DeviceID, dict[str, Fraction]] = {}
        # (driver, pool) -> how often what its devices' holders hold changed (the allocator's
        # cache keys on it), and the allocations found per node for claims of one spec
        self.pool_versions: dict[tuple[str, str], int] = {}
        self.allocations = AllocationCache()
        #: False where nothing feeds this store (the extender, whose caller's own DynamicResources
        #: judges claims): the plugin then takes no part rather than find every claim missing
        self.tracked = True
        # live, a binding worker assumes a claim it wrote while the scheduling thread applies the
        # informer's claims: a newer version must not be replaced by an older one in between, and
        # what the holders hold is counted under the same lock
        self._claims_lock = threading.Lock()
        self._generation_lock = threading.Lock()

    def __bool__(self) -> bool:
        return bool(self.classes or self.slices or self.claims or self.templates)

    def add(self, objs: DraObjects) -> None:
        for c in objs.classes:
            self.classes[c.name] = c
        for s in objs.slices:
            self.slices[s.name] = s
        with self._claims_lock:
            for c in objs.claims:
                self._put(c)
        for t in objs.templates:
            self.templates[t.key] = t
        self._devices_changed(bool(objs.slices), bool(objs.slices or objs.classes))
        self._bump()

    def _bump(self) -> None:
        with self._generation_lock:  # live, a binding worker writes too: no increment may be lost
            self.generation += 1

    def _devices_changed(self, slices: bool, classes: bool) -> None:
        """Slices (or classes) changed: the slice index is rebuilt, kept allocations dropped."""
        if slices:
            self.slice_generation += 1
        if slices or classes:
            self.allocations.clear()

    def slice_index(self) -> SliceIndex:
        """The slices indexed by node and pool, kept until slices change."""
        if self._index is None or self._index[0] != self.slice_generation:
            self._index = (self.slice_generation, SliceIndex(list(self.slices.values())))
        return self._index[1]

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.claims.get(f"{namespace}/{name}")

    def write_claim(self, claim: ResourceClaim) -> None:
        """A claim's update reached the cluster (UpdateStatus); the store follows."""
        with self._claims_lock:
            self._put(claim)
        self._bump()

    def put_claim(self, claim: ResourceClaim) -> bool:
        """The assume cache's rule for a claim seen live (the informer's, or the API's answer to
        PreBind's write): kept unless the store holds a newer resourceVersion of it. True when
        stored."""
        with self._claims_lock:
            cur = self.claims.get(claim.key)
            if cur is not None and cur.uid == claim.uid and _version(cur) > _version(claim):
                return False
            self._put(claim)
        self._bump()
        return True

    def put(self, obj: DeviceClass | ResourceSlice) -> None:
        """A DeviceClass or ResourceSlice added or changed (live)."""
        if isinstance(obj, DeviceClass):
            self.classes[obj.name] = obj
        else:
            self.slices[obj.name] = obj
        self._devices_changed(isinstance(obj, ResourceSlice), True)
        self._bump()

    def remove(self, obj: DeviceClass | ResourceSlice | ResourceClaim) -> None:
        """An object deleted (live)."""
        if isinstance(obj, DeviceClass):
            self.classes.pop(obj.name, None)
            self._devices_changed(False, True)
        elif isinstance(obj, ResourceSlice):
            self.slices.pop(obj.name, None)
            self._devices_changed(True, True)
        else:
            with self._claims_lock:
                self._pop(obj.key)
        self._bump()

    def delete_claim(self, claim: ResourceClaim) -> None:
        """A claim deleted (offline: the resourceclaim controller's)."""
        with self._claims_lock:
            gone = self._pop(claim.key)
        if gone:
            self._bump()

    def _pop(self, key: str) -> bool:
        old = self.claims.pop(key, None)
        if old is not None:
            self._count(old, -1)
        return old is not None

    def _put(self, claim: ResourceClaim) -> None:
        old = self.claims.get(claim.key)
        if old is not None:
            self._count(old, -1)
        self.claims[claim.key] = claim
        self._count(claim, 1)

    def signal_pending(self, claim: ResourceClaim) -> None:
        with self._claims_lock:
            old = self.in_flight.get(claim.uid)
            if old is not None:
                self._count(old, -1)
            self.in_flight[claim.uid] = claim
            self._count(claim, 1)
        self._bump()

    def remove_pending(self, uid: str) -> bool:
        with self._claims_lock:
            old = self.in_flight.pop(uid, None)
            if old is not None:
                self._count(old, -1)
        if old is None:
            return False
        self._bump()
        return True

    def _count(self, claim: ResourceClaim, sign: int) -> None:
        """Add (or take back) what the claim's allocation holds: a device whole, or (a result
        with a share ID) its consumed capacity, by fully qualified name, as
        GatherAllocatedState; admin access holds nothing."""
        if claim.allocation is None:
            return
        for r in claim.allocation.results:
            if r.admin_access:
                continue
            did = r.device_id
            pool = (r.driver, r.pool)
            self.pool_versions[pool] = self.pool_versions.get(pool, 0) + 1
            if r.share_id is None:
                n = self._holders.get(did, 0) + sign
                if n:
                    self._holders[did] = n
                else:
                    self._holders.pop(did, None)
                continue
            if not r.consumed_capacity:
                continue
            mine = self._consumed.setdefault(did, {})
            for name, amount in r.consumed_capacity:
                key = name if "/" in name else f"{r.driver}/{name}"
                mine[key] = mine.get(key, 0) + sign * (amount.numerator if amount.denominator == 1 else amount)
            if not any(mine.values()):
                del self._consumed[did]

    def allocated_devices(self) -> Mapping[DeviceID, int]:
        """ListAllAllocatedDevices: devices of allocated claims and of allocations in flight,
        held whole (admin access and shares hold none), each with how many claims hold it.
        A live view: read it, never write to it."""
        return self._holders

    def consumed_capacity(self) -> Mapping[DeviceID, Consumed]:
        """AggregatedCapacity: per device shared by allocated claims (and allocations in flight),
        what the shares consume of each capacity. A live view."""
        return self._consumed

    # ---- the resourceclaim controller, offline ------------------------------------------
    def create_pod_claims(self, pod: Pod) -> list[str]:
        """A pod was created: a claim for each of its template references whose claim does not
        exist (again, for a pod made anew), recorded in its ``status.resourceClaimStatuses``;
        returns a warning per reference to a template the store lacks."""
        warnings: list[str] = []
        if pod.terminal:
            return warnings
        for ref in pod.resource_claims:
            if ref.template_name is None:
                continue
            named = pod.resource_claim_statuses.get(ref.name)
            if named is not None and self.claim(pod.namespace, named) is not None:
                continue
            template = self.templates.get(f"{pod.namespace}/{ref.template_name}")
            if template is None:
                warnings.append(_missing_template(pod, ref.name, ref.template_name))
                continue
            claim = claim_from_template(pod, ref.name, template)
            if claim.key not in self.claims:
                self.write_claim(claim)
            pod.resource_claim_statuses[ref.name] = claim.name
        return warnings

    def release_pod(self, pod: Pod) -> bool:
        """A pod is gone (deleted, preempted, completed): as the resourceclaim controller, take
        it out of its claims' ``reservedFor``, deallocate a claim nobody holds any more (and drop
        its finalizer), and delete the claims made for the pod from a template. Returns whether
        a claim changed (a ResourceClaim event for the scheduling queue)."""
        changed = False
        for ref in pod.resource_claims:
            generated = ref.template_name is not None
            name = pod.resource_claim_statuses.get(ref.name) if generated else ref.claim_name
            claim = self.claim(pod.namespace, name) if name else None
            if claim is None:
                continue
            changed = True
            if generated and claim.controller is not None and claim.controller.uid == pod.uid:
                self.delete_claim(claim)
                continue
            kept = tuple(r for r in claim.reserved_for if r.uid != pod.uid)
            if kept == claim.reserved_for:
                changed = False
                continue
            if kept:
                self.write_claim(claim.with_status(claim.allocation, kept))
            else:
                fins = tuple(f for f in claim.finalizers if f != FINALIZER)
                self.write_claim(claim.with_status(None, (), fins))
        return changed


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


def _missing_template(pod: Pod, pod_claim: str, template: str) -> str:
    return (
        f"pod {pod.key}: spec.resourceClaims {pod_claim} names ResourceClaimTemplate "
        f'"{template}", which the input lacks: its claim is not made'
    )


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
                warnings.append(_missing_template(pod, ref.name, ref.template_name))
                continue
            claim = claim_from_template(pod, ref.name, template)
            if claim.key not in existing:
                objs.claims.append(claim)
                existing.add(claim.key)
            pod.resource_claim_statuses[ref.name] = claim.name
    return warnings
