"""An extender asked about the nodes in its request (nodeCacheCapable: false) sees the cluster's
PodGroups and ElasticQuotas, as `schedule` and its own NodeNames answers do: Coscheduling and
CapacityScheduling judge a pod the same way on both paths."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config.load import parse_config
from kubesched.extender.service import Extender
from kubesched.load import parse_objects
from kubesched.plugins import in_tree_registry
from tests.plugins.capacityscheduling.quota_testlib import quota, quota_config
from tests.plugins.coscheduling.gang_testlib import gang_config, member, node, pod_group
from tests.server.extender_testlib import node_list


def _quota_case() -> tuple[dict, list[dict], dict]:
    # the pod asks for more CPU than its namespace's ElasticQuota allows at most
    pod = member("big", ns="team", cpu="2")
    return quota_config(), [quota("team", min={"cpu": "500m"}, max={"cpu": "1"})], pod


def _gang_case() -> tuple[dict, list[dict], dict]:
    # a gang of three with one member created: Coscheduling's PreFilter waits for its siblings
    return gang_config(), [pod_group("g", ns="team", min_member=3)], member("m0", "g", ns="team", cpu="100m")


@pytest.mark.parametrize("case", [_quota_case, _gang_case], ids=["ElasticQuota", "PodGroup"])
def test_request_nodes_see_pod_groups_and_elastic_quotas(case: Any) -> None:
    config, objects, pod = case()
    nodes = [node("node-a"), node("node-b")]
    reg = in_tree_registry(entry_points=False)
    cfg = parse_config(config, "config.yaml", reg.points_of)
    docs = [*nodes, *objects]
    objs = parse_objects("cluster.yaml", [(f"documents[{i}]", d) for i, d in enumerate(docs)])
    ext = Extender(cfg, reg, objs)
    by_names = ext.filter({"Pod": pod, "NodeNames": ["node-a", "node-b"]})
    by_nodes = ext.filter({"Pod": pod, "Nodes": node_list(nodes)})
    rejected = {**(by_names.get("FailedNodes") or {}), **(by_names.get("FailedAndUnresolvableNodes") or {})}
    assert set(rejected) == {"node-a", "node-b"}  # the plugin judged the pod with its object
    assert by_nodes.get("FailedNodes") == by_names.get("FailedNodes")
    assert by_nodes.get("FailedAndUnresolvableNodes") == by_names.get("FailedAndUnresolvableNodes")
