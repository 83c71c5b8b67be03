"""Builders for the ported Karmada tables: objects written with Karmada's own field names."""

from __future__ import annotations

from typing import Any

from kubesched.api.taints import Taint
from kubesched.multicluster.api import (
    Binding,
    Cluster,
    Placement,
    ResourceSummary,
    TargetCluster,
    parse_placement,
)
from kubesched.multicluster.spread import ClusterDetailInfo

MEMBER1, MEMBER2, MEMBER3, MEMBER4 = "member1", "member2", "member3", "member4"


def placement(d: dict[str, Any] | None = None) -> Placement:
    return parse_placement(d or {}, "placement")


def cluster(name: str, *, labels=None, provider="", region="", zone="", zones=(), taints=(), pods=None) -> Cluster:  # noqa: ANN001
    c = Cluster(name, dict(labels or {}), provider, region, zone, tuple(zones), tuple(Taint(*t) for t in taints))
    if pods is not None:  # NewClusterWithResource(name, {pods: N}, empty, empty)
        c.resource_summary = ResourceSummary({"pods": pods}, {}, {})
    return c


def binding(replicas: int = 0, pl: dict | Placement | None = None, *, clusters=(), uid: str = "", observed: str = "",
            requirements: bool = False, evicting=()) -> Binding:  # noqa: ANN001
    p = pl if isinstance(pl, Placement) else placement(pl)
    return Binding("apps/v1", "Deployment", "default", "demo", uid, replicas, None, p,
                   tuple(TargetCluster(n, r) for n, r in clusters), frozenset(evicting), observed, requirements=requirements)


def detail(name: str, score: int = 0, available: int = 0, allocatable: int = 0, overflow: int = 0, c: Cluster | None = None) -> ClusterDetailInfo:
    return ClusterDetailInfo(name, score, c or cluster(name), available, allocatable, overflow)


def tc(pairs) -> list[TargetCluster]:  # noqa: ANN001
    return [TargetCluster(n, r) for n, r in pairs]


def same(a, b) -> bool:  # noqa: ANN001
    """test/helper.IsScheduleResultEqual: the same (name, replicas) pairs, in any order."""
    return len(a) == len(b) and all(x in list(b) for x in a)


DYNAMIC = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
           "weightPreference": {"dynamicWeight": "AvailableReplicas"}}
AGGREGATED = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}
DUPLICATED = {"replicaSchedulingType": "Duplicated"}
