"""Karpenter's consolidation, ported from kubernetes-sigs/karpenter
pkg/controllers/disruption/consolidation_test.go, one pass of the disruption controller on a
cluster given as Nodes and Pods (the loop's ``disrupt``; nodes are deleted at once here, so a test
reads what one pass deleted or launched).

Ported: "Budgets" 7 of 14 cases (those one pass decides, and one "should not mark ...
consolidated" read through what the next pass does; the single-node case queues commands over
passes), "Delete"
5 of 21, "Replace" 3 of 25 (the on-demand entries; spot-to-spot, minValues and zones are not
modelled), "Multi-NodeClaim" 2 of 11 (the on-demand entries). Upstream's instance types become
node groups with prices; its NodeClaims are the nodes' labels."""

from __future__ import annotations

import numpy as np

from kubesched.autoscale.config import GROUP_LABEL, AutoscalerConfig, NodeGroup
from kubesched.autoscale.configfile import template_node
from kubesched.autoscale.karpenter import KarpenterLike
from kubesched.autoscale.nodepool import CAPACITY_TYPE, INSTANCE_TYPE, NODEPOOL_LABEL, read_node_pools
from kubesched.testing import make_node, make_pod
from tests.autoscale.karpenter_helpers import View
from tests.autoscale.loop_helpers import Recorder

LABELS = {"app": "test"}
# instance types, cheapest first (upstream's leastExpensiveInstance ... mostExpensiveInstance)
SMALL = NodeGroup("small", template_node("small", {"cpu": "4", "memory": "16Gi", "pods": 100}), price=1.0)
LARGE = NodeGroup("large", template_node("large", {"cpu": "32", "memory": "128Gi", "pods": 100}), price=8.0)


def pool(name: str = "default", budget: str = "100%", capacity=("on-demand",)) -> dict:
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "template": {"spec": {"requirements": [{"key": CAPACITY_TYPE, "operator": "In", "values": list(capacity)}]}},
            "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s", "budgets": [{"nodes": budget}]},
        },
    }


def node(name: str, group: NodeGroup = LARGE, pool_name: str = "default", capacity: str = "on-demand", annotations=None) -> dict:
    alloc = group.template.allocatable
    labels = {NODEPOOL_LABEL: pool_name, INSTANCE_TYPE: group.name, CAPACITY_TYPE: capacity, GROUP_LABEL: group.name}
    doc = make_node(name, cpu=f"{alloc['cpu']}m", memory=str(alloc["memory"]), pods=100, labels=labels)
    if annotations:
        doc["metadata"]["annotations"] = annotations
    return doc


def pod(name: str, on: str, cpu: str = "100m", labels=None, annotations=None) -> dict:
    doc = make_pod(name, requests={"cpu": cpu}, labels=labels or LABELS, node=on)
    if annotations:
        doc["metadata"]["annotations"] = annotations
    return doc


def one_pass(nodes, pods, pools=None, groups=(SMALL, LARGE), pdbs=()) -> tuple[Recorder, KarpenterLike]:
    cfg = AutoscalerConfig(list(groups), mode="karpenter", node_pools=read_node_pools(pools or [pool()])).validate()
    rec = Recorder()
    loop = KarpenterLike(cfg, rec, np.random.default_rng(0))
    view = View(nodes, pods, pdbs)
    loop.disrupt(view, view.now())
    return rec, loop


# ---- Budgets: ten nodes of the most expensive type, 32 CPUs, 100 pods each ------------------


def ten_nodes() -> list[dict]:
    return [node(f"node-{i}") for i in range(10)]


def test_should_only_allow_3_empty_nodes_to_be_disrupted():
    rec, _ = one_pass(ten_nodes(), [], [pool(budget="30%")])
    assert len(rec.deleted) == 3


def test_should_allow_all_empty_nodes_to_be_disrupted():
    rec, _ = one_pass(ten_nodes(), [], [pool(budget="100%")])
    assert len(rec.deleted) == 10


