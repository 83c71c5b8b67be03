"""Ported from Karmada v1.18 pkg/scheduler/core: assignment_test.go, division_algorithm_test.go,
generic_scheduler_test.go (Test_DistributionOfReplicas) and common_test.go (TestAssignReplicas)."""

from __future__ import annotations

import pytest

from kubesched.multicluster.assign import (
    AGGREGATED_STRATEGY,
    DYNAMIC_WEIGHT_STRATEGY,
    AssignState,
    assign_by_duplicated_strategy,
    assign_by_dynamic_strategy,
    assign_by_static_weight_strategy,
    assign_replicas,
    attach_zero_replicas_cluster,
    dynamic_divide_replicas,
    dynamic_scale_up,
)
from kubesched.multicluster.framework import SchedulerError, UnschedulableError
from tests.multicluster.karmada import (
    AGGREGATED,
    DYNAMIC,
    MEMBER1,
    MEMBER2,
    MEMBER3,
    MEMBER4,
    binding,
    cluster,
    detail,
    same,
    tc,
)

M = {1: MEMBER1, 2: MEMBER2, 3: MEMBER3, 4: MEMBER4}


def static(weights: dict[int, int] | None) -> dict:
    rs = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}
    if weights is not None:
        rs["weightPreference"] = {
            "staticWeightList": [{"targetCluster": {"clusterNames": [M[k]]}, "weight": w} for k, w in weights.items()]
        }
    return {"replicaScheduling": rs}


def r(**kw: int) -> list:
    """Expected TargetClusters: r(m1=6, m2=4) -> [(member1, 6), (member2, 4)]."""
    return [(M[int(k[1:])], v) for k, v in kw.items()]


# ---- Test_dynamicDivideReplicas ----------------------------------------------------------------
DIVIDE = [
    ("replica 12, dynamic weight 18:12:6", [(1, 18), (2, 12), (3, 6)], 12, DYNAMIC_WEIGHT_STRATEGY, r(m1=6, m2=4, m3=2)),
    ("replica 12, dynamic weight 20:12:6", [(1, 20), (2, 12), (3, 6)], 12, DYNAMIC_WEIGHT_STRATEGY, r(m1=6, m2=4, m3=2)),
    ("replica 12, dynamic weight 6:12:6", [(1, 6), (2, 12), (3, 6)], 12, DYNAMIC_WEIGHT_STRATEGY, r(m1=3, m2=6, m3=3)),
    ("replica 12, aggregated 12:6:6", [(2, 12), (1, 6), (3, 6)], 12, AGGREGATED_STRATEGY, r(m2=12)),
    ("replica 12, aggregated 6:6:6", [(1, 6), (2, 6), (3, 6)], 12, AGGREGATED_STRATEGY, r(m1=6, m2=6)),
]


@pytest.mark.parametrize("name,avail,target,strategy,want", DIVIDE, ids=[d[0] for d in DIVIDE])
def test_dynamicDivideReplicas(name, avail, target, strategy, want):
    st = AssignState([], binding(), strategy)
    st.set_available_clusters(tc([(M[k], v) for k, v in avail]))
    st.target_replicas = target
    assert same(dynamic_divide_replicas(st), tc(want))


# ---- Test_assignByStaticWeightStrategy ---------------------------------------------------------
STATIC = [
    ("replica 12, weight 3:2:1", 3, {1: 3, 2: 2, 3: 1}, 12, r(m1=6, m2=4, m3=2)),
    ("replica 12, default weight", 3, None, 12, r(m1=4, m2=4, m3=4)),
    ("replica 13, weight 3:2:1", 3, {1: 3, 2: 2, 3: 1}, 13, r(m1=7, m2=4, m3=2)),
    ("replica 14, weight 3:2:1", 3, {1: 3, 2: 2, 3: 1}, 14, r(m1=7, m2=5, m3=2)),
    ("insufficient replica assignment should get 0 replica", 2, {1: 1, 2: 1}, 0, r(m1=0, m2=0)),
    ("selected cluster without weight should be ignored", 2, {1: 1}, 2, r(m1=2)),
]


@pytest.mark.parametrize("name,n,weights,replicas,want", STATIC, ids=[s[0] for s in STATIC])
def test_assignByStaticWeightStrategy(name, n, weights, replicas, want):
    b = binding(replicas, static(weights))
    st = AssignState.new([detail(M[k]) for k in range(1, n + 1)], b)
    assert same(assign_by_static_weight_strategy(st), tc(want))


