"""``maxNodesTotal`` caps the cluster's nodes, node groups' or not. Ported from kubernetes/autoscaler
cluster-autoscaler/core/scaleup/orchestrator/orchestrator_test.go: TestScaleUpCapToMaxTotalNodesLimit
and TestScaleUpCapToMaxTotalNodesLimitWithNotAutoscaledGroup (2 of its scale-up tests; the
expander's choice there, ng2 +3, is the only option here too).

Upstream's nodes n1 (2000m CPU, 100 MiB) and n2 (4000m, 1000 MiB) hold pods of 1000m and 3000m;
three new pods of 4000m and 100 MiB fit only a node like n2; with maxNodesTotal 3 the scale-up of
ng2 is capped at one node."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.autoscale.config import GROUP_LABEL, AutoscalerConfig, Delay, NodeGroup
from kubesched.autoscale.configfile import template_node
from kubesched.autoscale.core import ClusterAutoscaler
from kubesched.autoscale.karpenter import KarpenterLike
from kubesched.autoscale.live import LiveView
from kubesched.testing import make_node, make_pod
from tests.autoscale.loop_helpers import FRAMEWORKS, UNSCHEDULABLE, Recorder

MIB = 2**20


def node(name: str, cpu_m: int, mem_mib: int, group: str) -> dict:
    return make_node(name, cpu=f"{cpu_m}m", memory=str(mem_mib * MIB), labels={GROUP_LABEL: group} if group else None)


def scale_up(n1_group: str, mode: str = "cluster-autoscaler") -> list[str]:
    groups = [
        NodeGroup("ng1", template_node("ng1", {"cpu": "2000m", "memory": str(100 * MIB)}), 1, 10),
        NodeGroup("ng2", template_node("ng2", {"cpu": "4000m", "memory": str(1000 * MIB)}), 1, 10),
    ]
    cfg = AutoscalerConfig(node_groups=groups, mode=mode, max_nodes_total=3, provisioning_delay=Delay("constant", 0.0, 0.0)).validate()
    nodes = [node("n1", 2000, 100, n1_group), node("n2", 4000, 1000, "ng2")]
    pods = [make_pod("p1", requests={"cpu": "1000m"}, node="n1"), make_pod("p2", requests={"cpu": "3000m"}, node="n2")]
    pods += [{**make_pod(f"p-new-{i}", requests={"cpu": "4000m", "memory": str(100 * MIB)}), "status": UNSCHEDULABLE} for i in (1, 2, 3)]
    prov = Recorder()
    cls = KarpenterLike if mode == "karpenter" else ClusterAutoscaler
    loop = cls(cfg, prov, np.random.default_rng(0))
    if mode == "karpenter":
        loop.cfg.karpenter.batch_idle = 0.0
        loop.run_once(LiveView(nodes, pods, FRAMEWORKS))  # the batch opens
    loop.run_once(LiveView(nodes, pods, FRAMEWORKS))
    return prov.created


def test_scale_up_cap_to_max_total_nodes_limit():
    assert scale_up("ng1") == ["ng2"]


def test_scale_up_cap_to_max_total_nodes_limit_with_not_autoscaled_group():
    """n1 belongs to no node group: it still counts towards maxNodesTotal."""
    assert scale_up("") == ["ng2"]


@pytest.mark.parametrize("n1_group", ["ng1", ""])
def test_karpenter_like_provisioning_is_capped_the_same(n1_group):
    assert scale_up(n1_group, mode="karpenter") == ["ng2"]