def test_should_allow_no_empty_nodes_to_be_disrupted():
    rec, _ = one_pass(ten_nodes(), [], [pool(budget="0%")])
    assert rec.deleted == []


def test_should_only_allow_3_nodes_to_be_deleted_in_multi_node_consolidation_delete():
    # a 100m pod on each node: all would fit on one, the budget lets 3 go
    pods = [pod(f"p{i}", f"node-{i}") for i in range(10)]
    rec, _ = one_pass(ten_nodes(), pods, [pool(budget="30%")])
    assert len(rec.deleted) == 3 and rec.created == []


def nodes_of_pools(n_pools: int, per_pool: int) -> tuple[list[dict], list[dict]]:
    pools = [pool(f"np-{j}") for j in range(n_pools)]
    nodes = [node(f"np-{j}-node-{i}", pool_name=f"np-{j}") for j in range(n_pools) for i in range(per_pool)]
    return pools, nodes


def test_should_allow_2_nodes_from_each_node_pool_to_be_deleted():
    pools, nodes = nodes_of_pools(10, 3)
    for p in pools:
        p["spec"]["disruption"]["budgets"] = [{"nodes": "50%"}]  # 1.5 of 3 rounds up to 2
    rec, _ = one_pass(nodes, [], pools)
    assert len(rec.deleted) == 20
    assert all(sum(d.startswith(f"np-{j}-") for d in rec.deleted) == 2 for j in range(10))


def test_should_allow_no_nodes_from_each_node_pool_to_be_deleted():
    pools, nodes = nodes_of_pools(10, 3)
    for p in pools:
        p["spec"]["disruption"]["budgets"] = [{"nodes": "0%"}]
    rec, _ = one_pass(nodes, [], pools)
    assert rec.deleted == []


# ---- Delete: two nodes of the cheapest type ----------------------------------------------------


def two_nodes(**kw) -> list[dict]:
    return [node("node-0", SMALL), node("node-1", SMALL, **kw)]


def three_pods(**kw) -> list[dict]:
    return [pod("p0", "node-0"), pod("p1", "node-0"), pod("p2", "node-1", **kw)]


def test_can_delete_nodes():
    # nothing new is needed: node-1's single pod moves to node-0
    rec, _ = one_pass(two_nodes(), three_pods())
    assert rec.deleted == ["node-1"] and rec.created == []


def test_can_delete_nodes_considers_pdb():
    # the pod on node-1 is covered by a PDB allowing no disruption: node-0 (two pods) goes instead
    pods = [pod("p0", "node-0", labels={"app": "other"}), pod("p1", "node-0", labels={"app": "other"}), pod("p2", "node-1")]
    pdb = {"metadata": {"name": "pdb", "namespace": "default"}, "spec": {"selector": {"matchLabels": LABELS}}, "status": {"disruptionsAllowed": 0}}
    rec, _ = one_pass(two_nodes(), pods, pdbs=[pdb])
    assert rec.deleted == ["node-0"]


def test_can_delete_nodes_considers_do_not_disrupt_set_to_true_on_nodes():
    rec, _ = one_pass(two_nodes(annotations={"karpenter.sh/do-not-disrupt": "true"}), three_pods())
    assert rec.deleted == ["node-0"]


def test_can_delete_nodes_considers_do_not_disrupt_set_to_true_on_pods():
    rec, _ = one_pass(two_nodes(), three_pods(annotations={"karpenter.sh/do-not-disrupt": "true"}))
    assert rec.deleted == ["node-0"]


def test_wont_delete_nodes_if_it_would_make_a_non_pending_pod_go_pending():
    # each node is full: neither's pods fit on the other, and no cheaper type holds them
    pods = [pod("p0", "node-0", cpu="3500m"), pod("p1", "node-1", cpu="3500m")]
    rec, _ = one_pass(two_nodes(), pods, groups=(SMALL,))
    assert rec.deleted == [] and rec.created == []


