"""Karmada's generic scheduler: filter, score, select, assign; ordered affinity terms tried in turn.

``schedule(binding)`` follows ``genericScheduler.Schedule`` for one affinity and
``scheduleResourceBindingWithClusterAffinities`` across ``clusterAffinities``: the terms are tried
from the observed one on; the first that schedules wins; when all fail the first error is the
result. Every attempt keeps what explain shows: each cluster's filter verdicts, scores and
available replicas.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from kubesched.multicluster.api import Binding, Cluster, TargetCluster
from kubesched.multicluster.assign import assign_replicas, attach_zero_replicas_cluster
from kubesched.multicluster.framework import (
    ClusterFramework,
    ClusterVerdict,
    FitError,
    SchedulerError,
    UnschedulableError,
)
from kubesched.multicluster.spread import SelectError, group_clusters_with_score, select_best_clusters

if TYPE_CHECKING:
    from kubesched.multicluster.estimate import Assumed, Estimators

SUCCESS, NO_CLUSTER_FIT, UNSCHEDULABLE, SCHEDULER_ERROR = "Success", "NoClusterFit", "Unschedulable", "SchedulerError"
SUCCESS_MESSAGE = "Binding has been scheduled successfully."


@dataclass
class Attempt:
    """One pass of the pipeline under one affinity term ("" when the policy has none)."""

    affinity_name: str
    verdicts: list[ClusterVerdict] = field(default_factory=list)
    available: dict[str, int] = field(default_factory=dict)  # feasible cluster -> available replicas
    estimates: dict[str, dict[str, int]] = field(default_factory=dict)  # cluster -> estimator -> replicas
    selected: list[str] = field(default_factory=list)
    clusters: list[TargetCluster] | None = None
    error: str | None = None
    reason: str = SUCCESS


@dataclass
class BindingDecision:
    binding: Binding
    attempts: list[Attempt]
    clusters: list[TargetCluster]
    reason: str  # the Scheduled condition's reason: Success, NoClusterFit, Unschedulable, SchedulerError
    message: str  # the condition's message
    affinity_name: str = ""

    @property
    def scheduled(self) -> bool:
        return self.reason == SUCCESS


class FederationScheduler:
    def __init__(self, framework: ClusterFramework, estimators: Estimators, *, empty_workload_propagation: bool = False) -> None:
        self.framework = framework
        self.estimators = estimators
        # Karmada's --enable-empty-workload-propagation: selected clusters with 0 replicas stay listed
        self.empty_workload_propagation = empty_workload_propagation

    # ---- one affinity term -------------------------------------------------------------------
    def schedule_once(
        self, binding: Binding, clusters: list[Cluster], *, explain: bool = False, assumed: Assumed | None = None
    ) -> Attempt:
        at = Attempt(binding.observed_affinity_name)
        feasible: list[ClusterVerdict] = []
        failed: dict[str, object] = {}
        for c in clusters:
            if c.deleting:  # a deleting cluster is skipped, not reported
                continue
            v = self.framework.run_filters(binding, c, run_all=explain)
            at.verdicts.append(v)
            if v.feasible:
                feasible.append(v)
            else:
                failed[c.name] = v.first_failure
        if not feasible:
            err = FitError(len(clusters), failed)  # type: ignore[arg-type]
            at.error, at.reason = str(err), NO_CLUSTER_FIT
            return at
        self.framework.run_scores(binding, feasible)
        try:
            info = group_clusters_with_score([(v.cluster, v.total or 0) for v in feasible], binding, self._available(at, assumed))
        except SchedulerError as e:  # pragma: no cover - estimators do not raise
            at.error, at.reason = str(e), SCHEDULER_ERROR
            return at
        try:
            selected = select_best_clusters(binding.placement, info, binding.replicas)
        except SelectError as e:
            at.error, at.reason = f"failed to select clusters: {e}", SCHEDULER_ERROR
            return at
        at.selected = [c.name for c in selected]
        try:
            at.clusters = assign_replicas(selected, binding)
            if self.empty_workload_propagation:
                at.clusters = attach_zero_replicas_cluster(selected, at.clusters)
        except UnschedulableError as e:
            at.error, at.reason = f"failed to assign replicas: {e}", UNSCHEDULABLE
        except SchedulerError as e:
            at.error, at.reason = f"failed to assign replicas: {e}", SCHEDULER_ERROR
        return at

    def _available(self, at: Attempt, assumed: Assumed | None = None):  # noqa: ANN202 - the AvailableReplicas callable
        def available(clusters: list[Cluster], binding: Binding) -> list[int]:
            per_estimator, merged = self.estimators.available(clusters, binding, assumed)
            for i, c in enumerate(clusters):
                at.available[c.name] = merged[i]
                at.estimates[c.name] = {name: vals[i] for name, vals in per_estimator.items()}
            return merged

        return available

    # ---- the whole binding -------------------------------------------------------------------
    def schedule(
        self, binding: Binding, clusters: list[Cluster], *, explain: bool = False, assumed: Assumed | None = None
    ) -> BindingDecision:
        """``assumed``: per cluster, the in-flight workloads the estimators deduct first."""
        terms = binding.placement.cluster_affinities
        if terms is None:
            at = self.schedule_once(binding, clusters, explain=explain, assumed=assumed)
            return self._decide(binding, [at], at)
        start = next((i for i, t in enumerate(terms) if t.affinity_name == binding.observed_affinity_name), 0)
        attempts: list[Attempt] = []
        for term in terms[start:]:
            at = self.schedule_once(
                replace(binding, observed_affinity_name=term.affinity_name), clusters, explain=explain, assumed=assumed
            )
            attempts.append(at)
            if at.error is None:
                return self._decide(binding, attempts, at)
        return self._decide(binding, attempts, attempts[0] if attempts else Attempt(""))

    @staticmethod
    def _decide(binding: Binding, attempts: list[Attempt], final: Attempt) -> BindingDecision:
        if final.error is None:
            return BindingDecision(binding, attempts, final.clusters or [], SUCCESS, SUCCESS_MESSAGE, final.affinity_name)
        return BindingDecision(binding, attempts, [], final.reason, final.error, final.affinity_name)
