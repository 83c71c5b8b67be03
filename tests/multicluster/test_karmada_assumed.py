"""Assumed (in-flight) workloads in both estimators, Karmada's SchedulingOvercommitProtection:
the rows of karmada-io/karmada's estimator tests that need them, ported under their Go names
(pkg/estimator/client/general_test.go, pkg/estimator/server/framework/plugins/noderesource/
noderesource_test.go). Units are kubesched's: cpu in millicores, memory in bytes."""

from __future__ import annotations

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.load import ClusterObjects
from kubesched.multicluster.api import Binding, Cluster, Placement, ResourceSummary
from kubesched.multicluster.estimate import (
    AssumedComponent,
    AssumedWorkload,
    Estimators,
    GeneralEstimator,
    deduct_assumed_from_summary,
)
from kubesched.multicluster.firstfit import NodeClaim
from kubesched.multicluster.member import MemberCluster
from kubesched.multicluster.simulated import SimulatedEstimator

Mi, Gi, Ti = 1 << 20, 1 << 30, 1 << 40


def _aw(*components: tuple[int, dict | None], namespace: str = "") -> AssumedWorkload:
    return AssumedWorkload(namespace, tuple(AssumedComponent(r, req) for r, req in components))


# TestDeductAssumedWorkloadsFromSummary: 8 of 8 cases
DEDUCT = [
    ("empty assumed workloads — summary unchanged", {"cpu": 500}, [], {"cpu": 500}),
    ("nil Allocating is initialized before deduction", {}, [_aw((1, {"cpu": 100}))], {"pods": 1, "cpu": 100}),
    ("component with zero replicas is skipped", {}, [_aw((0, {"cpu": 100}))], {}),
    ("component with nil ReplicaRequirements only deducts pod count", {}, [_aw((3, None))], {"pods": 3}),
    ("multiple replicas — resources multiplied correctly", {}, [_aw((3, {"cpu": 200, "memory": 256 * Mi}))],
     {"pods": 3, "cpu": 600, "memory": 768 * Mi}),
    ("multiple workloads accumulate into Allocating", {}, [_aw((1, {"cpu": 100})), _aw((2, {"cpu": 100}))],
     {"pods": 3, "cpu": 300}),
    ("large memory replicas do not overflow", {}, [_aw((10000, {"memory": Ti}))], {"pods": 10000, "memory": 10000 * Ti}),
    ("existing Allocating values are accumulated, not replaced", {"cpu": 400, "pods": 5}, [_aw((2, {"cpu": 100}))],
     {"pods": 7, "cpu": 600}),
]


@pytest.mark.parametrize(("name", "allocating", "assumed", "want"), DEDUCT, ids=[c[0] for c in DEDUCT])
def test_deduct_assumed_workloads_from_summary(name, allocating, assumed, want):
    summary = ResourceSummary({}, dict(allocating), {})
    got = deduct_assumed_from_summary(summary, assumed)
    assert got.allocating == want
    assert summary.allocating == allocating  # the cluster's own summary is left as it was


def _template(requests: dict[str, str] | None) -> Pod:
    res = {"requests": requests} if requests else {}
    return Pod.parse({"metadata": {"name": "w", "namespace": "default"},
                      "spec": {"containers": [{"name": "c", "resources": res}]}})


def _binding(requests: dict[str, str] | None) -> Binding:
    return Binding("apps/v1", "Deployment", "default", "w", "", 5, _template(requests), Placement(),
                   requirements=requests is not None)


BASIC = ({"pods": 100, "cpu": 4000, "memory": 8 * Gi}, {}, {"pods": 20, "cpu": 1000, "memory": 2 * Gi})
# TestMaxAvailableReplicasGeneral (feature gate SchedulingOvercommitProtection on): 5 of 5 cases
GENERAL = [
    ("nil resource summary", None, None, [], 0),
    ("no allowed pods", ({"pods": 10}, {}, {"pods": 10}), None, [], 0),
    ("nil replica requirements", ({"pods": 10}, {}, {}), None, [], 10),
    ("basic resource estimation", BASIC, {"cpu": "500m", "memory": "1Gi"}, [], 6),
    ("assumed workloads are deducted", BASIC, {"cpu": "500m", "memory": "1Gi"},
     [_aw((2, {"cpu": 500, "memory": Gi}), namespace="default")], 4),
]


@pytest.mark.parametrize(("name", "summary", "requests", "assumed", "want"), GENERAL, ids=[c[0] for c in GENERAL])
def test_max_available_replicas_general(name, summary, requests, assumed, want):
    cluster = Cluster("c", resource_summary=None if summary is None else ResourceSummary(*summary))
    b = _binding(requests)
    assert GeneralEstimator.for_cluster(cluster, b, assumed) == want
    # the same through calAvailableReplicas, with the assumed workloads given per cluster
    assert Estimators([GeneralEstimator()]).available([cluster], b, {"c": assumed})[1] == [want]


