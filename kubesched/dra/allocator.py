"""The structured allocator of k8s.io/dynamic-resource-allocation (``structured``), v1.36.

For one node and the pod's claims that are not allocated yet, find devices in the ResourceSlices
the node can reach: per pool the newest generation only, incomplete pools (fewer slices than
``resourceSliceCount``) and invalid ones (a device name twice) not used. Each request (or the
first ``firstAvailable`` subrequest that works) gets ``count`` devices (``ExactCount``) or every
matching device (``All``) that its DeviceClass's and its own CEL selectors select, that no other
claim holds (an ``adminAccess`` request takes devices in use too, and holds none), whose taints
it tolerates, within the pool's shared counters (partitionable devices), and that keep every
``matchAttribute`` constraint of the claim. The search is upstream's: depth first over claims,
requests and devices in slice order (within one request, each device after the one before it:
combinations, not permutations), the first complete solution wins.

Consumable capacity (DRAConsumableCapacity, the incubating allocator's): with the feature on,
every candidate device must hold what the request asks of its capacities (``capacity.requests``,
rounded up by the capacity's ``requestPolicy``; a capacity the request does not name consumes
the policy's default, else all of it) on top of what allocated claims and the search so far
consume; a device that ``allowMultipleAllocations`` may then be allocated again, by other claims
and requests, each result getting a share ID and its consumed capacity. ``distinctAttribute``
constraints are kept (every device of the named requests has a different value).

Not upstream's: ``Allocator.allocate(..., prefer=...)`` tries the given devices first (see
``prefer``); without it the search is upstream's. Not modelled: device taint rules
(DRADeviceTaintRules, off in v1.36), the binding conditions' wait (devices with binding
conditions are allocated, nothing waits for them) and fractional capacity ranges
(DRAFractionalCapacityRange, after v1.36).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kubesched.api.objects import Node
from kubesched.api.quantity import value as qvalue
from kubesched.api.selectors import NodeSelector
from kubesched.dra.cel import CelError, Selector, compile_selector, device_input
from kubesched.dra.objects import (
    ALL,
    ALLOCATION_RESULTS_MAX_SIZE,
    EXACT_COUNT,
    Allocation,
    Attribute,
    CapacityPolicy,
    Device,
    DeviceClass,
    DeviceResult,
    ExactRequest,
    ResourceClaim,
    ResourceSlice,
)

DeviceID = tuple[str, str, str]  # (driver, pool, device)
#: fully qualified capacity name (``<domain>/<name>``) -> amount
Consumed = Mapping[str, Fraction]
#: a namespace for share IDs: offline they are derived from the claim, request and device
#: (upstream draws random UUIDs), so the same input always gives the same allocation
_SHARE_KEY = b"kubesched share ID"


def device_id_text(d: DeviceID) -> str:
    return "/".join(d)


class AllocationError(Exception):
    """The claims or classes are broken (unknown class, CEL error, ...): allocation must stop on
    every node. The text is upstream's error."""


class FailedOnNode(Exception):
    """ErrFailedAllocationOnNode: this node cannot be used, others may (invalid pools)."""


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


@dataclass(frozen=True, slots=True)
class NodeView:
    """What a node reaches: its pools, the devices of the complete and valid ones in search
    order, and the pools' keys (what the allocation cache's versions are read by)."""

    pools: list[Pool]
    candidates: list[_Candidate]
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
            _Candidate(d, (pool.driver, pool.name, d.name), s, pool)
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


class MatchCache:
    """(selector text, device) -> verdict (True, False, or the CelError text). A verdict depends
    on the expression and what CEL sees of the device (driver, attributes, capacity,
    ``allowMultipleAllocations``) alone, so it holds across cycles, nodes, and devices that look
    the same (the GPUs of one model on every node: one evaluation each)."""

    def __init__(self, limit: int = 200_000) -> None:
        self._verdicts: dict[tuple[str, tuple], bool | str] = {}
        self._inputs: dict[tuple[str, Device], tuple] = {}  # (driver, device) -> what CEL sees
        self._limit = limit

    def __len__(self) -> int:
        return len(self._verdicts)

    def verdict(self, selector: Selector, driver: str, device: Device) -> bool | str:
        seen = self._inputs.get((driver, device))
        if seen is None:
            if len(self._inputs) >= self._limit:
                self._inputs.clear()
            seen = self._inputs[(driver, device)] = (
                driver,
                tuple(sorted(device.attributes.items())),
                tuple(sorted(device.capacity.items())),
                device.allow_multiple_allocations,
            )
        key = (selector.expression, seen)
        hit = self._verdicts.get(key)
        if hit is not None:
            return hit
        try:
            out: bool | str = selector.matches(
                device_input(driver, device.attributes, device.capacity, device.allow_multiple_allocations)
            )
        except CelError as e:
            out = str(e)
        if len(self._verdicts) >= self._limit:
            self._verdicts.clear()
        self._verdicts[key] = out
        return out


