"""Karmada's first-fit scheduling simulation and the node-resource estimator's component estimate:
pkg/estimator/scheduling_simulator_components_test.go and the rest of
pkg/estimator/server/framework/plugins/noderesource/noderesource_test.go, ported under their Go
names (units: cpu in millicores, memory in bytes)."""

from __future__ import annotations

import random

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.api.resources import parse_resource_list
from kubesched.api.selectors import NodeSelector
from kubesched.load import ClusterObjects
from kubesched.multicluster.api import Binding, Cluster, Placement
from kubesched.multicluster.firstfit import (
    MAX_INT32,
    Component,
    FreeNode,
    NodeClaim,
    SchedulingSimulator,
    estimate_components,
    max_divided,
    snapshot_nodes,
    tracked,
)
from kubesched.multicluster.member import MemberCluster
from kubesched.multicluster.simulated import SimulatedEstimator


def R(d: dict[str, str]) -> dict[str, int]:  # noqa: N802 - a ResourceList literal
    return parse_resource_list(d, "test")


def node(name: str, allocatable: dict[str, str], labels: dict[str, str] | None = None) -> Node:
    return Node.parse({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
                       "status": {"allocatable": allocatable}})


def free(name: str, allocatable: dict[str, str]) -> FreeNode:
    """createNodeInfo: util.NewResource of the allocatable, with the node."""
    n = node(name, allocatable)
    return FreeNode(tracked(n.allocatable), n)


def comp(replicas: int, requests: dict[str, str], claim: NodeClaim | None = None) -> Component:
    return Component(replicas, R(requests), claim)


def zone_in(*zones: str) -> NodeClaim:
    sel = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": list(zones)}]}]}
    return NodeClaim(node_affinity=NodeSelector.parse(sel, "nodeAffinity"))


# TestMatchNode: 4 of 4 cases (a node the simulation has no Node object for matches any claim)
MATCH = [
    ("no enough information to perform the match operation - should match", zone_in("us-west"), None, True),
    ("no constraints - should match", NodeClaim(), {}, True),
    ("node affinity matches", zone_in("us-west"), {"zone": "us-west"}, True),
    ("node affinity does not match", zone_in("us-west"), {"zone": "us-east"}, False),
]


@pytest.mark.parametrize(("name", "claim", "labels", "want"), MATCH, ids=[r[0] for r in MATCH])
def test_match_node(name, claim, labels, want):
    n = FreeNode({"cpu": 4000, "pods": 10}, None if labels is None else node("node1", {"cpu": "4"}, labels))
    sim = SchedulingSimulator([n])
    assert sim.simulate([comp(1, {"cpu": "1"}, claim)], 1) == int(want)


def test_node_claim_taints_and_selector():
    tainted = Node.parse({"metadata": {"name": "t", "labels": {"disk": "ssd"}},
                          "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"},
                                              {"key": "soft", "effect": "PreferNoSchedule"}]},
                          "status": {"allocatable": {"cpu": "4", "pods": "10"}}})
    tolerate = Pod.parse({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}],
                                                              "tolerations": [{"key": "k", "operator": "Exists"}]}}).tolerations
    assert not NodeClaim().matches(tainted)  # NoSchedule untolerated; PreferNoSchedule is not checked
    assert NodeClaim(tolerations=tolerate).matches(tainted)
    assert NodeClaim(node_selector={"disk": "ssd"}, tolerations=tolerate).matches(tainted)
    assert not NodeClaim(node_selector={"disk": "hdd"}, tolerations=tolerate).matches(tainted)


