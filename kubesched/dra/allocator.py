"""The structured allocator of k8s.io/dynamic-resource-allocation (``structured``), v1.36.

For one node and the pod's claims that are not allocated yet, find devices in the ResourceSlices
the node can reach: per pool the newest generation only, incomplete pools (fewer slices than
``resourceSliceCount``) and invalid ones (a device name twice) not used. Each request (or the
first ``firstAvailable`` subrequest that works) gets ``count`` devices (``ExactCount``) or every
matching device (``All``) that its DeviceClass's and its own CEL selectors select, that no other
claim holds (an ``adminAccess`` request takes devices in use too, and holds none), whose taints
it tolerates, within the pool's shared counters (partitionable devices), and that keep every
``matchAttribute`` constraint of the claim. The search is upstream's: depth first over claims,
requests and devices in slice order, the first complete solution wins.

Not modelled: consumable capacity (``allowMultipleAllocations``, ``capacity.requests``,
``distinctAttribute``: such devices are allocated whole, a claim with ``distinctAttribute`` is
refused as upstream's stable allocator refuses an unknown constraint), device taint rules
(DRADeviceTaintRules, off in v1.36) and the binding conditions' wait (devices with binding
conditions are allocated, nothing waits for them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from kubesched.api.objects import Node
from kubesched.api.selectors import NodeSelector
from kubesched.dra.cel import CelError, Selector, compile_selector, device_input
from kubesched.dra.objects import (
    ALL,
    ALLOCATION_RESULTS_MAX_SIZE,
    EXACT_COUNT,
    Allocation,
    Attribute,
    Device,
    DeviceClass,
    DeviceResult,
    ExactRequest,
    ResourceClaim,
    ResourceSlice,
)

DeviceID = tuple[str, str, str]  # (driver, pool, device)


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


def gather_pools(slices: Sequence[ResourceSlice], node: Node | None, features: Features) -> list[Pool]:
    """GatherPools: the pools with devices the node can reach, at their newest generation among
    the slices targeting the node; incomplete (fewer slices of that generation than
    ``resourceSliceCount``) and invalid (a device name twice; with partitionable devices, a counter
    set defined twice or a consumption naming an unknown set or counter) pools are marked."""
    pools: dict[tuple[str, str], Pool] = {}
    others: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in slices:
        if not features.partitionable_devices and s.per_device_node_selection is not None:
            continue
        target = _targets(s, node, features)
        if target is None:
            continue
        key = (s.driver, s.pool)
        if not target:
            others.setdefault(key, []).append(s)
            continue
        pool = pools.get(key)
        if pool is None or s.generation > pool.generation:
            pools[key] = Pool(s.driver, s.pool, s.generation, [s])
        elif s.generation == pool.generation:
            pool.slices.append(s)
    for key, pool in pools.items():
        pool.others = [s for s in others.get(key, ()) if s.generation == pool.generation]
        every = [*pool.slices, *pool.others]
        pool.incomplete = len(every) != pool.slices[0].slice_count
        pool.invalid = _pool_invalid(every, features)
    return list(pools.values())


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
    on the expression and the device object alone, so it holds across cycles and nodes."""

    def __init__(self, limit: int = 200_000) -> None:
        self._verdicts: dict[tuple[str, str, Device], bool | str] = {}
        self._limit = limit

    def __len__(self) -> int:
        return len(self._verdicts)

    def verdict(self, selector: Selector, driver: str, device: Device) -> bool | str:
        key = (selector.expression, driver, device)
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


