"""How many replicas each cluster can take (``calAvailableReplicas`` and its estimators).

Karmada asks every registered estimator and keeps, per cluster, the smallest answer; a cluster no
estimator can judge keeps the workload's replica count. The general estimator divides the
cluster's resource summary (allocatable minus allocated minus allocating) by one replica's
requests; it cannot see that free capacity is split across nodes, nor node selectors, taints or
spread. :mod:`kubesched.multicluster.simulate_estimator` answers with kubesched's own scheduler on
the member cluster's nodes instead.

Both take **assumed workloads** (Karmada's ``AssumedWorkloads``, its SchedulingOvercommitProtection):
per cluster, the replicas already assigned there whose pods the cluster does not show yet. The
general estimator adds their requests to the summary's ``allocating``; the simulated estimator
places each workload on the member's nodes first (all its replicas or, when they do not fit,
none, as Karmada's node-resource plugin does).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from kubesched.api.resources import CPU, PODS, Resources
from kubesched.multicluster.api import Binding, Cluster, ResourceSummary

MAX_INT32 = 2**31 - 1
UNAUTHENTIC_REPLICA = -1  # an estimator's "I cannot tell" for one cluster


@dataclass(frozen=True)
class AssumedComponent:
    """``workv1alpha2.Component`` as an assumed workload carries it: replicas and the requests of
    one (kubesched's units: cpu in millicores); None: no requirements, a pod count only."""

    replicas: int
    requests: Resources | None = None


@dataclass(frozen=True)
class AssumedWorkload:
    """An in-flight workload: assigned to a cluster, its pods not bound there yet."""

    namespace: str = ""
    components: tuple[AssumedComponent, ...] = ()


Assumed = Mapping[str, Sequence[AssumedWorkload]]  # cluster name -> its assumed workloads


class ReplicaEstimator(Protocol):
    name: str

    def max_available_replicas(
        self, clusters: list[Cluster], binding: Binding, assumed: Assumed | None = None
    ) -> list[int]: ...


def deduct_assumed_from_summary(s: ResourceSummary, assumed: Sequence[AssumedWorkload]) -> ResourceSummary:
    """deductAssumedWorkloadsFromSummary: a copy of ``s`` whose ``allocating`` also holds every
    assumed component's replicas (pods) and replicas × requests."""
    allocating = dict(s.allocating)
    for aw in assumed:
        for comp in aw.components:
            if comp.replicas <= 0:
                continue
            allocating[PODS] = allocating.get(PODS, 0) + comp.replicas
            for res, amount in (comp.requests or {}).items():
                allocating[res] = allocating.get(res, 0) + amount * comp.replicas
    return replace(s, allocating=allocating)


def _value(resource: str, amount: int) -> int:
    """Quantity.Value() of kubesched's integer amount: cpu is held in millicores (rounded up)."""
    return -((-amount) // 1000) if resource == CPU else amount


def allowed_pod_number(s: ResourceSummary) -> int:
    n = s.allocatable.get(PODS, 0) - s.allocated.get(PODS, 0) - s.allocating.get(PODS, 0)
    return max(n, 0)


class GeneralEstimator:
    """Karmada's general-estimator: the cluster's resource summary only."""

    name = "general"

    def max_available_replicas(self, clusters: list[Cluster], binding: Binding, assumed: Assumed | None = None) -> list[int]:
        return [self.for_cluster(c, binding, (assumed or {}).get(c.name, ())) for c in clusters]

    @staticmethod
    def for_cluster(cluster: Cluster, binding: Binding, assumed: Sequence[AssumedWorkload] = ()) -> int:
        s = cluster.resource_summary
        if s is None:
            return 0
        if assumed:
            s = deduct_assumed_from_summary(s, assumed)
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

    def available(
        self, clusters: list[Cluster], binding: Binding, assumed: Assumed | None = None
    ) -> tuple[dict[str, list[int]], list[int]]:
        merged = [MAX_INT32] * len(clusters)
        per: dict[str, list[int]] = {}
        if binding.replicas == 0:  # not a workload: nothing to estimate
            return per, merged
        for est in self.estimators:
            res = est.max_available_replicas(clusters, binding, assumed)
            per[est.name] = res
            for i, r in enumerate(res):
                if r != UNAUTHENTIC_REPLICA and merged[i] > r:
                    merged[i] = r
        return per, [binding.replicas if r == MAX_INT32 else r for r in merged]