WEB_DB = [comp(2, {"cpu": "1", "memory": "2Gi"}), comp(1, {"cpu": "2", "memory": "4Gi"})]
# TestSchedulingSimulator_SimulateSchedulingFF: 7 of 7 cases
SIMULATE = [
    ("single component fits perfectly", [free("node1", {"cpu": "4", "memory": "8Gi", "pods": "10"})],
     [comp(2, {"cpu": "1", "memory": "2Gi"})], 10, 2),
    ("multiple components with resource constraints", [free("node1", {"cpu": "8", "memory": "16Gi", "pods": "10"})], WEB_DB, 10, 2),
    ("no resources available", [free("node1", {"cpu": "0", "memory": "0", "pods": "10"})], [comp(1, {"cpu": "1"})], 10, 0),
    ("upper bound limits scheduling", [free("node1", {"cpu": "100", "pods": "10"})], [comp(1, {"cpu": "1"})], 3, 3),
    ("multiple nodes distribution", [free("node1", {"cpu": "2", "pods": "10"}), free("node2", {"cpu": "2", "pods": "10"})],
     [comp(3, {"cpu": "1"})], 10, 1),
    ("nodes with different capacities",
     [free("small-node", {"cpu": "1", "memory": "2Gi", "pods": "10"}), free("medium-node", {"cpu": "4", "memory": "8Gi", "pods": "20"}),
      free("large-node", {"cpu": "8", "memory": "16Gi", "pods": "30"})],
     [comp(2, {"cpu": "500m", "memory": "1Gi"}), comp(1, {"cpu": "2", "memory": "4Gi"})], 10, 4),
    ("many small nodes", [free(f"node{i}", {"cpu": "1", "pods": "5"}) for i in range(1, 5)], [comp(1, {"cpu": "2"})], 10, 0),
]


@pytest.mark.parametrize(("name", "nodes", "components", "bound", "want"), SIMULATE, ids=[r[0] for r in SIMULATE])
def test_scheduling_simulator_simulate_scheduling_ff(name, nodes, components, bound, want):
    assert SchedulingSimulator(nodes).simulate(components, bound) == want


def _go_simulate(nodes: list[dict[str, int]], components: list[Component], upper: int) -> int:
    """SimulateScheduling as the Go source reads, set by set (the test's oracle)."""
    sets = 0
    while sets < upper:
        ok = True
        for c in components:
            remaining = c.replicas
            for n in nodes:
                take = min(max_divided(n, c.requests or {}), remaining)
                if take == 0:
                    continue
                for k, v in (c.requests or {}).items():
                    if k in n:
                        n[k] = max(n[k] - v * take, 0)
                n["pods"] = max(n["pods"] - take, 0)
                remaining -= take
                if remaining == 0:
                    break
            if remaining != 0:
                ok = False
                break
        if not ok:
            break
        sets += 1
    return sets


@pytest.mark.parametrize("seed", range(40))
def test_one_component_at_once_equals_set_by_set(seed):
    """The single-component shortcut gives Go's count and leaves the nodes as Go's loop does
    (including the replicas a failing set placed)."""
    rng = random.Random(seed)
    nodes = [{"cpu": rng.randrange(0, 9000, 500), "memory": rng.randrange(0, 9) << 30, "pods": rng.randrange(0, 12)} for _ in range(6)]
    c = Component(rng.randrange(1, 5), {"cpu": rng.choice([0, 500, 1000, 1500]), "memory": rng.choice([0, 1 << 30])})
    upper = rng.choice([0, 1, 3, 100, MAX_INT32])
    ours = [FreeNode(dict(n)) for n in nodes]
    oracle = [dict(n) for n in nodes]
    assert SchedulingSimulator(ours).simulate([c], upper) == _go_simulate(oracle, [c], upper)
    assert [n.free for n in ours] == oracle


def test_a_component_of_no_replicas_always_fits():
    assert SchedulingSimulator([FreeNode({"pods": 0})]).simulate([Component(0, {"cpu": 1000})], 7) == 7


def _member(nodes: list[Node], pods: list[Pod] = ()) -> MemberCluster:  # noqa: ANN001
    return MemberCluster(Cluster("m"), ClusterObjects(nodes=nodes, pods=list(pods)))


def _pod(name: str, node_name: str, requests: dict[str, str]) -> Pod:
    return Pod.parse({"metadata": {"name": name, "namespace": "default"},
                      "spec": {"nodeName": node_name, "containers": [{"name": "c", "resources": {"requests": requests}}]}})


