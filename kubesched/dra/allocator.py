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
from kubesched.dra.caches import AllocationCache, MatchCache
from kubesched.dra.capacity import Consumed, capacity_fits, request_consumes, status_names
from kubesched.dra.cel import compile_selector
from kubesched.dra.claims import Allocation, DeviceResult, ExactRequest, ResourceClaim
from kubesched.dra.constraints import DistinctAttribute, MatchAttribute
from kubesched.dra.counters import SharedCounters
from kubesched.dra.objects import (
    ALL,
    ALLOCATION_RESULTS_MAX_SIZE,
    EXACT_COUNT,
    Device,
    DeviceClass,
    ResourceSlice,
)
from kubesched.dra.pools import Candidate, DeviceID, Features, Pool, SliceIndex, device_id_text, node_matches
from kubesched.dra.result import claim_config, node_selector, parsed_selector

#: a namespace for share IDs: offline they are derived from the claim, request and device
#: (upstream draws random UUIDs), so the same input always gives the same allocation
_SHARE_KEY = b"kubesched share ID"


class AllocationError(Exception):
    """The claims or classes are broken (unknown class, CEL error, ...): allocation must stop on
    every node. The text is upstream's error."""


class FailedOnNode(Exception):
    """ErrFailedAllocationOnNode: this node cannot be used, others may (invalid pools)."""


@dataclass(slots=True)
class RequestData:
    request: ExactRequest
    parent: str  # the request's name when ``request`` is a subrequest, else ""
    name: str  # the request's own name
    class_: DeviceClass
    num_devices: int
    all_devices: list[Candidate] = field(default_factory=list)

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name