def test_assignByStaticWeightStrategy_cluster_with_multiple_weights():
    # "cluster with multiple weights": member1 matches weights 1 and 2 and takes the larger
    pl = {"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted", "weightPreference": {
        "staticWeightList": [{"targetCluster": {"clusterNames": [MEMBER1]}, "weight": 1},
                             {"targetCluster": {"clusterNames": [MEMBER2]}, "weight": 1},
                             {"targetCluster": {"clusterNames": [MEMBER1]}, "weight": 2}]}}}
    st = AssignState.new([detail(MEMBER1), detail(MEMBER2)], binding(3, pl))
    assert same(assign_by_static_weight_strategy(st), tc(r(m1=2, m2=1)))


# ---- Test_dynamicScale (assignByDynamicStrategy with a previous result) -------------------------
SCALE = [
    ("replica 12 -> 6, dynamic weighted 1:1:1", [(1, 1), (2, 1), (3, 1)], 6, r(m1=2, m2=4, m3=6), DYNAMIC, r(m1=1, m2=2, m3=3)),
    ("replica 12 -> 24, dynamic weighted 10:10:10", [(1, 10), (2, 10), (3, 10)], 24, r(m1=2, m2=4, m3=6), DYNAMIC, r(m1=6, m2=8, m3=10)),
    ("replica 12 -> 24, dynamic weighted 1:1:1", [(1, 1), (2, 1), (3, 1)], 24, r(m1=2, m2=4, m3=6), DYNAMIC, None),
    ("replica 12 -> 6, aggregated 1:1:1", [(1, 1), (2, 1), (3, 1)], 6, r(m1=4, m2=8), AGGREGATED, r(m2=6)),
    ("replica 12 -> 8, aggregated 100:100", [(1, 100), (2, 100)], 8, r(m1=4, m2=8), AGGREGATED, r(m2=8)),
    ("replica 12 -> 24, aggregated 4:6:8", [(1, 4), (2, 6), (3, 8)], 24, r(m1=4, m2=8), AGGREGATED, r(m1=7, m2=12, m3=5)),
    ("replica 12 -> 24, aggregated 6:6:20", [(1, 6), (2, 6), (3, 20)], 24, r(m1=4, m2=8), AGGREGATED, r(m1=10, m2=14)),
    ("replica 12 -> 24, aggregated 1:1:1", [(1, 1), (2, 1), (3, 1)], 24, r(m1=4, m2=8), AGGREGATED, None),
    ("replica 12 -> 24, aggregated 4:8:12, with cluster2 disappeared and cluster4 appeared", [(1, 4), (3, 8), (4, 12)], 24,
     r(m1=4, m2=8), AGGREGATED, r(m1=7, m3=7, m4=10)),
]


def _candidates(alloc):  # noqa: ANN001
    return [detail(M[k], allocatable=v, c=cluster(M[k], pods=v)) for k, v in alloc]


@pytest.mark.parametrize("name,alloc,replicas,previous,strategy,want", SCALE, ids=[s[0] for s in SCALE])
def test_dynamicScale(name, alloc, replicas, previous, strategy, want):
    b = binding(replicas, {"replicaScheduling": strategy}, clusters=previous, requirements=True)
    st = AssignState.new(_candidates(alloc), b)
    if want is None:
        with pytest.raises(UnschedulableError):
            assign_by_dynamic_strategy(st)
        return
    assert same(assign_by_dynamic_strategy(st), tc(want))


# ---- Test_dynamicScaleUp -----------------------------------------------------------------------
SCALE_UP = [
    ("replica 12, dynamic weight 6:8:10", [(1, 6), (2, 8), (3, 10)], (), DYNAMIC, r(m1=3, m2=4, m3=5)),
    ("replica 12, dynamic weight 8:8:10", [(1, 8), (2, 8), (3, 10)], (), DYNAMIC, r(m1=4, m2=4, m3=4)),
    ("replica 12, dynamic weight 3:3:3", [(1, 3), (2, 3), (3, 3)], (), DYNAMIC, None),
    ("replica 12, aggregated 6:8:10", [(1, 6), (2, 8), (3, 10)], (), AGGREGATED, r(m2=5, m3=7)),
    ("replica 12, aggregated 12:8:10", [(1, 12), (2, 8), (3, 10)], (), AGGREGATED, r(m1=12)),
    ("replica 12, aggregated 3:3:3", [(1, 3), (2, 3), (3, 3)], (), AGGREGATED, None),
    ("replica 12, dynamic weight 3:3, with cluster3 disappeared and cluster2 appeared", [(1, 3), (2, 3)], r(m1=6, m3=6),
     DYNAMIC, r(m1=9, m2=3)),
]