def _node(name: str, cpu: str, memory: str, pods: str = "10") -> Node:
    return Node.parse({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                       "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}}})


# TestNodeResourceEstimator_EstimateComponents: the 4 of its 14 cases that have assumed workloads
# (one component of one replica: the sets it counts are replicas)
NODE_RESOURCE = [
    ("assumed workload reduces available capacity", ("4", "8Gi"), [_aw((1, {"cpu": 1000, "memory": Gi}), namespace="default")], 3),
    ("multiple assumed workloads reduce capacity", ("6", "6Gi"),
     [_aw((1, {"cpu": 1000, "memory": Gi}), namespace="ns1"), _aw((1, {"cpu": 2000, "memory": 2 * Gi}), namespace="ns2")], 3),
    ("assumed workload cannot be placed - deduction skipped, capacity unchanged", ("4", "4Gi"),
     [_aw((1, {"cpu": 100_000, "memory": 100 * Gi}), namespace="default")], 4),
    ("assumed workload with empty components is ignored", ("4", "4Gi"), [AssumedWorkload("default", ())], 4),
]


@pytest.mark.parametrize(("name", "node", "assumed", "want"), NODE_RESOURCE, ids=[c[0] for c in NODE_RESOURCE])
def test_node_resource_estimator_estimate_components(name, node, assumed, want):
    member = MemberCluster(Cluster("m"), ClusterObjects(nodes=[_node("node1", *node)]))
    est = SimulatedEstimator({"m": member})
    b = _binding({"cpu": "1", "memory": "1Gi"})
    snap = member.snapshot
    before = (snap.generation, snap.requested.copy().tolist())
    assert est.max_available_replicas([member.cluster], b, {"m": assumed}) == [want]
    assert est.max_available_replicas([member.cluster], b) == [int(node[0])]  # nothing assumed is left behind
    assert snap.requested.tolist() == before[1]


def test_a_workload_that_only_partly_fits_keeps_what_it_placed():
    """SimulateScheduling(components, 1) has no rollback: the replicas placed before one does not
    fit stay deducted (the plugin only logs that the workload could not be deducted)."""
    member = MemberCluster(Cluster("m"), ClusterObjects(nodes=[_node("a", "4", "8Gi"), _node("b", "4", "8Gi")]))
    est = SimulatedEstimator({"m": member})
    b = _binding({"cpu": "1", "memory": "1Gi"})
    three = _aw((3, {"cpu": 3000, "memory": Gi}))  # two fit (one per node), the third does not
    assert est.max_available_replicas([member.cluster], b, {"m": [three]}) == [2]
    two = _aw((2, {"cpu": 3000, "memory": Gi}))
    assert est.max_available_replicas([member.cluster], b, {"m": [two]}) == [2]
    # a later workload still goes where the partial one left room
    one = _aw((1, {"cpu": 1000}))
    assert est.max_available_replicas([member.cluster], b, {"m": [three, one]}) == [1]
    assert est.max_available_replicas([member.cluster], b) == [8]


def _zone_node(name: str, zone: str, cpu: str) -> Node:
    return Node.parse({"metadata": {"name": name, "labels": {"zone": zone}},
                       "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "10"}}})


def test_assumed_replicas_go_first_fit_in_node_order():
    """Karmada packs an assumed workload on the first nodes (each takes as many as fit): three
    1-CPU replicas all land on node a and leave node b whole for an 8-CPU replica (the member's
    scheduler put one on b)."""
    member = MemberCluster(Cluster("m"), ClusterObjects(nodes=[_zone_node("a", "y", "8"), _zone_node("b", "y", "8")]))
    est = SimulatedEstimator({"m": member})
    assumed = {"m": [_aw((3, {"cpu": 1000, "memory": Gi}))]}
    assert est.max_available_replicas([member.cluster], _binding({"cpu": "8"}), assumed) == [1]


def test_an_assumed_component_keeps_its_node_claim():
    """The scheduler assumes a single-template workload with its NodeClaim
    (singleTemplateAsComponents), and first fit places it on a matching node only: the 2 CPUs go
    on node b (zone x), leaving b no room for a 4-CPU replica and a room for one."""
    member = MemberCluster(Cluster("m"), ClusterObjects(nodes=[_zone_node("a", "y", "6"), _zone_node("b", "x", "4")]))
    est = SimulatedEstimator({"m": member})
    pinned = AssumedWorkload("default", (AssumedComponent(1, {"cpu": 2000}, NodeClaim(node_selector={"zone": "x"})),))
    assert est.max_available_replicas([member.cluster], _binding({"cpu": "4"}), {"m": [pinned]}) == [1]


def test_the_federation_takes_assumed_workloads():
    from kubesched.multicluster.federation import Federation

    member = MemberCluster(Cluster("m"), ClusterObjects(nodes=[_node("a", "4", "8Gi")]))
    fed = Federation([member])
    b = _binding({"cpu": "1", "memory": "1Gi"})
    d = fed.decide(b, explain=True)
    assert d.attempts[0].estimates["m"] == {"general": 4, "simulated": 4}
    d = fed.decide(b, explain=True, assumed={"m": [_aw((3, {"cpu": 1000, "memory": Gi}))]})
    assert d.attempts[0].estimates["m"] == {"general": 1, "simulated": 1}
    assert d.attempts[0].available["m"] == 1


def test_assumed_workloads_before_replicas_placed_one_by_one():
    """A replica with anti-affinity is counted by placing replicas for real (nested what-ifs). An
    assumed pod is another workload's replica: the template's anti-affinity does not come with it,
    so it repels no replica of the template."""
    member = MemberCluster(Cluster("m"), ClusterObjects(nodes=[_node("a", "4", "8Gi"), _node("b", "4", "8Gi")]))
    est = SimulatedEstimator({"m": member})
    pod = Pod.parse({"metadata": {"name": "w", "namespace": "default", "labels": {"app": "w"}}, "spec": {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "w"}}, "topologyKey": "kubernetes.io/hostname"}]}}}})
    b = Binding("apps/v1", "Deployment", "default", "w", "", 2, pod, Placement(), requirements=True)
    assert est.max_available_replicas([member.cluster], b) == [2]
    full = _aw((1, {"cpu": 4000}))  # fills one node
    assert est.max_available_replicas([member.cluster], b, {"m": [full]}) == [1]
    assert est.max_available_replicas([member.cluster], b, {"m": [_aw((1, {"cpu": 1000}))]}) == [2]
    assert est.max_available_replicas([member.cluster], b) == [2] and len(member.snapshot.pods) == 0
