"""How many replicas each cluster can take (``calAvailableReplicas`` and its estimators).

Karmada asks every registered estimator and keeps, per cluster, the smallest answer; a cluster no
estimator can judge keeps the workload's replica count. The general estimator divides the
cluster's resource summary (allocatable minus allocated minus allocating) by one replica's
requests; it cannot see that free capacity is split across nodes, nor node selectors, taints or
spread. :mod:`kubesched.multicluster.simulate_estimator` answers with kubesched's own scheduler on
the member cluster's nodes instead.

When the Cluster has resource models (its own, or Karmada's defaults that reading a Cluster
applies) and its status counts nodes per grade (``allocatableModelings``), the general estimator
instead places replicas first-fit on nodes holding each grade's minimums
(:func:`replicas_by_models`), capped by the free pod count. Its
component-set estimate (:meth:`GeneralEstimator.max_available_component_sets`) divides the summary
by a whole set's requests, then the models bound it the same way.

Both take **assumed workloads** (Karmada's ``AssumedWorkloads``, its SchedulingOvercommitProtection):
per cluster, the replicas already assigned there whose pods the cluster does not show yet. The
general estimator adds their requests to the summary's ``allocating``; the simulated estimator
places each workload on the member's nodes first, first fit as Karmada's node-resource plugin does
(a workload that does not fit whole keeps the replicas it placed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from kubesched.api.resources import CPU, PODS, Resources
from kubesched.multicluster.api import Binding, Cluster, ResourceSummary
from kubesched.multicluster.firstfit import (
    Component,
    FreeNode,
    SchedulingSimulator,
    max_divided,
    simulate_assumed,
)

MAX_INT32 = 2**31 - 1
MAX_INT64 = 2**63 - 1
MAX_PODS_PER_MODEL_NODE = 110  # maxPodsCountPerNode: Kubernetes' default per-node pod limit
UNAUTHENTIC_REPLICA = -1  # an estimator's "I cannot tell" for one cluster


# ``workv1alpha2.Component`` as an assumed workload carries it: replicas and the requests of one
# (kubesched's units: cpu in millicores); requests None: no requirements, a pod count only.
AssumedComponent = Component


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


def replicas_by_cluster_summary(s: ResourceSummary, requests: Resources) -> int:
    """getMaximumReplicasBasedOnClusterSummary: min over requested resources of free / request
    (MAX_INT64 when nothing is requested); 0 when a requested resource is missing or used up."""
    maximum = MAX_INT64
    for res, req in requests.items():
        if _value(res, req) <= 0:
            continue
        if res not in s.allocatable:
            return 0
        avail = s.allocatable[res] - s.allocated.get(res, 0) - s.allocating.get(res, 0)
        if _value(res, avail) <= 0:
            return 0
        maximum = min(maximum, avail // req)  # cpu: millicores on both sides, as upstream
    return maximum


def model_grades(cluster: Cluster) -> list[tuple[Resources, int]] | None:
    """buildModelNodes, grade by grade: per grade in ascending order, the free resources of its
    nodes (the grade's minimums and 110 pod slots) and how many there are. None (upstream's error)
    without a summary or models, or for a negative count; a grade in only one of spec and status
    gives no nodes."""
    s = cluster.resource_summary
    if s is None or not cluster.resource_models:
        return None
    counts: dict[int, int] = {}
    for a in s.allocatable_modelings:
        if a.count < 0:
            return None
        counts[a.grade] = counts.get(a.grade, 0) + a.count
    templates = {m.grade: {**{r.name: r.min for r in m.ranges}, PODS: MAX_PODS_PER_MODEL_NODE} for m in cluster.resource_models}
    return [(templates[g], counts.get(g, 0)) for g in sorted(templates)]


def model_nodes(cluster: Cluster) -> list[FreeNode] | None:
    """buildModelNodes: ``model_grades`` as the nodes the first-fit simulation consumes."""
    grades = model_grades(cluster)
    return None if grades is None else [FreeNode(dict(free)) for free, n in grades for _ in range(n)]


def sets_by_models(cluster: Cluster, components: Sequence[Component], assumed: Sequence[AssumedWorkload], upper_bound: int) -> int | None:
    """getMaximumSetsBasedOnResourceModels: complete sets placed first-fit on the model nodes, after
    the assumed workloads (each placed once); None when the model nodes cannot be built."""
    nodes = model_nodes(cluster)
    if nodes is None:
        return None
    sim = SchedulingSimulator(nodes)
    simulate_assumed(sim, [aw.components for aw in assumed])
    return sim.simulate(components, upper_bound)


def replicas_by_models(cluster: Cluster, requests: Resources, assumed: Sequence[AssumedWorkload] = ()) -> int | None:
    """getMaximumReplicasBasedOnResourceModels: one replica as a one-pod set, up to MAX_INT32. The
    model nodes carry no labels or taints, so a replica's node claim never excludes one. With
    nothing assumed, first fit of one-replica sets places what every node holds, so the count is
    summed grade by grade (the nodes of a grade are alike) rather than node by node."""
    if assumed:
        return sets_by_models(cluster, [Component(1, requests)], assumed, MAX_INT32)
    grades = model_grades(cluster)
    if grades is None:
        return None
    return min(MAX_INT32, sum(n * max_divided(free, requests) for free, n in grades))


def _sum_assumed(assumed: Sequence[AssumedWorkload]) -> tuple[int, Resources]:
    """sumAssumedWorkloadDemands: pods and replicas x requests of every component (components of
    zero replicas included, unlike deduct_assumed_from_summary)."""
    pods = 0
    demand: Resources = {}
    for aw in assumed:
        for c in aw.components:
            pods += c.replicas
            for res, amount in (c.requests or {}).items():
                demand[res] = demand.get(res, 0) + amount * c.replicas
    return pods, demand


class GeneralEstimator:
    """Karmada's general-estimator: the cluster's resource summary, or its resource models."""

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
        requests = binding.template.requests
        if s.allocatable_modelings:  # the models' answer replaces the summary's
            num = replicas_by_models(cluster, requests, assumed)
            if num is not None:
                return min(maximum, num)
        return min(maximum, replicas_by_cluster_summary(s, requests))

    def max_available_component_sets(
        self, clusters: list[Cluster], components: Sequence[Component], assumed: Assumed | None = None
    ) -> list[int]:
        """MaxAvailableComponentSets: complete sets of ``components`` per cluster."""
        return [self.component_sets_for_cluster(c, components, (assumed or {}).get(c.name, ())) for c in clusters]

    @staticmethod
    def component_sets_for_cluster(cluster: Cluster, components: Sequence[Component], assumed: Sequence[AssumedWorkload] = ()) -> int:
        """maxAvailableComponentSets: the free pods and free resources (assumed workloads deducted)
        divided by one set's, then bounded by the resource models when the status counts grades.
        Amounts are kubesched's (cpu in millicores) on both sides, where upstream compares
        thousandths of a decimal-format quantity with units of a binary-format one."""
        s = cluster.resource_summary
        if s is None:
            return 0
        available = {r: a - s.allocated.get(r, 0) - s.allocating.get(r, 0) for r, a in s.allocatable.items()}
        allowed = allowed_pod_number(s)
        if allowed <= 0:
            return 0
        if assumed:
            pods, demand = _sum_assumed(assumed)
            allowed -= pods
            for res, amount in demand.items():
                available[res] = available.get(res, 0) - amount
            if allowed <= 0:
                return 0
        pods_per_set = sum(c.replicas for c in components)
        if pods_per_set <= 0:
            return min(allowed, MAX_INT32)
        max_sets = min(allowed // pods_per_set, MAX_INT32)
        per_set: Resources = {}
        for c in components:
            for res, amount in (c.requests or {}).items():
                per_set[res] = per_set.get(res, 0) + amount * c.replicas
        for res, need in per_set.items():  # resourceBoundedSets
            if need <= 0:
                continue
            if available.get(res, 0) <= 0:
                return 0
            max_sets = min(max_sets, available[res] // need)
        if s.allocatable_modelings:  # applyResourceModelBound
            num = sets_by_models(cluster, components, assumed, max_sets)
            if num is not None:
                return min(max_sets, num)
        return max_sets


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
