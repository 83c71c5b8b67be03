"""Cluster-wide resource limits: Cluster Autoscaler's ``--cores-total``, ``--memory-total`` and
``--gpu-total`` (``cluster-autoscaler/core/scaleup/resource/manager.go``).

A node counts its capacity in whole cores (rounded up), bytes of memory, and GPUs under its GPU
type (the ``alibabacloud.com/gpu-card-model`` label; a node with GPUs but no type counts towards no
GPU limit, as CA's GPU processor gives such a node no target). A node group counts its target size
(registered plus upcoming nodes) times its template; a node of no node group counts itself. Only
limits with a max above 0 constrain anything ("no entry means no limit"). Scale-down keeps the
cluster's registered nodes (those being deleted left out) at or above each min above 0
(``core/scaledown/resource/limits.go``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from kubesched.api.objects import Node
from kubesched.api.resources import parse_resource_list
from kubesched.errors import InputError
from kubesched.gpu.model import MILLI, node_gpu_model
from kubesched.sim.gpu import node_gpu_milli

CORES = "cpu"
MEMORY = "memory"
GIB = 2**30
#: CA's defaults: --cores-total=0:320000, --memory-total=0:6400000 (GiB)
DEFAULT_MAX_CORES = 320_000
DEFAULT_MAX_MEMORY = 6_400_000 * GIB


@dataclass
class ResourceLimits:
    """min and max per resource: ``cpu`` (cores), ``memory`` (bytes) and each GPU type."""

    min: dict[str, int] = field(default_factory=lambda: {CORES: 0, MEMORY: 0})
    max: dict[str, int] = field(default_factory=lambda: {CORES: DEFAULT_MAX_CORES, MEMORY: DEFAULT_MAX_MEMORY})

    @property
    def gpu_types(self) -> set[str]:
        return {r for r in self.max if r not in (CORES, MEMORY)}


def capacity(node: Node) -> dict[str, int]:
    """The node's ``status.capacity`` (its allocatable when it has none): what CA counts."""
    raw = node.raw.get("status", {}).get("capacity") if isinstance(node.raw.get("status"), dict) else None
    if raw:
        try:
            return parse_resource_list(raw, "status.capacity")
        except InputError:
            pass  # the node parsed with its allocatable; fall back to that
    return dict(node.allocatable)


def delta_for_node(node: Node, limits: ResourceLimits) -> dict[str, int]:
    """DeltaForNode: what one such node adds: cores (rounded up), memory, and its GPUs under its
    type when a GPU limit is set."""
    cap = capacity(node)
    delta = {CORES: -(-max(cap.get(CORES, 0), 0) // 1000), MEMORY: max(cap.get(MEMORY, 0), 0)}
    if limits.gpu_types:
        gpus = node_gpu_milli(node) // MILLI
        model = node_gpu_model(node)
        if model and gpus:
            delta[model] = gpus
    return delta


def resources_left(
    limits: ResourceLimits, counted: Iterable[tuple[Node, int]], delta: Callable[[Node], Mapping[str, int]] | None = None
) -> dict[str, int]:
    """ResourcesLeft: per limited resource, how much more the cluster may have. ``counted`` is
    (node, how many) pairs: each group's template times its size, and every node of no group;
    ``delta`` is ``delta_for_node`` or a cache of it."""
    total = totals(limits, counted, delta)
    return {r: max(0, mx - total.get(r, 0)) for r, mx in limits.max.items() if mx > 0}


def limits_left(limits: ResourceLimits, nodes: Iterable[Node], delta: Callable[[Node], Mapping[str, int]] | None = None) -> dict[str, int]:
    """LimitsLeft of scale-down (``core/scaledown/resource/limits.go``): per resource whose min is
    above 0, how much of it the cluster may lose: what ``nodes`` have (the caller leaves out the
    nodes being deleted) less the min. A node whose removal would take more is not removed
    (``MinimalResourceLimitExceeded``); without such a min nothing is limited."""
    total = totals(limits, ((node, 1) for node in nodes), delta)
    return {r: max(0, total.get(r, 0) - mn) for r, mn in limits.min.items() if mn > 0}


def totals(
    limits: ResourceLimits, counted: Iterable[tuple[Node, int]], delta: Callable[[Node], Mapping[str, int]] | None = None
) -> dict[str, int]:
    """Cores, memory and GPUs per type of (node, how many) pairs."""
    total: dict[str, int] = {}
    for node, n in counted:
        if n <= 0:
            continue
        for r, v in (delta(node) if delta else delta_for_node(node, limits)).items():
            total[r] = total.get(r, 0) + n * v
    return total


def exceeded(left: Mapping[str, int], delta: Mapping[str, int]) -> list[str]:
    """CheckDeltaWithinLimits: the resources (sorted) that ``delta`` would take over their limit."""
    return sorted(r for r, d in delta.items() if r in left and d > 0 and d > left[r])


def apply_limits(count: int, left: Mapping[str, int], delta: Mapping[str, int]) -> int:
    """ApplyLimits: ``count`` nodes, capped so that each limited resource stays within what is left."""
    for r, d in delta.items():
        if r in left and d > 0 and count * d > left[r]:
            count = left[r] // d
    return count


def consume(left: dict[str, int], delta: Mapping[str, int], count: int) -> None:
    """Take ``count`` nodes' worth of ``delta`` from ``left`` (a split scale-up's later groups see it)."""
    for r, d in delta.items():
        if r in left:
            left[r] = max(0, left[r] - count * d)
