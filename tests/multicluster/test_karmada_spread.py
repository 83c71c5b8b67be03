"""Ported from Karmada v1.18 pkg/scheduler/core/spreadconstraint (group_clusters_test.go,
select_clusters_test.go, select_clusters_by_region_test.go, select_groups_test.go, util_test.go)
and core/common_test.go (TestSelectClusters).

Placements here are built field by field, as the Go tables build their structs: no admission
defaults, so e.g. ``replicaSchedulingType: Divided`` alone has no division preference."""

from __future__ import annotations

import pytest

from kubesched.multicluster.api import (
    ClusterAffinity,
    ClusterAffinityTerm,
    ClusterPreferences,
    OverflowClusterAffinity,
    Placement,
    ReplicaSchedulingStrategy,
    SpreadConstraint,
    StaticClusterWeight,
)
from kubesched.multicluster.spread import (
    ClusterDetailInfo,
    GroupClustersInfo,
    GroupInfo,
    SelectError,
    _Group,
    calc_group_score,
    calc_group_score_for_duplicate,
    group_clusters_with_score,
    is_spread_constraint_existed,
    select_best_clusters,
    select_groups,
    sort_clusters,
)
from tests.multicluster.karmada import binding, cluster

SC = SpreadConstraint
DUP = ReplicaSchedulingStrategy("Duplicated")
AGG = ReplicaSchedulingStrategy("Divided", "Aggregated")
DYN = ReplicaSchedulingStrategy("Divided", "Weighted", ClusterPreferences((), "AvailableReplicas"))
STATIC_EMPTY = ReplicaSchedulingStrategy("Divided", "Weighted", ClusterPreferences(()))


def topo(name: str, provider: str, region: str, zone: str):  # noqa: ANN201 - NewClusterWithTopology
    return cluster(name, provider=provider, region=region, zones=(zone,))


# ---- Test_GroupClustersWithScore ---------------------------------------------------------------
def _scores():  # noqa: ANN202 - generateClusterScore
    return [(topo("member1", "P1", "R1", "Z1"), 20), (topo("member2", "P1", "R1", "Z2"), 40),
            (topo("member3", "P2", "R1", "Z1"), 30), (topo("member4", "P2", "R2", "Z2"), 60)]


GROUPS = [
    ("test SpreadConstraints is nil", (), (0, 0, 0)),
    ("test SpreadConstraints is cluster", (SC("cluster", "", 1, 1),), (0, 0, 0)),
    ("test SpreadConstraints is zone", (SC("zone", "", 1, 1),), (2, 0, 0)),
    ("test SpreadConstraints is region", (SC("region", "", 1, 1),), (0, 2, 0)),
    ("test SpreadConstraints is provider", (SC("provider", "", 1, 1),), (0, 0, 2)),
    ("test SpreadConstraints is provider/region/zone", (SC("provider", "", 1, 1), SC("region", "", 1, 1), SC("zone", "", 1, 1)), (2, 2, 2)),
]


@pytest.mark.parametrize("name,constraints,counts", GROUPS, ids=[g[0] for g in GROUPS])
def test_GroupClustersWithScore(name, constraints, counts):
    b = binding(0, Placement(spread_constraints=constraints))
    info = group_clusters_with_score(_scores(), b, lambda cs, _b: [100] * len(cs))
    assert [c.name for c in info.clusters] == ["member4", "member2", "member3", "member1"]
    assert (len(info.zones), len(info.regions), len(info.providers)) == counts


# ---- Test_CalcGroupScore / Test_CalcGroupScoreForDuplicate -------------------------------------
def _gen(scores, replicas):  # noqa: ANN001, ANN202 - generateClusterScores
    return [ClusterDetailInfo(f"member{i + 1}", s, cluster(f"member{i + 1}"), r) for i, (s, r) in enumerate(zip(scores, replicas, strict=True))]


