"""The live ClusterBackend: bindings, events, pod status patches and preemption victims via the API.

``bind`` is called from a binding worker and blocks on the API call; everything else (events,
status patches, victim deletions) is queued to a small pool of writer threads so the scheduling
loop never waits on the network. All writes pass the client's token bucket.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from kubesched.api.objects import Pod
from kubesched.live import bodies
from kubesched.live.client import MERGE_PATCH, STRATEGIC_MERGE_PATCH, ApiError, KubeClient

log = logging.getLogger("kubesched.live.backend")

#: client-go's events recorder folds identical events seen within this window into a series.
EVENT_SERIES_WINDOW = 6 * 60.0
EVENT_SERIES_REFRESH = 30 * 60.0
EVENT_CACHE_SIZE = 4096


def pod_path(pod: Pod, sub: str = "") -> str:
    path = f"/api/v1/namespaces/{quote(pod.namespace, safe='')}/pods/{quote(pod.name, safe='')}"
    return f"{path}/{sub}" if sub else path


class Writers:
    """A bounded queue of API writes served by a few threads; full means the write is dropped.

    Events and status patches are best effort in kube-scheduler too (its event broadcaster drops
    events when its buffer is full); bindings never go through here.
    """

    def __init__(self, threads: int = 8, capacity: int = 10_000) -> None:
        self._q: queue.Queue[Callable[[], None] | None] = queue.Queue(capacity)
        self._threads = [threading.Thread(target=self._work, name=f"api-writer-{i}", daemon=True) for i in range(threads)]
        self._pending = 0
        self._lock = threading.Condition()
        self.dropped = 0
        for t in self._threads:
            t.start()

    def submit(self, fn: Callable[[], None]) -> bool:
        with self._lock:
            self._pending += 1
        try:
            self._q.put_nowait(fn)
        except queue.Full:
            with self._lock:
                self._pending -= 1
                self.dropped += 1
            log.warning("API write queue full: dropping a write (%d dropped so far)", self.dropped)
            return False
        return True

    def _work(self) -> None:
        while True:
            fn = self._q.get()
            if fn is None:
                return
            try:
                fn()
            except Exception:  # noqa: BLE001 - one failed write must not stop the writer
                log.exception("API write failed")
            finally:
                with self._lock:
                    self._pending -= 1
                    self._lock.notify_all()

    def drain(self, timeout: float) -> bool:
        """Wait until every queued write is done (or ``timeout``); True when drained."""
        end = time.monotonic() + timeout
        with self._lock:
            while self._pending > 0:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
        return True

    def close(self) -> None:
        for _ in self._threads:
            try:
                self._q.put_nowait(None)
            except queue.Full:
                break


@dataclass
class _Series:
    name: str
    namespace: str
    api: str  # "events.k8s.io/v1" | "v1"
    count: int
    last_seen: float
    last_patch: float


@dataclass(eq=False)
class EventRecorder:
    """kube-scheduler's events: events.k8s.io/v1 (core/v1 when the cluster lacks it), one series
    per identical (pod, reason, note) within 6 minutes as client-go's recorder does."""

    client: KubeClient
    writers: Writers
    controller: str
    instance: str
    clock: Callable[[], float] = time.time

    def __post_init__(self) -> None:
        self.api = "events.k8s.io/v1"
        self._series: OrderedDict[tuple, _Series] = OrderedDict()
        self._lock = threading.Lock()

    def record(self, pod: Pod, kind: tuple[str, str, str], note: str, related: Pod | None = None) -> None:
        """Queue one event (never blocks the caller)."""
        t = self.clock()
        self.writers.submit(lambda: self._write(pod, kind, note, related, t))

    def _path(self, api: str, namespace: str, name: str = "") -> str:
        ns = quote(namespace, safe="")
        base = f"/apis/events.k8s.io/v1/namespaces/{ns}/events" if api != "v1" else f"/api/v1/namespaces/{ns}/events"
        return f"{base}/{quote(name, safe='')}" if name else base

    def _write(self, pod: Pod, kind: tuple[str, str, str], note: str, related: Pod | None, t: float) -> None:
        key = (pod.uid, pod.namespace, pod.name, kind, note, related.uid if related else "")
        with self._lock:
            s = self._series.get(key)
            if s is not None and t - s.last_seen > EVENT_SERIES_WINDOW:
                del self._series[key]
                s = None
            if s is not None:
                s.count += 1
                s.last_seen = t
                self._series.move_to_end(key)
                due = s.count == 2 or t - s.last_patch >= EVENT_SERIES_REFRESH
                if not due:
                    return
                s.last_patch = t
                count, name, namespace, api = s.count, s.name, s.namespace, s.api
            else:
                count = 0
        if count:
            if self._patch_series(api, namespace, name, count, t):
                return
            with self._lock:
                self._series.pop(key, None)  # the event is gone (expired): start a new one
        name = self._create(pod, kind, note, related, t)
        if name:
            with self._lock:
                self._series[key] = _Series(name, pod.namespace, self.api, 1, t, t)
                while len(self._series) > EVENT_CACHE_SIZE:
                    self._series.popitem(last=False)

    def _patch_series(self, api: str, namespace: str, name: str, count: int, t: float) -> bool:
        if api == "v1":
            body = {"count": count, "lastTimestamp": bodies.rfc3339(t)}
        else:
            body = bodies.series_patch(count, t)
        try:
            self.client.request("PATCH", self._path(api, namespace, name), body=body, content_type=MERGE_PATCH)
            return True
        except ApiError as e:
            log.debug("event %s/%s: series update failed (%s); creating a new event", namespace, name, e)
            return False

    def _create(self, pod: Pod, kind: tuple[str, str, str], note: str, related: Pod | None, t: float) -> str:
        for _ in range(2):
            api = self.api
            body = bodies.event(api, pod, kind, note, self.controller, self.instance, t, related)
            try:
                self.client.request("POST", self._path(api, pod.namespace), body=body)
                return str(body["metadata"]["name"])
            except ApiError as e:
                # a 404 that is not about the namespace: the group is not served
                if api != "v1" and e.status in (404, 405) and 'namespaces "' not in e.message:
                    log.info("events.k8s.io/v1 is not served (%s): writing core/v1 events", e)
                    self.api = "v1"
                    continue
                log.warning("event %s for pod %s not written: %s", kind[1], pod.key, e)
                return ""
        return ""


