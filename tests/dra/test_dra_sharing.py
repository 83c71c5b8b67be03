"""Sharing devices the DRA way, beyond upstream's allocator table: the devices a caller prefers,
the answers kept per node (``AllocationCache``), what allocated claims hold (kept claim by
claim in ``DraState``) and the resourceclaim controller's part offline (claims made when a pod
is created, released when it is gone)."""

from __future__ import annotations

import random
from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.dra.allocator import Allocator, with_share_ids
from kubesched.dra.claims import ConsumerRef, ResourceClaim, ResourceClaimTemplate
from kubesched.dra.objects import FINALIZER, DeviceClass, ResourceSlice
from kubesched.dra.pools import Features
from kubesched.dra.store import DraObjects, DraState

DRIVER = "gpu.example.com"
NODE = Node.parse({"metadata": {"name": "node-1"}})
GPU_CLASS = DeviceClass.parse({"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})


def gpu_slice(node: str = "node-1", n: int = 4, milli: int = 1000) -> ResourceSlice:
    devices = [
        {"name": f"gpu-{i}", "capacity": {"milli": {"value": str(milli)}}, "allowMultipleAllocations": True} for i in range(n)
    ]
    return ResourceSlice.parse(
        {"metadata": {"name": f"{node}-gpus"},
         "spec": {"driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}, "devices": devices}}
    )


def share_claim(name: str, milli: int | None, count: int = 1, uid: str | None = None) -> ResourceClaim:
    exactly: dict[str, Any] = {"deviceClassName": "gpu", "count": count}
    if milli is not None:
        exactly["capacity"] = {"requests": {"milli": str(milli)}}
    return ResourceClaim.parse(
        {"metadata": {"name": name, "namespace": "default", "uid": uid or f"uid-{name}"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}
    )


def devices_of(allocations: list | None) -> list[str]:
    assert allocations is not None
    return [r.device for a in allocations for r in a.results]


def store(*slices: ResourceSlice) -> DraState:
    dra = DraState()
    dra.add(DraObjects(classes=[GPU_CLASS], slices=list(slices)))
    return dra


def allocator(dra: DraState, *, cached: bool = False, key: Any = None) -> Allocator:
    return Allocator(
        Features(), dra.allocated_devices(), dra.classes, dra.slice_index(), dra.matches,
        consumed=dra.consumed_capacity(), cache=dra.allocations if cached else None, cache_key=key, versions=dra.pool_versions,
    )


def allocate_and_write(dra: DraState, claim: ResourceClaim, devices: list[str] | None = None) -> ResourceClaim:
    """Allocate the claim on node-1 (preferring ``devices``) and write it, reserved for a pod."""
    prefer = [(DRIVER, "node-1", d) for d in devices or ()]
    out = allocator(dra).allocate(NODE, [claim], prefer=prefer)
    assert out is not None
    done = claim.with_status(out[0], (ConsumerRef("pods", f"pod-{claim.name}", f"pod-uid-{claim.name}"),), (FINALIZER,))
    dra.write_claim(done)
    return done


# ---- prefer ---------------------------------------------------------------------------------------
def test_preferred_devices_are_tried_first() -> None:
    dra = store(gpu_slice())
    assert devices_of(allocator(dra).allocate(NODE, [share_claim("a", 300)])) == ["gpu-0"]
    assert devices_of(allocator(dra).allocate(NODE, [share_claim("a", 300)], prefer=[(DRIVER, "node-1", "gpu-2")])) == ["gpu-2"]
    # two whole GPUs, the second preferred first: both preferred ones, in the search's terms
    two = share_claim("b", None, count=2)
    got = allocator(dra).allocate(NODE, [two], prefer=[(DRIVER, "node-1", "gpu-3"), (DRIVER, "node-1", "gpu-1")])
    assert sorted(devices_of(got)) == ["gpu-1", "gpu-3"]


def test_a_preferred_device_that_cannot_serve_is_passed_over() -> None:
    dra = store(gpu_slice())
    allocate_and_write(dra, share_claim("full", 800), ["gpu-2"])
    got = allocator(dra).allocate(NODE, [share_claim("a", 300)], prefer=[(DRIVER, "node-1", "gpu-2")])
    assert devices_of(got) == ["gpu-0"]  # 200 milli left on gpu-2: the search goes on in slice order


# ---- what allocated claims hold -------------------------------------------------------------------
def _gathered(dra: DraState) -> tuple[dict, dict]:
    """GatherAllocatedState from scratch, over every claim and allocation in flight."""
    whole: dict = {}
    shares: dict = {}
    for claim in (*dra.claims.values(), *dra.in_flight.values()):
        if claim.allocation is None:
            continue
        for r in claim.allocation.results:
            if r.share_id is None:
                whole[r.device_id] = whole.get(r.device_id, 0) + 1
                continue
            mine = shares.setdefault(r.device_id, {})
            for name, amount in r.consumed_capacity or ():
                mine[f"{DRIVER}/{name}"] = mine.get(f"{DRIVER}/{name}", 0) + amount
    shares = {d: c for d, c in shares.items() if any(c.values())}
    return whole, shares


def test_holders_follow_every_claim_write_pending_allocation_and_delete() -> None:
    """Property: after any sequence of writes, what the store says the holders hold is what
    gathering it from every claim gives (40 random sequences)."""
    rng = random.Random(7)
    for _ in range(40):
        dra = store(gpu_slice(n=3))
        claims: list[ResourceClaim] = []
        for step in range(12):
            op = rng.random()
            if op < 0.5 or not claims:
                claim = share_claim(f"c{step}", rng.choice([None, 100, 250, 500]))
                out = allocator(dra).allocate(NODE, [claim])
                if out is None:
                    continue
                if rng.random() < 0.3:
                    dra.signal_pending(claim.with_status(out[0], ()))
                    if rng.random() < 0.5:
                        dra.remove_pending(claim.uid)
                    continue
                claims.append(claim.with_status(out[0], ()))
                dra.write_claim(claims[-1])
            elif op < 0.75:
                victim = claims.pop(rng.randrange(len(claims)))
                dra.write_claim(victim.with_status(None, ()))
            else:
                dra.delete_claim(claims.pop(rng.randrange(len(claims))))
            whole, shares = _gathered(dra)
            assert dict(dra.allocated_devices()) == whole
            assert {d: {k: v for k, v in c.items() if v} for d, c in dra.consumed_capacity().items()} == shares


def test_shares_fill_a_gpu_and_no_more() -> None:
    dra = store(gpu_slice(n=1))
    for name, milli in (("a", 500), ("b", 300), ("c", 200)):
        allocate_and_write(dra, share_claim(name, milli))
    assert dict(dra.consumed_capacity()) == {(DRIVER, "node-1", "gpu-0"): {f"{DRIVER}/milli": 1000}}
    assert allocator(dra).allocate(NODE, [share_claim("d", 1)]) is None
    assert allocator(dra).allocate(NODE, [share_claim("whole", None)]) is None  # no request: all of it


# ---- the answers kept per node --------------------------------------------------------------------
def test_cached_answers_are_the_search_answers() -> None:
    """Property: for claims of one spec asked again and again while others are allocated and
    released, the cached allocator answers exactly what a fresh search does (share IDs
    included) (20 random runs)."""
    rng = random.Random(11)
    for run in range(20):
        dra = store(gpu_slice(n=4), gpu_slice("node-2", n=2))
        nodes = [NODE, Node.parse({"metadata": {"name": "node-2"}})]
        held: list[ResourceClaim] = []
        for step in range(25):
            milli = rng.choice([None, 200, 500, 700])
            claim = share_claim(f"r{run}-{step}", milli, uid=f"uid-{run}-{step}")
            key = (repr(claim.raw["spec"]),)
            for node in nodes:
                fresh = allocator(dra).allocate(node, [claim])
                cached = allocator(dra, cached=True, key=key).allocate(node, [claim])
                assert cached == fresh
            node = rng.choice(nodes)
            out = allocator(dra).allocate(node, [claim])
            if out is not None and rng.random() < 0.7:
                held.append(claim.with_status(out[0], ()))
                dra.write_claim(held[-1])
            elif held:
                dra.write_claim(held.pop(rng.randrange(len(held))).with_status(None, ()))
        assert len(dra.allocations) > 0


def test_share_ids_are_the_claims_own() -> None:
    dra = store(gpu_slice(n=1))
    a, b = share_claim("a", 300), share_claim("b", 300)
    key = (repr(a.raw["spec"]),)
    first = allocator(dra, cached=True, key=key).allocate(NODE, [a])
    second = allocator(dra, cached=True, key=key).allocate(NODE, [b], shares=False)  # kept answer, a's IDs
    assert first is not None and second is not None
    assert second[0].results[0].share_id == first[0].results[0].share_id
    mine = with_share_ids(second, [b])
    assert mine[0].results[0].share_id != first[0].results[0].share_id
    assert mine == allocator(dra).allocate(NODE, [b])


# ---- the resourceclaim controller, offline --------------------------------------------------------
TEMPLATE = ResourceClaimTemplate.parse(
    {"metadata": {"name": "share", "namespace": "default"},
     "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "capacity": {"requests": {"milli": "400"}}}}]}}}}
)


def pod(name: str, *, template: str | None = "share", claim: str | None = None) -> Pod:
    ref = {"name": "gpu", "resourceClaimTemplateName": template} if claim is None else {"name": "gpu", "resourceClaimName": claim}
    return Pod.parse(
        {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
         "spec": {"containers": [{"name": "c", "resources": {"claims": [{"name": "gpu"}]}}], "resourceClaims": [ref]}}
    )


def test_a_created_pod_gets_its_claim_and_a_gone_pod_gives_it_back() -> None:
    dra = store(gpu_slice(n=1))
    dra.add(DraObjects(templates=[TEMPLATE]))
    p = pod("trainer")
    assert dra.create_pod_claims(p) == []
    name = p.resource_claim_statuses["gpu"]
    claim = dra.claim("default", name)
    assert claim is not None and claim.controller is not None and claim.controller.uid == p.uid
    allocate_and_write(dra, claim)
    assert dra.consumed_capacity()
    dra.release_pod(p)
    assert dra.claim("default", name) is None  # made for the pod: deleted with it
    assert not dra.consumed_capacity()  # and its share of the GPU is free again
    assert dra.create_pod_claims(p) == [] and dra.claim("default", name) is not None  # made anew for a pod made anew
    missing = pod("orphan", template="nope")
    assert dra.create_pod_claims(missing) == [
        'pod default/orphan: spec.resourceClaims gpu names ResourceClaimTemplate "nope", which the input lacks: its claim is not made'
    ]


def test_a_shared_claim_is_deallocated_when_its_last_pod_is_gone() -> None:
    dra = store(gpu_slice(n=1))
    shared = share_claim("shared", 500)
    out = allocator(dra).allocate(NODE, [shared])
    assert out is not None
    both = (ConsumerRef("pods", "a", "uid-a"), ConsumerRef("pods", "b", "uid-b"))
    dra.write_claim(shared.with_status(out[0], both, (FINALIZER,)))
    dra.release_pod(pod("a", claim="shared"))
    kept = dra.claim("default", "shared")
    assert kept is not None and kept.allocation is not None and [r.uid for r in kept.reserved_for] == ["uid-b"]
    assert dra.consumed_capacity()
    dra.release_pod(pod("b", claim="shared"))
    gone = dra.claim("default", "shared")
    assert gone is not None and gone.allocation is None and gone.reserved_for == () and FINALIZER not in gone.finalizers
    assert not dra.consumed_capacity()
    assert "allocation" not in gone.raw["status"]
