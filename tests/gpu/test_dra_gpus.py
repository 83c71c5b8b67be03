"""GPUs described the DRA way (``kubesched.gpu.dra``, ``kubesched.gpu.dra_workload``): the same
per-GPU model as the annotations, read from ResourceSlices and ResourceClaims."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.api.objects import Node, Pod
from kubesched.dra.allocator import Allocator
from kubesched.dra.claims import ConsumerRef, ResourceClaim
from kubesched.dra.objects import DeviceClass, ResourceSlice
from kubesched.dra.pools import Features
from kubesched.dra.store import DraObjects
from kubesched.gpu.dra import DEVICE_CLASS, DRIVER, NO_MODEL, dra_gpus
from kubesched.gpu.dra_workload import claim_template, template_name, to_dra
from kubesched.gpu.model import GpuAsk
from kubesched.gpu.state import GpuState
from kubesched.state.snapshot import Snapshot
from tests.gpu.gpu_testlib import gpu_node, gpu_pod


def cluster(nodes: list[dict], pods: list[dict]) -> tuple[Snapshot, list[Pod]]:
    """The nodes and pods written the DRA way, in a snapshot (pods not added); their claims made."""
    work = to_dra([Node.parse(n) for n in nodes], [Pod.parse(p) for p in pods])
    snap = Snapshot()
    snap.dra.add(work.objects)
    for n in work.nodes:
        snap.add_node(n)
    for p in work.pods:
        snap.dra.create_pod_claims(p)
    return snap, work.pods


def test_the_converter_moves_gpus_from_resources_to_slices() -> None:
    work = to_dra(
        [Node.parse(gpu_node("g", 2, "V100M16")), Node.parse(gpu_node("c", 0))],
        [Pod.parse(gpu_pod("share", 450, model="V100M16|V100M32")), Pod.parse(gpu_pod("cpu"))],
    )
    g = work.nodes[0]
    assert "alibabacloud.com/gpu-count" not in g.allocatable and "alibabacloud.com/gpu-card-model" not in g.labels
    assert g.allocatable["cpu"] == 64000
    (s,) = work.objects.slices
    assert (s.driver, s.node_name, [d.name for d in s.devices]) == (DRIVER, "g", ["gpu-0", "gpu-1"])
    assert all(d.allow_multiple_allocations and d.capacity == {"milli": 1000} for d in s.devices)
    assert s.devices[1].attributes == {"type": ("string", "gpu"), "index": ("int", 1), "productName": ("string", "V100M16")}
    share, cpu = work.pods
    assert share.annotations == {} and [r.template_name for r in share.resource_claims] == ["gpu-1-450m-v100m16-v100m32"]
    assert share.raw["spec"]["containers"][0]["resources"]["claims"] == [{"name": "gpu"}]
    assert cpu.resource_claims == () and cpu is work.pods[1]
    (t,) = work.objects.templates
    exactly = t.spec.requests[0].exactly
    assert exactly is not None and exactly.capacity == {"milli": 450} and exactly.count == 1
    assert exactly.selectors == ('device.attributes["gpu.nvidia.com"].productName in ["V100M16", "V100M32"]',)
    assert [c.name for c in work.objects.classes] == [DEVICE_CLASS]


def test_template_names_are_dns_subdomains_per_ask() -> None:
    assert template_name(GpuAsk(2, 1000)) == "gpu-2"
    assert template_name(GpuAsk(1, 450, ("A100_80G",))) == "gpu-1-450m-a100-80g"
    assert claim_template(GpuAsk(4, 1000), "ml").spec.requests[0].exactly.capacity is None  # whole GPUs: consumed whole


def test_gpus_come_in_index_order_with_their_node_model() -> None:
    devices = [
        {"name": f"d{i}", "attributes": {"type": {"string": "gpu"}, "index": {"int": i}, "productName": {"string": "T4"}}}
        for i in (2, 0, 1)
    ]
    devices.append({"name": "mig", "attributes": {"type": {"string": "mig"}}})  # not a whole GPU
    s = ResourceSlice.parse(
        {"metadata": {"name": "n1"}, "spec": {"driver": DRIVER, "nodeName": "n1", "pool": {"name": "n1", "resourceSliceCount": 1}, "devices": devices}}
    )
    snap = Snapshot()
    snap.dra.add(DraObjects(slices=[s]))
    g = dra_gpus(snap.dra)
    assert g.count("n1") == 3 and g.model("n1") == "T4" and g.count("other") == 0
    assert g.devices("n1", (0, 2)) == [(DRIVER, "n1", "d0"), (DRIVER, "n1", "d2")]
    assert g.where[(DRIVER, "n1", "d1")] == ("n1", 1)


def test_asks_read_from_claims_equal_the_annotations() -> None:
    snap, pods = cluster(
        [gpu_node("a", 2, "V100M16"), gpu_node("b", 4, "T4")],
        [gpu_pod("whole", 1000, 2), gpu_pod("share", 300), gpu_pod("pinned", 500, model="T4|A10"), gpu_pod("nowhere", 500, model="A10"),
         gpu_pod("cpu")],
    )
    g = dra_gpus(snap.dra)
    asks = {p.name: g.ask(p, snap.dra) for p in pods}
    assert asks["whole"] == GpuAsk(2, 1000, (), "")
    assert asks["share"] == GpuAsk(1, 300, (), "")
    assert asks["pinned"] == GpuAsk(1, 500, ("T4",), "T4")  # the models of the cluster it admits
    assert asks["nowhere"] is not None and asks["nowhere"].models == (NO_MODEL,)
    assert asks["cpu"] is None


def claim_pod(name: str, request: dict[str, Any]) -> tuple[Pod, ResourceClaim]:
    claim = ResourceClaim.parse(
        {"metadata": {"name": name, "namespace": "default"}, "spec": {"devices": {"requests": [{"name": "gpu", **request}]}}}
    )
    pod = Pod.parse(
        {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
         "spec": {"containers": [{"name": "c"}], "resourceClaims": [{"name": "gpu", "resourceClaimName": name}]}}
    )
    return pod, claim


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        ({"exactly": {"deviceClassName": DEVICE_CLASS, "allocationMode": "All"}}, "allocationMode All is not in the GPU model"),
        ({"exactly": {"deviceClassName": DEVICE_CLASS, "count": 2, "capacity": {"requests": {"milli": "300"}}}}, "a share of 2 GPUs"),
        ({"exactly": {"deviceClassName": DEVICE_CLASS, "capacity": {"requests": {"memory": "1Gi"}}}}, "capacity memory is not in the GPU model"),
        ({"exactly": {"deviceClassName": DEVICE_CLASS, "capacity": {"requests": {"milli": "1500"}}}}, "must be 1..1000"),
        ({"firstAvailable": [{"name": "one", "deviceClassName": DEVICE_CLASS}]}, "firstAvailable GPU requests are not in the GPU model"),
    ],
)
def test_asks_the_gpu_model_cannot_hold_are_errors(request_: dict, message: str) -> None:
    snap, _ = cluster([gpu_node("a", 2)], [])
    pod, claim = claim_pod("odd", request_)
    snap.dra.write_claim(claim)
    with pytest.raises(ValueError, match=message):
        dra_gpus(snap.dra).ask(pod, snap.dra)


def test_requests_for_other_devices_are_no_gpu_ask() -> None:
    snap, _ = cluster([gpu_node("a", 2)], [])
    nic = DeviceClass.parse({"metadata": {"name": "nic"}, "spec": {"selectors": [{"cel": {"expression": 'device.driver == "nic.example.com"'}}]}})
    snap.dra.add(DraObjects(classes=[nic]))
    pod, claim = claim_pod("net", {"exactly": {"deviceClassName": "nic"}})
    snap.dra.write_claim(claim)
    assert dra_gpus(snap.dra).ask(pod, snap.dra) is None


def test_the_gpu_state_reads_bound_pods_gpus_from_their_allocations() -> None:
    """A dump's bound pods whose claims are allocated hold the GPUs (and shares) the allocation
    names: the same state as the annotations with gpu-index give."""
    nodes = [gpu_node("a", 4, "G2")]
    placed = [("p0", 300, 1, "2"), ("p1", 1000, 2, "0-3"), ("p2", 600, 1, "2")]
    ann = Snapshot()
    for n in nodes:
        ann.add_node(Node.parse(n))
    for name, milli, count, index in placed:
        ann.add_pod(Pod.parse(gpu_pod(name, milli, count, node="a", index=index)))
    snap, pods = cluster(nodes, [gpu_pod(name, milli, count) for name, milli, count, _ in placed])

    for pod, (_, _, _, index) in zip(pods, placed, strict=True):
        (claim,) = [snap.dra.claim("default", n) for n in pod.resource_claim_statuses.values()]
        assert claim is not None
        prefer = [(DRIVER, "a", f"gpu-{i}") for i in index.split("-")]
        a = Allocator(Features(), snap.dra.allocated_devices(), snap.dra.classes, snap.dra.slice_index(), snap.dra.matches,
                      consumed=snap.dra.consumed_capacity())
        (allocation,) = a.allocate(snap.nodes[0], [claim], prefer=prefer) or [None]
        assert allocation is not None
        snap.dra.write_claim(claim.with_status(allocation, (ConsumerRef("pods", pod.name, pod.uid),)))
        snap.add_pod(pod.with_node("a"))
    got, want = GpuState.of(snap), GpuState.of(ann)
    assert got.left.tolist() == want.left.tolist() == [[0, 1000, 100, 0]]
    assert got.indices_of("default-p1") == (0, 3)
    assert np.array_equal(got.affinity, want.affinity)


def _example_devices() -> dict[str, list[str]]:
    from kubesched.app import build_session, example_path
    from kubesched.batch import schedule_all

    s = build_session([example_path("dra-gpu-sharing-cluster.yaml")], example_path("dra-gpu-sharing.yaml"), seed=1)
    schedule_all(s)
    dra = s.scheduler.snapshot.dra
    out = {}
    for p in s.objects.pods:
        claim = dra.claim(p.namespace, p.resource_claim_statuses["gpu"])
        assert claim is not None and claim.allocation is not None
        out[p.name] = [f"{r.pool}/{r.device}" for r in claim.allocation.results]
    return out


def test_the_example_allocates_the_gpus_the_policy_chose(monkeypatch: pytest.MonkeyPatch) -> None:
    """kubesched/examples/dra-gpu-sharing*.yaml: BestFit's GPU for the 0.25 share is GPU 1 (0.3
    left), not DynamicResources' first fit (GPU 0, 0.5 left); without the preference it is."""
    want = {"trainer": ["gpu-b/gpu-0"], "notebook": ["gpu-a/gpu-0"], "batch": ["gpu-a/gpu-1"], "inference": ["gpu-a/gpu-1"]}
    assert _example_devices() == want
    from kubesched.plugins.gpushare.opengpushare import OpenGpuShare

    monkeypatch.setattr(OpenGpuShare, "_prefer", lambda self, *args: [])
    assert _example_devices()["inference"] == ["gpu-a/gpu-0"]