@pytest.mark.parametrize("name,alloc,previous,strategy,want", SCALE_UP, ids=[s[0] for s in SCALE_UP])
def test_dynamicScaleUp(name, alloc, previous, strategy, want):
    st = AssignState.new(_candidates(alloc), binding(12, {"replicaScheduling": strategy}, clusters=previous))
    st.build_scheduled_clusters()
    if want is None:
        with pytest.raises(UnschedulableError):
            dynamic_scale_up(st)
        return
    assert same(dynamic_scale_up(st), tc(want))


# ---- Test_assignByDuplicatedStrategy ------------------------------------------------------------
@pytest.mark.parametrize(
    "name,n,replicas,want",
    [
        ("test with multiple cluster", 2, 2, r(m1=2, m2=2)),
        ("the target cluster is null", 0, 2, []),
        ("replicas is null", 2, 0, r(m1=0, m2=0)),
    ],
)
def test_assignByDuplicatedStrategy(name, n, replicas, want):
    st = AssignState([detail(M[k]) for k in range(1, n + 1)], binding(replicas))
    assert assign_by_duplicated_strategy(st) == tc(want)


def test_assignByDynamicStrategy_UnschedulableErrorPreserved():
    st = AssignState.new(_candidates([(1, 3)]), binding(10, {"replicaScheduling": DYNAMIC}))
    with pytest.raises(UnschedulableError) as e:
        assign_by_dynamic_strategy(st)
    assert str(e.value) == "failed to scale up: Clusters available replicas 3 are not enough to schedule."


# ---- Test_DistributionOfReplicas (generic_scheduler_test.go): static weights, exact order ------
DISTRIBUTION = [
    ("replica 3, static weighted 1:1", 2, 3, {1: 1, 2: 1}, r(m1=2, m2=1)),
    ("replica 3, static weighted 1:1:1, change replicas from 3 to 5, before change", 3, 3, {1: 1, 2: 1, 3: 1}, r(m1=1, m2=1, m3=1)),
    ("replica 3, static weighted 1:1:1, change replicas from 3 to 5, after change", 3, 5, {1: 1, 2: 1, 3: 1}, r(m1=2, m2=2, m3=1)),
    ("replica 7, static weighted 2:1:1:1, change replicas from 7 to 8, before change", 4, 7, {1: 2, 2: 1, 3: 1, 4: 1},
     r(m1=3, m2=2, m3=1, m4=1)),
    ("replica 7, static weighted 2:1:1:1, change replicas from 7 to 8, after change", 4, 8, {1: 2, 2: 1, 3: 1, 4: 1},
     r(m1=3, m2=2, m3=2, m4=1)),
    ("replica 9, static weighted 2:1:1:1, change replicas from 9 to 8, before change", 4, 9, {1: 2, 2: 1, 3: 1, 4: 1},
     r(m1=3, m2=2, m3=2, m4=2)),
    ("replica 9, static weighted 2:1:1:1, change replicas from 9 to 8, after change", 4, 8, {1: 2, 2: 1, 3: 1, 4: 1},
     r(m1=3, m2=2, m3=2, m4=1)),
    ("replica 6, static weighted 1:1:1:1, change static weighted from 1:1:1:1 to 2:1:1:1, before change", 4, 6,
     {1: 1, 2: 1, 3: 1, 4: 1}, r(m1=2, m2=2, m3=1, m4=1)),
    ("replica 6, static weighted 1:1:1:1, change static weighted from 1:1:1:1 to 2:1:1:1, after change", 4, 6,
     {1: 2, 2: 1, 3: 1, 4: 1}, r(m1=3, m2=1, m3=1, m4=1)),
    ("replica 5, static weighted 1:1:1, add a new cluster and change static weight to 1:1:1:1, before change", 3, 5,
     {1: 1, 2: 1, 3: 1}, r(m1=2, m2=2, m3=1)),
    ("replica 5, static weighted 1:1:1, add a new cluster and change static weight to 1:1:1:1, after change", 4, 5,
     {1: 1, 2: 1, 3: 1, 4: 1}, r(m1=2, m2=1, m3=1, m4=1)),
    ("replica 6, static weighted 1:1:1:1, remove a cluster and change static weight to 1:1:1, before change", 4, 6,
     {1: 1, 2: 1, 3: 1, 4: 1}, r(m1=2, m2=2, m3=1, m4=1)),
    ("replica 6, static weighted 1:1:1:1, remove a cluster and change static weight to 1:1:1, after change", 3, 6,
     {1: 1, 2: 1, 3: 1}, r(m1=2, m2=2, m3=2)),
]


