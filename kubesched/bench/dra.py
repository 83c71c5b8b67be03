"""What scheduler_perf's DRA workloads do around the scheduler: the test driver's ResourceSlices
(createResourceDriver), DRA objects from templates (createAny), claims allocated before the
workload (allocResourceClaims), and the resourceclaim controller's part, which makes a claim
from a template for each pod (the store's ``create_pod_claims``; ``release_pod`` deletes it with
the pod)."""

from __future__ import annotations

import fnmatch
import random
from collections.abc import Iterable

from kubesched import features
from kubesched.api.objects import Node, Pod
from kubesched.bench import resource_templates as R
from kubesched.dra.allocator import Allocator
from kubesched.dra.claims import ResourceClaim, ResourceClaimTemplate
from kubesched.dra.objects import DeviceClass, ResourceSlice
from kubesched.dra.store import DraObjects, DraState
from kubesched.plugins.dynamicresources.plugin import allocator_features


def create_resource_driver(dra: DraState, nodes: Iterable[Node], driver: str, pattern: str, devices: int) -> int:
    """One slice of ``devices`` devices for every node whose name matches the glob ``pattern``
    (Go's filepath.Match: ``*`` and ``?`` within a name); returns how many slices."""
    slices = [
        ResourceSlice.parse(R.resource_slice(driver, n.name, devices), f"ResourceSlice {n.name}")
        for n in nodes
        if fnmatch.fnmatchcase(n.name, pattern)
    ]
    dra.add(DraObjects(slices=slices))
    return len(slices)


def create_objects(dra: DraState, template: str, namespace: str, count: int) -> None:
    """createAny with a DRA template: the DeviceClass, a namespace's ResourceClaimTemplate, or
    ``count`` ResourceClaims ``test-claim-<i>``."""
    if template == "deviceclass":
        objs = DraObjects(classes=[DeviceClass.parse(R.device_class(), "DeviceClass")])
    elif template == "resourceclaimtemplate":
        objs = DraObjects(
            templates=[ResourceClaimTemplate.parse(R.resource_claim_template(namespace), "ResourceClaimTemplate")]
        )
    elif template == "resourceclaim":
        objs = DraObjects(claims=[ResourceClaim.parse(R.resource_claim(namespace, i), "ResourceClaim") for i in range(count)])
    else:
        raise ValueError(f"unknown DRA template {template!r}")
    dra.add(objs)


def allocate_claims(dra: DraState, nodes: list[Node], namespace: str, rng: random.Random) -> None:
    """allocResourceClaims: each unallocated claim of ``namespace`` in turn gets the allocation of
    the first node, in a fresh random order, where the structured allocator finds its devices
    (no pod reserves it). A node that had no devices for a claim has none for a claim with the
    same spec later (devices are only taken here), so it is not asked again."""
    feats = allocator_features(features.current())
    exhausted: list[tuple[dict, set[str]]] = []  # (claim spec, nodes without devices for it)
    pending = [c for c in dra.claims.values() if c.namespace == namespace and c.allocation is None]
    for claim in pending:
        spec = claim.raw.get("spec") or {}
        full = next((names for s, names in exhausted if s == spec), None)
        if full is None:
            full = set()
            exhausted.append((spec, full))
        # the store's views of what is allocated follow each claim written
        allocator = Allocator(
            feats, dra.allocated_devices(), dra.classes, dra.slice_index(), dra.matches, consumed=dra.consumed_capacity()
        )
        order = list(nodes)
        rng.shuffle(order)
        for node in order:
            if node.name in full:
                continue
            result = allocator.allocate(node, [claim])
            if result:
                dra.write_claim(claim.with_status(result[0], ()))
                break
            full.add(node.name)
        else:
            raise RuntimeError(f"could not allocate claim {claim.key}: no node has devices left")


def make_pod_claims(dra: DraState, pods: list[Pod]) -> None:
    """The resourceclaim controller: a claim for each of the pods' template references, recorded
    in the pod's status (``DraState.create_pod_claims``)."""
    for pod in pods:
        if pod.resource_claims:
            missing = dra.create_pod_claims(pod)
            if missing:
                raise ValueError(missing[0])
