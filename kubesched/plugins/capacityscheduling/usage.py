"""Quota usage kept in step with the scheduler's cache.

Upstream, CapacityScheduling counts a pod in its namespace's ``used`` when the pod informer
sees it assigned, or when Reserve assumes it, and drops it on delete, Unreserve or a terminal
phase. Here the cache is the Snapshot (bound and assumed pods), so the tracker follows it: rows
whose pods changed (``Snapshot.changed_rows``) are recounted, and any structural change (nodes,
namespaces) or a new set of ElasticQuotas rebuilds everything. Preemption dry runs that take
victims out of the snapshot therefore see the quotas they would free, as upstream's RemovePod
extension does on its copy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubesched.api.resources import Resources
from kubesched.plugins.capacityscheduling.quota import ElasticQuotaInfo, ElasticQuotaInfos, pod_request

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.state.snapshot import Snapshot


class QuotaTracker:
    def __init__(self) -> None:
        self.infos = ElasticQuotaInfos()
        self._signature: tuple = ()
        self._structure = -1
        self._log_pos = 0
        self._by_row: dict[int, set[str]] = {}  # row -> uids counted from that row
        self._counted: dict[str, tuple[str, Resources, int | None]] = {}  # uid -> (namespace, request, row)

    def sync(self, snap: Snapshot) -> ElasticQuotaInfos:
        """The infos as of the snapshot now (incremental unless the snapshot was restructured)."""
        quotas = snap.elastic_quotas
        signature = (id(snap), tuple((ns, id(eq)) for ns, eq in quotas.items()))
        log = snap.changed_rows
        if signature != self._signature or snap.structure != self._structure or len(log) < self._log_pos:
            self._rebuild(snap, signature)
            return self.infos
        if len(log) > self._log_pos:
            rows = set(log[self._log_pos :])
            self._log_pos = len(log)
            for row in rows:
                self._sync_row(snap, row)
        return self.infos

    def _rebuild(self, snap: Snapshot, signature: tuple) -> None:
        reserved = {uid: v for uid, v in self._counted.items() if v[2] is None}  # Reserve-only entries
        self.infos = ElasticQuotaInfos(
            (ns, ElasticQuotaInfo.new(ns, eq.min, eq.max)) for ns, eq in snap.elastic_quotas.items()
        )
        self._by_row.clear()
        self._counted.clear()
        self._signature = signature
        self._structure = snap.structure
        self._log_pos = len(snap.changed_rows)
        if self.infos:
            for row in range(snap.n):
                self._sync_row(snap, row)
        for uid, (ns, req, _) in reserved.items():
            info = self.infos.get(ns)
            if info is not None and uid not in info.pods:
                info.add_pod_if_not_present(uid, req)
                self._counted[uid] = (ns, req, None)

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
    def reserve(self, snap: Snapshot, pod: Pod) -> None:
        """Count the pod (addPodIfNotPresent): it is usually in the cache already (assumed)."""
        infos = self.sync(snap)
        info = infos.get(pod.namespace)
        if info is None or pod.uid in self._counted:
            return
        req = pod_request(pod.requests)
        info.add_pod_if_not_present(pod.uid, req)
        self._counted[pod.uid] = (pod.namespace, req, None)

    def unreserve(self, snap: Snapshot, pod: Pod) -> None:
        """Stop counting the pod (deletePodIfPresent); the cache forgets it right after."""
        self.sync(snap)
        self._drop(pod.uid)