GROUP_SCORE = [
    (1, [100, 100, 0, 0, 0], [30] * 5, [100] * 5, [30, 30, 30, 10, 10], 20, DUP, 0, True),
    (2, [100, 100, 0, 0, 0], [30, 30, 30, 10, 10], [100] * 5, [30, 30, 30, 10, 10], 20, DUP, 0, False),
    (3, [100, 100, 0, 0, 0], [30, 30, 30, 10, 10], [100] * 5, [10, 10, 10, 5, 5], 100, AGG, 2, True),
    (4, [100, 100, 0, 0, 0], [10, 10, 10, 10, 5], [100] * 5, [10, 10, 10, 5, 5], 100, DYN, 2, True),
    (5, [100, 100, 0, 0, 0], [10, 10, 10, 5, 5], [100] * 5, [10, 10, 10, 5, 5], 100, STATIC_EMPTY, 2, False),
    (6, [0] * 5, [100] * 5, [100] * 5, [50] * 5, 100, AGG, 2, False),
]


@pytest.mark.parametrize("tid,s1,r1,s2,r2,replicas,strategy,min_groups,group1_wins", GROUP_SCORE, ids=[f"test ID {g[0]}" for g in GROUP_SCORE])
def test_CalcGroupScore(tid, s1, r1, s2, r2, replicas, strategy, min_groups, group1_wins):
    b = binding(replicas, Placement(replica_scheduling=strategy))
    score1 = calc_group_score(_gen(s1, r1), b, min_groups)
    score2 = calc_group_score(_gen(s2, r2), b, min_groups)
    assert (score1 >= score2) == group1_wins


@pytest.mark.parametrize(
    "name,clusters,want",
    [
        ("get 0 score when clusters is empty", [], 0),
        ("get 0 score when all clusters can not meet the replica requirements", [("member1", 50, 5), ("member2", 50, 5)], 0),
    ],
)
def test_CalcGroupScoreForDuplicate(name, clusters, want):
    infos = [ClusterDetailInfo(n, s, cluster(n), r) for n, s, r in clusters]
    assert calc_group_score_for_duplicate(infos, binding(10)) == want


# ---- TestSelectBestClusters --------------------------------------------------------------------
def _infos():  # noqa: ANN202 - generateClusterInfo
    return [ClusterDetailInfo("member4", 60, topo("member4", "P2", "R2", "Z2"), 50),
            ClusterDetailInfo("member2", 40, topo("member2", "P1", "R1", "Z2"), 60),
            ClusterDetailInfo("member3", 30, topo("member3", "P2", "R1", "Z1"), 80),
            ClusterDetailInfo("member1", 20, topo("member1", "P1", "R1", "Z1"), 40)]


STATIC_M1 = ReplicaSchedulingStrategy("Divided", "Weighted", ClusterPreferences((StaticClusterWeight(ClusterAffinity(cluster_names=("member1",)), 2),)))
BEST = [
    ("select clusters by cluster score", None, (SC("cluster", "", 2, 1),), 100, ["member4", "member2"], None),
    ("select clusters by cluster score and ignore available resources when scheduling strategy is duplicated", DUP,
     (SC("cluster", "", 2, 1),), 120, ["member4", "member2"], None),
    ("select clusters by cluster score and ignore available resources when scheduling strategy is static weight", STATIC_M1,
     (SC("cluster", "", 2, 1),), 120, ["member4", "member2", "member3", "member1"], None),
    ("select clusters by cluster score and satisfy available resources", ReplicaSchedulingStrategy("Divided"),
     (SC("cluster", "", 2, 1),), 120, ["member4", "member3"], None),
    ("select clusters by cluster score and insufficient resources", ReplicaSchedulingStrategy("Divided"),
     (SC("cluster", "", 2, 1),), 200, None, "no enough resource when selecting 2 clusters"),
    ("select clusters by cluster score and exceeded the number of available clusters.", None, (SC("cluster", "", 7, 7),), 30, None,
     "the number of feasible clusters is less than spreadConstraint.MinGroups"),
]