@dataclass(slots=True)
class _Candidate:
    device: Device
    id: DeviceID
    slice: ResourceSlice
    pool: Pool


@dataclass(slots=True)
class _RequestData:
    request: ExactRequest
    parent: str  # the request's name when ``request`` is a subrequest, else ""
    name: str  # the request's own name
    class_: DeviceClass
    num_devices: int
    all_devices: list[_Candidate] = field(default_factory=list)

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name


def _applies(requests: frozenset[str], request: str, sub: str) -> bool:
    """Whether a constraint naming ``requests`` (none: all) covers the request or subrequest."""
    if not requests:
        return True
    return request in requests or (bool(sub) and f"{request}/{sub}" in requests)


@dataclass(slots=True)
class _MatchAttribute:
    """matchAttributeConstraint: every device of the named requests has the same value."""

    requests: frozenset[str]
    attribute: str
    value: Attribute | None = None
    count: int = 0

    def add(self, request: str, sub: str, device: Device, did: DeviceID) -> bool:
        if not _applies(self.requests, request, sub):
            return True
        attr = lookup_attribute(device, did, self.attribute)
        if attr is None:
            return False
        if self.count == 0:
            self.value, self.count = attr, 1
            return True
        if self.value != attr:
            return False
        self.count += 1
        return True

    def remove(self, request: str, sub: str) -> None:
        if _applies(self.requests, request, sub):
            self.count -= 1


@dataclass(slots=True)
class _DistinctAttribute:
    """distinctAttributeConstraint (consumable capacity): every device of the named requests has
    the attribute, each with another value. As upstream, the candidate is compared with the
    values taken so far in order, and a value of another kind than the first one compared
    ends the comparison as distinct."""

    requests: frozenset[str]
    attribute: str
    values: list[Attribute] = field(default_factory=list)

    def add(self, request: str, sub: str, device: Device, did: DeviceID) -> bool:
        if not _applies(self.requests, request, sub):
            return True
        attr = lookup_attribute(device, did, self.attribute)
        if attr is None or not self._distinct(attr):
            return False
        self.values.append(attr)
        return True

    def _distinct(self, attr: Attribute) -> bool:
        for kind, value in self.values:
            if kind != attr[0]:
                return True
            if value == attr[1]:
                return False
        return True

    def remove(self, request: str, sub: str) -> None:
        if _applies(self.requests, request, sub):
            self.values.pop()


def lookup_attribute(device: Device, did: DeviceID, name: str) -> Attribute | None:
    """A fully qualified attribute; the driver's own domain may be left out on the device."""
    attr = device.attributes.get(name)
    if attr is not None:
        return attr
    domain, sep, ident = name.partition("/")
    if not sep or domain != did[0]:
        return None
    return device.attributes.get(ident)


# ---- consumable capacity -----------------------------------------------------------------------
def _num(q: Fraction) -> Fraction | int:
    """A whole quantity as an int (the search adds and compares many: ints are faster)."""
    return q.numerator if q.denominator == 1 else q


def _qualified(name: str, driver: str) -> str:
    """MakeFullyQualifiedName: a name without a domain is the driver's."""
    return name if "/" in name else f"{driver}/{name}"


_CAPACITIES: dict[tuple[Device, str], dict[str, tuple[str, Fraction, CapacityPolicy | None]]] = {}


def device_capacities(device: Device, driver: str) -> dict[str, tuple[str, Fraction, CapacityPolicy | None]]:
    """resolveDeviceCapacity: fully qualified name -> (the name as the device writes it, value,
    request policy); a name written with the driver's domain wins over the same name without.
    Kept per device (a device object never changes)."""
    hit = _CAPACITIES.get((device, driver))
    if hit is not None:
        return hit
    out: dict[str, tuple[str, Fraction, CapacityPolicy | None]] = {}
    prefix = driver + "/"
    for name, value in device.capacity.items():
        if name.startswith(prefix):
            out[name] = (name, _num(value), device.capacity_policies.get(name))
    for name, value in device.capacity.items():
        key = _qualified(name, driver)
        if key not in out:
            out[key] = (name, _num(value), device.capacity_policies.get(name))
    if len(_CAPACITIES) > 200_000:
        _CAPACITIES.clear()
    _CAPACITIES[(device, driver)] = out
    return out


def _request_key(name: str, driver: str, capacity: Mapping[str, Fraction]) -> str | None:
    """resolveCapacityName: the device capacity a request names (its domain may be left out,
    or given as the driver's), or None."""
    if name in capacity:
        return _qualified(name, driver)
    domain, sep, ident = name.partition("/")
    if sep:
        return name if domain == driver and ident in capacity else None
    return f"{driver}/{name}" if f"{driver}/{name}" in capacity else None


