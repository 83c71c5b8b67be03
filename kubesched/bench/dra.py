"""What scheduler_perf's DRA workloads do around the scheduler: the test driver's ResourceSlices
(createResourceDriver), DRA objects from templates (createAny), claims allocated before the
workload (allocResourceClaims), and the resourceclaim controller's part, which makes a claim
from a template for each pod and deletes it with the pod."""

from __future__ import annotations

import fnmatch
import random
from collections.abc import Iterable

from kubesched import features
from kubesched.api.objects import Node, Pod
from kubesched.bench import templates as T
from kubesched.dra.allocator import Allocator
from kubesched.dra.objects import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from kubesched.dra.store import DraObjects, DraState, make_template_claims
from kubesched.plugins.dynamicresources.plugin import allocator_features


def create_resource_driver(dra: DraState, nodes: Iterable[Node], driver: str, pattern: str, devices: int) -> int:
    """One slice of ``devices`` devices for every node whose name matches the glob ``pattern``
    (Go's filepath.Match: ``*`` and ``?`` within a name); returns how many slices."""
    slices = [
        ResourceSlice.parse(T.resource_slice(driver, n.name, devices), f"ResourceSlice {n.name}")
        for n in nodes
        if fnmatch.fnmatchcase(n.name, pattern)
    ]
    dra.add(DraObjects(slices=slices))
    return len(slices)


def create_objects(dra: DraState, template: str, namespace: str, count: int) -> None:
    """createAny with a DRA template: the DeviceClass, a namespace's ResourceClaimTemplate, or
    ``count`` ResourceClaims ``test-claim-<i>``."""
    if template == "deviceclass":
        objs = DraObjects(classes=[DeviceClass.parse(T.device_class(), "DeviceClass")])
    elif template == "resourceclaimtemplate":
        objs = DraObjects(
            templates=[ResourceClaimTemplate.parse(T.resource_claim_template(namespace), "ResourceClaimTemplate")]
        )
    elif template == "resourceclaim":
        objs = DraObjects(claims=[ResourceClaim.parse(T.resource_claim(namespace, i), "ResourceClaim") for i in range(count)])
    else:
        raise ValueError(f"unknown DRA template {template!r}")
    dra.add(objs)


def allocate_claims(dra: DraState, nodes: list[Node], namespace: str, rng: random.Random) -> None:
    """allocResourceClaims: each unallocated claim of ``namespace`` in turn gets the allocation of
    the first node, in a fresh random order, where the structured allocator finds its devices
    (no pod reserves it). A node that had no devices for a claim has none for a claim with the
    same spec later (devices are only taken here), so it is not asked again."""
    feats = allocator_features(features.current())
    slices = list(dra.slices.values())
    allocated = set(dra.allocated_devices())
    exhausted: list[tuple[dict, set[str]]] = []  # (claim spec, nodes without devices for it)
    pending = [c for c in dra.claims.values() if c.namespace == namespace and c.allocation is None]
    for claim in pending:
        spec = claim.raw.get("spec") or {}
        full = next((names for s, names in exhausted if s == spec), None)
        if full is None:
            full = set()
            exhausted.append((spec, full))
        allocator = Allocator(feats, allocated, dra.classes, slices, dra.matches)
        order = list(nodes)
        rng.shuffle(order)
        for node in order:
            if node.name in full:
                continue
            result = allocator.allocate(node, [claim])
            if result:
                dra.write_claim(claim.with_status(result[0], ()))
                allocated.update(r.device_id for r in result[0].results if not r.admin_access)
                break
            full.add(node.name)
        else:
            raise RuntimeError(f"could not allocate claim {claim.key}: no node has devices left")


def make_pod_claims(dra: DraState, pods: list[Pod]) -> None:
    """The resourceclaim controller: a claim for each of the pods' template references, recorded
    in the pod's status (``kubesched.dra.store.make_template_claims``)."""
    if not any(ref.template_name for p in pods for ref in p.resource_claims):
        return
    objs = DraObjects(templates=list(dra.templates.values()))
    missing = make_template_claims(pods, objs)
    if missing:
        raise ValueError(missing[0])
    dra.add(DraObjects(claims=objs.claims))


def delete_pod_claims(dra: DraState, pod: Pod) -> None:
    """The resourceclaim controller deletes the claims it made for a pod once the pod is gone."""
    for ref in pod.resource_claims:
        name = pod.resource_claim_statuses.get(ref.name) if ref.template_name else None
        if name:
            dra.remove_claim(f"{pod.namespace}/{name}")
