"""Ported from Karmada v1.18 pkg/scheduler/framework: plugins/*/..._test.go (Filter, Score) and
types_test.go (TestFitError_Error)."""

from __future__ import annotations

import pytest

from kubesched.multicluster.api import Cluster
from kubesched.multicluster.framework import (
    MAX_CLUSTER_SCORE,
    MIN_CLUSTER_SCORE,
    APIEnablement,
    ClusterAffinityPlugin,
    ClusterCode,
    ClusterEviction,
    ClusterLocality,
    FitError,
    Result,
    SpreadConstraintPlugin,
    TaintToleration,
)
from tests.multicluster.karmada import binding, cluster


def _api_cluster(name: str = "cluster1") -> Cluster:
    c = cluster(name)
    c.api_enablements = {"apps/v1": frozenset({"Deployment"})}
    return c


@pytest.mark.parametrize(
    "name,api_version,kind,previous,code",
    [
        ("API is enabled in cluster", "apps/v1", "Deployment", (), ClusterCode.Success),
        ("API is not enabled in cluster", "custom.io/v1", "CustomResource", (), ClusterCode.Unschedulable),
        ("cluster in target list with API not enabled", "custom.io/v1", "CustomResource", [("cluster1", 0)], ClusterCode.Success),
    ],
)
def test_APIEnablement_Filter(name, api_version, kind, previous, code):
    from dataclasses import replace

    b = replace(binding(0, clusters=previous), api_version=api_version, kind=kind)
    res = APIEnablement().filter(b, _api_cluster())
    assert res.code == code
    if code != ClusterCode.Success:
        assert res.reasons == ("cluster(s) did not have the API resource",)


def test_APIEnablement_unknown_when_the_list_is_partial():
    # Cluster.APIEnablement: a kind missing from an incomplete list is APIUnknown, which also fails
    c = _api_cluster()
    assert c.api_enablement("custom.io/v1", "X") == "APIUnknown"
    c.complete_api_enablements = True
    assert c.api_enablement("custom.io/v1", "X") == "APIDisabled"


@pytest.mark.parametrize(
    "name,pl,observed,code",
    [
        ("matching affinity", {"clusterAffinity": {"clusterNames": ["cluster1"]}}, "", ClusterCode.Success),
        ("non-matching affinity", {"clusterAffinity": {"clusterNames": ["cluster2"]}}, "", ClusterCode.Unschedulable),
        ("matching affinity from ClusterAffinities", {"clusterAffinities": [{"affinityName": "affinity1", "clusterNames": ["cluster1"]}]},
         "affinity1", ClusterCode.Success),
        ("no affinity specified", {}, "", ClusterCode.Success),
    ],
)
def test_ClusterAffinity_Filter(name, pl, observed, code):
    res = ClusterAffinityPlugin().filter(binding(0, pl, observed=observed), cluster("cluster1"))
    assert res.code == code
    assert (res.as_error() != "") == (code != ClusterCode.Success)


def test_ClusterAffinity_Score():
    assert ClusterAffinityPlugin().score(binding(), cluster("cluster1")) == MIN_CLUSTER_SCORE


@pytest.mark.parametrize(
    "name,evicting,code",
    [
        ("cluster is in graceful eviction tasks", ("cluster1",), ClusterCode.Unschedulable),
        ("cluster is not in graceful eviction tasks", ("cluster2",), ClusterCode.Success),
        ("no graceful eviction tasks", (), ClusterCode.Success),
    ],
)
def test_ClusterEviction_Filter(name, evicting, code):
    res = ClusterEviction().filter(binding(evicting=evicting), cluster("cluster1"))
    assert res.code == code
    if code != ClusterCode.Success:
        assert res.reasons == ("cluster(s) is in the process of eviction",)


@pytest.mark.parametrize(
    "name,previous,want",
    [
        ("no clusters in spec", (), MIN_CLUSTER_SCORE),
        ("cluster in spec", [("cluster1", 0), ("cluster2", 0)], MAX_CLUSTER_SCORE),
        ("cluster not in spec", [("cluster2", 0), ("cluster3", 0)], MIN_CLUSTER_SCORE),
    ],
)
def test_ClusterLocality_Score(name, previous, want):
    assert ClusterLocality().score(binding(clusters=previous), cluster("cluster1")) == want


@pytest.mark.parametrize(
    "name,field,c,reason",
    [
        ("no spread constraints", None, cluster("c"), None),
        ("spread by provider - provider present", "provider", cluster("c", provider="aws"), None),
        ("spread by provider - provider missing", "provider", cluster("c"), "cluster(s) did not have provider property"),
        ("spread by region - region present", "region", cluster("c", region="us-west-2"), None),
        ("spread by region - region missing", "region", cluster("c"), "cluster(s) did not have region property"),
        ("spread by zone - zones present", "zone", cluster("c", zones=("us-west-2a",)), None),
        ("spread by zone - zones missing", "zone", cluster("c"), "cluster(s) did not have zones property"),
    ],
)
def test_SpreadConstraint_Filter(name, field, c, reason):
    from kubesched.multicluster.api import Placement, SpreadConstraint

    pl = Placement(spread_constraints=(SpreadConstraint(field),) if field else ())
    res = SpreadConstraintPlugin().filter(binding(0, pl), c)
    assert res == (Result() if reason is None else Result(ClusterCode.Unschedulable, (reason,)))


@pytest.mark.parametrize(
    "name,previous,tolerations,taints,reason",
    [
        ("cluster already in target clusters", [("cluster1", 0)], [], [("key1", "value1", "NoSchedule")], None),
        ("no taints", (), [], [], None),
        ("tolerated taint", (), [{"key": "key1", "operator": "Equal", "value": "value1", "effect": "NoSchedule"}],
         [("key1", "value1", "NoSchedule")], None),
        ("untolerated taint", (), [], [("key1", "value1", "NoSchedule")], "cluster(s) had untolerated taint {key1=value1:NoSchedule}"),
    ],
)
def test_TaintToleration_Filter(name, previous, tolerations, taints, reason):
    b = binding(0, {"clusterTolerations": tolerations}, clusters=previous)
    res = TaintToleration().filter(b, cluster("cluster1", taints=taints))
    assert res == (Result() if reason is None else Result(ClusterCode.Unschedulable, (reason,)))


def test_TaintToleration_ignores_PreferNoSchedule():
    assert TaintToleration().filter(binding(), cluster("c", taints=[("k", "", "PreferNoSchedule")])).ok


def test_FitError_Error():
    assert str(FitError(0, {})) == "0/0 clusters are available: no cluster exists."
    err = FitError(3, {"cluster1": Result(ClusterCode.Unschedulable, ("insufficient CPU", "insufficient memory")),
                       "cluster2": Result(ClusterCode.Unschedulable, ("insufficient CPU",)),
                       "cluster3": Result(ClusterCode.Unschedulable, ("taint mismatch",))})
    assert str(err) == "0/3 clusters are available: 1 insufficient memory, 1 taint mismatch, 2 insufficient CPU."
