"""A member's nodes counted per resource-model grade (Karmada's pkg/modeling and the
cluster-status controller's ``getAllocatableModelings``).

A Cluster's ``spec.resourceModels`` split each listed resource into intervals, one per grade. The
cluster-status controller takes every node's free resources (allocatable minus the requests of
the non-terminal pods bound there, and its free pod slots) and files the node under the highest
grade whose minimum it reaches in *every* listed resource; ``status.resourceSummary
.allocatableModelings`` is the count per grade. The general estimator then reads a grade's nodes
as nodes holding exactly that grade's minimums (:mod:`kubesched.multicluster.estimate`).

Karmada keeps each grade's distinct free-resource vectors in a linked list, switched to a
red-black tree past five; both only serve to count nodes with the same vector once, which a dict
does here.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kubesched.api.objects import Node, Pod
from kubesched.api.resources import PODS, Resources, add_into
from kubesched.multicluster.api import AllocatableModeling, ResourceModel


class ModelingError(ValueError):
    """InitSummary's error: the models do not list the same resources."""


@dataclass
class GradeCount:
    """``resourceModels``' entry: the nodes in one grade, and how many share each vector."""

    quantity: int = 0
    nodes: dict[tuple[int, ...], int] = field(default_factory=dict)

    @property
    def distinct(self) -> int:
        """GetNodeNumFromModel: the number of distinct free-resource vectors in the grade."""
        return len(self.nodes)


class GradeSummary:
    """modeling.ResourceSummary: per grade (in the models' order) the nodes filed under it."""

    def __init__(self, models: Sequence[ResourceModel]) -> None:
        """InitSummary. The resource names are taken, as upstream, from the ranges while fewer
        names than the current model's ranges are known; a count unlike the first model's is an
        error (validated models never hit it)."""
        names: list[str] = []
        mins: list[dict[str, int]] = []
        for m in models:
            for r in m.ranges:
                if len(names) != len(m.ranges):
                    names.append(r.name)
            mins.append({r.name: r.min for r in m.ranges})
        if names and mins and len(names) != len(mins[0]):
            raise ModelingError("the number of resourceName is not equal the number of resourceList")
        self.names = names
        # per resource, each grade's minimum: ascending for validated models
        self.sortings = [[mm.get(n, 0) for mm in mins] for n in names]
        self.grades = [GradeCount() for _ in mins]

    def key(self, resources: Mapping[str, int]) -> tuple[int, ...]:
        """The comparator's view of a node: its amounts of the models' resources, in order."""
        return tuple(resources.get(n, 0) for n in self.names)

    def index(self, resources: Mapping[str, int]) -> int:
        """getIndex: the lowest, over the resources, of the last grade whose minimum the node
        reaches; -1 when it reaches none in some resource (a negative amount)."""
        index = len(self.grades) if self.names else -1
        for n, mins in zip(self.names, self.sortings, strict=True):
            index = min(index, search_last_less_element(mins, resources.get(n, 0)))
        return index

    def add(self, resources: Mapping[str, int], quantity: int = 1) -> None:
        """AddToResourceSummary: a node that fits no grade is left out (upstream logs it)."""
        i = self.index(resources)
        if i < 0 or i >= len(self.grades):
            return
        g = self.grades[i]
        k = self.key(resources)
        g.nodes[k] = g.nodes.get(k, 0) + quantity
        g.quantity += quantity


def search_last_less_element(nums: Sequence[int], target: int) -> int:
    """The last index whose value is at most ``target``, -1 if none (``nums`` ascending)."""
    return bisect_right(nums, target) - 1


def node_available(allocatable: Resources, pod_resources: Resources | None) -> Resources | None:
    """getNodeAvailable: allocatable minus the bound pods' requests, for the resources the node
    lists; None when no pod slot is left (``pod_resources[pods]`` counts the pods)."""
    if pod_resources is None:
        return dict(allocatable)
    if allocatable.get(PODS, 0) - pod_resources.get(PODS, 0) <= 0:
        return None
    return {name: amount - pod_resources.get(name, 0) for name, amount in allocatable.items()}


def allocatable_modelings(models: Sequence[ResourceModel], nodes: Iterable[Node], pods: Iterable[Pod]) -> tuple[AllocatableModeling, ...]:
    """getAllocatableModelings: the count of nodes per grade. As upstream, the first node with no
    free pod slot ends the count (the nodes after it are not filed); models that InitSummary
    refuses give no modelings."""
    if not models:
        return ()
    try:
        summary = GradeSummary(models)
    except ModelingError:
        return ()
    on_node: dict[str, Resources] = {}
    for p in pods:
        if p.node_name and not p.terminal:
            used = on_node.setdefault(p.node_name, {})
            add_into(used, p.requests)
            used[PODS] = used.get(PODS, 0) + 1
    for n in nodes:
        free = node_available(n.allocatable, on_node.get(n.name))
        if free is None:
            break
        summary.add(free)
    return tuple(AllocatableModeling(m.grade, g.quantity) for m, g in zip(models, summary.grades, strict=True))
