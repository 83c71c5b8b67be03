"""Cluster selection under spread constraints (Karmada's ``core/spreadconstraint``).

Clusters are grouped by provider, region and zone with their available replicas and scores; the
best clusters are then chosen by cluster or by region constraints: the region choice is a search
over region combinations (``select_groups``), the cluster choice swaps low-scored clusters for
ones with more available replicas until the replicas fit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from kubesched.multicluster.api import (
    DIVIDED,
    DUPLICATED,
    WEIGHTED,
    Binding,
    Cluster,
    Placement,
    SpreadConstraint,
)
from kubesched.multicluster.selectors import cluster_matches

INVALID_CLUSTER_ID = -1
INVALID_REPLICAS = -1
WEIGHT_UNIT = 1000  # group scores weigh available replicas first, then the mean cluster score


@dataclass
class ClusterDetailInfo:
    name: str
    score: int
    cluster: Cluster
    available_replicas: int = 0  # allocatable + already assigned replicas
    allocatable_replicas: int = 0
    overflow_order: int = 0  # 0: the primary affinity; k: the k-th overflow affinity

    def __repr__(self) -> str:
        return f"{self.name}(score={self.score}, availableReplicas={self.available_replicas}, overflowOrder={self.overflow_order})"


@dataclass
class GroupInfo:
    """A provider, region or zone: its clusters (best first) and comprehensive score."""

    name: str
    clusters: list[ClusterDetailInfo] = field(default_factory=list)
    score: int = 0
    available_replicas: int = 0
    zones: set[str] = field(default_factory=set)
    regions: set[str] = field(default_factory=set)


@dataclass
class GroupClustersInfo:
    clusters: list[ClusterDetailInfo] = field(default_factory=list)
    providers: dict[str, GroupInfo] = field(default_factory=dict)
    regions: dict[str, GroupInfo] = field(default_factory=dict)
    zones: dict[str, GroupInfo] = field(default_factory=dict)


# (clusters, binding) -> available replicas per cluster, in the same order
AvailableReplicas = Callable[[list[Cluster], Binding], list[int]]


def sort_clusters(infos: list[ClusterDetailInfo], *compare: Callable[[ClusterDetailInfo, ClusterDetailInfo], bool | None]) -> None:
    """sortClusters: overflow order ascending, score descending, the extra comparisons, then name."""
    import functools

    def cmp(a: ClusterDetailInfo, b: ClusterDetailInfo) -> int:
        if a.overflow_order != b.overflow_order:
            return -1 if a.overflow_order < b.overflow_order else 1
        if a.score != b.score:
            return -1 if a.score > b.score else 1
        for c in compare:
            r = c(a, b)
            if r is not None:
                return -1 if r else 1
        return -1 if a.name < b.name else (1 if a.name > b.name else 0)

    infos.sort(key=functools.cmp_to_key(cmp))


def _more_available(a: ClusterDetailInfo, b: ClusterDetailInfo) -> bool | None:
    return a.available_replicas > b.available_replicas if a.available_replicas != b.available_replicas else None


def is_spread_constraint_existed(constraints: tuple[SpreadConstraint, ...], by_field: str) -> bool:
    return any(sc.spread_by_field == by_field for sc in constraints)


def should_ignore_spread_constraint(placement: Placement) -> bool:
    """Static weights ignore spread constraints."""
    s = placement.replica_scheduling
    if s is None or s.replica_scheduling_type != DIVIDED or s.replica_division_preference != WEIGHTED:
        return False
    wp = s.weight_preference
    return wp is None or (bool(wp.static_weight_list) and wp.dynamic_weight == "")


def should_ignore_available_resource(placement: Placement) -> bool:
    s = placement.replica_scheduling
    return s is None or s.replica_scheduling_type == DUPLICATED


def is_topology_ignored(placement: Placement) -> bool:
    sc = placement.spread_constraints
    if not sc or (len(sc) == 1 and sc[0].spread_by_field == "cluster"):
        return True
    return should_ignore_spread_constraint(placement)


def cluster_overflow_order(cluster: Cluster, binding: Binding) -> int:
    pl = binding.placement
    if pl.cluster_affinity is not None or not pl.cluster_affinities:
        return 0
    term = next((t for t in pl.cluster_affinities if t.affinity_name == binding.observed_affinity_name), None)
    if term is not None:
        if cluster_matches(cluster, term.affinity):
            return 0
        for i, o in enumerate(term.overflow or ()):
            if cluster_matches(cluster, o.affinity):
                return i + 1
    return 1000  # filtered out by ClusterAffinity before; sorts last


# ---- grouping ----------------------------------------------------------------------------------
def group_clusters_with_score(
    scores: list[tuple[Cluster, int]], binding: Binding, available: AvailableReplicas
) -> GroupClustersInfo:
    info = GroupClustersInfo()
    _generate_clusters_info(info, scores, binding, available)
    if is_topology_ignored(binding.placement):
        return info
    constraints = binding.placement.spread_constraints
    for by_field, groups in (("zone", info.zones), ("region", info.regions), ("provider", info.providers)):
        if not is_spread_constraint_existed(constraints, by_field):
            continue
        for c in info.clusters:
            cl = c.cluster
            keys = cl.zones if by_field == "zone" else ((cl.region,) if by_field == "region" else (cl.provider,))
            for key in keys:
                if not key:
                    continue
                g = groups.setdefault(key, GroupInfo(key))
                if by_field != "zone" and cl.zone:
                    g.zones.add(cl.zone)
                if by_field == "provider" and cl.region:
                    g.regions.add(cl.region)
                g.clusters.append(c)
                g.available_replicas += c.available_replicas
        min_groups = 0
        for sc in constraints:
            if sc.spread_by_field == by_field:
                min_groups = sc.min_groups
        for g in groups.values():
            g.score = calc_group_score(g.clusters, binding, min_groups)
    return info


def _generate_clusters_info(
    info: GroupClustersInfo, scores: list[tuple[Cluster, int]], binding: Binding, available: AvailableReplicas
) -> None:
    for cluster, score in scores:
        info.clusters.append(ClusterDetailInfo(cluster.name, score, cluster, overflow_order=cluster_overflow_order(cluster, binding)))
    replicas = available([c for c, _ in scores], binding)
    for c, r in zip(info.clusters, replicas, strict=True):
        c.available_replicas = r + binding.assigned_replicas_for(c.name)
        c.allocatable_replicas = r
    sort_clusters(info.clusters, _more_available)


def calc_group_score_for_duplicate(clusters: list[ClusterDetailInfo], binding: Binding) -> int:
    target = binding.replicas
    valid = [c for c in clusters if c.available_replicas >= target]
    if not valid:
        return 0
    return len(valid) * WEIGHT_UNIT + _go_div(sum(c.score for c in valid), len(valid))


def calc_group_score(clusters: list[ClusterDetailInfo], binding: Binding, min_groups: int) -> int:
    placement = binding.placement
    if placement.replica_scheduling_type() == DUPLICATED:
        return calc_group_score_for_duplicate(clusters, binding)
    # admission defaults minGroups to 1, so a group constraint never divides by zero here
    target = math.ceil(binding.replicas / max(min_groups, 1))
    cluster_min_groups = 0
    for sc in placement.spread_constraints:
        if sc.spread_by_field == "cluster":
            cluster_min_groups = sc.min_groups
    cluster_min_groups = max(cluster_min_groups, min_groups)
    total_available = total_score = valid = 0
    for c in clusters:
        total_available += c.available_replicas
        total_score += c.score
        valid += 1
        if valid >= cluster_min_groups and total_available >= target:
            break
    if total_available < target:
        return total_available * WEIGHT_UNIT + _go_div(total_score, len(clusters))
    return target * WEIGHT_UNIT + _go_div(total_score, valid)


def _go_div(a: int, b: int) -> int:
    """Go's integer division truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