def _round_up_range(requested: Fraction, policy: CapacityPolicy) -> Fraction:
    """roundUpRange on the integer path (Quantity.Value() rounds up)."""
    assert policy.min is not None
    if requested < policy.min:
        return policy.min
    if policy.step is None:
        return requested
    step, low = qvalue(policy.step), qvalue(policy.min)
    n = -((qvalue(requested) - low) // -step)  # ceil
    return Fraction(low + step * n)


def consumed_amount(requested: Fraction | None, value: Fraction, policy: CapacityPolicy | None) -> Fraction:
    """calculateConsumedCapacity: what one allocation consumes of a capacity: the request
    (rounded up to the policy's range steps or next valid value), else the policy's default,
    else all of it."""
    if requested is None:
        return policy.default if policy is not None and policy.default is not None else value
    if policy is None:
        return requested
    if policy.has_range and policy.min is not None:
        return _round_up_range(requested, policy)
    if policy.valid_values:
        return next((v for v in policy.valid_values if requested <= v), requested)
    return requested


def violates_policy(amount: Fraction, policy: CapacityPolicy | None) -> bool:
    """violatesPolicy: above the range's maximum, off its steps, or not a valid value (the
    default always passes)."""
    if policy is None or (policy.default is not None and amount == policy.default):
        return False
    if policy.has_range:
        if policy.max is not None and amount > policy.max:
            return True
        if policy.step is not None:
            return (qvalue(amount) - qvalue(policy.min or Fraction(0))) % qvalue(policy.step) != 0
        return False
    if policy.valid_values:
        return amount not in policy.valid_values
    return False


def request_consumes(requests: Mapping[str, Fraction] | None, device: Device, driver: str) -> dict[str, Fraction] | None:
    """What one allocation of the device consumes per capacity (fully qualified names), or None
    when the request names a capacity the device does not have (twice, in both spellings), or a
    consumption is negative: upstream skips the device then."""
    caps = device_capacities(device, driver)
    wanted: dict[str, Fraction] = {}
    for name, amount in (requests or {}).items():
        key = _request_key(name, driver, device.capacity)
        if key is None or key in wanted:
            return None
        wanted[key] = _num(amount)
    out = {key: consumed_amount(wanted.get(key), value, policy) for key, (_, value, policy) in caps.items()}
    return None if any(v < 0 for v in out.values()) else out


def capacity_fits(
    consumes: Mapping[str, Fraction], device: Device, driver: str, current: Consumed | None, allocating: Consumed | None
) -> bool:
    """cmpRequestOverCapacity: each consumption keeps its policy, and what allocated claims
    (``current``), the search so far (``allocating``) and this request consume together stays
    within the capacity."""
    for key, (_, value, policy) in device_capacities(device, driver).items():
        amount = consumes[key]
        if violates_policy(amount, policy):
            return False
        total = amount + (current.get(key, 0) if current else 0) + (allocating.get(key, 0) if allocating else 0)
        if total > value:
            return False
    return True


class _Stop(Exception):
    """errAllocationResultMaxSizeExceeded: back off further."""


class AllocationCache:
    """What ``Allocator.allocate`` found on a node for claims of one spec, while nothing it
    depends on changed: kept under (node, the claims' specs, features, the versions of the
    node's pools: how often what their devices' holders hold changed). Its owner clears it when
    classes or slices change. Not upstream's, which searches on every node of every cycle; the
    answers are the same (a share ID is made anew for the claim asking)."""

    LIMIT = 100_000  # entries per spec; and specs kept

    def __init__(self) -> None:
        # (claims' spec key, features) -> (node name, versions of its pools) -> (node, answer)
        self._buckets: dict[tuple, dict[tuple, tuple[Node, list[Allocation] | None]]] = {}

    def __len__(self) -> int:
        return sum(map(len, self._buckets.values()))

    def clear(self) -> None:
        self._buckets.clear()

    def bucket(self, key: Any, features: Features) -> dict[tuple, tuple[Node, list[Allocation] | None]]:
        """The answers for claims of one spec (an allocator takes it once, then asks per node)."""
        b = self._buckets.get((key, features))
        if b is None:
            if len(self._buckets) >= self.LIMIT:
                self._buckets.clear()
            b = self._buckets[(key, features)] = {}
        elif len(b) >= self.LIMIT:
            b.clear()
        return b


def with_share_ids(allocations: list[Allocation], claims: Sequence[ResourceClaim]) -> list[Allocation]:
    """The allocations with the share IDs of ``claims`` (derived from the claim, the request and
    the device, as the search makes them): a cached answer found for other claims of the same
    spec, made theirs."""
    out = []
    for allocation, claim in zip(allocations, claims, strict=True):
        if all(r.share_id is None for r in allocation.results):
            out.append(allocation)
            continue
        seen: dict[tuple[str, str, str], int] = {}
        results = []
        for r in allocation.results:
            if r.share_id is not None:
                did = (r.driver, r.pool, r.device)
                n = seen.get(did, 0)
                seen[did] = n + 1
                share = _share_id(f"{claim.uid}/{r.request}/{r.driver}/{r.pool}/{r.device}/{n}")
                # the constructors, not dataclasses.replace: this runs for every node of a cycle
                r = DeviceResult(r.request, r.driver, r.pool, r.device, r.admin_access, r.tolerations, share, r.consumed_capacity)
            results.append(r)
        out.append(Allocation(tuple(results), allocation.config, allocation.node_selector, allocation.node_selector_raw))
    return out


class Allocator:
    """structured.Allocator: the cluster's devices and who holds them, for one scheduling cycle;
    ``allocate`` is asked per node. ``allocated``: devices allocated claims hold whole (a
    container: read, never copied); ``consumed``: per device shared by several claims, what they
    consume of each capacity (fully qualified names), as upstream's AllocatedState.

    With a ``cache`` and ``versions`` (per pool, bumped whenever what its devices' holders hold
    changes), answers are kept per node for the claims' spec ``cache_key`` (their specs, in
    order; the caller vouches that every ``allocate`` is for claims of that spec)."""

    def __init__(
        self,
        features: Features,
        allocated: Collection[DeviceID],
        classes: Mapping[str, DeviceClass],
        slices: Sequence[ResourceSlice] | SliceIndex,
        matches: MatchCache | None = None,
        *,
        deadline: Callable[[], bool] | None = None,
        consumed: Mapping[DeviceID, Consumed] | None = None,
        cache: AllocationCache | None = None,
        cache_key: Any = None,
        versions: Mapping[tuple[str, str], int] | None = None,
        timeout: float = 0.0,
    ) -> None:
        self._answers = cache.bucket(cache_key, features) if cache is not None and cache_key is not None else None
        self.versions: Mapping[tuple[str, str], int] = versions if versions is not None else {}
        self.timeout = timeout  # seconds one node's search may take (0: no limit): filterTimeout
        self.features = features
        self.allocated = allocated
        self.consumed: Mapping[DeviceID, Consumed] = consumed if consumed is not None else {}
        self.classes = classes
        self.index = slices if isinstance(slices, SliceIndex) else SliceIndex(slices)
        self.matches = matches if matches is not None else MatchCache()
        self.deadline = deadline
        self.steps = 0  # allocateOne invocations, as upstream's Stats

    @property
    def slices(self) -> list[ResourceSlice]:
        return self.index.slices

    def allocate(
        self,
        node: Node | None,
        claims: Sequence[ResourceClaim],
        *,
        prefer: Sequence[DeviceID] = (),
        shares: bool = True,
    ) -> list[Allocation] | None:
        """One AllocationResult per claim, or None when the node has no solution. AllocationError
        for a broken claim or class, FailedOnNode when invalid pools may be why.

        ``prefer`` (not upstream's): devices the search tries first, in that order, before the
        others in slice order; a caller that chose devices itself (a GPU-sharing policy) gets
        them whenever they can satisfy the claims. ``shares=False``: a cached answer keeps the
        share IDs of the claims it was found for (a verdict, or a choice to make the claims'
        with ``with_share_ids`` before it is written)."""
        answers = self._answers
        if answers is None or prefer or node is None:
            return _Run(self, node, claims, prefer).run()
        key = (node.name, tuple(map(self.versions.get, self.index.view(node, self.features).keys)))
        hit = answers.get(key)
        if hit is not None and hit[0] is node:
            if hit[1] is None or not shares:
                return hit[1]
            return with_share_ids(hit[1], claims)
        out = _Run(self, node, claims, prefer).run()
        answers[key] = (node, out)
        return out


class _Run:
    def __init__(self, a: Allocator, node: Node | None, claims: Sequence[ResourceClaim], prefer: Sequence[DeviceID]) -> None:
        self.a = a
        self.node = node
        self.claims = claims
        self.prefer = prefer
        self.end = time.monotonic() + a.timeout if a.timeout > 0 else None
        self.pools: list[Pool] = []
        self.candidates: list[_Candidate] = []
        self.requests: dict[tuple[int, int, int], _RequestData] = {}
        self.selected_sub: dict[tuple[int, int], int] = {}
        self.constraints: list[list[_MatchAttribute | _DistinctAttribute]] = []
        # per claim: (result, slice, device) of each device taken so far
        self.results: list[list[tuple[DeviceResult, ResourceSlice, Device]]] = [[] for _ in claims]
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        self.match_memo: dict[tuple[tuple[int, int, int], DeviceID], bool] = {}
        self.consumes_memo: dict[tuple[int, DeviceID], dict[str, Fraction] | None] = {}
        self.available_counters: dict[str, dict[str, dict[str, Fraction]]] = {}
        self.consumed_counters: dict[str, dict[str, dict[str, Fraction]]] = {}

    # ---- set-up ------------------------------------------------------------------------
    def run(self) -> list[Allocation] | None:
        view = self.a.index.view(self.node, self.a.features)
        self.pools = view.pools
        self.candidates = _preferred_first(view.candidates, self.prefer) if self.prefer else view.candidates
        consumable = self.a.features.consumable_capacity
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, req in enumerate(claim.spec.requests):
                if req.first_available:
                    if not self.a.features.prioritized_list:
                        raise AllocationError(
                            f"claim {claim.key}, request {req.name}: has subrequests, but the DRAPrioritizedList feature is disabled"
                        )
                if not consumable:
                    if req.exactly is not None and req.exactly.capacity is not None:
                        raise AllocationError(
                            f"claim {claim.key}, request {req.name}: has capacity requests, but the DRAConsumableCapacity feature is disabled"
                        )
                    for sub in req.first_available:
                        if sub.capacity is not None:
                            raise AllocationError(
                                f"claim {claim.key}, subrequest {sub.name}: has capacity requests, but the DRAConsumableCapacity feature is disabled"
                            )
                if req.first_available:
                    least = None
                    for si, sub in enumerate(req.first_available):
                        data = self._validate(claim, sub, req.name, (ci, ri, si))
                        self.requests[(ci, ri, si)] = data
                        least = data.num_devices if least is None else min(least, data.num_devices)
                    min_devices += least or 0
                elif req.exactly is not None:
                    data = self._validate(claim, req.exactly, "", (ci, ri, 0), own_name=req.name)
                    self.requests[(ci, ri, 0)] = data
                    min_devices += data.num_devices
                else:
                    raise AllocationError(f"claim {claim.key}, request {req.name}: missing device class name (unsupported request type?)")
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {claim.key}: number of requested devices {min_devices} exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            constraints: list[_MatchAttribute | _DistinctAttribute] = []
            for i, c in enumerate(claim.spec.constraints):
                if c.match_attribute:
                    constraints.append(_MatchAttribute(frozenset(c.requests), c.match_attribute))
                elif c.distinct_attribute and consumable:
                    constraints.append(_DistinctAttribute(frozenset(c.requests), c.distinct_attribute))
                else:
                    raise AllocationError(f"claim {claim.key}, constraint #{i}: empty constraint (unsupported constraint type?)")
            self.constraints.append(constraints)
        try:
            done = self._allocate_one(0, 0, 0, 0, False, 0)
        except _Stop:
            done = False
        if not done:
            if any(p.invalid for p in self.pools):
                raise FailedOnNode("invalid resource pools were encountered")
            return None
        return [self._result(ci, claim) for ci, claim in enumerate(self.claims)]

    def _validate(
        self, claim: ResourceClaim, req: ExactRequest, parent: str, key: tuple[int, int, int], own_name: str = ""
    ) -> _RequestData:
        name = req.name or own_name
        shown = f"{parent}/{name}" if parent else name
        for i, sel in enumerate(req.selectors):
            if not sel:
                raise AllocationError(
                    f"claim {claim.key}, request {shown}, selector #{i}: CEL expression empty (unsupported selector type?)"
                )
        if req.admin_access is not None and not self.a.features.admin_access:
            raise AllocationError(f"claim {claim.key}, request {shown}: admin access is requested, but the feature is disabled")
        if not req.device_class:
            raise AllocationError(f"claim {claim.key}, request {shown}: missing device class name (unsupported request type?)")
        cls = self.a.classes.get(req.device_class)
        if cls is None:
            raise AllocationError(
                f"claim {claim.key}, request {shown}: could not retrieve device class {req.device_class}: "
                f'deviceclass.resource.k8s.io "{req.device_class}" not found'
            )
        data = _RequestData(req, parent, name, cls, 0)
        if req.mode == EXACT_COUNT:
            data.num_devices = req.count
        elif req.mode == ALL:
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"claim {claim.key}, request {shown}: asks for all devices, but resource pool {pool.pool_id} is currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"claim {claim.key}, request {shown}: asks for all devices, but resource pool {pool.pool_id} is currently invalid"
                    )
                for s in pool.slices:
                    for d in s.devices:
                        cand = _Candidate(d, (s.driver, s.pool, d.name), s, pool)
                        if self._selectable(key, data, cand) and (
                            not self.a.features.consumable_capacity or self._capacity_ok(data, cand)
                        ):
                            data.all_devices.append(cand)
            data.num_devices = len(data.all_devices)
        else:
            raise AllocationError(f"claim {claim.key}, request {shown}: unsupported count mode {req.mode}")
        return data

    # ---- the search --------------------------------------------------------------------
    def _allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: int) -> bool:
        """Devices for device ``di`` of request ``ri`` (subrequest ``si``) of claim ``ci`` on,
        taking the request's next device from candidate ``start`` on (combinations, as
        upstream's startLocation)."""
        self.a.steps += 1
        if self.end is not None and time.monotonic() > self.end:
            raise TimeoutError("timed out trying to allocate devices")
        if self.a.deadline is not None and self.a.deadline():
            raise TimeoutError("timed out trying to allocate devices")
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.spec.requests):
            try:
                return self._allocate_one(ci + 1, 0, 0, 0, False, 0)
            except _Stop:
                return False  # another subrequest of an earlier claim may need fewer devices
        data = self.requests[(ci, ri, si)]
        if not in_sub and data.parent:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.requests:
                try:
                    ok = self._allocate_one(ci, ri, sub, di, True, 0)
                except _Stop:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    self.selected_sub[(ci, ri)] = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _Stop
            return False
        req = data.request
        if req.mode == ALL and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self._allocate_one(ci, ri + 1, 0, 0, False, 0)
        if len(self.results[ci]) + data.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _Stop
        key = (ci, ri, si)
        if req.mode == ALL:
            cand = data.all_devices[di]
            undo = self._allocate_device(ci, key, data, cand, must=True)
            if undo is None:
                return False
            try:
                done = self._allocate_one(ci, ri, si, di + 1, in_sub, 0)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        admin = bool(req.admin_access)
        consumable = self.a.features.consumable_capacity
        candidates = self.candidates
        for k in range(start, len(candidates)):
            cand = candidates[k]
            did = cand.id
            if admin and ci in self.allocating.get(did, ()):
                continue
            if not admin and self._in_use(did):
                continue
            if not self._selectable(key, data, cand):
                continue
            if consumable and not self._capacity_ok(data, cand):
                continue
            undo = self._allocate_device(ci, key, data, cand, must=False)
            if undo is None:
                continue
            try:
                done = self._allocate_one(ci, ri, si, di + 1, in_sub, k + 1)
            except BaseException:
                undo()
                raise
            if done:
                return True
            undo()
        return False

    def _in_use(self, did: DeviceID) -> bool:
        return did in self.a.allocated or bool(self.allocating.get(did))

    def _capacity_in_use(self, did: DeviceID) -> bool:
        return did in self.a.consumed or did in self.allocating_capacity

    def _consumes(self, data: _RequestData, cand: _Candidate) -> dict[str, Fraction] | None:
        key = (id(data.request), cand.id)
        if key in self.consumes_memo:
            return self.consumes_memo[key]
        out = self.consumes_memo[key] = request_consumes(data.request.capacity, cand.device, cand.id[0])
        return out

    def _capacity_ok(self, data: _RequestData, cand: _Candidate) -> bool:
        """CmpRequestOverCapacity for a candidate."""
        consumes = self._consumes(data, cand)
        if consumes is None:
            return False
        return capacity_fits(
            consumes, cand.device, cand.id[0], self.a.consumed.get(cand.id), self.allocating_capacity.get(cand.id)
        )

    def _selectable(self, key: tuple[int, int, int], data: _RequestData, cand: _Candidate) -> bool:
        """isSelectable: the class's selectors, the request's, and per-device node selection."""
        d = cand.device
        if not self.a.features.device_binding_and_status and d.binding_conditions:
            return False
        memo_key = (key, cand.id)
        hit = self.match_memo.get(memo_key)
        if hit is not None:
            return hit
        ok = self._selectors_match(key[0], cand, data.class_.selectors, data.class_) and self._selectors_match(
            key[0], cand, data.request.selectors, None
        )
        if ok and cand.slice.per_device_node_selection:
            ok = node_matches(self.node, d.node_name, d.all_nodes, d.node_selector)
        self.match_memo[memo_key] = ok
        return ok

    def _selectors_match(self, ci: int, cand: _Candidate, selectors: Sequence[str], cls: DeviceClass | None) -> bool:
        for i, expr in enumerate(selectors):
            sel = compile_selector(expr)
            owner = f"class {cls.name}" if cls is not None else f"claim {self.claims[ci].key}"
            if sel.program is None:
                raise AllocationError(f"{owner}: selector #{i}: CEL compile error: {sel.error}")
            verdict = self.a.matches.verdict(sel, cand.id[0], cand.device)
            if isinstance(verdict, str):
                raise AllocationError(
                    f"{owner}: selector #{i} on device {device_id_text(cand.id)}: CEL runtime error: {verdict}"
                )
            if not verdict:
                return False
        return True

    def _allocate_device(
        self, ci: int, key: tuple[int, int, int], data: _RequestData, cand: _Candidate, *, must: bool
    ) -> Callable[[], None] | None:
        """allocateDevice: availability, counters, taints, constraints, capacity; the undo, or None."""
        req = data.request
        admin = bool(req.admin_access)
        features = self.a.features
        multiple = features.consumable_capacity and cand.device.allow_multiple_allocations
        if not multiple and admin and ci in self.allocating.get(cand.id, ()):
            return None
        if not admin and self._in_use(cand.id):
            return None
        d = cand.device
        if d.consumes_counters and not features.partitionable_devices:
            return None
        # a shared device already in use has its counters counted once
        counters = bool(d.consumes_counters) and not (multiple and self._capacity_in_use(cand.id))
        if counters and not self._take_counters(cand):
            return None
        base, sub = (data.parent, data.name) if data.parent else (data.name, "")
        if features.device_taints and _taint_prevents(d, req):
            if counters:
                self._return_counters(cand)
            return None
        added = []
        for c in self.constraints[ci]:
            if not c.add(base, sub, d, cand.id):
                if must:
                    claim = self.claims[ci]
                    raise AllocationError(
                        f"claim {claim.key}, request {req.name or data.name}: cannot add device "
                        f"{device_id_text(cand.id)} because a claim constraint would not be satisfied"
                    )
                for c2 in added:
                    c2.remove(base, sub)
                if counters:
                    self._return_counters(cand)
                return None
            added.append(c)
        claiming = self.allocating.setdefault(cand.id, set())
        if not multiple:
            claiming.add(ci)
        share_id: str | None = None
        consumed: dict[str, Fraction] | None = None
        if features.consumable_capacity:
            if not self._capacity_ok(data, cand):  # checked before: cannot fail here
                for c in self.constraints[ci]:
                    c.remove(base, sub)
                claiming.discard(ci)
                if counters:
                    self._return_counters(cand)
                return None
            if multiple:
                consumed = self._consumes(data, cand)
                assert consumed is not None
                mine = self.allocating_capacity.setdefault(cand.id, {})
                for name, amount in consumed.items():
                    mine[name] = mine.get(name, 0) + amount
                claim = self.claims[ci]
                n = sum(1 for r, _, _ in self.results[ci] if r.device_id == cand.id)
                share_id = _share_id(f"{claim.uid}/{data.full_name}/{device_id_text(cand.id)}/{n}")
        result = DeviceResult(
            data.full_name,
            cand.id[0],
            cand.id[1],
            cand.id[2],
            True if admin else None,
            req.tolerations,
            share_id,
            _status_names(consumed, d, cand.id[0]) if consumed else None,  # none consumed: unset, as upstream
        )
        n = len(self.results[ci])
        self.results[ci].append((result, cand.slice, d))

        def undo() -> None:
            for c in self.constraints[ci]:
                c.remove(base, sub)
            self.allocating[cand.id].discard(ci)
            if consumed is not None:
                mine = self.allocating_capacity[cand.id]
                for name, amount in consumed.items():
                    mine[name] -= amount
                if not any(mine.values()):
                    del self.allocating_capacity[cand.id]
            elif counters:
                # as upstream's rollback: a shared device's counters are not given back
                self._return_counters(cand)
            del self.results[ci][n:]

        return undo

    # ---- partitionable devices: shared counters ----------------------------------------
    def _take_counters(self, cand: _Candidate) -> bool:
        """checkAvailableCounters: the pool's counters less those of allocated devices must cover
        what the devices being allocated consume."""
        pool = cand.pool
        avail = self.available_counters.get(pool.name)
        if avail is None:
            avail = {}
            every = [*pool.slices, *pool.others]
            for s in every:
                for name, counters in s.shared_counters.items():
                    avail[name] = dict(counters)
            for s in every:
                for d in s.devices:
                    did = (s.driver, s.pool, d.name)
                    if did not in self.a.allocated and not self.a.consumed.get(did):
                        continue
                    for cc in d.consumes_counters:
                        have = avail.get(cc.counter_set)
                        if have is None:
                            continue
                        for name, v in cc.counters.items():
                            if name in have:
                                have[name] -= v
            self.available_counters[pool.name] = avail
        used = self.consumed_counters.setdefault(pool.name, {})
        for cc in cand.device.consumes_counters:
            mine = used.setdefault(cc.counter_set, {})
            for name, v in cc.counters.items():
                mine[name] = mine.get(name, Fraction(0)) + v
        for set_name, counters in avail.items():
            mine = used.get(set_name, {})
            for name, v in counters.items():
                if v < mine.get(name, Fraction(0)):
                    self._return_counters(cand)
                    return False
        return True

    def _return_counters(self, cand: _Candidate) -> None:
        used = self.consumed_counters.get(cand.pool.name, {})
        for cc in cand.device.consumes_counters:
            mine = used.get(cc.counter_set, {})
            for name, v in cc.counters.items():
                mine[name] = mine.get(name, Fraction(0)) - v

    # ---- the result --------------------------------------------------------------------
    def _result(self, ci: int, claim: ResourceClaim) -> Allocation:
        results = self.results[ci]
        config: list[dict] = []
        class_ranges: dict[str, tuple[int, int]] = {}
        for ri, req in enumerate(claim.spec.requests):
            si = self.selected_sub.get((ci, ri), 0) if req.first_available else 0
            data = self.requests[(ci, ri, si)]
            name = data.full_name
            rng = class_ranges.get(data.class_.name)
            if rng is not None:
                for i in range(*rng):
                    config[i]["requests"].append(name)
                continue
            start = len(config)
            for c in data.class_.raw.get("spec", {}).get("config") or []:
                config.append({"source": "FromClass", "requests": [name], **{k: v for k, v in c.items() if k != "requests"}})
            class_ranges[data.class_.name] = (start, len(config))
        for c in claim.spec.config:
            wanted = c.get("requests") or []
            body = {k: v for k, v in c.items() if k != "requests"}
            if not wanted:
                config.append({"source": "FromClaim", **body})
                continue
            for ri, req in enumerate(claim.spec.requests):
                if req.name in wanted:
                    config.append({"source": "FromClaim", "requests": list(wanted), **body})
                    continue
                if not req.first_available:
                    continue
                sub = req.first_available[self.selected_sub.get((ci, ri), 0)]
                if f"{req.name}/{sub.name}" in wanted:
                    config.append({"source": "FromClaim", "requests": list(wanted), **body})
        raw_sel = _node_selector(results)
        return Allocation(tuple(r for r, _, _ in results), tuple(config), _parsed_selector(raw_sel), raw_sel)