@pytest.mark.parametrize("name,strategy,constraints,need,want,err", BEST, ids=[b[0] for b in BEST])
def test_SelectBestClusters(name, strategy, constraints, need, want, err):
    pl = Placement(spread_constraints=constraints, replica_scheduling=strategy)
    info = GroupClustersInfo(_infos())
    if err:
        with pytest.raises(SelectError, match=err):
            select_best_clusters(pl, info, need)
        return
    assert [c.name for c in select_best_clusters(pl, info, need)] == want


# ---- Test_selectBestClustersByRegion -------------------------------------------------------------
def _regions(spec):  # noqa: ANN001, ANN202
    out = {}
    for region, (score, members) in spec.items():
        clusters = [ClusterDetailInfo(n, s, topo(n, "P1", region, "Z1"), a) for n, s, a in members]
        out[region] = GroupInfo(region, clusters, score)
    return out


R1R2 = {"R1": (100, [("member1", 100, 40), ("member2", 80, 40)]),
        "R2": (80, [("member3", 80, 40), ("member4", 80, 40), ("member5", 60, 40)])}
FOUR = {"R1": (90, [("member1", 90, 40)]),
        "R2": (70, [("member2", 70, 40), ("member3", 60, 40), ("member4", 30, 40)]),
        "R3": (80, [("member5", 80, 40), ("member6", 50, 60)]),
        "R4": (50, [("member7", 50, 50), ("member8", 40, 50), ("member9", 10, 50), ("member10", 0, 50)])}
FIVE = {"R1": (70, [("member1", 70, 40)]),
        "R2": (40, [("member2", 40, 40), ("member3", 40, 40), ("member4", 40, 40)]),
        "R3": (60, [("member5", 60, 40), ("member6", 50, 60)]),
        "R4": (70, [("member7", 70, 100)]),
        "R5": (50, [("member8", 50, 50)])}
REGION = [
    ("select cluster from the region with the higher score", (1, 1), (2, 2), R1R2, ["member1", "member2"]),
    ("select cluster from the region with enough clusters", (1, 1), (3, 3), R1R2, ["member3", "member4", "member5"]),
    ("select cluster from the region with enough clusters and higher score", (2, 2), (5, 4), FOUR,
     ["member1", "member2", "member3", "member4"]),
    ("select cluster from more than `minGroups` regions with enough clusters and higher score", (3, 1), (8, 6), FIVE,
     ["member1", "member5", "member2", "member6", "member3", "member4"]),
    ("no enough region", (3, 3), (3, 3), R1R2, None),
    ("no enough clusters", (1, 1), (4, 4), {"R1": (100, [("member1", 100, 40), ("member2", 80, 60)]),
                                            "R2": (80, [("member3", 80, 40), ("member4", 80, 40), ("member5", 60, 40)])}, None),
    ("no more regions to replace", (1, 1), (4, 3), {"R1": (100, [("member1", 100, 40), ("member2", 80, 20)])}, None),
]


@pytest.mark.parametrize("name,region,clusters,regions,want", REGION, ids=[r[0] for r in REGION])
def test_selectBestClustersByRegion(name, region, clusters, regions, want):
    pl = Placement(spread_constraints=(SC("region", "", *region), SC("cluster", "", *clusters)))
    info = GroupClustersInfo(regions=_regions(regions))
    if want is None:
        with pytest.raises(SelectError):
            select_best_clusters(pl, info, 0)
        return
    assert [c.name for c in select_best_clusters(pl, info, 0)] == want