class NodeGone(Exception):
    """A binding was called off: its node left the informer cache, or another node took its name."""


#: (pod, node name) -> why a binding of the pod to that node must not be sent now, or None.
TargetCheck = Callable[[Pod, str], "str | None"]


@dataclass(eq=False)
class LiveCluster:
    """``ClusterBackend`` over the Kubernetes API (see ``kubesched.framework.handle``).

    ``check_target``, when set, runs after a binding's wait for a rate-limiter token, just before
    the POST: the API server accepts a binding to any node name, so a node deleted (or replaced)
    since the pod was assumed must be caught here.
    """

    client: KubeClient
    writers: Writers
    recorder: EventRecorder
    controller: str
    check_target: TargetCheck | None = None

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self.binds = 0  # binding POSTs that succeeded
        self.victims = 0  # preemption victims whose deletion was requested

    # ---- binding (called from a binding worker; blocks) ------------------------------
    def bind(self, pod: Pod, node_name: str) -> None:
        def check() -> None:
            why = self.check_target(pod, node_name) if self.check_target is not None else None
            if why:
                raise NodeGone(why)

        self.client.request("POST", pod_path(pod, "binding"), body=bodies.binding(pod, node_name), before_send=check)
        with self._lock:
            self.binds += 1

    # ---- preemption (called from the scheduling loop; queued) -------------------------
    def delete_pod(self, pod: Pod, reason: str) -> None:
        """A preemption victim: DisruptionTarget condition, a Preempted event, then DELETE."""
        with self._lock:
            self.victims += 1
        self.writers.submit(lambda: self._evict(pod, reason))

    def _evict(self, pod: Pod, reason: str) -> None:
        t = time.time()
        try:
            self.client.request(
                "PATCH",
                pod_path(pod, "status"),
                body=bodies.disruption_target_patch(self.controller, t),
                content_type=STRATEGIC_MERGE_PATCH,
            )
        except ApiError as e:
            if e.status == 404:
                return  # already gone
            log.warning("victim %s: DisruptionTarget condition not set: %s", pod.key, e)
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": pod.uid}} if pod.uid else None
        try:
            self.client.request("DELETE", pod_path(pod), body=body)
        except ApiError as e:
            if e.status not in (404, 409):  # 409: the uid precondition failed, a new pod by that name
                log.warning("victim %s not deleted: %s", pod.key, e)
            return
        self.recorder.record(pod, bodies.PREEMPTED, reason)
        log.info("preempted pod=%s reason=%r", pod.key, reason)

    def set_nominated_node(self, pod: Pod, node_name: str) -> None:
        self.patch_status(pod, bodies.nominated_patch(node_name))

    # ---- status -----------------------------------------------------------------------
    def patch_status(self, pod: Pod, patch: dict) -> None:
        def write() -> None:
            try:
                self.client.request("PATCH", pod_path(pod, "status"), body=patch, content_type=STRATEGIC_MERGE_PATCH)
            except ApiError as e:
                if e.status != 404:
                    log.warning("pod %s: status not updated: %s", pod.key, e)

        self.writers.submit(write)