_SELECTORS: dict[str, NodeSelector] = {}  # parsed node selectors of allocations, by their text


def _parsed_selector(raw: dict | None) -> NodeSelector | None:
    """The allocation's node selector, parsed once per distinct selector (the allocator makes
    one per node it is asked about, nearly always the node's own)."""
    if raw is None:
        return None
    key = repr(raw)
    sel = _SELECTORS.get(key)
    if sel is None:
        if len(_SELECTORS) > 100_000:
            _SELECTORS.clear()
        sel = _SELECTORS[key] = NodeSelector.parse(raw, "status.allocation.nodeSelector")
    return sel


def _share_id(key: str) -> str:
    """A UUID (version 5 layout) from a hash of ``key``: the same allocation, the same ID."""
    h = hashlib.blake2b(key.encode(), digest_size=16, key=_SHARE_KEY).hexdigest()
    return f"{h[:8]}-{h[8:12]}-5{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"


def _preferred_first(candidates: list[_Candidate], prefer: Sequence[DeviceID]) -> list[_Candidate]:
    """The preferred devices first, in the caller's order, then the others in slice order."""
    rank = {did: i for i, did in enumerate(prefer)}
    first = sorted((c for c in candidates if c.id in rank), key=lambda c: rank[c.id])
    return first + [c for c in candidates if c.id not in rank]


