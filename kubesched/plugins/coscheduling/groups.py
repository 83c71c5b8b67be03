"""PodGroup membership and the gang checks of scheduler-plugins' coscheduling/core (PodGroupManager).

A pod joins the PodGroup named by its ``scheduling.x-k8s.io/pod-group`` label (older releases:
``pod-group.scheduling.sigs.k8s.io``) in its own namespace. "Assigned" members are the pods in
the scheduler's cache (bound or assumed, waiting pods included); "all" members add the pods
still pending in the scheduler's queue, as the informer's pod lister does upstream.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.quantity import format_quantity
from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS

if TYPE_CHECKING:
    from kubesched.api.objects import Pod, PodGroup
    from kubesched.state.snapshot import Snapshot

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
LEGACY_POD_GROUP_LABEL = "pod-group.scheduling.sigs.k8s.io"
DEFAULT_WAIT_TIME = 60.0  # util.DefaultWaitTime

# core.Status values of PodGroupManager.Permit
POD_GROUP_NOT_SPECIFIED = "PodGroup not specified"
POD_GROUP_NOT_FOUND = "PodGroup not found"
SUCCESS = "Success"
WAIT = "Wait"


def pod_group_label(pod: Pod) -> str:
    """util.GetPodGroupLabel: the group's name, '' for a pod outside any group."""
    labels = pod.labels
    return labels.get(POD_GROUP_LABEL) or labels.get(LEGACY_POD_GROUP_LABEL, "")


def pod_group_full_name(pod: Pod) -> str:
    """util.GetPodGroupFullName: ``namespace/name``, '' for a pod outside any group."""
    name = pod_group_label(pod)
    return f"{pod.namespace}/{name}" if name else ""


def wait_time(pg: PodGroup | None, schedule_timeout: float) -> float:
    """util.GetWaitTimeDuration: the group's scheduleTimeoutSeconds, else the args' default, else 60s."""
    if pg is not None and pg.schedule_timeout_seconds is not None:
        return float(pg.schedule_timeout_seconds)
    if schedule_timeout:
        return float(schedule_timeout)
    return DEFAULT_WAIT_TIME