# ---- selecting groups (regions) ----------------------------------------------------------------
@dataclass
class _Group:
    name: str
    value: int  # clusters in the group
    weight: int  # the group's score


@dataclass
class _Path:
    id: int = 0
    groups: list[_Group] = field(default_factory=list)
    weight: int = 0
    value: int = 0

    def next(self) -> _Path:
        self.id += 1
        out = _Path(self.id, list(self.groups))
        out.weight = sum(g.weight for g in out.groups)
        out.value = sum(g.value for g in out.groups)
        out.groups.sort(key=lambda g: (-g.weight, g.name))
        return out

    def match_sub_path(self, sub: _Path) -> bool:
        if len(sub.groups) >= len(self.groups):
            return False
        return all(self.groups[i].name == g.name for i, g in enumerate(sub.groups))


def select_groups(groups: list[_Group], min_constraint: int, max_constraint: int, target: int) -> list[_Group]:
    """The best combination of groups: enough clusters (``target``) within [min, max] groups."""
    if not groups:
        return []
    paths = _find_feasible_paths(groups, min_constraint, max_constraint, target)
    if not paths:
        return []
    return _prioritize_paths(paths).groups


def _find_feasible_paths(groups: list[_Group], lo: int, hi: int, target: int) -> list[_Path]:
    groups.sort(key=lambda g: (g.value, -g.weight, g.name))
    root = _Path()
    paths: list[_Path] = []

    def dfs(total: int, begin: int) -> None:
        if total >= target and lo <= len(root.groups) <= hi:
            paths.append(root.next())
            return
        if len(root.groups) >= hi:
            return
        for i in range(begin, len(groups)):
            total += groups[i].value
            root.groups.append(groups[i])
            dfs(total, i + 1)
            if len(groups) == lo:  # every group is needed: no backtracking
                break
            total -= groups[i].value
            root.groups.pop()

    dfs(0, 0)
    return paths


