"""Cluster-wide resource limits (``coresTotal``, ``memoryTotal``, ``gpuTotal``: CA's
``--cores-total``, ``--memory-total``, ``--gpu-total``), ported from kubernetes/autoscaler:

* core/scaleup/resource/manager_test.go: TestDeltaForNode (2 of 2 cases), TestResourcesLeft
  (2 of 2), TestApplyLimits (4 of 4), TestCheckDeltaWithinLimits (4 of 4),
  TestResourceManagerWithGpuResource (all its checks).
* core/scaleup/orchestrator/orchestrator_test.go: TestScaleUpMaxCoresLimitHit,
  TestScaleUpMaxCoresLimitHitWithNotAutoscaledGroup, TestScaleUpMaxMemoryLimitHit,
  TestScaleUpMaxMemoryLimitHitWithNotAutoscaledGroup, TestNoScaleUpMaxCoresLimitHit (5 of its limit
  tests; the atomic rows of TestZeroOrMaxNodeScaling are in test_ca_atomic.py). Upstream forces the
  expander's choice (ng1); here ng2 is ruled out by the limit itself (one ng2 node already exceeds
  what is left), so ng1 is the only option, as the upstream rows imply. TestScaleUpWithMultipleQuotas
  is left out: per-node-group quotas (the resourcequotas package) have no flag and are not modelled.
"""

from __future__ import annotations

import pytest

from kubesched.api.objects import Node
from kubesched.autoscale.config import AutoscalerConfig
from kubesched.autoscale.configfile import load
from kubesched.autoscale.limits import ResourceLimits, apply_limits, delta_for_node, exceeded, resources_left
from kubesched.errors import InputError
from kubesched.gpu.model import GPU_MODEL
from kubesched.testing import make_pod
from tests.autoscale.loop_helpers import UNSCHEDULABLE
from tests.autoscale.scaleup_cases import MIB, group, node, pod, scale_up


def ca_node(cpu_cores: int, mem: int, **extra: int) -> Node:
    return Node.parse(node("n", cpu_cores * 1000, mem, **extra))


def limits(cpu: int, mem: int, **gpus: int) -> ResourceLimits:
    return ResourceLimits(min={"cpu": 0, "memory": 0, **dict.fromkeys(gpus, 0)}, max={"cpu": cpu, "memory": mem, **gpus})


# ---- manager_test.go ----------------------------------------------------------------------------
@pytest.mark.parametrize(("cpu", "mem", "want"), [(8, 16, {"cpu": 8, "memory": 16}), (4, 32, {"cpu": 4, "memory": 32})])
def test_delta_for_node(cpu, mem, want):
    assert delta_for_node(ca_node(cpu, mem), ResourceLimits()) == want


def test_delta_for_node_rounds_cores_up():
    """GetNodeCoresAndMemory reads capacity's Value(): 900m is one core."""
    assert delta_for_node(Node.parse(node("n", 900, 900)), ResourceLimits())["cpu"] == 1


@pytest.mark.parametrize(
    ("size", "cpu", "mem", "want"),
    [
        (5, 8, 16, {"cpu": 960, "memory": 920}),  # 1000 - 8 * 5; 1000 - 16 * 5
        (100, 4, 8, {"cpu": 600, "memory": 200}),  # 1000 - 4 * 100; 1000 - 8 * 100
    ],
)
def test_resources_left(size, cpu, mem, want):
    assert resources_left(limits(1000, 1000), [(ca_node(cpu, mem), size)]) == want


@pytest.mark.parametrize(
    ("left", "want"),
    [
        ({"cpu": 80, "memory": 160}, 10),
        ({"cpu": 80, "memory": 100}, 6),  # limited by memory: 100 / 16 = 6
        ({"cpu": 39, "memory": 160}, 4),  # limited by CPU: 39 / 8 = 4
        ({"cpu": 40, "memory": 80}, 5),  # limited by CPU and memory
    ],
)
def test_apply_limits(left, want):
    assert apply_limits(10, left, delta_for_node(ca_node(8, 16), ResourceLimits())) == want