def _status_names(consumed: Mapping[str, Fraction], device: Device, driver: str) -> tuple[tuple[str, Fraction], ...]:
    """The consumed capacity as the result records it: each name spelled as the device does."""
    caps = device_capacities(device, driver)
    return tuple((caps[key][0], amount) for key, amount in consumed.items())


def _taint_prevents(device: Device, req: ExactRequest) -> bool:
    """taintPreventsAllocation: a NoSchedule or NoExecute taint the request does not tolerate."""
    for taint in device.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not any(t.tolerates(taint) for t in req.tolerations):
            return True
    return False


def _node_selector(results: list[tuple[DeviceResult, ResourceSlice, Device]]) -> dict | None:
    """createNodeSelector: the node a node-local device pins the claim to, else the union of the
    slices' (or per-device) selector requirements, else none (usable everywhere)."""
    fields: list[dict] = []
    exprs: list[dict] = []
    for _, s, d in results:
        if s.per_device_node_selection:
            node_name, raw = d.node_name, None
            raw = _device_selector_raw(s, d)
        else:
            node_name, raw = s.node_name, (s.raw.get("spec") or {}).get("nodeSelector")
        if node_name:
            return {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                ]
            }
        terms = (raw or {}).get("nodeSelectorTerms") or []
        if len(terms) == 1:
            for src, dst in ((terms[0].get("matchFields") or [], fields), (terms[0].get("matchExpressions") or [], exprs)):
                for r in src:
                    if not any(_same_requirement(r, x) for x in dst):
                        dst.append(r)
    if not fields and not exprs:
        return None
    term: dict = {}
    if exprs:
        term["matchExpressions"] = exprs
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


def _device_selector_raw(s: ResourceSlice, d: Device) -> dict | None:
    for raw in (s.raw.get("spec") or {}).get("devices") or []:
        if raw.get("name") == d.name:
            return raw.get("nodeSelector")
    return None


def _same_requirement(a: dict, b: dict) -> bool:
    return (
        a.get("key") == b.get("key")
        and a.get("operator") == b.get("operator")
        and set(a.get("values") or ()) == set(b.get("values") or ())
    )