# ---- TestSelectGroups ---------------------------------------------------------------------------
SELECT_GROUPS = [
    ("empty groups", [], 2, 3, 1, []),
    ("no enough groups", [("R1", 1, 80)], 2, 3, 1, []),
    ("no enough value", [("R1", 1, 80), ("R2", 2, 30)], 2, 3, 4, []),
    ("select one group", [("R1", 1, 80)], 1, 3, 1, ["R1"]),
    ("prioritize one path", [("R1", 1, 80), ("R3", 1, 80), ("R2", 1, 60), ("R5", 2, 60), ("R4", 5, 50), ("R6", 3, 50)], 1, 3, 10,
     ["R5", "R4", "R6"]),
    ("select groups with less total number", [("R1", 1, 80), ("R2", 4, 40), ("R3", 1, 30), ("R4", 3, 30), ("R5", 3, 20), ("R6", 5, 10)],
     2, 6, 5, ["R1", "R2"]),
    ("select groups with the highest score", [("R1", 1, 60), ("R2", 1, 50), ("R3", 1, 40), ("R4", 3, 30), ("R5", 3, 20), ("R6", 3, 10)],
     1, 3, 6, ["R1", "R4", "R5"]),
    ("select groups that are chosen earlier", [("R1", 1, 60), ("R2", 2, 50), ("R3", 3, 40), ("R4", 4, 30)], 1, 2, 5, ["R1", "R4"]),
    ("select groups with greater value", [("R4", 1, 60), ("R3", 3, 50), ("R1", 3, 40), ("R2", 4, 30)], 1, 2, 5, ["R3", "R1"]),
]


@pytest.mark.parametrize("name,groups,lo,hi,target,want", SELECT_GROUPS, ids=[s[0] for s in SELECT_GROUPS])
def test_SelectGroups(name, groups, lo, hi, target, want):
    got = select_groups([_Group(*g) for g in groups], lo, hi, target)
    assert [g.name for g in got] == want


# ---- util_test.go -------------------------------------------------------------------------------
def test_IsSpreadConstraintExisted():
    assert is_spread_constraint_existed((SC("cluster"), SC("zone")), "cluster")
    assert not is_spread_constraint_existed((SC("region"), SC("zone")), "cluster")


@pytest.mark.parametrize(
    "name,infos,want,by_available",
    [
        ("different scores", [("b", 2, 0), ("a", 1, 0)], ["b", "a"], False),
        ("same score, default to sort by name", [("b", 1, 5), ("a", 1, 10)], ["a", "b"], False),
        ("same score, sort by availableReplicas", [("a", 1, 5), ("b", 1, 10)], ["b", "a"], True),
    ],
)
def test_sortClusters(name, infos, want, by_available):
    items = [ClusterDetailInfo(n, s, cluster(n), a) for n, s, a in infos]
    compare = [lambda i, j: i.available_replicas > j.available_replicas if i.available_replicas != j.available_replicas else None]
    sort_clusters(items, *(compare if by_available else []))
    assert [c.name for c in items] == want


# ---- TestSelectClusters (core/common_test.go) ---------------------------------------------------
def _select(scores, pl, observed=""):  # noqa: ANN001, ANN202
    from kubesched.multicluster.spread import group_clusters_with_score

    b = binding(0, pl, observed=observed)
    info = group_clusters_with_score([(cluster(n), s) for n, s in scores], b, lambda cs, _b: [2**31 - 1] * len(cs))
    return sorted(c.name for c in select_best_clusters(pl, info, b.replicas))


def test_SelectClusters():
    assert _select([("cluster1", 10), ("cluster2", 20)], Placement()) == ["cluster1", "cluster2"]
    top1 = Placement(ClusterAffinity(cluster_names=("cluster1", "cluster2", "cluster3")), spread_constraints=(SC("cluster", "", 1, 0),))
    assert _select([("cluster1", 10), ("cluster2", 20), ("cluster3", 15)], top1) == ["cluster2"]
    affinity = Placement(ClusterAffinity(cluster_names=("cluster1", "cluster3")))
    assert _select([("cluster1", 10), ("cluster3", 15)], affinity) == ["cluster1", "cluster3"]
    overflow = Placement(
        cluster_affinities=(ClusterAffinityTerm("affinity1", ClusterAffinity(cluster_names=("cluster1",)),
                                                (OverflowClusterAffinity("overflow", ClusterAffinity(cluster_names=("cluster2",))),)),),
        spread_constraints=(SC("cluster", "", 1, 1),), replica_scheduling=DYN,
    )
    # the primary group sorts first whatever the score: cluster1 before the higher-scored overflow cluster2
    assert _select([("cluster1", 10), ("cluster2", 20)], overflow, "affinity1") == ["cluster1"]