@pytest.mark.parametrize(
    ("delta", "want"),
    [
        ({"cpu": 8, "memory": 16}, []),
        ({"cpu": 12, "memory": 16}, ["cpu"]),
        ({"cpu": 8, "memory": 32}, ["memory"]),
        ({"cpu": 16, "memory": 96}, ["cpu", "memory"]),
    ],
)
def test_check_delta_within_limits(delta, want):
    assert exceeded({"cpu": 10, "memory": 20}, delta) == want


def test_resource_manager_with_gpu_resource():
    lim = limits(320, 640, gpu=16)
    n1 = Node.parse(node("n1", 8000, 16, **{"nvidia.com/gpu": 4}))
    n1.labels[GPU_MODEL] = "gpu"
    delta = delta_for_node(n1, lim)
    assert delta == {"cpu": 8, "memory": 16, "gpu": 4}
    left = resources_left(lim, [(n1, 1)])
    assert left == {"cpu": 312, "memory": 624, "gpu": 12}  # 320-8; 640-16; 16-4
    assert exceeded(left, delta) == []
    assert apply_limits(10, left, delta) == 3  # 12 GPUs left / 4 per node


def test_a_limit_of_zero_is_no_limit():
    """ResourcesLeft puts only limits above 0 in its map: no entry means no limit."""
    assert resources_left(limits(0, 1000), [(ca_node(8, 16), 5)]) == {"memory": 920}


def test_gpus_of_no_type_count_towards_no_gpu_limit():
    lim = limits(320, 640, gpu=16)
    assert delta_for_node(ca_node(8, 16, **{"nvidia.com/gpu": 4}), lim) == {"cpu": 8, "memory": 16}


# ---- orchestrator_test.go -----------------------------------------------------------------------
def cores_case(n2_group: str) -> dict[str, int]:
    cfg = AutoscalerConfig(node_groups=[group("ng1", 2000, 100), group("ng2", 4000, 1000)])
    cfg.resource_limits.max["cpu"] = 9
    nodes = [node("n1", 2000, 100, "ng1"), node("n2", 4000, 1000, n2_group)]
    pods = [pod("p1", 1000, on="n1"), pod("p2", 3000, on="n2"), pod("p-new-1", 2000), pod("p-new-2", 2000)]
    return scale_up(cfg, nodes, pods)


def test_scale_up_max_cores_limit_hit():
    assert cores_case("ng2") == {"ng1": 1}  # 9 - 6 cores left: one 2-core node (the option was +2)


def test_scale_up_max_cores_limit_hit_with_not_autoscaled_group():
    assert cores_case("") == {"ng1": 1}


def memory_case(n2_group: str) -> dict[str, int]:
    cfg = AutoscalerConfig(node_groups=[group("ng1", 2000, 100 * MIB), group("ng2", 4000, 1000 * MIB)])
    cfg.resource_limits.max["memory"] = 1300 * MIB
    nodes = [node("n1", 2000, 100 * MIB, "ng1"), node("n2", 4000, 1000 * MIB, n2_group)]
    pods = [pod("p1", 1000, on="n1"), pod("p2", 3000, on="n2")]
    pods += [pod(f"p-new-{i}", 2000, 100 * MIB) for i in (1, 2, 3)]
    return scale_up(cfg, nodes, pods)


def test_scale_up_max_memory_limit_hit():
    assert memory_case("ng2") == {"ng1": 2}  # 200 MiB left: two 100 MiB nodes (the option was +3)


def test_scale_up_max_memory_limit_hit_with_not_autoscaled_group():
    assert memory_case("") == {"ng1": 2}


