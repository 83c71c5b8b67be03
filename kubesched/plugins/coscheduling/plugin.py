"""Coscheduling (gang scheduling), as scheduler-plugins' pkg/coscheduling ships it.

A PodGroup says how many of its pods must run together (``minMember``). Members that fit are
assumed and parked at Permit until enough of the group is assigned; then every waiting member
is allowed at once. If the group cannot complete, a member's PostFilter, a Permit timeout or an
Unreserve rejects the waiting members, so the group holds nothing: all or nothing.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework.interfaces import (
    NOT_INVOLVED,
    PermitPlugin,
    PostFilterPlugin,
    PreFilterPlugin,
    QueueSortPlugin,
    ReservePlugin,
    Signature,
    SignPlugin,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.waiting import request_activation
from kubesched.plugins.coscheduling.args import NAME, parse_args
from kubesched.plugins.coscheduling.groups import (
    POD_GROUP_NOT_FOUND,
    POD_GROUP_NOT_SPECIFIED,
    WAIT,
    PodGroupManager,
    pod_group_full_name,
    pod_group_label,
    wait_time,
)

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.queue.scheduling_queue import QueuedPodInfo
    from kubesched.state.snapshot import Snapshot

NOT_FOUND_GROUP = "can not find pod group"
REJECT_IN_POST_FILTER = "optimistic rejection in PostFilter"
REJECT_IN_UNRESERVE = "rejection in Unreserve"
#: PostFilter keeps the group when at most this share of minMember is still unassigned.
QUORUM_GAP = np.float32(0.1)


class Coscheduling(QueueSortPlugin, PreFilterPlugin, PostFilterPlugin, PermitPlugin, ReservePlugin, SignPlugin):
    """QueueSort keeps a group's pods together; PreFilter turns away groups that cannot start;
    Permit holds members until the quorum; PostFilter and Unreserve release a failing group."""

    name = NAME
    # upstream: Pod Add and PodGroup Add/Update; PodGroups are static here, so no event stands for them
    events_to_register = frozenset({"AssignedPodAdd"})

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        self.cfg = parse_args(self.args)
        clock = getattr(handle, "clock", None) or time.monotonic
        self.manager = PodGroupManager(
            lambda: self.handle.snapshot if self.handle is not None else None,
            self._pending_pods,
            float(self.cfg.permit_waiting_time_seconds),
            clock,
        )

    def _pending_pods(self) -> list[Pod]:
        """Pods not in the cache that count as members: those in the scheduler's queue (gated, in
        flight and waiting ones included) and, where the cluster backend keeps every pod (the
        in-memory cluster, which ``explain`` never queues), its non-terminal pods."""
        nominator = self.handle.nominator if self.handle is not None else None
        pods = nominator.pending_pods() if nominator is not None else []
        known = getattr(getattr(self.handle, "cluster", None), "pods", None)
        if isinstance(known, dict):
            pods.extend(p for p in known.values() if not p.terminal)
        return pods

    def _waiting(self) -> Any:
        return getattr(self.handle, "waiting_pods", None)

    def sign_pod(self, pod: Pod, snap: Snapshot) -> Signature | None:
        """Not involved with pods of no PodGroup; a gang member reads its whole group."""
        return None if pod_group_label(pod) else NOT_INVOLVED

    # ---- QueueSort -------------------------------------------------------------------
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Priority, then the PodGroup's creation time (a pod's own first attempt when it has no
        group), then ``namespace/name`` of the pods."""
        p1, p2 = a.pod.priority, b.pod.priority
        if p1 != p2:
            return p1 > p2
        t1 = self.manager.creation_timestamp(a.pod, _initial_attempt(a))
        t2 = self.manager.creation_timestamp(b.pod, _initial_attempt(b))
        if t1 == t2:
            return a.pod.key < b.pod.key
        return t1 < t2

    # ---- PreFilter -------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot) -> Status:
        """Reject (unresolvable: preemption cannot help) a recently failed group, a group with fewer
        than minMember pods, or one whose minResources the cluster cannot hold. Pods outside any
        group Skip (Success upstream; the same, as Coscheduling has no Filter)."""
        if not pod_group_label(pod):
            return Status(Code.Skip)
        msg = self.manager.pre_filter(pod, snap)
        if msg:
            return Status.unschedulable(msg, unresolvable=True)
        return Status()

    def add_pod(self, state: CycleState, pod: Pod, added: Pod, row: int, snap: Snapshot) -> None:
        return None  # PreFilterExtensions: nil upstream; nothing in the cycle state to update

    def remove_pod(self, state: CycleState, pod: Pod, removed: Pod, row: int, snap: Snapshot) -> None:
        return None

    # ---- PostFilter ------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: Pod, snap: Snapshot, diagnosis: Any) -> tuple[str | None, Status]:
        """One member fits nowhere: unless the group already has its quorum or is within 10% of it,
        reject its waiting members (they would most likely wait in vain) and back the group off."""
        full, pg = self.manager.get_pod_group(pod, snap)
        if pg is None:
            return None, Status.unschedulable(NOT_FOUND_GROUP)
        assigned = self.manager.calculate_assigned_pods(snap, pod.namespace, pg.name, exclude=pod.uid)
        if assigned >= pg.min_member:
            return None, Status(Code.Unschedulable)
        gap = np.float32(pg.min_member - assigned) / np.float32(pg.min_member)
        if gap <= QUORUM_GAP:
            return None, Status(Code.Unschedulable)
        self._reject_group(pod.namespace, pg.name, REJECT_IN_POST_FILTER)
        backoff = self.cfg.pod_group_backoff_seconds
        if backoff > 0 and len(self.manager.member_uids(snap, pod.namespace, pg.name)) >= pg.min_member:
            self.manager.backed_off.add(full, float(backoff))
        self.manager.permitted.discard(full)
        return None, Status.unschedulable(
            f"PodGroup {full} gets rejected due to Pod {pod.name} is unschedulable even after PostFilter"
        )

    # ---- Permit ----------------------------------------------------------------------
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        snap = self.handle.snapshot if self.handle is not None else None
        if snap is None:
            return Status.error("Coscheduling needs the scheduler's snapshot"), 0.0
        verdict = self.manager.permit(pod, snap)
        if verdict == POD_GROUP_NOT_SPECIFIED:
            return Status(), 0.0
        if verdict == POD_GROUP_NOT_FOUND:
            return Status.unschedulable(POD_GROUP_NOT_FOUND), 0.0
        full, pg = self.manager.get_pod_group(pod, snap)
        if verdict == WAIT:
            wait = float(self.cfg.permit_waiting_time_seconds)
            w = wait_time(pg, wait)
            if w != 0:
                wait = w
            assert pg is not None
            if self.manager.calculate_assigned_pods(snap, pod.namespace, pg.name, exclude=pod.uid) == 0:
                # The group's first member to wait brings its siblings back to activeQ (scheduler-plugins issue 682).
                siblings = [
                    p
                    for p in self.manager.pending_pods()
                    if p.uid != pod.uid and p.namespace == pod.namespace and pod_group_label(p) == pg.name
                ]
                request_activation(state, siblings)
            return Status(Code.Wait), wait
        waiting = self._waiting()
        if waiting is not None:
            for wp in waiting:
                if pod_group_full_name(wp.get_pod()) == full:
                    wp.allow(self.name)
        return Status(), 0.0

    # ---- Reserve / Unreserve ---------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """A member lost its place (rejected, timed out, failed to bind): release the whole group."""
        full, pg = self.manager.get_pod_group(pod)
        if pg is None:
            return
        self._reject_group(pod.namespace, pg.name, REJECT_IN_UNRESERVE)
        self.manager.permitted.discard(full)

    def _reject_group(self, namespace: str, group: str, message: str) -> None:
        """Reject the waiting pods of PodGroup ``namespace/group``."""
        waiting = self._waiting()
        if waiting is not None:
            for wp in waiting:
                other = wp.get_pod()
                if other.namespace == namespace and pod_group_label(other) == group:
                    wp.reject(self.name, message)


def _initial_attempt(q: QueuedPodInfo) -> float:
    """InitialAttemptTimestamp; a pod never popped yet counts from when it entered the queue."""
    return q.initial_attempt if q.initial_attempt is not None else q.timestamp
