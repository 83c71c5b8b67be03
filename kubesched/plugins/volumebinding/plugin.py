"""VolumeBinding: a pod's PersistentVolumeClaims, bound or bindable on the node, bound at PreBind.

As kube-scheduler v1.36's volumebinding plugin:

- PreFilter: Skip for a pod without claims; UnschedulableAndUnresolvable when a claim is missing,
  lost or being deleted, or an Immediate claim is not bound yet ("pod has unbound immediate
  PersistentVolumeClaims"); else it sorts the claims (bound, delayed, immediate).
- Filter: for each node, bound claims' PVs must fit the node (their node affinity); delayed
  claims (WaitForFirstConsumer) need an available PV that fits, or provisioning the class allows
  on the node (allowedTopologies, the driver's published capacity). The reasons are upstream's
  ConflictReasons, UnschedulableAndUnresolvable.
- Reserve assumes the chosen bindings (a PV pre-bound to its claim, a claim annotated with
  ``volume.kubernetes.io/selected-node``) so that later cycles see them; Unreserve reverts them.
- PreBindPreFlight: Skip when every claim was bound already; PreBind writes the bindings.
- PreScore/Score only with the StorageCapacityScoring gate (alpha, off in v1.36): without it
  PreScore skips. With it, nodes are scored by the utilization of the volumes they would get,
  through VolumeBindingArgs.shape.

PreBind writes through ``handle.api`` (kubesched.cluster.api) and waits until the claims are
bound. Offline the writes complete at once: kubesched does what the PV controller and an external
provisioner do (kubesched.cluster.controllers), so a WaitForFirstConsumer claim is provisioned on
the chosen node and bound before the pod is. Live (``kubesched run``) the writes are API updates
and the wait watches the informers until the cluster's controllers have bound the claims, or
``bindTimeoutSeconds`` have passed ("binding volumes: context deadline exceeded").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched import features
from kubesched.api.quantity import value as quantity_value
from kubesched.cluster.store import StoreAPI
from kubesched.config.args import plugin_args
from kubesched.config.defaults import MAX_CUSTOM_PRIORITY_SCORE
from kubesched.framework.interfaces import (
    MAX_NODE_SCORE,
    NOT_INVOLVED,
    FilterPlugin,
    PreBindPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ReservePlugin,
    ScorePlugin,
    Signature,
    SignPlugin,
)
from kubesched.framework.status import Code, FilterResult, PluginError, PreFilterResult, Status
from kubesched.plugins.noderesources.strategies import broken_linear
from kubesched.plugins.volumebinding.binder import (
    PodVolumeClaims,
    PodVolumes,
    VolumeBinder,
    pod_claims_status,
)

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.state.snapshot import Snapshot
    from kubesched.state.storage import Storage

NAME = "VolumeBinding"
STATE_KEY = NAME
ERR_REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
MAX_UTILIZATION = 100


@dataclass(slots=True)
class StateData:
    """The cycle's state: the pod's claims (PreFilter), its volumes per node (Filter), whether
    every claim was bound already (Reserve)."""

    claims: PodVolumeClaims | None = None
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    all_bound: bool = False

    def clone(self) -> StateData:
        return self  # shared, as upstream's (its fields are written once per node)


class VolumeBinding(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, ReservePlugin, PreBindPlugin, SignPlugin):
    name = NAME
    # a class created or its allowedTopologies changed, a claim created or bound, a PV created or
    # changed, a node's labels, a CSINode's migrated plugins, a driver's capacity tracking or a
    # capacity grown (Node Add|UpdateNodeLabel with queueing hints on)
    events_to_register = frozenset(
        {
            "StorageClassAdd",
            "StorageClassUpdate",
            "PersistentVolumeClaimAdd",
            "PersistentVolumeClaimUpdate",
            "PersistentVolumeAdd",
            "PersistentVolumeUpdate",
            "NodeAdd",
            "NodeUpdate",
            "CSINodeAdd",
            "CSINodeUpdate",
            "CSIDriverUpdate",
            "CSIStorageCapacityAdd",
            "CSIStorageCapacityUpdate",
        }
    )
    needs_pod_field = "storage_volumes"

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        self.cfg = plugin_args(NAME, self.args)
        self.bind_timeout_seconds: int = self.cfg["bindTimeoutSeconds"]
        self.scoring = features.enabled("StorageCapacityScoring")
        self.shape = [
            (p["utilization"], p["score"] * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for p in self.cfg.get("shape", ())
        ]
        self.binder = VolumeBinder()
        self._snap: Snapshot | None = None  # the snapshot of the last PreFilter (no handle: tests)

    def _storage(self) -> Storage:
        snap = self.handle.snapshot if self.handle is not None else self._snap
        if snap is None:
            raise PluginError("VolumeBinding has no snapshot: PreFilter did not run")
        return snap.storage

    def sign_pod(self, pod: Pod, snap: Snapshot) -> Signature | None:
        """A pod without claims takes no part; the others read the storage objects and the
        assumed bindings, which the equivalence cache does not follow."""
        if not pod.volumes or not snap.storage.tracked or not any(v.uses_claim for v in pod.volumes):
            return NOT_INVOLVED
        return None

    # ---- PreFilter / Filter ------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot) -> PreFilterResult | Status | None:
        self._snap = snap
        if not snap.storage.tracked or not any(v.uses_claim for v in pod.volumes):
            state.write(STATE_KEY, StateData())
            return Status(Code.Skip, plugin=NAME)
        problem = pod_claims_status(pod, snap.storage)
        if problem is not None:
            return Status(Code.UnschedulableAndUnresolvable, (problem,), NAME)
        try:
            claims = self.binder.get_pod_volume_claims(pod, snap.storage)
        except PluginError as e:
            return Status.error(str(e), NAME)
        if claims.unbound_immediate:
            return Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_UNBOUND_IMMEDIATE,), NAME)
        state.write(STATE_KEY, StateData(claims))
        return None

    def add_pod(self, state: CycleState, pod: Pod, added: Pod, row: int, snap: Snapshot) -> None:
        """No PreFilterExtensions upstream: the claims do not depend on other pods."""

    def remove_pod(self, state: CycleState, pod: Pod, removed: Pod, row: int, snap: Snapshot) -> None:
        """No PreFilterExtensions upstream: the claims do not depend on other pods."""

    def _state(self, state: CycleState) -> StateData:
        s = state.read(STATE_KEY)
        if s is None:
            raise PluginError(f'reading "{STATE_KEY}" from cycleState: not found')
        return s

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        try:
            s = self._state(state)
        except PluginError as e:
            return FilterResult.from_statuses([Status.error(str(e), NAME)] * len(rows))
        if s.claims is None:  # no claims: PreFilter skipped
            return FilterResult.all_pass(len(rows))
        return FilterResult.from_statuses([self._filter_node(s, pod, snap, int(r)) for r in rows.tolist()])

    def _filter_node(self, s: StateData, pod: Pod, snap: Snapshot, row: int) -> Status:
        node = snap.nodes[row]
        assert s.claims is not None
        try:
            found = self.binder.find_pod_volumes(pod, s.claims, node, snap.storage)
        except PluginError as e:
            return Status.error(str(e), NAME)
        if found.reasons:
            return Status(Code.UnschedulableAndUnresolvable, tuple(found.reasons), NAME)
        s.by_node[node.name] = found.volumes
        return Status(plugin=NAME)

    # ---- PreScore / Score --------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> Status | None:
        """Skip without a scorer (the StorageCapacityScoring gate off, as in v1.36). With it,
        upstream scores where static bindings were found or capacity scoring is on: always."""
        if not self.scoring:
            return Status(Code.Skip, plugin=NAME)
        try:
            self._state(state)
        except PluginError as e:
            return Status.error(str(e), NAME)
        return None

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        if not self.scoring:
            return np.zeros(len(rows), np.int64)
        s = self._state(state)
        return np.fromiter(
            (self._score_node(s.by_node.get(snap.nodes[r].name)) for r in rows.tolist()), np.int64, len(rows)
        )

    def _score_node(self, volumes: PodVolumes | None) -> int:
        """The storage classes' mean shape score of the utilization the node's volumes would have
        (static bindings: requested of the PV's capacity; else each provisioned class's capacity)."""
        if volumes is None:
            return 0
        classes: dict[str, list[int]] = {}
        if volumes.static_bindings:
            for b in volumes.static_bindings:
                acc = classes.setdefault(b.pv.storage_class, [0, 0])
                acc[0] += quantity_value(b.pvc.request or Fraction(0))
                acc[1] += quantity_value(b.pv.capacity or Fraction(0))
        else:
            for p in volumes.dynamic_provisions:
                if p.node_capacity is None or p.node_capacity.capacity is None:
                    continue
                acc = classes.setdefault(p.pvc.storage_class, [0, 0])
                acc[1] = quantity_value(p.node_capacity.capacity)  # the class's capacity, not a sum
                acc[0] += quantity_value(p.pvc.request or Fraction(0))
        if not classes:
            return 0
        total = 0
        for requested, capacity in classes.values():
            utilization = MAX_UTILIZATION if capacity == 0 or requested > capacity else requested * MAX_UTILIZATION // capacity
            total += int(broken_linear(np.array([utilization]), self.shape)[0])
        return int(math.floor(total / len(classes) + 0.5))

    # ---- Reserve / Unreserve -----------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.read(STATE_KEY) or self._state(state)
        if s.claims is None:  # no claims (PreFilter skipped): nothing to assume, nothing written
            return None
        volumes = s.by_node.get(node_name)
        if volumes is None:
            s.all_bound = True
            return None
        s.all_bound = self.binder.assume_pod_volumes(pod, node_name, volumes, self._storage())
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s = state.read(STATE_KEY)
        if s is None:
            return
        volumes = s.by_node.get(node_name)
        if volumes is not None:
            self.binder.revert_assumed_pod_volumes(volumes)

    # ---- PreBind -----------------------------------------------------------------------
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.read(STATE_KEY) or self._state(state)
        if s.claims is None or s.all_bound:
            return Status(Code.Skip, plugin=NAME)
        if node_name not in s.by_node:
            return Status.error(f'no pod volumes found for node "{node_name}"', NAME)
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Write the bindings through the cluster's API and wait until the claims are bound
        (at most ``bindTimeoutSeconds``); an error status fails the binding cycle."""
        s = self._state(state)
        if s.claims is None or s.all_bound:
            return None
        volumes = s.by_node.get(node_name)
        if volumes is None:
            return Status.error(f'no pod volumes found for node "{node_name}"', NAME)
        snap = self.handle.snapshot if self.handle is not None else self._snap
        assert snap is not None
        api = self.handle.api if self.handle is not None else StoreAPI(snap)
        try:
            self.binder.bind_pod_volumes(pod, node_name, volumes, api, self.bind_timeout_seconds, snap.storage)
        except PluginError as e:
            return Status.error(str(e), NAME)
        return None
