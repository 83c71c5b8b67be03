"""The ResourceSlices a node reaches, as the structured allocator gathers them: pools at their
newest generation, incomplete and invalid ones marked, the devices of the others in search order
(``SliceIndex`` keeps them per node while the slices stay the same)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from kubesched.api.objects import Node
from kubesched.api.selectors import NodeSelector
from kubesched.dra.objects import Device, ResourceSlice

DeviceID = tuple[str, str, str]  # (driver, pool, device)


def device_id_text(d: DeviceID) -> str:
    return "/".join(d)


@dataclass(frozen=True, slots=True)
class Features:
    """structured.Features, from the feature gates (DynamicResources' AllocatorFeatures)."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = True
    device_taints: bool = True
    device_binding_and_status: bool = True
    consumable_capacity: bool = True


def node_matches(node: Node | None, node_name: str, all_nodes: bool, selector: NodeSelector | None) -> bool:
    """nodeMatches: a node name, all nodes, or a node selector (none of them: no node)."""
    if node_name:
        return node is not None and node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return node is not None and selector.matches(node.labels, node.name)
    return False


@dataclass(slots=True)
class Pool:
    """A pool at its newest generation among the slices that target the node: devices come from
    those slices; completeness and the shared counters count the pool's other slices of that
    generation too (a pool may span nodes)."""

    driver: str
    name: str
    generation: int
    slices: list[ResourceSlice]  # targeting the node
    others: list[ResourceSlice] = field(default_factory=list)  # same generation, other nodes
    incomplete: bool = False
    invalid: bool = False

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"


def _targets(s: ResourceSlice, node: Node | None, features: Features) -> bool | None:
    """Whether the slice offers devices on the node (None: a node selection kubesched does not know)."""
    if s.node_name or s.all_nodes or s.node_selector is not None:
        return node_matches(node, s.node_name, s.all_nodes, s.node_selector)
    if s.per_device_node_selection:
        return any(node_matches(node, d.node_name, d.all_nodes, d.node_selector) for d in s.devices)
    return None


def gather_pools(
    slices: Sequence[ResourceSlice],
    node: Node | None,
    features: Features,
    by_pool: Mapping[tuple[str, str], Sequence[ResourceSlice]] | None = None,
) -> list[Pool]:
    """GatherPools: the pools with devices the node can reach, at their newest generation among
    the slices targeting the node; incomplete (fewer slices of that generation than
    ``resourceSliceCount``) and invalid (a device name twice; with partitionable devices, a counter
    set defined twice or a consumption naming an unknown set or counter) pools are marked.
    ``slices`` are those that may target the node (upstream's slicesOnNode and slicesShared);
    ``by_pool`` every slice of each pool (default: ``slices``), for completeness and counters."""
    pools: dict[tuple[str, str], Pool] = {}
    for s in slices:
        if not features.partitionable_devices and s.per_device_node_selection is not None:
            continue
        if not _targets(s, node, features):
            continue
        key = (s.driver, s.pool)
        pool = pools.get(key)
        if pool is None or s.generation > pool.generation:
            pools[key] = Pool(s.driver, s.pool, s.generation, [s])
        elif s.generation == pool.generation:
            pool.slices.append(s)
    if by_pool is None:
        grouped: dict[tuple[str, str], list[ResourceSlice]] = {}
        for s in slices:
            grouped.setdefault((s.driver, s.pool), []).append(s)
        by_pool = grouped
    for key, pool in pools.items():
        mine = set(map(id, pool.slices))
        pool.others = [
            s
            for s in by_pool.get(key, ())
            if id(s) not in mine
            and s.generation == pool.generation
            and (features.partitionable_devices or s.per_device_node_selection is None)
            and _targets(s, node, features) is False
        ]
        every = [*pool.slices, *pool.others]
        pool.incomplete = len(every) != pool.slices[0].slice_count
        pool.invalid = _pool_invalid(every, features)
    return list(pools.values())


@dataclass(slots=True)
class Candidate:
    device: Device
    id: DeviceID
    slice: ResourceSlice
    pool: Pool


@dataclass(frozen=True, slots=True)
class NodeView:
    """What a node reaches: its pools, the devices of the complete and valid ones in search
    order, and the pools' keys (what the allocation cache's versions are read by)."""

    pools: list[Pool]
    candidates: list[Candidate]
    keys: tuple[tuple[str, str], ...]


class SliceIndex:
    """The cluster's ResourceSlices by the node they name and by pool (upstream's slicesOnNode
    and slicesShared), and per node the pools it reaches and their devices in search order,
    kept while the slices stay the same (they depend on the slices, the node and the features
    only; ``kubesched.dra.store.DraState`` keeps one per generation of its slices)."""

    def __init__(self, slices: Sequence[ResourceSlice]) -> None:
        self.slices = list(slices)
        self.on_node: dict[str, list[ResourceSlice]] = {}
        self.shared: list[ResourceSlice] = []
        self.by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
        for s in self.slices:
            (self.on_node.setdefault(s.node_name, []) if s.node_name else self.shared).append(s)
            self.by_pool.setdefault((s.driver, s.pool), []).append(s)
        # node name -> (the Node it was gathered for, features, its view)
        self._views: dict[str, tuple[Node | None, Features, NodeView]] = {}

    def view(self, node: Node | None, features: Features) -> NodeView:
        """The pools the node reaches and the devices of the complete, valid ones in slice order."""
        name = node.name if node is not None else ""
        hit = self._views.get(name)
        if hit is not None and hit[0] is node and (hit[1] is features or hit[1] == features):
            return hit[2]
        mine = [*self.on_node.get(name, ()), *self.shared] if node is not None else self.shared
        pools = gather_pools(mine, node, features, self.by_pool)
        candidates = [
            Candidate(d, (pool.driver, pool.name, d.name), s, pool)
            for pool in pools
            if not (pool.incomplete or pool.invalid)
            for s in pool.slices
            for d in s.devices
        ]
        if len(self._views) > 100_000:
            self._views.clear()
        view = NodeView(pools, candidates, tuple((p.driver, p.name) for p in pools))
        self._views[name] = (node, features, view)
        return view


def _pool_invalid(slices: list[ResourceSlice], features: Features) -> bool:
    names: set[str] = set()
    counter_sets: dict[str, dict[str, Fraction]] = {}
    for s in slices:
        for d in s.devices:
            if d.name in names:
                return True
            names.add(d.name)
        if features.partitionable_devices:
            for name, counters in s.shared_counters.items():
                if name in counter_sets:
                    return True
                counter_sets[name] = counters
    if features.partitionable_devices:
        for s in slices:
            for d in s.devices:
                for cc in d.consumes_counters:
                    have = counter_sets.get(cc.counter_set)
                    if have is None or any(c not in have for c in cc.counters):
                        return True
    return False
