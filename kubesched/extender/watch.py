"""The extender's own view of a live cluster: list+watch into a snapshot, binding through the API.

``kubesched extender --kubeconfig``/``--in-cluster`` holds no files: it runs the live scheduler's
informers (nodes, namespaces, PriorityClasses, PDBs, pods; workload selectors when a profile's
PodTopologySpread uses system defaults) and applies their deltas with the live scheduler's
``ClusterCache``. The extender schedules nothing itself (kube-scheduler does), so its scheduler
is responsible for no pod: pending pods never enter a queue, assigned pods occupy their nodes.

Informer threads and HTTP handler threads share the snapshot: both hold ``lock`` while they touch
it (a delta batch, or one whole filter/prioritize/bind/preempt request).
"""

from __future__ import annotations

import logging
import socket
import threading
from urllib.parse import quote

from kubesched.alias import Alias
from kubesched.api.objects import Pod
from kubesched.config import SchedulerConfig
from kubesched.framework.registry import Registry
from kubesched.live.backend import EventRecorder, LiveCluster, Writers
from kubesched.live.binding import LiveScheduler
from kubesched.live.cache import ClusterCache
from kubesched.live.client import ApiError, KubeClient
from kubesched.live.informer import Delta, Informer
from kubesched.live.ratelimit import TokenBucket
from kubesched.live.resources import PODS, REQUIRED, WORKLOADS, Resource, decode
from kubesched.live.runner import needs_workloads
from kubesched.state.snapshot import Snapshot

log = logging.getLogger("kubesched.extender.watch")


class WatchedScheduler(LiveScheduler):
    """The live scheduler's state keeping without its queue: kube-scheduler schedules the pods."""

    def responsible_for(self, pod: Pod) -> bool:
        return False


class ClusterWatch:
    """Informers feeding one snapshot under ``lock``; ``bind`` POSTs ``pods/{name}/binding``."""

    def __init__(
        self,
        config: SchedulerConfig,
        registry: Registry,
        client: KubeClient,
        *,
        qps: float = 50.0,
        burst: int = 100,
        seed: int | None = None,
    ) -> None:
        self.lock = threading.RLock()
        self.client = client.with_limiter(TokenBucket(qps, burst))
        name = config.profiles[0].scheduler_name
        # Bindings are synchronous here; one writer thread serves LiveCluster's (unused) queued writes.
        self._writers = Writers(threads=1)
        recorder = EventRecorder(self.client, self._writers, controller=name, instance=f"{name}-{socket.gethostname()}")
        self.backend = LiveCluster(self.client, self._writers, recorder, name)
        self.sched = WatchedScheduler(config, Snapshot(), self.backend, registry, seed=seed)
        # storage and DRA kinds not watched: kube-scheduler's own volume plugins and
        # DynamicResources judge them, and here those plugins take no part
        self.sched.snapshot.storage.tracked = self.sched.snapshot.dra.tracked = False
        self.cache = ClusterCache(self.sched)
        self._stop = threading.Event()
        resources: list[Resource] = list(REQUIRED)
        if needs_workloads(self.sched):
            resources += WORKLOADS
        # each watch waits on its own token bucket, as kube-scheduler's informers share none with binds
        self.informers = [
            Informer(client.with_limiter(TokenBucket(qps, burst)), r, self._sink, self._stop) for r in resources
        ]
        self._pods = next(inf for inf in self.informers if inf.resource is PODS)

    snapshot = Alias[Snapshot]("sched.snapshot")
    host = Alias[str]("client.host")

    def _sink(self, deltas: list[Delta]) -> None:
        with self.lock:
            for kind, old, new in deltas:
                try:
                    self.cache.apply(kind, old, new)
                except Exception:  # noqa: BLE001 - one bad object must not stop the cache following the cluster
                    log.exception("applying a %s change failed", kind)

    def start(self) -> ClusterWatch:
        for inf in self.informers:
            inf.start()
        return self

    def synced(self) -> bool:
        """Every informer has listed once (``/readyz``)."""
        return all(inf.synced.is_set() for inf in self.informers)

    def wait_synced(self, timeout: float) -> bool:
        return all(inf.synced.wait(timeout) for inf in self.informers)

    def close(self) -> None:
        self._stop.set()
        for inf in self.informers:
            inf.close()
        self._writers.close()

    # ---- pods for bind ------------------------------------------------------------------
    def sees(self, namespace: str, name: str) -> bool:
        """Whether the pod watch holds a pod by that name."""
        return f"{namespace}/{name}" in self._pods.store

    def still_pending(self, pod: Pod, seen: bool) -> bool:
        """Whether the watch has yet to show the just-bound ``pod`` bound (or deleted).

        ``seen``: the watch held the pod when the bind started (else it came from a GET, and
        the watch's ADDED and any DELETED are still to come and will replace or remove it).
        """
        cur = self._pods.store.get(f"{pod.namespace}/{pod.name}")
        if cur is None:
            return not seen
        return cur.uid == pod.uid and not cur.node_name

    def find_pod(self, namespace: str, name: str) -> Pod | None:
        """The watched pod, else a GET (the watch may lag kube-scheduler); None when it does not exist.

        ``ApiError`` for any other API failure.
        """
        pod = self._pods.store.get(f"{namespace}/{name}")
        if pod is not None:
            return pod
        path = f"/api/v1/namespaces/{quote(namespace, safe='')}/pods/{quote(name, safe='')}"
        try:
            raw = self.client.request("GET", path).body
        except ApiError as e:
            if e.status == 404:
                return None
            raise
        return decode(PODS, raw)