def _prioritize_paths(paths: list[_Path]) -> _Path:
    if len(paths) == 1:
        return paths[0]
    paths.sort(key=lambda p: (-p.weight, -p.value, p.id))
    final = paths[0]
    for p in paths[1:]:
        if final.match_sub_path(p):
            final = p
    return final


# ---- selecting clusters ------------------------------------------------------------------------
class SelectError(Exception):
    """Spread constraints cannot be met (Karmada's plain error: not retried as unschedulable)."""


def select_best_clusters(placement: Placement, info: GroupClustersInfo, need_replicas: int) -> list[ClusterDetailInfo]:
    if not placement.spread_constraints or should_ignore_spread_constraint(placement):
        return info.clusters
    if should_ignore_available_resource(placement):
        need_replicas = INVALID_REPLICAS
    by_field = {sc.spread_by_field: sc for sc in placement.spread_constraints}
    if "region" in by_field:
        return _select_by_region(by_field, info)
    if "cluster" in by_field:
        return _select_by_cluster(by_field["cluster"], info, need_replicas)
    raise SelectError("just support cluster and region spread constraint")


def _select_by_cluster(sc: SpreadConstraint, info: GroupClustersInfo, need_replicas: int) -> list[ClusterDetailInfo]:
    total = len(info.clusters)
    if total < sc.min_groups:
        raise SelectError("the number of feasible clusters is less than spreadConstraint.MinGroups")
    need = min(total, sc.max_groups)
    if need_replicas == INVALID_REPLICAS:
        return info.clusters[:need]
    selected = select_clusters_by_available_resource(info.clusters, need, need_replicas)
    if not selected:
        raise SelectError(f"no enough resource when selecting {need} clusters")
    return selected


def select_clusters_by_available_resource(
    candidates: list[ClusterDetailInfo], need_count: int, need_replicas: int
) -> list[ClusterDetailInfo]:
    """Swap the lowest-scored chosen clusters for the ones with the most available replicas."""
    ret, rest = candidates[:need_count], candidates[need_count:]
    k = len(ret) - 1
    while not _enough(ret, need_replicas) and k >= 0:
        j = get_cluster_with_max_available_resource(rest, ret[k].available_replicas)
        if j == INVALID_CLUSTER_ID:
            k -= 1
            continue
        ret[k], rest[j] = rest[j], ret[k]
        k -= 1
    return ret if _enough(ret, need_replicas) else []


def _enough(clusters: list[ClusterDetailInfo], need: int) -> bool:
    return sum(c.available_replicas for c in clusters) >= need


def get_cluster_with_max_available_resource(candidates: list[ClusterDetailInfo], origin: int) -> int:
    best, found = origin, INVALID_CLUSTER_ID
    for i, c in enumerate(candidates):
        if best < c.available_replicas:
            found, best = i, c.available_replicas
    return found


def _select_by_region(by_field: dict[str, SpreadConstraint], info: GroupClustersInfo) -> list[ClusterDetailInfo]:
    region_sc = by_field["region"]
    cluster_sc = by_field.get("cluster", SpreadConstraint())
    if len(info.regions) < region_sc.min_groups:
        raise SelectError("the number of feasible region is less than spreadConstraint.MinGroups")
    regions = select_regions(info.regions, region_sc, cluster_sc)
    if not regions:
        raise SelectError("the number of clusters is less than the cluster spreadConstraint.MinGroups")
    selected: list[ClusterDetailInfo] = []
    candidates: list[ClusterDetailInfo] = []
    for r in regions:
        selected.append(r.clusters[0])
        candidates.extend(r.clusters[1:])
    need = min(len(candidates) + len(selected), cluster_sc.max_groups)
    rest = need - len(selected)
    if rest > 0:
        sort_clusters(candidates, _more_available)
        selected.extend(candidates[:rest])
    return selected


def select_regions(regions: dict[str, GroupInfo], region_sc: SpreadConstraint, cluster_sc: SpreadConstraint) -> list[GroupInfo]:
    groups = [_Group(r.name, len(r.clusters), r.score) for r in regions.values()]
    chosen = select_groups(groups, region_sc.min_groups, region_sc.max_groups, cluster_sc.min_groups)
    return [regions[g.name] for g in chosen]
