"""How many replicas each cluster can take (``calAvailableReplicas`` and its estimators).

Karmada asks every registered estimator and keeps, per cluster, the smallest answer; a cluster no
estimator can judge keeps the workload's replica count. The general estimator divides the
cluster's resource summary (allocatable minus allocated minus allocating) by one replica's
requests; it cannot see that free capacity is split across nodes, nor node selectors, taints or
spread. :mod:`kubesched.multicluster.simulate_estimator` answers with kubesched's own scheduler on
the member cluster's nodes instead.
"""

from __future__ import annotations

from typing import Protocol

from kubesched.api.resources import CPU, PODS
from kubesched.multicluster.api import Binding, Cluster, ResourceSummary

MAX_INT32 = 2**31 - 1
UNAUTHENTIC_REPLICA = -1  # an estimator's "I cannot tell" for one cluster


class ReplicaEstimator(Protocol):
    name: str

    def max_available_replicas(self, clusters: list[Cluster], binding: Binding) -> list[int]: ...


def _value(resource: str, amount: int) -> int:
    """Quantity.Value() of kubesched's integer amount: cpu is held in millicores (rounded up)."""
    return -((-amount) // 1000) if resource == CPU else amount


def allowed_pod_number(s: ResourceSummary) -> int:
    n = s.allocatable.get(PODS, 0) - s.allocated.get(PODS, 0) - s.allocating.get(PODS, 0)
    return max(n, 0)


class GeneralEstimator:
    """Karmada's general-estimator: the cluster's resource summary only."""

    name = "general"

    def max_available_replicas(self, clusters: list[Cluster], binding: Binding) -> list[int]:
        return [self.for_cluster(c, binding) for c in clusters]

    @staticmethod
    def for_cluster(cluster: Cluster, binding: Binding) -> int:
        s = cluster.resource_summary
        if s is None:
            return 0
        maximum = allowed_pod_number(s)
        if maximum <= 0:
            return 0
        if not binding.requirements or binding.template is None:
            return maximum
        for res, req in binding.template.requests.items():
            if _value(res, req) <= 0:
                continue
            if res not in s.allocatable:
                return 0
            avail = s.allocatable[res] - s.allocated.get(res, 0) - s.allocating.get(res, 0)
            if _value(res, avail) <= 0:
                return 0
            maximum = min(maximum, avail // req)  # cpu: millicores on both sides, as upstream
        return maximum


class Estimators:
    """calAvailableReplicas: the minimum over estimators, per cluster."""

    def __init__(self, estimators: list[ReplicaEstimator]) -> None:
        self.estimators = estimators

    def available(self, clusters: list[Cluster], binding: Binding) -> tuple[dict[str, list[int]], list[int]]:
        merged = [MAX_INT32] * len(clusters)
        per: dict[str, list[int]] = {}
        if binding.replicas == 0:  # not a workload: nothing to estimate
            return per, merged
        for est in self.estimators:
            res = est.max_available_replicas(clusters, binding)
            per[est.name] = res
            for i, r in enumerate(res):
                if r != UNAUTHENTIC_REPLICA and merged[i] > r:
                    merged[i] = r
        return per, [binding.replicas if r == MAX_INT32 else r for r in merged]
