"""Cluster Autoscaler's binpacking estimator: how many new nodes of a group the pending pods need.

First-fit decreasing, as ``cluster-autoscaler/estimator/binpacking_estimator.go``: pods are grouped
by equivalence (same scheduling signature), groups are ordered by decreasing
``cpu/allocatable + memory/allocatable`` of the template (``DecreasingPodOrderer``); each pod goes
to the first new node it fits on, else to the last node added, else a new template node is added
(unless the last one is still empty, or the limiter's node budget is spent). A pod spread over
hostnames that the last node refuses for its spread is tried on every other node first. Fitting is the real
scheduler's filters (``PredicateChecker``) on a scratch snapshot holding the new nodes (and the
cluster's nodes and pods when pods spread or have affinity).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.autoscale.predicate import HOSTNAME, PredicateChecker, node_named, placed
from kubesched.plugins.podtopologyspread.common import ERR_REASON_CONSTRAINTS_NOT_MATCH
from kubesched.state.snapshot import Snapshot


@dataclass
class PodGroup:
    """Pods with the same scheduling signature (CA's PodEquivalenceGroup)."""

    pods: list[Pod] = field(default_factory=list)

    @property
    def exemplar(self) -> Pod | None:
        return self.pods[0] if self.pods else None


def equivalence_groups(pods: list[Pod]) -> list[PodGroup]:
    """Pods grouped by signature, in order of first appearance."""
    groups: dict[object, PodGroup] = {}
    for p in pods:
        key = p.signature() or p.uid
        groups.setdefault(key, PodGroup()).pods.append(p)
    return list(groups.values())


def decreasing_order(groups: list[PodGroup], template: Node) -> list[PodGroup]:
    """DecreasingPodOrderer: bigger pods (relative to the template's allocatable) first; stable."""

    def score(g: PodGroup) -> float:
        p = g.exemplar
        if p is None:
            return 0.0
        s = 0.0
        cpu, mem = template.allocatable.get("cpu", 0), template.allocatable.get("memory", 0)
        if cpu > 0:
            s += p.requests.get("cpu", 0) / cpu
        if mem > 0:
            s += p.requests.get("memory", 0) / mem
        return s

    return sorted(groups, key=score, reverse=True)


@dataclass
class Estimate:
    nodes: int  # new nodes that got pods
    pods: list[Pod]  # pods placed, in placement order
    snapshot: Snapshot | None = None  # the scratch snapshot with the new nodes and their pods
    new_nodes: list[str] = field(default_factory=list)


class BinpackingEstimator:
    """``estimate(groups, template, max_nodes)``; ``max_nodes`` 0 = no limit, below 0 = no node
    (``estimation_limit``)."""

    def __init__(self, checker: PredicateChecker, snapshot_factory: Callable[[], Snapshot]) -> None:
        self.checker = checker
        self.snapshot_factory = snapshot_factory

    def estimate(self, groups: list[PodGroup], template: Node, max_nodes: int = 0, name_prefix: str = "e") -> Estimate:
        snap = self.snapshot_factory()
        new_rows: list[int] = []
        new_names: list[str] = []
        with_pods: set[str] = set()  # nodes that got pods (an existing one too, see below)
        scheduled: list[Pod] = []
        last: str | None = None

        def add(pod: Pod, node: str) -> None:
            snap.add_pod(placed(pod, node))
            with_pods.add(node)
            scheduled.append(pod)

        def on_new_nodes(pods: list[Pod]) -> bool:
            """tryToScheduleOnNewNodes; False once the node budget is spent."""
            nonlocal last
            for pod in pods:
                if last is not None:
                    why = self.checker.reasons(snap, pod, snap.row_of[last])
                    if why is None:
                        add(pod, last)
                        continue
                    if uses_hostname_spread(pod) and ERR_REASON_CONSTRAINTS_NOT_MATCH in why:
                        # spread by hostname: an earlier node (new or not) may take it now that
                        # the last one has more pods; upstream counts whichever node takes it
                        skip = snap.row_of[last]
                        rows = np.asarray([r for r in snap.order.tolist() if r != skip], np.int32)
                        row = self.checker.first_fit(snap, pod, rows)
                        if row is not None:
                            add(pod, snap.nodes[row].name)
                            continue
                    if last not in with_pods:
                        return True  # it did not fit an empty node: another one would not help
                if max_nodes and len(new_names) >= max_nodes:
                    return False
                name = f"{name_prefix}-{len(new_names)}"
                new_rows.append(snap.add_node(node_named(template, name)))
                new_names.append(name)
                last = name
                if not self.checker.fits(snap, pod, np.asarray([snap.row_of[name]], np.int32))[0]:
                    break
                add(pod, name)
            return True

        new_available = True
        for group in decreasing_order(groups, template):
            pods = group.pods
            k = 0
            # on the nodes added so far (FitsAnyNodeMatching over the new nodes)
            while k < len(pods) and new_rows:
                row = self.checker.first_fit(snap, pods[k], np.asarray(new_rows, np.int32))
                if row is None:
                    break
                add(pods[k], snap.nodes[row].name)
                k += 1
            if new_available:
                new_available = on_new_nodes(pods[k:])
        return Estimate(len(with_pods), scheduled, snap, [n for n in new_names if n in with_pods])


def min_limit(base: int, target: int) -> int:
    """getMinLimit: -1 (no node at all) when either is negative, else the smaller of those set
    (0 = not set)."""
    if base < 0 or target < 0:
        return -1
    if (base == 0 or base > target) and target > 0:
        return target
    return base


def cluster_capacity(max_nodes_total: int, current_nodes: int) -> int:
    """ClusterCapacityThreshold: the nodes ``maxNodesTotal`` still allows; 0 (no limit) when it
    is not set, or already reached (scale-up does not run then)."""
    return max(0, max_nodes_total - current_nodes) if max_nodes_total > 0 else 0


def sng_capacity(rooms: list[int]) -> int:
    """SngCapacityThreshold: the room (max - target size) of the group and its similar groups,
    over-provisioned ones counting none; -1 when there is none."""
    total = sum(r for r in rooms if r > 0)
    return total if total > 0 else -1


def estimation_limit(static: int, cluster: int, sng: int) -> int:
    """The binpacking estimator's node budget for a group (threshold_based_limiter.go): the
    thresholds combined by ``min_limit``; 0 is no limit, -1 no node."""
    limit = 0
    for threshold in (static, cluster, sng):
        limit = min_limit(limit, threshold)
    return limit


def uses_hostname_spread(pod: Pod) -> bool:
    """isPodUsingHostNameTopologyKey: a topology spread constraint over kubernetes.io/hostname."""
    return any(c.topology_key == HOSTNAME for c in pod.spread_constraints)