# ---- Replace -----------------------------------------------------------------------------------


def test_can_replace_node():
    # one pod on the most expensive type: a cheaper node holds it
    rec, loop = one_pass([node("node-0", LARGE)], [pod("p0", "node-0")])
    assert rec.created == ["small"] and rec.deleted == []  # the old node goes once the new one registers
    assert [c.candidates for c in loop.pending_cmds] == [["node-0"]]


def test_wont_replace_on_demand_node_if_on_demand_replacement_is_more_expensive():
    rec, _ = one_pass([node("node-0", SMALL)], [pod("p0", "node-0")])
    assert rec.created == [] and rec.deleted == []


def test_cannot_replace_spot_with_spot_if_the_spot_to_spot_consolidation_is_disabled():
    rec, _ = one_pass([node("node-0", LARGE, capacity="spot")], [pod("p0", "node-0")], [pool(capacity=("spot",))])
    assert rec.created == [] and rec.deleted == []


# ---- Multi-NodeClaim ---------------------------------------------------------------------------


def test_can_merge_3_nodes_into_1():
    # three expensive nodes, one pod each: one cheap node holds all three pods
    nodes = [node(f"node-{i}", LARGE) for i in range(3)]
    pods = [pod(f"p{i}", f"node-{i}", cpu="1") for i in range(3)]
    rec, loop = one_pass(nodes, pods)
    assert rec.created == ["small"]
    assert sorted(loop.pending_cmds[0].candidates) == ["node-0", "node-1", "node-2"]


def test_wont_merge_2_nodes_into_1_of_the_same_type():
    # two cheap nodes, one pod each: replacing both by one of the same type is what deleting one
    # does, so deletion wins (filterOutSameType)
    nodes = [node(f"node-{i}", SMALL) for i in range(2)]
    pods = [pod(f"p{i}", f"node-{i}", cpu="1") for i in range(2)]
    rec, _ = one_pass(nodes, pods, groups=(SMALL,))
    assert rec.created == [] and len(rec.deleted) == 1


def test_spot_node_is_not_replaced_by_cheaper_on_demand_from_a_pool_that_allows_spot():
    # a spot node of the expensive type, a pool allowing both: the cheap on-demand type costs
    # less than the spot price, but the replacement's requirements allow spot
    spot = LARGE.price * 0.4
    assert SMALL.price < spot
    pools = [pool(capacity=("spot", "on-demand"))]
    rec, _ = one_pass([node("node-0", LARGE, capacity="spot")], [pod("p0", "node-0")], pools)
    assert rec.created == [] and rec.deleted == []
    # from an on-demand-only pool it is replaced
    pools = [pool(capacity=("on-demand",))]
    rec, _ = one_pass([node("node-0", LARGE, capacity="spot")], [pod("p0", "node-0")], pools)
    assert rec.created == ["small"]


def test_a_pass_held_back_by_a_budget_is_not_consolidated():
    """"should not mark empty node consolidated if the candidates can't be disrupted due to
    budgets with one nodepool": when the budget's window closes, the node goes, though nothing
    else changed."""
    from datetime import UTC, datetime

    p = pool()
    p["spec"]["disruption"]["budgets"] = [{"nodes": "0", "schedule": "0 0 * * *", "duration": "1h"}]
    cfg = AutoscalerConfig([LARGE], mode="karpenter", node_pools=read_node_pools([p])).validate()
    rec = Recorder()
    loop = KarpenterLike(cfg, rec, np.random.default_rng(0))
    midnight = datetime(2024, 1, 8, tzinfo=UTC).timestamp()
    nodes = [node("node-0")]
    loop.disrupt(View(nodes, [], now=midnight + 58 * 60), midnight + 58 * 60)  # 00:58: no disruption
    assert rec.deleted == []
    loop.disrupt(View(nodes, [], now=midnight + 61 * 60), midnight + 61 * 60)  # 01:01: the window closed
    assert rec.deleted == ["node-0"]