@pytest.mark.parametrize("name,n,replicas,weights,want", DISTRIBUTION, ids=[d[0] for d in DISTRIBUTION])
def test_DistributionOfReplicas(name, n, replicas, weights, want):
    got = assign_replicas([detail(M[k]) for k in range(1, n + 1)], binding(replicas, static(weights)))
    assert got == tc(want)


# ---- TestAssignReplicas (common_test.go) -------------------------------------------------------
OVERFLOW = {
    "replicaScheduling": DYNAMIC,
    "clusterAffinities": [{"affinityName": "affinity1", "clusterNames": [MEMBER1],
                           "overflowAffinities": [{"affinityName": "overflow", "clusterNames": [MEMBER2]}]}],
}


def test_AssignReplicas_single_cluster():
    assert assign_replicas([detail(MEMBER1)], binding(3, static(None))) == tc(r(m1=3))


def test_AssignReplicas_no_clusters_available():
    with pytest.raises(SchedulerError, match="no clusters available to schedule"):
        assign_replicas([], binding(1))


def test_AssignReplicas_non_workload():
    assert assign_replicas([detail(MEMBER1), detail(MEMBER2)], binding(0)) == tc(r(m1=0, m2=0))


@pytest.mark.parametrize(
    "name,m1,m2,replicas,previous,want",
    [
        ("Overflow: primary group has enough capacity, no overflow needed", (10, 10), (10, 10), 5, (), r(m1=5)),
        ("Overflow: primary group capacity exhausted, remaining replicas overflow to next tier", (2, 2), (10, 10), 5, (),
         r(m1=2, m2=3)),
        ("Overflow: all tiers exhausted, scheduling fails", (2, 2), (2, 2), 10, (), None),
        ("Overflow: AvailableReplicas greater than AllocatableReplicas due to previously assigned replicas", (5, 2), (10, 10), 8,
         r(m1=3), r(m1=5, m2=3)),
    ],
)
def test_AssignReplicas_overflow(name, m1, m2, replicas, previous, want):
    clusters = [detail(MEMBER1, available=m1[0], allocatable=m1[1], overflow=0),
                detail(MEMBER2, available=m2[0], allocatable=m2[1], overflow=1)]
    b = binding(replicas, OVERFLOW, clusters=previous, observed="affinity1")
    if want is None:
        with pytest.raises(UnschedulableError, match="Clusters available replicas are not enough to schedule"):
            assign_replicas(clusters, b)
        return
    got = assign_replicas(clusters, b)
    assert got == tc(want) and sum(t.replicas for t in got) == replicas


def test_AssignReplicas_unsupported_strategy():
    from dataclasses import replace

    from kubesched.multicluster.api import ReplicaSchedulingStrategy

    b = binding(3)
    b = replace(b, placement=replace(b.placement, replica_scheduling=ReplicaSchedulingStrategy("UnsupportedType", "UnsupportedPreference")))
    with pytest.raises(SchedulerError, match="unsupported replica scheduling strategy"):
        assign_replicas([detail(MEMBER1)], b)


def test_attachZeroReplicasCluster():
    # util_test.go: "clusters: member1,member2,member3, targetClusters:member1,member2"
    got = attach_zero_replicas_cluster([detail(MEMBER1), detail(MEMBER2), detail(MEMBER3)], tc(r(m1=1, m2=2)))
    assert got == tc(r(m1=1, m2=2, m3=0))
