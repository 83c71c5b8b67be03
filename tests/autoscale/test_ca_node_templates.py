"""Node group templates with extended resources (``template.extendedResources``, e.g. the NVIDIA
device plugin's ``nvidia.com/gpu``), and the GPU tests of kubernetes/autoscaler
core/scaleup/orchestrator/orchestrator_test.go that need them:
TestWillConsiderGpuAndStandardPoolForPodWhichDoesNotRequireGpu,
TestWillConsiderOnlyGpuPoolForPodWhichDoesRequiresGpu and
TestWillConsiderAllPoolsWhichFitTwoPodsRequiringGpus (3 of 3; each checks the expansion options,
as upstream, and which pods triggered them is not modelled)."""

from __future__ import annotations

import pytest

from kubesched.autoscale.config import AutoscalerConfig, NodeGroup, Prices
from kubesched.autoscale.configfile import load, template_node
from kubesched.autoscale.live import LiveView
from kubesched.errors import InputError
from kubesched.testing import make_pod
from tests.autoscale.loop_helpers import FRAMEWORKS, UNSCHEDULABLE
from tests.autoscale.scaleup_cases import MIB, loop, node, pod, scale_up

GPU = "nvidia.com/gpu"


def gpu_group(name: str, gpus: int) -> NodeGroup:
    t = {"cpu": "2000m", "memory": str(1000 * MIB), "pods": 100}
    if gpus:
        t["extendedResources"] = {GPU: gpus}
    return NodeGroup(name, template_node(name, t), 1, 10)


def gpu_pod(name: str, cpu_m: int, mem: int, gpus: int, on: str = "") -> dict:
    requests = {"cpu": f"{cpu_m}m", "memory": str(mem), **({GPU: str(gpus)} if gpus else {})}
    d = make_pod(name, requests=requests, node=on or None)
    return d if on else {**d, "status": UNSCHEDULABLE}


def expansion_options(groups: list[NodeGroup], nodes: list[dict], pods: list[dict]) -> dict[str, int]:
    ca, _ = loop(AutoscalerConfig(node_groups=groups))
    view = LiveView(nodes, pods, FRAMEWORKS)
    return {o.group: o.node_count for o in ca.options(view, view.unschedulable(), view.now(), ca.checker(view))}


def test_the_template_carries_extended_resources():
    t = template_node("g", {"cpu": "8", "memory": "32Gi", "gpuModel": "A100", "extendedResources": {GPU: 8, "example.com/fpga": "2"}})
    assert t.allocatable[GPU] == 8 and t.allocatable["example.com/fpga"] == 2
    assert t.raw["status"]["capacity"][GPU] == "8"  # capacity too: what CA's limits and similarity read
    group = NodeGroup("g", t)
    assert group.gpus == 8 and Prices().node(group) == 8.0  # priced per GPU like the GPU-sharing count


def two_pools() -> tuple[list[NodeGroup], list[dict], list[dict]]:
    groups = [gpu_group("gpu-pool", 1), gpu_group("std-pool", 0)]
    nodes = [node("gpu-node-1", 2000, 1000 * MIB, "gpu-pool", **{GPU: 1}), node("std-node-1", 2000, 1000 * MIB, "std-pool")]
    running = [gpu_pod("gpu-pod-1", 2000, 1000 * MIB, 1, on="gpu-node-1"), gpu_pod("std-pod-1", 2000, 1000 * MIB, 0, on="std-node-1")]
    return groups, nodes, running


def test_will_consider_gpu_and_standard_pool_for_pod_which_does_not_require_gpu():
    groups, nodes, running = two_pools()
    extra = [gpu_pod("extra-std-pod", 2000, 1000 * MIB, 0)]
    assert expansion_options(groups, nodes, running + extra) == {"std-pool": 1, "gpu-pool": 1}


def test_will_consider_only_gpu_pool_for_pod_which_does_requires_gpu():
    groups, nodes, running = two_pools()
    extra = [gpu_pod("extra-gpu-pod", 2000, 1000 * MIB, 1)]
    assert expansion_options(groups, nodes, running + extra) == {"gpu-pool": 1}
    assert scale_up(AutoscalerConfig(node_groups=groups), nodes, running + extra) == {"gpu-pool": 1}


def test_will_consider_all_pools_which_fit_two_pods_requiring_gpus():
    groups = [gpu_group("gpu-1-pool", 1), gpu_group("gpu-2-pool", 2), gpu_group("gpu-4-pool", 4), gpu_group("std-pool", 0)]
    nodes = [
        node("gpu-1-node-1", 2000, 1000 * MIB, "gpu-1-pool", **{GPU: 1}),
        node("gpu-2-node-1", 2000, 1000 * MIB, "gpu-2-pool", **{GPU: 2}),
        node("gpu-4-node-1", 2000, 1000 * MIB, "gpu-4-pool", **{GPU: 4}),
        node("std-node-1", 2000, 1000 * MIB, "std-pool"),
    ]
    pods = [
        gpu_pod("gpu-pod-1", 2000, 1000 * MIB, 1, on="gpu-1-node-1"),
        gpu_pod("gpu-pod-2", 2000, 1000 * MIB, 2, on="gpu-2-node-1"),
        gpu_pod("gpu-pod-3", 2000, 1000 * MIB, 4, on="gpu-4-node-1"),
        pod("std-pod-1", 2000, 1000 * MIB, on="std-node-1"),
    ]
    pods += [gpu_pod(f"extra-gpu-pod-{i}", 1, MIB, 1) for i in (1, 2, 3)]  # CPU and memory negligible
    assert expansion_options(groups, nodes, pods) == {"gpu-1-pool": 3, "gpu-2-pool": 2, "gpu-4-pool": 1}


def test_gpu_total_counts_extended_gpus_under_their_model():
    doc = {
        "gpuTotal": ["A100:0:8"],
        "nodeGroups": [{"name": "g", "template": {"cpu": "8", "memory": "32Gi", "gpuModel": "A100", "extendedResources": {GPU: 4}}}],
    }
    pending = [gpu_pod(f"p{i}", 1000, MIB, 4) for i in range(3)]
    assert scale_up(load(doc, "a.yaml"), [], pending) == {"g": 2}  # 3 nodes wanted, 8 GPUs allow 2


@pytest.mark.parametrize(
    ("ext", "message"),
    [
        ({GPU: "x"}, 'nodeGroups[0].template.extendedResources.nvidia.com/gpu: invalid quantity "x"'),
        ({"cpu": 4}, 'nodeGroups[0].template.extendedResources.cpu: "cpu" is not an extended resource here'),
        ([GPU], "nodeGroups[0].template.extendedResources: expected a mapping of resource name to quantity"),
        ({GPU: [1]}, "nodeGroups[0].template.extendedResources.nvidia.com/gpu: expected a quantity"),
    ],
)
def test_bad_extended_resources_name_the_field(ext, message):
    with pytest.raises(InputError) as e:
        load({"nodeGroups": [{"name": "g", "template": {"cpu": "8", "memory": "8Gi", "extendedResources": ext}}]}, "a.yaml")
    assert str(e.value).startswith(f"a.yaml: {message}"), str(e.value)