N4_8 = {"cpu": "4", "memory": "8Gi", "pods": "10"}
ONE = {"cpu": "1", "memory": "1Gi"}
ZONES = [node("node1", N4_8, {"zone": "us-west"}), node("node2", N4_8, {"zone": "us-east"})]
# TestNodeResourceEstimator_EstimateComponents: 13 of 14 cases ("plugin disabled" has no
# counterpart: kubesched has no switch for it). The four with assumed workloads also run against
# the simulated estimator in test_karmada_assumed.py.
ESTIMATE_COMPONENTS = [
    ("single component single replica fits in single node", [node("node1", N4_8)], [], [comp(1, ONE)], [], 4),
    ("single component multiple replicas fits in single node", [node("node1", N4_8)], [], [comp(2, ONE)], [], 2),
    ("multiple components fit in single node", [node("node1", {"cpu": "10", "memory": "10Gi", "pods": "10"})], [],
     [comp(1, {"cpu": "2", "memory": "2Gi"}), comp(1, {"cpu": "3", "memory": "3Gi"})], [], 2),
    ("components spread across multiple nodes",
     [node("node1", {"cpu": "6", "memory": "6Gi", "pods": "10"}), node("node2", {"cpu": "6", "memory": "6Gi", "pods": "10"})], [],
     [comp(2, {"cpu": "3", "memory": "3Gi"}), comp(1, {"cpu": "2", "memory": "2Gi"})], [], 1),
    ("insufficient resources", [node("node1", {"cpu": "2", "memory": "2Gi", "pods": "10"})], [],
     [comp(1, {"cpu": "3", "memory": "3Gi"})], [], 0),
    ("node with existing pods", [node("node1", N4_8)], [_pod("pod1", "node1", {"cpu": "1", "memory": "2Gi"})],
     [comp(1, {"cpu": "1", "memory": "2Gi"})], [], 3),
    ("node affinity constraints", ZONES, [], [comp(1, ONE, zone_in("us-west"))], [], 4),
    ("no component match node affinity constraints", ZONES, [], [comp(4, ONE, zone_in("us-south"))], [], 0),
    ("empty components", [node("node1", N4_8)], [], [], [], MAX_INT32),
    ("assumed workload reduces available capacity", [node("node1", {"cpu": "4", "memory": "8Gi", "pods": "10"})], [],
     [comp(1, ONE)], [[comp(1, ONE)]], 3),
    ("multiple assumed workloads reduce capacity", [node("node1", {"cpu": "6", "memory": "6Gi", "pods": "10"})], [],
     [comp(1, ONE)], [[comp(1, ONE)], [comp(1, {"cpu": "2", "memory": "2Gi"})]], 3),
    ("assumed workload cannot be placed - deduction skipped, capacity unchanged",
     [node("node1", {"cpu": "4", "memory": "4Gi", "pods": "10"})], [], [comp(1, ONE)], [[comp(1, {"cpu": "100", "memory": "100Gi"})]], 4),
    ("assumed workload with empty components is ignored", [node("node1", {"cpu": "4", "memory": "4Gi", "pods": "10"})], [],
     [comp(1, ONE)], [[]], 4),
]


@pytest.mark.parametrize(("name", "nodes", "pods", "components", "assumed", "want"), ESTIMATE_COMPONENTS,
                         ids=[r[0] for r in ESTIMATE_COMPONENTS])
def test_node_resource_estimator_estimate_components(name, nodes, pods, components, assumed, want):
    member = _member(nodes, pods)
    assert estimate_components(snapshot_nodes(member.snapshot), components, assumed) == want
    if len(components) == 1 and components[0].replicas == 1 and not assumed:
        # one replica a set: kubesched's own estimator of the member agrees
        c = components[0]
        requests = {k: f"{v}m" if k == "cpu" else str(v) for k, v in (c.requests or {}).items()}
        spec: dict = {"containers": [{"name": "c", "resources": {"requests": requests}}]}
        if c.node_claim is not None:
            spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["us-west"]}]}]}}}
        template = Pod.parse({"metadata": {"name": "w", "namespace": "default"}, "spec": spec})
        b = Binding("apps/v1", "Deployment", "default", "w", "", 5, template, Placement(), requirements=True)
        assert SimulatedEstimator({"m": member}).max_available_replicas([member.cluster], b) == [want]


def test_a_partly_placed_assumed_workload_keeps_what_it_placed():
    """SimulateScheduling(assumed, 1) has no rollback: the two replicas of three that fit stay."""
    nodes = snapshot_nodes(_member([node("a", {"cpu": "4", "memory": "8Gi", "pods": "10"}),
                                    node("b", {"cpu": "4", "memory": "8Gi", "pods": "10"})]).snapshot)
    assert estimate_components(nodes, [comp(1, ONE)], [[comp(3, {"cpu": "3", "memory": "1Gi"})]]) == 2
