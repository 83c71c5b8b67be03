"""DynamicResources, as kube-scheduler v1.36's pkg/scheduler/framework/plugins/dynamicresources.

A pod's ResourceClaims (by name, or made from a template for it) must be allocated before it
binds. PreEnqueue holds pods whose claims do not exist yet; PreFilter finds the claims, refuses
claims in use by too many pods, claims being allocated for another pod and requests naming no
DeviceClass, and prepares the structured allocator; Filter runs it per node (an allocated claim
must be usable there: its node selector); Score prefers nodes where ``firstAvailable`` gets an
earlier alternative; Reserve takes the node's allocation (its devices count as taken for other
pods from then on); PreBind writes the allocation and the pod's reservation into the claim;
Unreserve undoes both; PostFilter deallocates an allocated claim that keeps the pod from every
node when no other pod holds it. Pods without claims skip every point (PreFilter Skip).

Offline the claims live in the in-memory cluster (``snap.dra``): PreBind's write is the API
update, so later pods see the devices taken and pods sharing a claim reuse its allocation.
PreBind, Unreserve and PostFilter write through ``handle.api`` (kubesched.cluster.api): offline
the store is the cluster, live (``kubesched run``) they are API updates of the claim with its
resourceVersion, so that two writers cannot both allocate it. A plugin that chooses devices
itself may ask Reserve for them (``preference``, kubesched's). Not modelled: DRA extended
resources (DRAExtendedResource) and waiting for device binding conditions; the resourceclaim
controller's release of a gone pod's claims is the offline clusters' (``DraState.release_pod``).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched import features
from kubesched.cluster.api import Conflict, WriteError
from kubesched.config.args import plugin_args
from kubesched.config.decode import parse_duration
from kubesched.dra.allocator import AllocationError, Allocator, FailedOnNode, with_share_ids
from kubesched.dra.claims import Allocation, ConsumerRef, ResourceClaim
from kubesched.dra.objects import FINALIZER, FIRST_AVAILABLE_MAX_SIZE
from kubesched.dra.pools import Features
from kubesched.framework.interfaces import (
    NOT_INVOLVED,
    FilterPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    ReservePlugin,
    ScorePlugin,
    Signature,
    SignPlugin,
    default_normalize,
)
from kubesched.framework.status import Code, FilterResult, PluginError, Status
from kubesched.plugins.dynamicresources.claims import ClaimUnavailable, pod_claims
from kubesched.plugins.dynamicresources.preference import PREFERRED_DEVICES, DevicePreference

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.cluster.api import ObjectAPI
    from kubesched.dra.store import DraState
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.state.snapshot import Snapshot

NAME = "DynamicResources"
STATE_KEY = NAME

CLAIM_IN_USE = "resourceclaim in use"
CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"
TIMED_OUT = "timed out trying to allocate devices"
NO_NEW_CLAIMS = "no new claims to deallocate"
DEALLOCATED = "deallocation of ResourceClaim completed"
STILL_NOT_SCHEDULABLE = "still not schedulable"
#: retry.DefaultRetry, which bindClaim retries a conflict with: 5 steps 10 ms apart
CONFLICT_RETRY_STEPS = 5
CONFLICT_RETRY_DELAY = 0.01

log = logging.getLogger("kubesched.plugins.dynamicresources")


def allocator_features(gates: features.FeatureGates) -> Features:
    """AllocatorFeatures: the allocator's switches from the plugin's feature gates."""
    return Features(
        admin_access=gates.enabled("DRAAdminAccess"),
        prioritized_list=gates.enabled("DRAPrioritizedList"),
        partitionable_devices=gates.enabled("DRAPartitionableDevices"),
        device_taints=gates.enabled("DRADeviceTaints"),
        device_binding_and_status=gates.enabled("DRADeviceBindingConditions")
        and gates.enabled("DRAResourceClaimDeviceStatus"),
        consumable_capacity=gates.enabled("DRAConsumableCapacity"),
    )


def _unresolvable(message: str) -> Status:
    """statusUnschedulable: every rejection of this plugin is UnschedulableAndUnresolvable."""
    return Status(Code.UnschedulableAndUnresolvable, (message,), NAME)


@dataclass
class _State:
    """stateData: the pod's claims (spec order), the allocator when some claim is not
    allocated, and what Filter and Reserve found."""

    claims: list[ResourceClaim] = field(default_factory=list)
    available_on: list[Any] = field(default_factory=list)  # an allocated claim's NodeSelector, or None
    allocator: Allocator | None = None
    node_allocations: dict[str, list[Allocation]] = field(default_factory=dict)
    pending: list[ResourceClaim] = field(default_factory=list)  # the claims to allocate, in order
    unavailable: set[int] = field(default_factory=set)
    reserved: dict[int, Allocation] = field(default_factory=dict)  # claim index -> Reserve's allocation

    def clone(self) -> _State:
        return self  # as upstream's stateData.Clone: shared by preemption's dry runs

    def to_allocate(self) -> list[tuple[int, ResourceClaim]]:
        return [(i, c) for i, c in enumerate(self.claims) if c.allocation is None]


class DynamicResources(
    PreEnqueuePlugin, PreFilterPlugin, FilterPlugin, PostFilterPlugin, ScorePlugin, ReservePlugin, PreBindPlugin, SignPlugin
):
    """Allocates pods' ResourceClaims with the structured allocator (kubesched.dra)."""

    name = NAME
    # Node Add|UpdateNodeLabel|UpdateNodeAllocatable, ResourceClaim Add|Update, Pod
    # UpdatePodGeneratedResourceClaim, DeviceClass Add|Update, ResourceSlice Add|Update
    events_to_register = frozenset(
        {
            "NodeAdd",
            "NodeUpdate",
            "ResourceClaimAdd",
            "ResourceClaimUpdate",
            "PodGeneratedResourceClaim",
            "DeviceClassAdd",
            "DeviceClassUpdate",
            "ResourceSliceAdd",
            "ResourceSliceUpdate",
        }
    )

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(plugin_args(NAME, args), handle)
        gates = features.current()
        self.features = allocator_features(gates)
        filter_timeout = self.args.get("filterTimeout")
        use_timeout = gates.enabled("DRASchedulerFilterTimeout") and filter_timeout is not None
        self.filter_timeout = (parse_duration(filter_timeout) or 0.0) if use_timeout else 0.0

    def _api(self) -> ObjectAPI:
        if self.handle is None:
            raise PluginError("DynamicResources needs the scheduler's handle")
        return self.handle.api

    def _dra(self, snap: Snapshot | None = None) -> DraState:
        if snap is not None:
            return snap.dra
        if self.handle is None:
            raise PluginError("DynamicResources needs the scheduler's snapshot")
        return self.handle.snapshot.dra

    # ---- SignPlugin, PreEnqueue -------------------------------------------------------
    needs_pod_field = "resource_claims"  # a pod without claims is not asked to sign

    def sign_pod(self, pod: Pod, snap: Snapshot) -> Signature | None:
        """Pods with claims are not signable (as upstream); the others take no part."""
        return None if pod.resource_claims and snap.dra.tracked else NOT_INVOLVED

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.resource_claims or not self._dra().tracked:
            return None
        try:
            pod_claims(pod, self._dra())
        except ClaimUnavailable as e:
            return _unresolvable(str(e))
        return None

    # ---- PreFilter --------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot) -> Status | None:
        s = _State()
        state.write(STATE_KEY, s)
        if not pod.resource_claims or not snap.dra.tracked:
            return Status(Code.Skip)
        dra = snap.dra
        try:
            claims = pod_claims(pod, dra)
        except ClaimUnavailable as e:
            return _unresolvable(str(e))
        if not claims:
            return Status(Code.Skip)
        to_allocate = 0
        for claim in claims:
            if claim.allocation is not None:
                if not claim.can_be_reserved and not claim.reserved_for_pod(pod.uid):
                    return _unresolvable(CLAIM_IN_USE)
                s.available_on.append(claim.allocation.node_selector)
                continue
            s.available_on.append(None)
            to_allocate += 1
            if claim.uid in dra.in_flight:
                return _unresolvable(f"resource claim {claim.key} is in the process of being allocated")
            for req in claim.spec.requests:
                if req.exactly is not None:
                    bad = self._device_class(dra, req.exactly.device_class, req.name)
                elif req.first_available:
                    if not self.features.prioritized_list:
                        return _unresolvable(
                            f"resource claim {claim.key}, request {req.name}: has subrequests, but the DRAPrioritizedList feature is disabled"
                        )
                    bad = None
                    for sub in req.first_available:
                        bad = bad or self._device_class(dra, sub.device_class, f"{req.name}/{sub.name}")
                else:
                    return _unresolvable(f"resource claim {claim.key}, request {req.name}: unknown request type")
                if bad is not None:
                    return bad
        if to_allocate:
            # the store's views of the holders, read as the search goes (not copied per cycle)
            s.allocator = Allocator(
                self.features,
                dra.allocated_devices(),
                dra.classes,
                dra.slice_index(),
                dra.matches,
                consumed=dra.consumed_capacity(),
                cache=dra.allocations,
                cache_key=tuple(repr(c.raw.get("spec")) for c in claims if c.allocation is None),
                versions=dra.pool_versions,
                timeout=self.filter_timeout,  # per node, as upstream's filterTimeout
            )
            s.pending = [c for c in claims if c.allocation is None]
        s.claims = claims
        return None

    @staticmethod
    def _device_class(dra: DraState, class_name: str, request: str) -> Status | None:
        if not class_name:
            return Status(Code.Error, (f"request {request}: unsupported request type",), NAME)
        if class_name not in dra.classes:
            return _unresolvable(f"request {request}: device class {class_name} does not exist")
        return None

    def add_pod(self, state: CycleState, pod: Pod, added: Pod, row: int, snap: Snapshot) -> None:
        """No PreFilterExtensions upstream."""

    def remove_pod(self, state: CycleState, pod: Pod, removed: Pod, row: int, snap: Snapshot) -> None:
        """No PreFilterExtensions upstream."""

    # ---- Filter -----------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        n = len(rows)
        s: _State | None = state.read(STATE_KEY)
        if s is None:
            return FilterResult(
                np.full(n, np.int8(Code.Error), np.int8), np.ones(n, np.int64), (f'reading "{STATE_KEY}" from cycleState: not found',)
            )
        if not s.claims:
            return FilterResult.all_pass(n)
        code = np.zeros(n, np.int8)
        bits = np.zeros(n, np.int64)
        reasons: list[str] = []
        for i, row in enumerate(np.asarray(rows).tolist()):
            st = self._filter_node(s, snap.nodes[row])
            if st is not None:
                if st.message not in reasons:
                    reasons.append(st.message)
                code[i] = st.code
                bits[i] = 1 << reasons.index(st.message)
        return FilterResult(code, bits, tuple(reasons))

    def _filter_node(self, s: _State, node: Any) -> Status | None:
        unavailable = [
            i for i, sel in enumerate(s.available_on) if sel is not None and not sel.matches(node.labels, node.name)
        ] if len(s.pending) < len(s.claims) else []  # allocated claims must be usable here
        allocations: list[Allocation] | None = None
        if s.allocator is not None:
            claims = s.pending  # the allocator's timeout (filterTimeout) is per node
            try:
                allocations = s.allocator.allocate(node, claims, shares=False)  # Reserve makes them the claims'
            except TimeoutError:
                return _unresolvable(TIMED_OUT)
            except FailedOnNode as e:
                return _unresolvable(str(e))
            except AllocationError as e:
                return Status(Code.Error, (str(e),), NAME)
            if allocations is None or len(allocations) != len(claims):
                return _unresolvable(CANNOT_ALLOCATE)
        if unavailable:
            s.unavailable.update(unavailable)
            return _unresolvable(NOT_AVAILABLE)
        if allocations is not None:
            s.node_allocations[node.name] = allocations
        return None

    # ---- PostFilter -------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: Pod, snap: Snapshot, diagnosis: Any) -> tuple[str | None, Status]:
        """Deallocate one allocated claim that kept the pod off some node, when no other pod holds it."""
        if not pod.resource_claims:  # nothing this plugin could do: no reason of its own
            return None, Status(Code.Unschedulable)
        s: _State | None = state.read(STATE_KEY)
        if s is None:
            return None, Status.error(f'reading "{STATE_KEY}" from cycleState: not found')
        if not s.claims:
            return None, Status(Code.Unschedulable, (NO_NEW_CLAIMS,))
        for index in sorted(s.unavailable):
            claim = s.claims[index]
            if not claim.reserved_for or (len(claim.reserved_for) == 1 and claim.reserved_for[0].uid == pod.uid):
                try:
                    self._api().update_claim_status(claim.with_status(None, ()))
                except WriteError as e:
                    return None, Status.error(str(e), NAME)
                return None, Status(Code.Unschedulable, (DEALLOCATED,))
        return None, Status(Code.Unschedulable, (STILL_NOT_SCHEDULABLE,))

    # ---- Score ------------------------------------------------------------------------
    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        """8 - i for each ``firstAvailable`` request that got its i-th alternative on the node."""
        out = np.zeros(len(rows), np.int64)
        s: _State | None = state.read(STATE_KEY)
        if s is None or not s.claims or not s.node_allocations:
            return out
        pending = [c for _, c in s.to_allocate()]
        for i, row in enumerate(np.asarray(rows).tolist()):
            allocations = s.node_allocations.get(snap.nodes[row].name)
            if allocations is not None:
                out[i] = _first_available_score(pending, allocations)
        return out

    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray | None:
        return default_normalize(scores)

    # ---- Reserve / Unreserve ----------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s: _State | None = state.read(STATE_KEY)
        if s is None or not s.claims:
            return None
        pending = s.to_allocate()
        if not pending or s.allocator is None:
            return None
        allocations = s.node_allocations.get(node_name)
        if not allocations:
            return Status.error("claim allocation not found for node", NAME)
        if len(allocations) != len(pending):
            return Status.error(
                f"internal error, have {len(allocations)} allocations, {len(pending)} claims to allocate, want {len(pending)} claims",
                NAME,
            )
        claims = [c for _, c in pending]
        prefer: DevicePreference | None = state.read(PREFERRED_DEVICES)
        if prefer is not None:
            allocations = self._preferred(s, node_name, claims, allocations, prefer)
        allocations = with_share_ids(allocations, claims)
        dra = self._dra()
        for (index, claim), allocation in zip(pending, allocations, strict=True):
            s.reserved[index] = allocation
            fins = claim.finalizers if FINALIZER in claim.finalizers else (*claim.finalizers, FINALIZER)
            dra.signal_pending(claim.with_status(allocation, claim.reserved_for, fins))
        return None

    def _preferred(
        self,
        s: _State,
        node_name: str,
        claims: list[ResourceClaim],
        allocations: list[Allocation],
        prefer: DevicePreference,
    ) -> list[Allocation]:
        """The node's allocation with the devices another plugin chose (``preference``), when
        they can satisfy the claims; else Filter's."""
        wanted = list(prefer(node_name))
        held = {r.device_id for a in allocations for r in a.results}
        if not wanted or all(d in held for d in wanted) or s.allocator is None:
            return allocations
        snap = self.handle.snapshot if self.handle is not None else None
        row = snap.row_of.get(node_name) if snap is not None else None
        if row is None:
            return allocations
        try:
            again = s.allocator.allocate(snap.nodes[row], claims, prefer=wanted)
        except (AllocationError, FailedOnNode, TimeoutError):
            return allocations
        if again is None or len(again) != len(claims):
            return allocations
        s.node_allocations[node_name] = again
        return again

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s: _State | None = state.read(STATE_KEY)
        if s is None or not s.claims:
            return
        dra, api = self._dra(), self._api()
        for claim in s.claims:
            dra.remove_pending(claim.uid)
            current = dra.claim(claim.namespace, claim.name) or claim
            if current.allocation is not None and current.reserved_for_pod(pod.uid):
                try:
                    api.remove_claim_reservation(current, pod.uid)
                except WriteError as e:  # upstream logs it: the claim stays reserved until the controller clears it
                    log.warning("unreserve: claim %s keeps pod %s reserved: %s", current.key, pod.key, e)

    # ---- PreBind ----------------------------------------------------------------------
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s: _State | None = state.read(STATE_KEY)
        if s is None or not s.claims:
            return Status(Code.Skip)
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Write each claim's allocation (Reserve's) and the pod's reservation (bindClaim) through
        the cluster's API, before the pod is bound."""
        s: _State | None = state.read(STATE_KEY)
        if s is None or not s.claims:
            return None
        for index, claim in enumerate(s.claims):
            if claim.reserved_for_pod(pod.uid):
                continue
            try:
                s.claims[index] = self._bind_claim(s, index, pod)
            except WriteError as e:
                return Status.error(str(e), NAME)
        return None

    def _bind_claim(self, s: _State, index: int, pod: Pod) -> ResourceClaim:
        """bindClaim: the finalizer (a normal update, when missing), then the allocation from
        Reserve and the pod's reservation (an update of the status subresource). A conflict (the
        claim changed since it was read: another scheduler, a controller) reads the claim again
        and retries (retry.RetryOnConflict's five steps); a claim that got allocated meanwhile
        fails the binding, and the pod is tried again."""
        dra, api = self._dra(), self._api()
        allocation = s.reserved.get(index)
        claim = s.claims[index]
        key = claim.key
        try:
            for step in range(CONFLICT_RETRY_STEPS):
                if step:
                    time.sleep(CONFLICT_RETRY_DELAY)
                    try:
                        claim = api.get_claim(claim.namespace, claim.name)
                    except WriteError as e:
                        raise WriteError(f"get updated claim {key} after conflict: {e}") from None
                else:
                    claim = dra.claim(claim.namespace, claim.name) or claim  # the latest the informer showed
                try:
                    updated = self._write_claim(api, claim, allocation, pod)
                except Conflict as e:
                    if step == CONFLICT_RETRY_STEPS - 1:
                        raise WriteError(str(e)) from None
                    continue
                if allocation is not None:
                    dra.put_claim(updated)  # AssumeClaimAfterAPICall: its devices stay taken
                return updated
            raise AssertionError("unreachable")
        finally:
            if allocation is not None:
                dra.remove_pending(claim.uid)

    @staticmethod
    def _write_claim(api: ObjectAPI, claim: ResourceClaim, allocation: Allocation | None, pod: Pod) -> ResourceClaim:
        """One try of bindClaim's update; Conflict when the claim's resourceVersion is stale."""
        key = claim.key
        if claim.deleting:
            raise WriteError(f"claim {key} got deleted in the meantime")
        if allocation is not None:
            if claim.allocation is not None:
                raise WriteError(f"claim {key} got allocated elsewhere in the meantime")
            if FINALIZER not in claim.finalizers:
                try:
                    claim = api.update_claim(claim.with_status(claim.allocation, claim.reserved_for, (*claim.finalizers, FINALIZER)))
                except Conflict as e:
                    raise Conflict(f"add finalizer to claim {key}: {e}") from None
                except WriteError as e:
                    raise WriteError(f"add finalizer to claim {key}: {e}") from None
        else:
            allocation = claim.allocation
        reserved = (*claim.reserved_for, ConsumerRef("pods", pod.name, pod.uid))
        what = "allocation and reservation" if claim.allocation is None else "reservation"
        try:
            return api.update_claim_status(claim.with_status(allocation, reserved))
        except Conflict as e:
            raise Conflict(f"add {what} to claim {key}: {e}") from None
        except WriteError as e:
            raise WriteError(f"add {what} to claim {key}: {e}") from None


def _first_available_score(claims: list[ResourceClaim], allocations: list[Allocation]) -> int:
    """computeScore over the claims that were allocated in this cycle."""
    score = 0
    for claim, allocation in zip(claims, allocations, strict=False):
        chosen = {r.request for r in allocation.results if "/" in r.request}
        for req in claim.spec.requests:
            for i, sub in enumerate(req.first_available):
                if f"{req.name}/{sub.name}" in chosen:
                    score += FIRST_AVAILABLE_MAX_SIZE - i
    return score