@dataclass(slots=True)
class _MatchAttribute:
    """matchAttributeConstraint: every device of the named requests has the same value."""

    requests: frozenset[str]
    attribute: str
    value: Attribute | None = None
    count: int = 0

    def _applies(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        return request in self.requests or (bool(sub) and f"{request}/{sub}" in self.requests)

    def add(self, request: str, sub: str, device: Device, did: DeviceID) -> bool:
        if not self._applies(request, sub):
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
        if self._applies(request, sub):
            self.count -= 1


def lookup_attribute(device: Device, did: DeviceID, name: str) -> Attribute | None:
    """A fully qualified attribute; the driver's own domain may be left out on the device."""
    attr = device.attributes.get(name)
    if attr is not None:
        return attr
    domain, sep, ident = name.partition("/")
    if not sep or domain != did[0]:
        return None
    return device.attributes.get(ident)


class _Stop(Exception):
    """errAllocationResultMaxSizeExceeded: back off further."""


class Allocator:
    """structured.Allocator: the cluster's devices and who holds them, for one scheduling cycle;
    ``allocate`` is asked per node."""

    def __init__(
        self,
        features: Features,
        allocated: set[DeviceID],
        classes: Mapping[str, DeviceClass],
        slices: Sequence[ResourceSlice],
        matches: MatchCache | None = None,
        *,
        deadline: Callable[[], bool] | None = None,
    ) -> None:
        self.features = features
        self.allocated = allocated
        self.classes = classes
        self.slices = slices
        self.matches = matches if matches is not None else MatchCache()
        self.deadline = deadline
        self.steps = 0  # allocateOne invocations, as upstream's Stats

    def allocate(self, node: Node | None, claims: Sequence[ResourceClaim]) -> list[Allocation] | None:
        """One AllocationResult per claim, or None when the node has no solution. AllocationError
        for a broken claim or class, FailedOnNode when invalid pools may be why."""
        return _Run(self, node, claims).run()


class _Run:
    def __init__(self, a: Allocator, node: Node | None, claims: Sequence[ResourceClaim]) -> None:
        self.a = a
        self.node = node
        self.claims = claims
        self.pools: list[Pool] = []
        self.requests: dict[tuple[int, int, int], _RequestData] = {}
        self.selected_sub: dict[tuple[int, int], int] = {}
        self.constraints: list[list[_MatchAttribute]] = []
        self.results: list[list[tuple[DeviceResult, ResourceSlice, Device]]] = [[] for _ in claims]
        self.allocating: dict[DeviceID, set[int]] = {}
        self.match_memo: dict[tuple[tuple[int, int, int], DeviceID], bool] = {}
        self.available_counters: dict[str, dict[str, dict[str, Fraction]]] = {}
        self.consumed_counters: dict[str, dict[str, dict[str, Fraction]]] = {}

    # ---- set-up ------------------------------------------------------------------------
    def run(self) -> list[Allocation] | None:
        self.pools = gather_pools(self.a.slices, self.node, self.a.features)
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, req in enumerate(claim.spec.requests):
                if req.first_available:
                    if not self.a.features.prioritized_list:
                        raise AllocationError(
                            f"claim {claim.key}, request {req.name}: has subrequests, but the DRAPrioritizedList feature is disabled"
                        )
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
            constraints = []
            for i, c in enumerate(claim.spec.constraints):
                if not c.match_attribute:
                    raise AllocationError(f"claim {claim.key}, constraint #{i}: empty constraint (unsupported constraint type?)")
                constraints.append(_MatchAttribute(frozenset(c.requests), c.match_attribute))
            self.constraints.append(constraints)
        try:
            done = self._allocate_one(0, 0, 0, 0, False)
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
                        if self._selectable(key, data, cand):
                            data.all_devices.append(cand)
            data.num_devices = len(data.all_devices)
        else:
            raise AllocationError(f"claim {claim.key}, request {shown}: unsupported count mode {req.mode}")
        return data

    # ---- the search --------------------------------------------------------------------
    def _allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        self.a.steps += 1
        if self.a.deadline is not None and self.a.deadline():
            raise TimeoutError("timed out trying to allocate devices")
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.spec.requests):
            try:
                return self._allocate_one(ci + 1, 0, 0, 0, False)
            except _Stop:
                return False  # another subrequest of an earlier claim may need fewer devices
        data = self.requests[(ci, ri, si)]
        if not in_sub and data.parent:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.requests:
                try:
                    ok = self._allocate_one(ci, ri, sub, di, True)
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
            return self._allocate_one(ci, ri + 1, 0, 0, False)
        if len(self.results[ci]) + data.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _Stop
        key = (ci, ri, si)
        if req.mode == ALL:
            cand = data.all_devices[di]
            undo = self._allocate_device(ci, key, data, cand, must=True)
            if undo is None:
                return False
            try:
                done = self._allocate_one(ci, ri, si, di + 1, in_sub)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        admin = bool(req.admin_access)
        for pool in self.pools:
            if pool.incomplete or pool.invalid:
                continue
            for s in pool.slices:
                for d in s.devices:
                    did = (pool.driver, pool.name, d.name)
                    if admin and ci in self.allocating.get(did, ()):
                        continue
                    if not admin and self._in_use(did):
                        continue
                    cand = _Candidate(d, did, s, pool)
                    if not self._selectable(key, data, cand):
                        continue
                    undo = self._allocate_device(ci, key, data, cand, must=False)
                    if undo is None:
                        continue
                    try:
                        done = self._allocate_one(ci, ri, si, di + 1, in_sub)
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _in_use(self, did: DeviceID) -> bool:
        return did in self.a.allocated or bool(self.allocating.get(did))

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
        """allocateDevice: availability, counters, taints, constraints; the undo, or None."""
        req = data.request
        admin = bool(req.admin_access)
        if admin and ci in self.allocating.get(cand.id, ()):
            return None
        if not admin and self._in_use(cand.id):
            return None
        d = cand.device
        if d.consumes_counters:
            if not self.a.features.partitionable_devices or not self._take_counters(cand):
                return None
        base, sub = (data.parent, data.name) if data.parent else (data.name, "")
        if self.a.features.device_taints and _taint_prevents(d, req):
            if d.consumes_counters:
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
                if d.consumes_counters:
                    self._return_counters(cand)
                return None
            added.append(c)
        self.allocating.setdefault(cand.id, set()).add(ci)
        result = DeviceResult(data.full_name, cand.id[0], cand.id[1], cand.id[2], True if admin else None, req.tolerations)
        n = len(self.results[ci])
        self.results[ci].append((result, cand.slice, d))

        def undo() -> None:
            for c in self.constraints[ci]:
                c.remove(base, sub)
            self.allocating[cand.id].discard(ci)
            if d.consumes_counters:
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
                    if (s.driver, s.pool, d.name) not in self.a.allocated:
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
        return Allocation(
            tuple(r for r, _, _ in results),
            tuple(config),
            None if raw_sel is None else NodeSelector.parse(raw_sel, "status.allocation.nodeSelector"),
            raw_sel,
        )


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