class Expiring:
    """A set whose entries expire on a clock (the go-cache TTL caches of PodGroupManager)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self._until: dict[str, float] = {}

    def add(self, key: str, ttl: float) -> None:
        self._until[key] = self.clock() + ttl

    def __contains__(self, key: object) -> bool:
        until = self._until.get(key)  # type: ignore[arg-type]
        if until is None:
            return False
        if until <= self.clock():
            del self._until[key]  # type: ignore[arg-type]
            return False
        return True

    def discard(self, key: str) -> None:
        self._until.pop(key, None)


def assigned_mask(snap: Snapshot, namespace: str, name: str) -> np.ndarray:
    """Rows of ``snap.pods`` (bound or assumed pods) that belong to group ``namespace/name``."""
    pods = snap.pods
    ns_code = pods.ns_codes.get(namespace)
    mask = np.zeros(len(pods), bool)
    if ns_code is None or not name:
        return mask
    primary = pods.labels.codes(POD_GROUP_LABEL)
    code = pods.labels.vocab(POD_GROUP_LABEL).get(name)
    if code is not None:
        mask |= primary == code
    legacy = pods.labels.vocab(LEGACY_POD_GROUP_LABEL).get(name)
    if legacy is not None:  # the legacy label counts only where the current one is absent
        mask |= (pods.labels.codes(LEGACY_POD_GROUP_LABEL) == legacy) & (primary < 0)
    return mask & (pods.namespace == ns_code)


class PodGroupManager:
    """What coscheduling/core keeps per scheduler: PodGroup lookups, member counts and the
    ``permittedPG`` / ``backedOffPG`` caches (on the scheduler's clock)."""

    def __init__(
        self,
        snapshot: Callable[[], Snapshot | None],
        pending_pods: Callable[[], Iterable[Pod]],
        schedule_timeout: float,
        clock: Callable[[], float],
    ) -> None:
        self.snapshot = snapshot
        self.pending_pods = pending_pods
        self.schedule_timeout = schedule_timeout
        self.permitted = Expiring(clock)  # groups whose minResources check passed recently
        self.backed_off = Expiring(clock)  # groups that failed recently (podGroupBackoffSeconds)

    # ---- lookups ---------------------------------------------------------------------
    def get_pod_group(self, pod: Pod, snap: Snapshot | None = None) -> tuple[str, PodGroup | None]:
        """(``namespace/name`` or '', the PodGroup or None when it does not exist)."""
        name = pod_group_label(pod)
        if not name:
            return "", None
        snap = snap if snap is not None else self.snapshot()
        pg = snap.pod_groups.get((pod.namespace, name)) if snap is not None else None
        return f"{pod.namespace}/{name}", pg

    def creation_timestamp(self, pod: Pod, ts: float) -> float:
        """GetCreationTimestamp: the PodGroup's creation time, else ``ts`` (a missing timestamp on an
        existing PodGroup is Go's zero time: before everything)."""
        full, pg = self.get_pod_group(pod)
        if pg is None:
            return ts
        return pg.creation_time if pg.creation_time is not None else float("-inf")

    def assigned_uids(self, snap: Snapshot, namespace: str, name: str) -> set[str]:
        items = snap.pods.items
        return {items[i].uid for i in np.nonzero(assigned_mask(snap, namespace, name))[0]}

    def calculate_assigned_pods(self, snap: Snapshot, namespace: str, name: str, exclude: str = "") -> int:
        """CalculateAssignedPods: members in the cache (bound or assumed), ``exclude`` (the pod in
        its own Permit, already assumed here but not in upstream's cycle snapshot) left out."""
        uids = self.assigned_uids(snap, namespace, name)
        uids.discard(exclude)
        return len(uids)

    def member_uids(self, snap: Snapshot, namespace: str, name: str) -> set[str]:
        """Every non-terminal pod of the group: cached ones and those pending in the queue."""
        uids = self.assigned_uids(snap, namespace, name)
        for p in self.pending_pods():
            if p.namespace == namespace and pod_group_label(p) == name:
                uids.add(p.uid)
        return uids

    # ---- checks ----------------------------------------------------------------------
    def pre_filter(self, pod: Pod, snap: Snapshot) -> str | None:
        """PodGroupManager.PreFilter: the rejection message, or None when the pod may go on."""
        full, pg = self.get_pod_group(pod, snap)
        if pg is None:
            return None
        if full in self.backed_off:
            return f"podGroup {full} failed recently"
        count = len(self.member_uids(snap, pod.namespace, pg.name))
        if count < pg.min_member:
            return (
                f"pre-filter pod {pod.name} cannot find enough sibling pods, "
                f"current pods number: {count}, minMember of group: {pg.min_member}"
            )
        if pg.min_resources is None or full in self.permitted:
            return None
        request = dict(pg.min_resources)
        request[PODS] = pg.min_member
        gap = check_cluster_resource(snap, request, pod.namespace, pg.name)
        if gap:
            return gap
        self.permitted.add(full, self.schedule_timeout)
        return None

    def permit(self, pod: Pod, snap: Snapshot) -> str:
        """PodGroupManager.Permit: Success once minMember pods (this one included) are assigned."""
        full, pg = self.get_pod_group(pod, snap)
        if not full:
            return POD_GROUP_NOT_SPECIFIED
        if pg is None:
            return POD_GROUP_NOT_FOUND
        assigned = self.calculate_assigned_pods(snap, pg.namespace, pg.name, exclude=pod.uid)
        if assigned + 1 >= pg.min_member:
            return SUCCESS
        return WAIT


def check_cluster_resource(snap: Snapshot, request: dict[str, int], namespace: str, name: str) -> str | None:
    """CheckClusterResource: can the nodes' free resources, with the group's own pods given back,
    cover ``request``? Nodes are walked in order; a resource is done once covered (later nodes
    that are over-committed cannot take it back). Returns the gap message, or None."""
    n = snap.n
    order = snap.order
    free: dict[str, np.ndarray] = {}
    mask = assigned_mask(snap, namespace, name)
    own = [snap.pods.items[i] for i in np.nonzero(mask)[0]]
    for res in request:
        col = snap.res_index.get(res)
        if col is None:  # no node offers it and no pod asks for it
            left = np.zeros(n, np.int64)
        elif res == PODS:  # allowed pod count minus the pods on the node
            left = (snap.alloc[:, col] - snap.requested[:, col]).astype(np.int64)
            for p in own:
                left[snap.row_of[p.node_name]] += 1
        else:
            left = (snap.alloc[:, col] - snap.requested[:, col]).astype(np.int64)
            for p in own:
                left[snap.row_of[p.node_name]] += p.requests.get(res, 0)
            if res not in (CPU, MEMORY, EPHEMERAL_STORAGE):  # a scalar counts where the node has it
                has = np.fromiter((res in node.allocatable for node in snap.nodes), bool, n)
                left = np.where(has, left, 0)
        free[res] = left[order] if n else left
    gap: dict[str, int] = {}
    for res, want in request.items():
        cum = np.cumsum(free[res]) if n else np.zeros(0, np.int64)
        if cum.size and int(cum.max()) >= want:
            continue  # covered at some node and then dropped from the request
        gap[res] = want - (int(cum[-1]) if cum.size else 0)
    if not gap:
        return None
    body = " ".join(f"{k}:{format_quantity(k, v)}" for k, v in sorted(gap.items()))
    return f"resource gap: map[{body}]"