class _Stop(Exception):
    """errAllocationResultMaxSizeExceeded: back off further."""


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
        self.candidates: list[Candidate] = []
        self.requests: dict[tuple[int, int, int], RequestData] = {}
        self.selected_sub: dict[tuple[int, int], int] = {}
        self.constraints: list[list[MatchAttribute | DistinctAttribute]] = []
        # per claim: (result, slice, device) of each device taken so far
        self.results: list[list[tuple[DeviceResult, ResourceSlice, Device]]] = [[] for _ in claims]
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        self.match_memo: dict[tuple[tuple[int, int, int], DeviceID], bool] = {}
        self.consumes_memo: dict[tuple[int, DeviceID], dict[str, Fraction] | None] = {}
        self.counters = SharedCounters(a.allocated, a.consumed)

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
            constraints: list[MatchAttribute | DistinctAttribute] = []
            for i, c in enumerate(claim.spec.constraints):
                if c.match_attribute:
                    constraints.append(MatchAttribute(frozenset(c.requests), c.match_attribute))
                elif c.distinct_attribute and consumable:
                    constraints.append(DistinctAttribute(frozenset(c.requests), c.distinct_attribute))
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
    ) -> RequestData:
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
        data = RequestData(req, parent, name, cls, 0)
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
                        cand = Candidate(d, (s.driver, s.pool, d.name), s, pool)
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
            return self._allocate_subrequests(ci, ri, di)
        req = data.request
        if req.mode == ALL and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self._allocate_one(ci, ri + 1, 0, 0, False, 0)
        if len(self.results[ci]) + data.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _Stop
        key = (ci, ri, si)
        if req.mode == ALL:
            undo = self._allocate_device(ci, key, data, data.all_devices[di], must=True)
            return undo is not None and self._go_on(undo, ci, ri, si, di + 1, in_sub, 0)
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
            if undo is not None and self._go_on(undo, ci, ri, si, di + 1, in_sub, k + 1):
                return True
        return False

    def _allocate_subrequests(self, ci: int, ri: int, di: int) -> bool:
        """firstAvailable: the subrequests of request ``ri`` in order, the first that works wins;
        _Stop when every one of them exceeded the result size."""
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

    def _go_on(self, undo: Callable[[], None], ci: int, ri: int, si: int, di: int, in_sub: bool, start: int) -> bool:
        """The search from the next device on, with ``undo`` run for the device just taken when
        it finds nothing (or fails)."""
        try:
            done = self._allocate_one(ci, ri, si, di, in_sub, start)
        except BaseException:
            undo()
            raise
        if not done:
            undo()
        return done

    def _in_use(self, did: DeviceID) -> bool:
        return did in self.a.allocated or bool(self.allocating.get(did))

    def _capacity_in_use(self, did: DeviceID) -> bool:
        return did in self.a.consumed or did in self.allocating_capacity

    def _consumes(self, data: RequestData, cand: Candidate) -> dict[str, Fraction] | None:
        key = (id(data.request), cand.id)
        if key in self.consumes_memo:
            return self.consumes_memo[key]
        out = self.consumes_memo[key] = request_consumes(data.request.capacity, cand.device, cand.id[0])
        return out

    def _capacity_ok(self, data: RequestData, cand: Candidate) -> bool:
        """CmpRequestOverCapacity for a candidate."""
        consumes = self._consumes(data, cand)
        if consumes is None:
            return False
        return capacity_fits(
            consumes, cand.device, cand.id[0], self.a.consumed.get(cand.id), self.allocating_capacity.get(cand.id)
        )

    def _selectable(self, key: tuple[int, int, int], data: RequestData, cand: Candidate) -> bool:
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

    def _selectors_match(self, ci: int, cand: Candidate, selectors: Sequence[str], cls: DeviceClass | None) -> bool:
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
        self, ci: int, key: tuple[int, int, int], data: RequestData, cand: Candidate, *, must: bool
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
        if counters and not self.counters.take(cand):
            return None
        base, sub = (data.parent, data.name) if data.parent else (data.name, "")
        if features.device_taints and _taint_prevents(d, req):
            if counters:
                self.counters.give_back(cand)
            return None
        if not self._add_constraints(ci, data, cand, must=must):
            if counters:
                self.counters.give_back(cand)
            return None
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
                    self.counters.give_back(cand)
                return None
            if multiple:
                consumed, share_id = self._share(ci, data, cand)
        result = DeviceResult(
            data.full_name,
            cand.id[0],
            cand.id[1],
            cand.id[2],
            True if admin else None,
            req.tolerations,
            share_id,
            status_names(consumed, d, cand.id[0]) if consumed else None,  # none consumed: unset, as upstream
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
                self.counters.give_back(cand)
            del self.results[ci][n:]

        return undo

    def _add_constraints(self, ci: int, data: RequestData, cand: Candidate, *, must: bool) -> bool:
        """The device added to the claim's constraints; False (none kept) when one is broken, an
        AllocationError instead when the device ``must`` be taken (an All request)."""
        base, sub = (data.parent, data.name) if data.parent else (data.name, "")
        added = []
        for c in self.constraints[ci]:
            if not c.add(base, sub, cand.device, cand.id):
                if must:
                    claim = self.claims[ci]
                    raise AllocationError(
                        f"claim {claim.key}, request {data.request.name or data.name}: cannot add device "
                        f"{device_id_text(cand.id)} because a claim constraint would not be satisfied"
                    )
                for c2 in added:
                    c2.remove(base, sub)
                return False
            added.append(c)
        return True

    def _share(self, ci: int, data: RequestData, cand: Candidate) -> tuple[dict[str, Fraction], str]:
        """A shared device's capacity taken for the request, and the result's share ID."""
        consumed = self._consumes(data, cand)
        assert consumed is not None
        mine = self.allocating_capacity.setdefault(cand.id, {})
        for name, amount in consumed.items():
            mine[name] = mine.get(name, 0) + amount
        n = sum(1 for r, _, _ in self.results[ci] if r.device_id == cand.id)
        return consumed, _share_id(f"{self.claims[ci].uid}/{data.full_name}/{device_id_text(cand.id)}/{n}")

    # ---- the result --------------------------------------------------------------------
    def _result(self, ci: int, claim: ResourceClaim) -> Allocation:
        results = self.results[ci]
        requests = claim.spec.requests
        chosen = [self.selected_sub.get((ci, ri), 0) for ri in range(len(requests))]
        taken = [self.requests[(ci, ri, chosen[ri] if req.first_available else 0)] for ri, req in enumerate(requests)]
        config = claim_config(claim, [(d.full_name, d.class_) for d in taken], chosen)
        raw_sel = node_selector(results)
        return Allocation(tuple(r for r, _, _ in results), config, parsed_selector(raw_sel), raw_sel)


def _share_id(key: str) -> str:
    """A UUID (version 5 layout) from a hash of ``key``: the same allocation, the same ID."""
    h = hashlib.blake2b(key.encode(), digest_size=16, key=_SHARE_KEY).hexdigest()
    return f"{h[:8]}-{h[8:12]}-5{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"


def _preferred_first(candidates: list[Candidate], prefer: Sequence[DeviceID]) -> list[Candidate]:
    """The preferred devices first, in the caller's order, then the others in slice order."""
    rank = {did: i for i, did in enumerate(prefer)}
    first = sorted((c for c in candidates if c.id in rank), key=lambda c: rank[c.id])
    return first + [c for c in candidates if c.id not in rank]


def _taint_prevents(device: Device, req: ExactRequest) -> bool:
    """taintPreventsAllocation: a NoSchedule or NoExecute taint the request does not tolerate."""
    for taint in device.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not any(t.tolerates(taint) for t in req.tolerations):
            return True
    return False


