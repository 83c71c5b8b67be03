"""``kubesched run`` with ResourceClaims, against the test API server: DeviceClasses,
ResourceSlices and ResourceClaims are watched, DynamicResources allocates devices, and PreBind
writes each claim's finalizer, ``status.allocation`` and ``reservedFor`` through the API, with
the resourceVersion it read, before the pod's binding. Nothing is allocated twice: not when
pods race for fewer devices, not when the claim changes under the scheduler (a conflict is
retried on a fresh read; a claim allocated meanwhile fails the binding), not with two
schedulers sharing a claim."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import yaml
from dra_builders import DRIVER, device_class, gpu_claim, gpu_slice
from live_harness import binding_posts, events, node, node_of, pod, running

from kubesched.api.objects import Node, Pod
from kubesched.dra.claims import ResourceClaim
from kubesched.dra.objects import FINALIZER, DeviceClass, ResourceSlice
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.live.client import KubeClient
from kubesched.live.objects import LiveObjects
from kubesched.plugins.dynamicresources.plugin import DynamicResources
from kubesched.state.snapshot import Snapshot
from tests.kubeapi import KubeAPIServer


def claim_pod(name: str, claim: str, scheduler: str = "kubesched") -> dict:
    return pod(name, scheduler=scheduler, spec={"resourceClaims": [{"name": "gpu", "resourceClaimName": claim}]})


def gpu_cluster(api: KubeAPIServer, gpus_per_node: dict[str, int]) -> None:
    api.create(device_class())
    for name, gpus in gpus_per_node.items():
        api.create(node(name))
        api.create(gpu_slice(name, gpus))


def devices(claim: dict) -> list[tuple[str, str]]:
    results = ((claim.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or []
    return [(r["pool"], r["device"]) for r in results]


def reserved(claim: dict) -> list[str]:
    return [r["name"] for r in (claim.get("status") or {}).get("reservedFor") or []]


def request_index(api: KubeAPIServer, method: str, pattern: str) -> int:
    return next(i for i, (m, p) in enumerate(api.requests) if m == method and re.search(pattern, p))


def test_claims_are_allocated_through_the_api_before_binding_and_never_twice(
    kube_api: KubeAPIServer, kubeconfig: str
) -> None:
    """Six pods, one GPU claim each, four GPUs: four pods bound, each claim's allocation a
    different device on its pod's node, written (finalizer, then status) before the binding;
    the other two pods wait with their claims unallocated."""
    gpu_cluster(kube_api, {"n1": 2, "n2": 2})
    names = [f"p{i}" for i in range(6)]
    for i, name in enumerate(names):
        kube_api.create(gpu_claim(f"c{i}"))
        kube_api.create(claim_pod(name, f"c{i}"))

    def settled() -> bool:
        bound = [n for n in names if node_of(kube_api, n)]
        waiting = [n for n in names if events(kube_api, "FailedScheduling", n)]
        return len(bound) == 4 and len(waiting) == 2

    with running(kubeconfig):
        assert kube_api.wait_for(settled, 15)
    taken: list[tuple[str, str]] = []
    for i, name in enumerate(names):
        claim = kube_api.get("ResourceClaim", f"c{i}", "default")
        where = node_of(kube_api, name)
        if where is None:
            assert devices(claim) == [] and reserved(claim) == []
            assert "cannot allocate all claims" in events(kube_api, "FailedScheduling", name)[0]["message"]
            continue
        assert [pool for pool, _ in devices(claim)] == [where] and reserved(claim) == [name]
        assert FINALIZER in claim["metadata"]["finalizers"]
        taken += devices(claim)
        status_put = request_index(kube_api, "PUT", rf"/resourceclaims/c{i}/status$")
        assert request_index(kube_api, "PUT", rf"/resourceclaims/c{i}$") < status_put
        assert status_put < request_index(kube_api, "POST", rf"/pods/{name}/binding$")
    assert len(taken) == 4 == len(set(taken))


def test_a_conflict_on_the_claim_is_retried_on_a_fresh_read(kube_api: KubeAPIServer, kubeconfig: str) -> None:
    """The status update answered 409 (someone updated the claim meanwhile): bindClaim reads the
    claim again and retries, and the pod binds."""
    gpu_cluster(kube_api, {"n1": 1})
    kube_api.create(gpu_claim("c0"))
    kube_api.fail_next("PUT", r"/resourceclaims/c0/status$", 409)
    kube_api.create(claim_pod("p0", "c0"))
    with running(kubeconfig):
        assert kube_api.wait_for(lambda: node_of(kube_api, "p0"), 10)
    failed = request_index(kube_api, "PUT", r"/resourceclaims/c0/status$")
    reread = request_index(kube_api, "GET", r"/resourceclaims/c0$")
    assert failed < reread < request_index(kube_api, "POST", r"/pods/p0/binding$")
    claim = kube_api.get("ResourceClaim", "c0", "default")
    assert devices(claim) == [("n1", "gpu-0")] and reserved(claim) == ["p0"]


def test_an_outside_writer_that_allocates_the_claim_first_wins(kube_api: KubeAPIServer) -> None:
    """The plugin's cycle (PreFilter, Filter, Reserve) on the claim as the scheduler saw it, then
    another writer allocates the claim, then PreBind: its update is a conflict (stale
    resourceVersion), the fresh read shows the allocation, and the binding fails with upstream's
    error; the other writer's allocation stands and nothing stays in flight."""
    kube_api.create(gpu_claim("c0"))
    snap = Snapshot()
    snap.add_node(Node.parse(node("n1")))
    snap.dra.put(DeviceClass.parse(device_class()))
    snap.dra.put(ResourceSlice.parse(gpu_slice("n1", 1)))
    snap.dra.put_claim(ResourceClaim.parse(kube_api.get("ResourceClaim", "c0", "default")))
    handle = Handle(snap, api=LiveObjects(KubeClient(kube_api.client_configuration()), {}))
    plugin = DynamicResources(None, handle)
    p0 = Pod.parse({**claim_pod("p0", "c0"), "metadata": {"name": "p0", "namespace": "default", "uid": "uid-p0"}})
    state = CycleState()
    assert plugin.pre_filter(state, p0, snap) is None
    assert plugin.filter(state, p0, snap, np.array([0])).status_at(0, "DynamicResources").ok
    assert plugin.reserve(state, p0, "n1") is None
    theirs = {"devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": "n2", "device": "gpu-7"}]}}
    kube_api.update({**kube_api.get("ResourceClaim", "c0", "default"), "status": {"allocation": theirs}})

    st = plugin.pre_bind(state, p0, "n1")
    assert not st.ok and st.message == "claim default/c0 got allocated elsewhere in the meantime"
    assert [m for m, path in kube_api.requests if "/resourceclaims/c0" in path] == ["PUT", "GET"]
    assert devices(kube_api.get("ResourceClaim", "c0", "default")) == [("n2", "gpu-7")]
    assert not snap.dra.in_flight  # the allocation Reserve held is dropped either way


