"""Pods asking for GPUs through ResourceClaims, scheduled and explained end to end on the shipped
example (kubesched/examples/dra-cluster.yaml): placements, the allocations written to the claims
(so later pods see the devices taken and a shared claim is reused), explain's per-node reasons."""

from __future__ import annotations

import json

import pytest

from kubesched.app import build_session, example_path
from kubesched.batch import schedule_all
from kubesched.cli import main

EXAMPLE = example_path("dra-cluster.yaml")


@pytest.fixture(scope="module")
def scheduled():  # noqa: ANN201
    s = build_session([EXAMPLE], seed=1)
    return s, schedule_all(s)


def _devices(claim) -> list[str]:  # noqa: ANN001
    return sorted(f"{r.pool}/{r.device}" for r in claim.allocation.results)


def test_placements(scheduled) -> None:  # noqa: ANN001
    s, result = scheduled
    placed = {p["pod"].split("/")[1]: p["node"] for p in result.placements}
    assert placed == {
        "pair-job": "gpu-a",  # the only node with two GPUs on one PCIe root
        "big-model": "gpu-c",  # the H100 (first alternative) wins over two A100s on gpu-b
        "trainer-0": "gpu-b",
        "trainer-1": "gpu-b",
        "inference-0": "gpu-c",  # the one free GPU of >= 40 GiB left
        "inference-1": "gpu-c",  # the same claim, already allocated there
        "web": placed["web"],  # no claim: anywhere
    }


def test_allocations_are_written_and_never_shared(scheduled) -> None:  # noqa: ANN001
    s, _ = scheduled
    dra = s.scheduler.snapshot.dra
    pods = {p.name: p for p in s.objects.pods}
    pair = dra.claim("ml", "pair")
    assert _devices(pair) == ["gpu-a/gpu-0", "gpu-a/gpu-1"]
    assert [r.name for r in pair.reserved_for] == ["pair-job"]
    big = dra.claim("ml", "big-model")
    assert [r.request for r in big.allocation.results] == ["gpu/h100"]
    shared = dra.claim("ml", "shared-inference-gpu")
    assert _devices(shared) == ["gpu-c/gpu-1"]
    assert sorted(r.name for r in shared.reserved_for) == ["inference-0", "inference-1"]
    assert {r.uid for r in shared.reserved_for} == {pods["inference-0"].uid, pods["inference-1"].uid}
    taken = [d for c in dra.claims.values() if c.allocation for d in _devices(c)]
    assert len(taken) == len(set(taken)) == 6  # every GPU of the cluster, each once
    for name in ("trainer-0", "trainer-1"):
        generated = dra.claim("ml", pods[name].resource_claim_statuses["gpu"])
        assert _devices(generated)[0].startswith("gpu-b/")
        assert generated.raw["status"]["reservedFor"] == [{"resource": "pods", "name": name, "uid": pods[name].uid}]
        assert "resource.kubernetes.io/delete-protection" in generated.finalizers
    assert not dra.in_flight


def test_no_gpu_left_for_one_more_pod(tmp_path) -> None:  # noqa: ANN001
    """A third trainer finds every A100 taken: FailedScheduling names DRA's reason per node."""
    text = open(EXAMPLE).read() + """
- apiVersion: v1
  kind: Pod
  metadata: {name: trainer-2, namespace: ml, uid: 7f0c1a52-0000-4000-8000-000000000009}
  spec:
    containers: [{name: train, image: trainer:1, resources: {claims: [{name: gpu}]}}]
    resourceClaims: [{name: gpu, resourceClaimTemplateName: one-a100}]
"""
    f = tmp_path / "cluster.yaml"
    f.write_text(text)
    s = build_session([str(f)], seed=1)
    result = schedule_all(s)
    failed = {p["pod"]: p["message"] for p in result.placements if p["node"] is None}
    assert failed == {
        "ml/trainer-2": "0/4 nodes are available: 4 cannot allocate all claims. still not schedulable, preemption: "
        "0/4 nodes are available: 4 Preemption is not helpful for scheduling."
    }


def test_explain_shows_per_node_reasons(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "-f", EXAMPLE, "ml/pair-job", "-o", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    verdicts = {n["name"]: n for n in out["nodes"]}
    assert verdicts["gpu-a"]["feasible"] is True
    for name in ("gpu-b", "gpu-c", "cpu-1"):
        reasons = [r for f in verdicts[name]["filter"] if f["plugin"] == "DynamicResources" for r in f["reasons"]]
        assert reasons == ["cannot allocate all claims"], name


def test_a_preempted_pods_claim_is_released_for_later_pods(tmp_path) -> None:  # noqa: ANN001
    """A victim of preemption gives its devices back (offline, kubesched plays the resourceclaim
    controller): a pod asking for the GPU after the preemption gets it."""
    import yaml

    docs = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-gpus"},
         "spec": {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0"}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "one-gpu", "namespace": "default"},
         "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
    ]

    def gpu_pod(name: str, cpu: str, **spec: object) -> dict:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}, "claims": [{"name": "gpu"}]}}],
                         "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}], **spec}}

    low = gpu_pod("low", "2", nodeName="n1")
    low["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "low-gpu"}]
    low_claim = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "low-gpu", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
        "status": {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]}},
                   "reservedFor": [{"resource": "pods", "name": "low", "uid": "uid-low"}]},
    }
    urgent = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "urgent", "namespace": "default", "uid": "uid-urgent"},
              "spec": {"priorityClassName": "high", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
    later = gpu_pod("later", "1", priorityClassName="high")
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all([*docs, low_claim, low, urgent, later]))
    s = build_session([str(path)], seed=1)
    result = schedule_all(s)
    placed = {p["pod"]: p["node"] for p in result.placements}
    assert placed.get("default/urgent") == "n1" and placed.get("default/later") == "n1"
    assert [p.name for p in s.cluster.deleted] == ["low"]
    dra = s.scheduler.snapshot.dra
    released = dra.claim("default", "low-gpu")  # nobody holds it: deallocated
    assert released is not None and released.allocation is None and released.reserved_for == ()
    made = dra.claim("default", s.objects.pods[-1].resource_claim_statuses["gpu"])
    assert made is not None and [r.name for r in made.reserved_for] == ["later"]
    assert [r.device for r in made.allocation.results] == ["gpu-0"]
