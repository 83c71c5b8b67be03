"""Karmada's first-fit scheduling simulation over nodes' free resources
(pkg/estimator/scheduling_simulator_components.go), and what it estimates.

Sets of components are placed one set after another; each component's replicas go to the nodes in
order, each node taking as many as fit (``Resource.MaxDivided``), until a set does not fit or the
upper bound is reached. A node's free resources are Karmada's ``util.Resource``: cpu (millicores),
memory, ephemeral storage, the pod slots and the scalar resources (extended, hugepages,
attachable volumes); a requested resource outside those is not compared. Two users:

- the general estimator's resource-model path: nodes built from each grade's minimums, 110 pod
  slots each (``buildModelNodes``), which match any node claim;
- the node-resource estimator's component estimate (``EstimateComponents``) on a member's nodes:
  allocatable minus the requests of the pods there, node claims matched against the nodes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kubesched.api.objects import Node
from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Resources, add_into
from kubesched.api.selectors import NodeSelector
from kubesched.api.taints import Toleration
from kubesched.plugins.noderesources import is_scalar_resource_name
from kubesched.state.snapshot import Snapshot

MAX_INT32 = 2**31 - 1
MAX_INT64 = 2**63 - 1
_BASE = (CPU, MEMORY, EPHEMERAL_STORAGE)
_HARD_EFFECTS = ("NoSchedule", "NoExecute")


@dataclass(frozen=True)
class NodeClaim:
    """``workv1alpha2.NodeClaim``: where a replica may go (required node affinity, node selector,
    tolerations)."""

    node_affinity: NodeSelector | None = None
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()

    def matches(self, node: Node) -> bool:
        """MatchNode: IsNodeAffinityMatched and IsTolerationMatched (NoSchedule and NoExecute
        taints must be tolerated)."""
        if any(node.labels.get(k) != v for k, v in self.node_selector.items()):
            return False
        if self.node_affinity is not None and not self.node_affinity.matches(node.labels, node.name):
            return False
        return all(any(t.tolerates(taint) for t in self.tolerations) for taint in node.taints if taint.effect in _HARD_EFFECTS)


@dataclass(frozen=True)
class Component:
    """``workv1alpha2.Component``: replicas per set and the requests of one (kubesched's units);
    ``requests`` None: no replica requirements (a pod slot only)."""

    replicas: int
    requests: Resources | None = None
    node_claim: NodeClaim | None = None


@dataclass
class FreeNode:
    """A node as the simulation sees it: free amounts (``pods``: free pod slots) and, for a member's
    node, the node itself (None for a resource-model node, which matches every claim)."""

    free: Resources
    node: Node | None = None


def tracked(free: Mapping[str, int]) -> Resources:
    """util.NewResource: only the amounts util.Resource keeps."""
    return {k: v for k, v in free.items() if k in _BASE or k == PODS or is_scalar_resource_name(k)}


def max_divided(free: Mapping[str, int], requests: Mapping[str, int]) -> int:
    """Resource.MaxDivided: how many replicas of ``requests`` fit in ``free`` (and its pod slots)."""
    n = MAX_INT64
    for name, amount in requests.items():
        if amount > 0 and (name in _BASE or is_scalar_resource_name(name)):
            n = min(n, free.get(name, 0) // amount)
    return min(n, free.get(PODS, 0))


class SchedulingSimulator:
    """estimator.SchedulingSimulator: first fit over ``nodes``, which it consumes. With ``record``,
    ``placements`` lists where replicas went: (node index, component, replicas)."""

    def __init__(self, nodes: list[FreeNode], record: bool = False) -> None:
        self.nodes = nodes
        self.placements: list[tuple[int, Component, int]] | None = [] if record else None

    def simulate(self, components: Sequence[Component], upper_bound: int) -> int:
        """SimulateScheduling: the number of complete sets placed, at most ``upper_bound``."""
        if len(components) == 1:
            return self._one_component(components[0], upper_bound)
        sets = 0
        while sets < upper_bound and all(self._place(c, c.replicas) == 0 for c in components):
            sets += 1
        return sets

    def _one_component(self, c: Component, upper_bound: int) -> int:
        """One component, without the set-by-set loop: a set never fails while ``replicas`` fit in
        the nodes together (first fit spills a set over the next nodes), so the count is the nodes'
        capacity divided by the set. A node's capacity drops by exactly the replicas it takes. As
        upstream, a set that fails keeps the replicas it placed (no rollback): below the bound, the
        whole capacity is consumed."""
        if upper_bound <= 0:
            return 0
        if c.replicas <= 0:
            return upper_bound
        capacity = sum(self._capacity(n, c) for n in self.nodes)
        sets = min(upper_bound, capacity // c.replicas)
        self._place(c, sets * c.replicas if sets == upper_bound else capacity)
        return sets

    def _capacity(self, node: FreeNode, c: Component) -> int:
        if node.node is not None and c.node_claim is not None and not c.node_claim.matches(node.node):
            return 0
        return max_divided(node.free, c.requests or {})

    def _place(self, c: Component, replicas: int) -> int:
        """scheduleComponent for ``replicas``: what is left unplaced (0: all placed)."""
        remaining = replicas
        for i, node in enumerate(self.nodes):
            if remaining <= 0:
                break
            take = min(self._capacity(node, c), remaining)
            if take <= 0:
                continue
            free = node.free
            for name, amount in (c.requests or {}).items():
                if name in free and (name in _BASE or is_scalar_resource_name(name)):
                    free[name] = max(free[name] - amount * take, 0)
            free[PODS] = max(free.get(PODS, 0) - take, 0)
            remaining -= take
            if self.placements is not None:
                self.placements.append((i, c, take))
        return remaining


def simulate_assumed(sim: SchedulingSimulator, assumed: Sequence[Sequence[Component]]) -> None:
    """Place each assumed workload's components once, before the estimate. As upstream, a workload
    that does not fit whole keeps the replicas it did place."""
    for components in assumed:
        if components:
            sim.simulate(components, 1)


def member_nodes(nodes: Sequence[Node], used: Mapping[str, Resources]) -> list[FreeNode]:
    """getNodesAvailableResources: each node's allocatable minus the requests of its pods (``used``
    by node name, a ``pods`` entry counting them), floored at zero."""
    out = []
    for n in nodes:
        u = used.get(n.name, {})
        free = tracked(n.allocatable)
        for name in free:
            free[name] = max(free[name] - u.get(name, 0), 0)
        out.append(FreeNode(free, n))
    return out


def snapshot_nodes(snap: Snapshot) -> list[FreeNode]:
    """A member's nodes with what their pods leave free, in the snapshot's node order."""
    used: dict[str, Resources] = {}
    for on_node in snap.pods_on:
        for p in on_node.values():
            u = used.setdefault(p.node_name, {})
            add_into(u, p.requests)
            u[PODS] = u.get(PODS, 0) + 1
    return member_nodes(snap.nodes, used)


def estimate_components(nodes: list[FreeNode], components: Sequence[Component], assumed: Sequence[Sequence[Component]] = ()) -> int:
    """NodeResourceEstimator.EstimateComponents: complete sets that fit the member's nodes after the
    assumed workloads are placed; MAX_INT32 (no constraint) for no components."""
    if not components:
        return MAX_INT32
    sim = SchedulingSimulator(nodes)
    simulate_assumed(sim, assumed)
    return sim.simulate(components, MAX_INT32)