def profile_config(tmp_path: Path, name: str) -> str:
    config = tmp_path / f"{name}.yaml"
    config.write_text(yaml.safe_dump({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                                      "profiles": [{"schedulerName": name}]}))
    return str(config)


def test_two_schedulers_sharing_a_claim_allocate_it_once(
    kube_api: KubeAPIServer, kubeconfig: str, tmp_path: Path
) -> None:
    """Two kubesched instances, one pod each, one shared claim and one GPU on each of two nodes:
    whichever writes the allocation first wins; the other's write conflicts or finds the claim
    allocated, and its pod is retried and only reserves the claim. One device, both pods on it."""
    gpu_cluster(kube_api, {"n1": 1, "n2": 1})
    shared = gpu_claim("shared")
    kube_api.create(shared)
    kube_api.create(claim_pod("a", "shared", scheduler="sched-a"))
    kube_api.create(claim_pod("b", "shared", scheduler="sched-b"))
    with running(kubeconfig, "--config", profile_config(tmp_path, "sched-a")), running(
        kubeconfig, "--config", profile_config(tmp_path, "sched-b")
    ):
        assert kube_api.wait_for(lambda: node_of(kube_api, "a") and node_of(kube_api, "b"), 15)
    claim = kube_api.get("ResourceClaim", "shared", "default")
    assert len(devices(claim)) == 1 and sorted(reserved(claim)) == ["a", "b"]
    assert node_of(kube_api, "a") == node_of(kube_api, "b") == devices(claim)[0][0]
    assert len(binding_posts(kube_api)) == 2


def test_unreserve_patches_only_the_pods_own_reservation(kube_api: KubeAPIServer) -> None:
    """Unreserve's strategic merge patch through LiveObjects: the pod's reservedFor entry goes,
    another pod's stays, whatever else changed in the claim meanwhile (no resourceVersion)."""
    kube_api.create(gpu_claim("c0"))
    mine = {"resource": "pods", "name": "p0", "uid": "uid-p0"}
    other = {"resource": "pods", "name": "p1", "uid": "uid-p1"}
    seen = kube_api.update({**kube_api.get("ResourceClaim", "c0", "default"), "status": {"reservedFor": [mine, other]}})
    kube_api.update({**seen, "metadata": {**seen["metadata"], "labels": {"touched": "yes"}}})  # seen is stale now
    api = LiveObjects(KubeClient(kube_api.client_configuration()), {})
    api.remove_claim_reservation(ResourceClaim.parse(seen), "uid-p0")
    assert reserved(kube_api.get("ResourceClaim", "c0", "default")) == ["p1"]


def test_a_pod_waits_for_the_claim_its_template_makes(kube_api: KubeAPIServer, kubeconfig: str) -> None:
    """A pod whose claim comes from a ResourceClaimTemplate waits at PreEnqueue until the
    resourceclaim controller (played here) has created its claim and named it in the pod's
    status.resourceClaimStatuses; that status update lets it in, and it binds with the claim
    allocated."""
    gpu_cluster(kube_api, {"n1": 1})
    kube_api.create(pod("trainer", spec={"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}))
    with running(kubeconfig) as r:
        assert kube_api.wait_for(lambda: len(r.sched.queue.gated) == 1, 10)  # len() of a dict: safe across threads
        trainer = kube_api.get("Pod", "trainer", "default")
        claim = gpu_claim("trainer-gpu-x7k2p")
        claim["metadata"]["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": "trainer", "uid": trainer["metadata"]["uid"], "controller": True}
        ]
        kube_api.create(claim)
        kube_api.patch("Pod", "trainer", {"status": {"resourceClaimStatuses": [
            {"name": "gpu", "resourceClaimName": "trainer-gpu-x7k2p"}]}}, "default")
        assert kube_api.wait_for(lambda: node_of(kube_api, "trainer"), 10)
    got = kube_api.get("ResourceClaim", "trainer-gpu-x7k2p", "default")
    assert devices(got) == [("n1", "gpu-0")] and reserved(got) == ["trainer"]
