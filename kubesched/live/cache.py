"""Informer deltas applied to the scheduler's snapshot and queue (on the scheduling thread only).

kube-scheduler's event handlers, in short: assigned pods occupy their node in the snapshot;
pending pods of our profiles go to the queue; node, pod and namespace changes move the
unschedulable pods that the change may help; a pending pod's status-only update (our own
PodScheduled condition or nomination, seen again through the watch) does not requeue it.
"""

from __future__ import annotations

import logging
from typing import Any

from kubesched.api.objects import (
    ElasticQuota,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PodGroup,
    PriorityClass,
)
from kubesched.api.storage import STORAGE_KINDS
from kubesched.dra.claims import ResourceClaim
from kubesched.dra.objects import DeviceClass, ResourceSlice
from kubesched.live.binding import LiveScheduler
from kubesched.live.resources import WorkloadSelector

log = logging.getLogger("kubesched.live.cache")

_VOLATILE_METADATA = ("resourceVersion", "managedFields", "generation")


def _spec_view(raw: dict) -> dict:
    """What a pending pod's scheduling depends on: everything but status and bookkeeping metadata
    (and kind/apiVersion, which list items lack and watch events carry). The status's
    resourceClaimStatuses count (isPodUpdated keeps them): the resourceclaim controller names a
    pod's generated claims there, which its PreEnqueue waits for."""
    out = {k: v for k, v in raw.items() if k not in ("status", "kind", "apiVersion")}
    claims = (raw.get("status") or {}).get("resourceClaimStatuses")
    if claims:
        out["status"] = {"resourceClaimStatuses": claims}
    md = out.get("metadata")
    if isinstance(md, dict):
        out["metadata"] = {k: v for k, v in md.items() if k not in _VOLATILE_METADATA}
    return out


def _node_changed(old: Node, new: Node) -> bool:
    """Whether the scheduler can tell the two apart (heartbeats and conditions it cannot)."""
    return (
        old.labels != new.labels
        or old.allocatable != new.allocatable
        or old.unschedulable != new.unschedulable
        or old.taints != new.taints
        or old.images != new.images
    )


