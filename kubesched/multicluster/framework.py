"""Karmada's scheduling framework at the cluster level: Result, FitError, filter and score plugins.

Same contract as ``pkg/scheduler/framework``: a filter plugin returns a Result per cluster (a
cluster stops at its first failing plugin), a score plugin returns an integer per cluster with an
optional NormalizeScore, and the cluster's score is the sum over plugins. Karmada keeps its plugins
in a Go map, so the order filters run in varies between its runs; kubesched runs them in the order
of :data:`DEFAULT_PLUGINS`, which only matters for a cluster that two plugins reject.
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kubesched.api.taints import NO_EXECUTE, NO_SCHEDULE, first_untolerated
from kubesched.multicluster.api import Binding, Cluster, ClusterAffinity
from kubesched.multicluster.selectors import cluster_matches

if TYPE_CHECKING:
    from collections.abc import Sequence

MIN_CLUSTER_SCORE = 0
MAX_CLUSTER_SCORE = 100


class ClusterCode(enum.IntEnum):
    Success = 0
    Unschedulable = 1
    Error = 2


@dataclass(frozen=True)
class Result:
    code: ClusterCode = ClusterCode.Success
    reasons: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.code == ClusterCode.Success

    def as_error(self) -> str:
        return ", ".join(self.reasons)


SUCCESS = Result()


def unschedulable(reason: str) -> Result:
    return Result(ClusterCode.Unschedulable, (reason,))


class UnschedulableError(Exception):
    """framework.UnschedulableError: the clusters cannot hold the replicas (retried on change)."""


class SchedulerError(Exception):
    """Any other failure of a scheduling attempt (Karmada's plain errors)."""


@dataclass
class FitError(Exception):
    """No cluster passed the filters: ``0/N clusters are available: ...``."""

    num_all_clusters: int
    cluster_results: dict[str, Result] = field(default_factory=dict)

    def __str__(self) -> str:
        if self.num_all_clusters == 0 or not self.cluster_results:
            return f"0/{self.num_all_clusters} clusters are available: no cluster exists."
        counts: Counter[str] = Counter()
        for res in self.cluster_results.values():
            for reason in res.reasons:
                counts[reason] += 1
        parts = sorted(f"{n} {reason}" for reason, n in counts.items())
        return f"0/{self.num_all_clusters} clusters are available: {', '.join(parts)}."


# ---- plugin interfaces -------------------------------------------------------------------------
class ClusterPlugin:
    """A cluster-level plugin. Override ``filter`` and/or ``score`` (and ``normalize``)."""

    name = ""
    filters = False
    scores = False

    def filter(self, binding: Binding, cluster: Cluster) -> Result:
        return SUCCESS

    def score(self, binding: Binding, cluster: Cluster) -> int:
        return MIN_CLUSTER_SCORE

    def normalize(self, binding: Binding, scores: list[int]) -> list[int]:
        return scores


def affinities_in_effect(binding: Binding) -> list[ClusterAffinity] | None:
    """The affinities ClusterAffinity filters by: clusterAffinity, or the observed affinity term
    and, for workloads, its overflow affinities. None: no constraint."""
    pl = binding.placement
    if pl.cluster_affinity is not None:
        return [pl.cluster_affinity]
    for term in pl.cluster_affinities or ():
        if term.affinity_name != binding.observed_affinity_name:
            continue
        out = [term.affinity]
        if binding.is_workload:
            out += [o.affinity for o in term.overflow or ()]
        return out
    return None


class APIEnablement(ClusterPlugin):
    name = "APIEnablement"
    filters = True

    def filter(self, binding: Binding, cluster: Cluster) -> Result:
        if binding.target_contains(cluster.name):
            return SUCCESS
        if cluster.api_enablement(binding.api_version, binding.kind) == "APIEnabled":
            return SUCCESS
        return unschedulable("cluster(s) did not have the API resource")


class TaintToleration(ClusterPlugin):
    name = "TaintToleration"
    filters = True

    def filter(self, binding: Binding, cluster: Cluster) -> Result:
        if binding.target_contains(cluster.name):
            return SUCCESS
        taint = first_untolerated(cluster.taints, binding.placement.cluster_tolerations, (NO_SCHEDULE, NO_EXECUTE))
        if taint is None:
            return SUCCESS
        text = f"{taint.key}={taint.value}:{taint.effect}" if taint.value else f"{taint.key}:{taint.effect}"
        return unschedulable(f"cluster(s) had untolerated taint {{{text}}}")


class ClusterAffinityPlugin(ClusterPlugin):
    name = "ClusterAffinity"
    filters = True
    scores = True  # scores every cluster 0, as upstream

    def filter(self, binding: Binding, cluster: Cluster) -> Result:
        affinities = affinities_in_effect(binding)
        if affinities is None or any(cluster_matches(cluster, a) for a in affinities):
            return SUCCESS
        return unschedulable("cluster(s) did not match the placement cluster affinity constraint")


class SpreadConstraintPlugin(ClusterPlugin):
    name = "SpreadConstraint"
    filters = True

    def filter(self, binding: Binding, cluster: Cluster) -> Result:
        for sc in binding.placement.spread_constraints:
            if sc.spread_by_field == "provider" and not cluster.provider:
                return unschedulable("cluster(s) did not have provider property")
            if sc.spread_by_field == "region" and not cluster.region:
                return unschedulable("cluster(s) did not have region property")
            if sc.spread_by_field == "zone" and not cluster.zones:
                return unschedulable("cluster(s) did not have zones property")
        return SUCCESS


class ClusterEviction(ClusterPlugin):
    name = "ClusterEviction"
    filters = True

    def filter(self, binding: Binding, cluster: Cluster) -> Result:
        if cluster.name in binding.eviction_clusters:
            return unschedulable("cluster(s) is in the process of eviction")
        return SUCCESS


class ClusterLocality(ClusterPlugin):
    name = "ClusterLocality"
    scores = True

    def score(self, binding: Binding, cluster: Cluster) -> int:
        if binding.clusters and binding.target_contains(cluster.name):
            return MAX_CLUSTER_SCORE
        return MIN_CLUSTER_SCORE


IN_TREE: dict[str, type[ClusterPlugin]] = {
    p.name: p
    for p in (APIEnablement, TaintToleration, ClusterAffinityPlugin, SpreadConstraintPlugin, ClusterLocality, ClusterEviction)
}
DEFAULT_PLUGINS = tuple(IN_TREE)


@dataclass
class ClusterVerdict:
    """One cluster's filter and score results (what explain shows)."""

    cluster: Cluster
    filters: list[tuple[str, Result]] = field(default_factory=list)
    scores: list[tuple[str, int, int]] = field(default_factory=list)  # (plugin, raw, normalized)
    total: int | None = None

    @property
    def feasible(self) -> bool:
        return all(r.ok for _, r in self.filters)

    @property
    def first_failure(self) -> Result | None:
        return next((r for _, r in self.filters if not r.ok), None)


class ClusterFramework:
    """The plugins a scheduler runs, in order, with their score weights (1 when unset, as upstream)."""

    def __init__(self, plugins: Sequence[ClusterPlugin], weights: dict[str, int] | None = None) -> None:
        self.plugins = list(plugins)
        self.filter_plugins = [p for p in self.plugins if p.filters]
        self.score_plugins = [p for p in self.plugins if p.scores]
        self.weights = dict(weights or {})

    def run_filters(self, binding: Binding, cluster: Cluster, *, run_all: bool = False) -> ClusterVerdict:
        v = ClusterVerdict(cluster)
        for p in self.filter_plugins:
            res = p.filter(binding, cluster)
            v.filters.append((p.name, res))
            if not res.ok and not run_all:
                break
        return v

    def run_scores(self, binding: Binding, verdicts: list[ClusterVerdict]) -> None:
        """RunScorePlugins over the feasible clusters: raw, normalized, weighted; totals summed."""
        for v in verdicts:
            v.total = 0
        for p in self.score_plugins:
            raw = [p.score(binding, v.cluster) for v in verdicts]
            norm = p.normalize(binding, list(raw))
            w = self.weights.get(p.name, 1)
            for v, r, s in zip(verdicts, raw, norm, strict=True):
                v.scores.append((p.name, r, s))
                v.total = (v.total or 0) + s * w
