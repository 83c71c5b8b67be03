"""Quota usage kept in step with the scheduler's cache.

Upstream, CapacityScheduling counts a pod in its namespace's ``used`` when the pod informer
sees it assigned, or when Reserve assumes it, and drops it on delete, Unreserve or a terminal
phase. Here the cache is the Snapshot (bound and assumed pods), so the tracker follows it in the
snapshot's memo: rows whose pods changed are recounted, and any structural change (nodes,
namespaces) or a new set of ElasticQuotas rebuilds everything. Preemption dry runs that take
victims out of the snapshot therefore see the quotas they would free, as upstream's RemovePod
extension does on its copy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubesched.api.resources import Resources
from kubesched.plugins.capacityscheduling.quota import ElasticQuotaInfo, ElasticQuotaInfos, pod_request
from kubesched.state.memo import NAMESPACES, NODES

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.state.snapshot import Snapshot


class QuotaTracker:
    """The quota usage of one snapshot, kept in the snapshot's memo (``QuotaTracker.of``)."""

    def __init__(self, snap: Snapshot, old: QuotaTracker | None = None) -> None:
        self._rebuild(snap, {} if old is None else old._reserved())

    def _reserved(self) -> dict[str, tuple[str, Resources, int | None]]:
        """Pods counted by Reserve before they were in the cache."""
        return {uid: v for uid, v in self._counted.items() if v[2] is None}

    def _rebuild(self, snap: Snapshot, reserved: dict[str, tuple[str, Resources, int | None]]) -> None:
        self._quotas = dict(snap.elastic_quotas)  # the quota objects the infos were built from
        self.infos = ElasticQuotaInfos(
            (ns, ElasticQuotaInfo.new(ns, eq.min, eq.max)) for ns, eq in snap.elastic_quotas.items()
        )
        self._by_row: dict[int, set[str]] = {}  # row -> uids counted from that row
        self._counted: dict[str, tuple[str, Resources, int | None]] = {}  # uid -> (namespace, request, row)
        if self.infos:
            for row in range(snap.n):
                self._sync_row(snap, row)
        for uid, (ns, req, _) in reserved.items():  # they stay counted
            info = self.infos.get(ns)
            if info is not None and uid not in info.pods:
                info.add_pod_if_not_present(uid, req)
                self._counted[uid] = (ns, req, None)

    @staticmethod
    def of(snap: Snapshot) -> QuotaTracker:
        """The usage as of the snapshot now: rows whose pods changed are recounted; changed nodes,
        namespaces or ElasticQuota objects rebuild it."""
        tracker = snap.memo.follow(
            "CapacityScheduling/usage",
            lambda old: QuotaTracker(snap, old),
            lambda t, rows: t._sync_rows(snap, rows),
            on=NODES | NAMESPACES,
        )
        quotas = snap.elastic_quotas
        if len(quotas) != len(tracker._quotas) or any(tracker._quotas.get(ns) is not eq for ns, eq in quotas.items()):
            tracker._rebuild(snap, tracker._reserved())  # the same object: the memo keeps it
        return tracker

    def _sync_rows(self, snap: Snapshot, rows: list[int]) -> None:
        for row in set(rows):
            self._sync_row(snap, row)

    def _sync_row(self, snap: Snapshot, row: int) -> None:
        if row >= snap.n:
            return
        infos = self.infos
        here = {uid: p for uid, p in snap.pods_on[row].items() if p.namespace in infos}
        before = self._by_row.get(row, set())
        for uid in before - here.keys():
            self._drop(uid)
        for uid, p in here.items():
            if uid in before:
                continue
            counted = self._counted.get(uid)
            if counted is not None and counted[2] is None:  # reserved before it was in the cache
                self._counted[uid] = (counted[0], counted[1], row)
            else:
                req = pod_request(p.requests)
                infos[p.namespace].add_pod_if_not_present(uid, req)
                self._counted[uid] = (p.namespace, req, row)
        if here:
            self._by_row[row] = set(here)
        else:
            self._by_row.pop(row, None)

    def _drop(self, uid: str) -> None:
        counted = self._counted.pop(uid, None)
        if counted is None:
            return
        ns, req, row = counted
        info = self.infos.get(ns)
        if info is not None:
            info.delete_pod_if_present(uid, req)
        if row is not None and row in self._by_row:
            self._by_row[row].discard(uid)

    # ---- Reserve / Unreserve -------------------------------------------------------------
    def reserve(self, pod: Pod) -> None:
        """Count the pod (addPodIfNotPresent): it is usually in the cache already (assumed)."""
        info = self.infos.get(pod.namespace)
        if info is None or pod.uid in self._counted:
            return
        req = pod_request(pod.requests)
        info.add_pod_if_not_present(pod.uid, req)
        self._counted[pod.uid] = (pod.namespace, req, None)

    def unreserve(self, pod: Pod) -> None:
        """Stop counting the pod (deletePodIfPresent); the cache forgets it right after."""
        self._drop(pod.uid)