class ClusterCache:
    def __init__(self, scheduler: LiveScheduler) -> None:
        self.sched = scheduler
        self.snap = scheduler.snapshot
        self.priority_classes: dict[str, PriorityClass] = {}
        self.events = 0  # deltas applied (for tests and logs)

    def apply(self, kind: str, old: Any, new: Any) -> None:
        self.events += 1
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(old, new)
        elif kind in STORAGE_KINDS:
            self._on_storage(old, new)
        elif isinstance(new or old, WorkloadSelector):
            self._on_workload(old, new)

    # ---- nodes -------------------------------------------------------------------------
    def _on_Node(self, old: Node | None, new: Node | None) -> None:  # noqa: N802 - named by kind
        snap = self.snap
        if new is None:
            if old is not None and old.name in snap.row_of:
                snap.remove_node(old.name)
            return
        row = snap.row_of.get(new.name)
        if row is None:
            snap.add_node(new)
            self.sched.queue.move_for_event("NodeAdd")
        elif _node_changed(snap.nodes[row], new):
            snap.update_node(new)
            self.sched.queue.move_for_event("NodeUpdate")
        else:
            snap.nodes[row] = new  # same scheduling view: keep cached verdicts valid

    # ---- namespaces, priority classes, PDBs, workloads ------------------------------------
    def _on_Namespace(self, old: Namespace | None, new: Namespace | None) -> None:  # noqa: N802
        if new is None:
            if old is not None:
                self.snap.set_namespace(old.name, {})  # bumps the namespace generation, then forget it
                self.snap.namespaces.pop(old.name, None)
            return
        if old is None or old.labels != new.labels or new.name not in self.snap.namespaces:
            self.snap.set_namespace(new.name, new.labels)
            self.sched.queue.move_for_event("NamespaceUpdate")

    def _on_PriorityClass(self, old: PriorityClass | None, new: PriorityClass | None) -> None:  # noqa: N802
        if new is None:
            if old is not None:
                self.priority_classes.pop(old.name, None)
        else:
            self.priority_classes[new.name] = new

    def _on_PodDisruptionBudget(  # noqa: N802
        self, old: PodDisruptionBudget | None, new: PodDisruptionBudget | None
    ) -> None:
        _replace(self.snap.pdbs, old, new)

    def _on_PodGroup(self, old: PodGroup | None, new: PodGroup | None) -> None:  # noqa: N802
        if old is not None:
            self.snap.pod_groups.pop((old.namespace, old.name), None)
        if new is not None:
            self.snap.pod_groups[(new.namespace, new.name)] = new
            self.sched.queue.move_for_event("PodGroupUpdate")

    def _on_ElasticQuota(self, old: ElasticQuota | None, new: ElasticQuota | None) -> None:  # noqa: N802
        if old is not None:
            self.snap.elastic_quotas.pop(old.namespace, None)
        if new is not None:
            self.snap.elastic_quotas[new.namespace] = new
            self.sched.queue.move_for_event("ElasticQuotaUpdate")

    # ---- storage and Dynamic Resource Allocation ----------------------------------------
    def _on_storage(self, old: Any, new: Any) -> None:
        """PVs, PVCs, StorageClasses, CSINodes, CSIDrivers, CSIStorageCapacities and
        VolumeAttachments: the store tells the queue (PersistentVolumeClaimUpdate, ...)."""
        if new is None:
            self.snap.storage.remove(old)
        else:
            self.snap.storage.add(new)

    def _on_DeviceClass(self, old: DeviceClass | None, new: DeviceClass | None) -> None:  # noqa: N802
        self._on_dra_object("DeviceClass", old, new)

    def _on_ResourceSlice(self, old: ResourceSlice | None, new: ResourceSlice | None) -> None:  # noqa: N802
        self._on_dra_object("ResourceSlice", old, new)

    def _on_dra_object(self, kind: str, old: Any, new: Any) -> None:
        if new is None:
            self.snap.dra.remove(old)
            return
        self.snap.dra.put(new)
        self.sched.queue.move_for_event(f"{kind}{'Update' if old is not None else 'Add'}")

    def _on_ResourceClaim(self, old: ResourceClaim | None, new: ResourceClaim | None) -> None:  # noqa: N802
        """A claim as the informer shows it, unless PreBind's write of a newer version is assumed
        (the assume cache's rule: its devices must stay taken until the informer catches up)."""
        dra = self.snap.dra
        if new is None:
            dra.remove(old)
            return
        if dra.put_claim(new):
            self.sched.queue.move_for_event("ResourceClaimUpdate" if old is not None else "ResourceClaimAdd")

    def _on_workload(self, old: WorkloadSelector | None, new: WorkloadSelector | None) -> None:
        _replace(self.snap.workload_selectors, old.entry if old else None, new.entry if new else None)

    # ---- pods --------------------------------------------------------------------------
    def resolve_priority(self, pod: Pod) -> None:
        """Priority admission's job, for API servers that did not do it (spec.priority unset)."""
        spec = pod.raw.get("spec") or {}
        if "priority" in spec:
            return
        pc = self.priority_classes.get(pod.priority_class_name) if pod.priority_class_name else None
        if pc is None and not pod.priority_class_name:
            pc = next((c for c in self.priority_classes.values() if c.global_default), None)
        if pc is not None:
            pod.priority = pc.value
            if "preemptionPolicy" not in spec:
                pod.preemption_policy = pc.preemption_policy

    def _on_Pod(self, old: Pod | None, new: Pod | None) -> None:  # noqa: N802
        if old is not None and (new is None or new.uid != old.uid or new.terminal):
            self._pod_deleted(old)
            if new is None or new.terminal:
                return
            old = None
        if new is None or new.terminal:
            return
        self.resolve_priority(new)
        if new.node_name:
            self._pod_assigned(old, new)
        else:
            self._pod_pending(old, new)

    def _pod_deleted(self, pod: Pod) -> None:
        self.sched.forget_deleted(pod.uid)
        self.sched.delete_pod(pod)  # off the snapshot, the queue, the nominations and Permit's waiting pods

    def _pod_assigned(self, old: Pod | None, new: Pod) -> None:
        sched = self.sched
        uid = new.uid
        if sched.queue.contains(uid):
            sched.queue.delete(uid)  # bound by someone else (or by an earlier bind of ours)
        sched.nominated.pop(uid, None)
        prev = self.snap.pod_by_uid.get(uid) or self.snap.orphans.get(uid)
        in_flight = sched.in_flight.get(uid)
        sched.confirm(uid)
        self.snap.add_pod(new)
        if in_flight is not None and prev is in_flight.assumed and prev.node_name == new.node_name:
            return  # our own binding, confirmed: the queue already moved for it
        if prev is None:
            sched.queue.move_for_event("AssignedPodAdd")
        elif prev.node_name != new.node_name or prev.labels != new.labels or prev.requests != new.requests:
            sched.queue.move_for_event("AssignedPodUpdate")

    def _pod_pending(self, old: Pod | None, new: Pod) -> None:
        sched = self.sched
        uid = new.uid
        if uid in sched.in_flight or uid in self.snap.pod_by_uid or uid in self.snap.orphans:
            return  # assumed by us (bind in flight or not yet confirmed): a stale pending view
        if not sched.responsible_for(new):
            return
        if new.deleting:
            sched.queue.delete(uid)  # being deleted: nothing to schedule (skipPodSchedule)
            return
        known = sched.nominated.get(uid)
        if known is not None and not new.nominated_node_name:
            # a nomination made here and not yet visible through the watch: keep it (UpdateNominatedPod)
            new.nominated_node_name = known.nominated_node_name
        if new.nominated_node_name:
            sched.nominated[uid] = new
        qpi = sched.queue.info(uid)
        if qpi is None:
            sched.add_pending(new)
        elif old is not None and _spec_view(old.raw) == _spec_view(new.raw):
            qpi.pod = new  # status only (our condition or nomination): no requeue
        else:
            sched.queue.update(new)


def _replace(items: list, old: Any, new: Any) -> None:
    """Swap ``old`` for ``new`` in a list the snapshot shares with plugins (in place)."""
    if old is not None:
        for i, x in enumerate(items):
            if x is old or x == old:
                if new is not None:
                    items[i] = new
                else:
                    del items[i]
                return
    if new is not None:
        items.append(new)
