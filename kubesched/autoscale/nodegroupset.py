"""Balancing similar node groups: Cluster Autoscaler's ``--balance-similar-node-groups``
(``cluster-autoscaler/processors/nodegroupset``).

Two groups are similar when their template nodes look like the same machine type: every capacity
equal except memory (within ``memoryDifferenceRatio``), allocatable and free resources within
``maxAllocatableDifferenceRatio`` / ``maxFreeDifferenceRatio``, and the same labels apart from
hostname, zone, region and the other labels CA ignores (plus ``balancingIgnoreLabels``, and
kubesched's own node-group label). With ``balancingLabels`` set, only those labels decide
(``CreateLabelNodeInfoComparator``). A scale-up is then split across the chosen group and its
similar groups, smallest first (``BalanceScaleUpBetweenGroups``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kubesched.api.objects import Node
from kubesched.autoscale.interface import ScaleUpInfo
from kubesched.autoscale.limits import MEMORY, capacity

#: BasicIgnoredLabels (compare_nodegroups.go), plus the CSI topology labels it ignores
BASIC_IGNORED_LABELS = frozenset(
    {
        "kubernetes.io/hostname",
        "failure-domain.beta.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region",
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "beta.kubernetes.io/fluentd-ds-ready",
        "kops.k8s.io/instancegroup",
        "topology.ebs.csi.aws.com/zone",
        "topology.gke.io/zone",
        "topology.disk.csi.azure.com/zone",
    }
)

Comparator = Callable[[Node, Node], bool]


def _within(a: int, b: int, ratio: float) -> bool:
    """resourceListWithinTolerance: the larger minus the smaller at most ``ratio`` of the larger."""
    hi, lo = max(a, b), min(a, b)
    return hi - lo <= hi * ratio


def _maps_within(m1: Mapping[str, int], m2: Mapping[str, int], ratio: float) -> bool:
    """resourceMapsWithinTolerance: a resource only one of the two has is not within."""
    return all(r in m1 and r in m2 and _within(m1[r], m2[r], ratio) for r in {*m1, *m2})


#: the resources a NodeInfo's Requested always lists (ResourceToResourceList), requested or not
REQUESTED_ALWAYS = ("cpu", "memory", "pods", "ephemeral-storage")


def _free(allocatable: Mapping[str, int], requested: Mapping[str, int]) -> dict[str, int]:
    return {r: allocatable.get(r, 0) - requested.get(r, 0) for r in {*REQUESTED_ALWAYS, *requested}}


def is_similar(
    n1: Node,
    n2: Node,
    *,
    ignored_labels: frozenset[str] | set[str] = BASIC_IGNORED_LABELS,
    memory_ratio: float = 0.015,
    allocatable_ratio: float = 0.05,
    free_ratio: float = 0.05,
    requested1: Mapping[str, int] | None = None,
    requested2: Mapping[str, int] | None = None,
) -> bool:
    """IsCloudProviderNodeInfoSimilar; ``requested1/2`` are the requests of the pods on each node
    (templates have none)."""
    c1, c2 = capacity(n1), capacity(n2)
    for r in {*c1, *c2}:
        if r not in c1 or r not in c2:
            return False
        if r == MEMORY:
            if not _within(c1[r], c2[r], memory_ratio):
                return False
        elif c1[r] != c2[r]:
            return False
    a1, a2 = n1.allocatable, n2.allocatable
    if not _maps_within(a1, a2, allocatable_ratio):
        return False
    if not _maps_within(_free(a1, requested1 or {}), _free(a2, requested2 or {}), free_ratio):
        return False
    l1 = {k: v for k, v in n1.labels.items() if k not in ignored_labels}
    l2 = {k: v for k, v in n2.labels.items() if k not in ignored_labels}
    return l1 == l2


def label_comparator(labels: list[str]) -> Comparator:
    """CreateLabelNodeInfoComparator: similar when every listed label is set on both, equal."""

    def same(n1: Node, n2: Node) -> bool:
        return bool(labels) and all(k in n1.labels and k in n2.labels and n1.labels[k] == n2.labels[k] for k in labels)

    return same


def generic_comparator(extra_ignored: list[str], memory_ratio: float, allocatable_ratio: float, free_ratio: float) -> Comparator:
    """CreateGenericNodeInfoComparator."""
    ignored = BASIC_IGNORED_LABELS | set(extra_ignored)

    def same(n1: Node, n2: Node) -> bool:
        return is_similar(n1, n2, ignored_labels=ignored, memory_ratio=memory_ratio, allocatable_ratio=allocatable_ratio, free_ratio=free_ratio)

    return same


def find_similar(group: str, templates: Mapping[str, Node], comparator: Comparator) -> list[str]:
    """FindSimilarNodeGroups: the other groups whose template compares similar, in order."""
    mine = templates[group]
    return [g for g, t in templates.items() if g != group and comparator(mine, t)]


def balance_scale_up(groups: list[tuple[str, int, int]], new_nodes: int) -> list[ScaleUpInfo]:
    """BalanceScaleUpBetweenGroups over (name, current size, max size): one node at a time to the
    smallest group not at its max, capped at the groups' total room; groups already at (or over)
    their max are left out. Returns the groups that grow."""
    infos = [ScaleUpInfo(g, cur, cur, mx) for g, cur, mx in groups if cur < mx]
    new_nodes = min(new_nodes, sum(i.max - i.current for i in infos))
    infos.sort(key=lambda i: i.current)  # stable, as Go's sort.Slice is not: ties keep list order
    start = cur = 0
    while new_nodes > 0:
        info = infos[cur]
        if info.new < info.max:
            info.new += 1
            new_nodes -= 1
        else:
            infos[start], infos[cur] = infos[cur], infos[start]
            start += 1
            info = infos[cur]  # as upstream's pointer into the slice: now the swapped-in group
        if cur < len(infos) - 1 and info.new > infos[cur + 1].new:
            cur += 1
        else:
            cur = start
    return [i for i in infos if i.new != i.current]