def test_no_scale_up_max_cores_limit_hit():
    """1 core and 50 bytes left: one node of either group exceeds them."""
    cfg = AutoscalerConfig(node_groups=[group("ng1", 2000, 100), group("ng2", 4000, 1000)])
    cfg.resource_limits.max.update(cpu=7, memory=1150)
    nodes = [node("n1", 2000, 100, "ng1"), node("n2", 4000, 1000, "ng2")]
    pods = [pod("p1", 1000, on="n1"), pod("p2", 3000, on="n2"), pod("p-new-1", 2000), pod("p-new-2", 2000)]
    assert scale_up(cfg, nodes, pods) == {}


def test_without_the_limit_the_same_case_scales_up_in_full():
    """The cases above, unlimited: the cap is what made them smaller."""
    cfg = AutoscalerConfig(node_groups=[group("ng1", 2000, 100), group("ng2", 4000, 1000)], expander="least-nodes")
    nodes = [node("n1", 2000, 100, "ng1"), node("n2", 4000, 1000, "ng2")]
    pods = [pod("p1", 1000, on="n1"), pod("p2", 3000, on="n2"), pod("p-new-1", 2000), pod("p-new-2", 2000)]
    assert scale_up(cfg, nodes, pods) == {"ng2": 1}


def test_gpu_total_caps_a_gpu_group():
    gpu_tmpl = {"cpu": "8", "memory": "32Gi", "gpus": 4, "gpuModel": "V100"}
    cfg = load({"gpuTotal": ["V100:0:8"], "nodeGroups": [{"name": "g", "template": gpu_tmpl, "max": 10}]}, "as.yaml")
    ask = {"cpu": "1", "alibabacloud.com/gpu-count": "4"}  # the template's GPUs as an extended resource
    pending = [{**make_pod(f"p{i}", requests=ask), "status": UNSCHEDULABLE} for i in range(4)]
    assert scale_up(cfg, [], pending) == {"g": 2}  # four 4-GPU pods want 4 nodes; 8 GPUs allow 2


# ---- the file -----------------------------------------------------------------------------------
GROUP = {"name": "g", "template": {"cpu": "8", "memory": "32Gi"}}


def test_limits_read_as_ca_flags():
    cfg = load({"coresTotal": "4:320", "memoryTotal": "0:1024", "gpuTotal": ["V100:1:16", "A100:0:8"], "nodeGroups": [GROUP]}, "a.yaml")
    lim = cfg.resource_limits
    assert (lim.min["cpu"], lim.max["cpu"]) == (4, 320)
    assert lim.max["memory"] == 1024 * 2**30  # GiB, as the flag
    assert (lim.min["V100"], lim.max["V100"], lim.max["A100"]) == (1, 16, 8)


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"coresTotal": "320"}, 'a.yaml: coresTotal: invalid value "320": expected "MIN:MAX"'),
        ({"coresTotal": 320}, 'a.yaml: coresTotal: invalid value "320": expected "MIN:MAX"'),
        ({"memoryTotal": "10:5"}, "a.yaml: memoryTotal: min (10737418240) is greater than max (5368709120)"),
        ({"coresTotal": "-1:5"}, 'a.yaml: coresTotal: invalid value "-1:5"'),
        ({"gpuTotal": ["0:16"]}, 'a.yaml: gpuTotal[0]: invalid value "0:16": expected "TYPE:MIN:MAX"'),
        ({"gpuTotal": "V100:0:16"}, "a.yaml: gpuTotal: expected a list of non-empty strings"),
        ({"gpuTotal": ["V100:0:16", "V100:0:8"]}, 'a.yaml: gpuTotal[1]: GPU type "V100" is given twice'),
        ({"gpuTotal": ["cpu:0:16"]}, 'a.yaml: gpuTotal[0]: "cpu" is not a GPU type'),
    ],
)
def test_bad_limits_name_the_field(doc, message):
    with pytest.raises(InputError) as e:
        load({**doc, "nodeGroups": [GROUP]}, "a.yaml")
    assert str(e.value).startswith(message), str(e.value)
