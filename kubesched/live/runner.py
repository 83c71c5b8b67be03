"""``kubesched run``: the scheduling loop against a Kubernetes API.

Threads and who owns what:

- one informer thread per watched resource decodes events and posts deltas to ``events``;
- binding workers run PreBind/Bind and post the outcome to ``events``;
- writer threads send events, status patches and victim deletions (fire and forget);
- the leader elector (with ``--leader-elect``) holds the Lease;
- the HTTP server answers probes and ``/metrics``;
- the scheduling thread (``serve``) alone touches the snapshot and the queue: it applies
  deltas and outcomes between scheduling attempts, so the scheduling core needs no locks.
"""

from __future__ import annotations

import logging
import queue
import socket
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.objects import Pod
from kubesched.config import SchedulerConfig
from kubesched.framework.registry import Registry
from kubesched.framework.status import Code, Status
from kubesched.live import bodies
from kubesched.live.backend import EventRecorder, LiveCluster, Writers
from kubesched.live.binding import InFlight, LiveScheduler
from kubesched.live.cache import ClusterCache
from kubesched.live.client import KubeClient
from kubesched.live.failures import FailureLog
from kubesched.live.informer import Backoff, Delta, Informer
from kubesched.live.leader import LeaderElector, LeaseConfig
from kubesched.live.objects import LiveObjects
from kubesched.live.ratelimit import TokenBucket
from kubesched.live.resources import NODES, PLUGIN_RESOURCES, PODS, REQUIRED, WORKLOADS, Resource
from kubesched.queue.scheduling_queue import QueuedPodInfo
from kubesched.scheduler import ScheduleResult
from kubesched.server.httpd import HTTPServer
from kubesched.server.metrics import SchedulerMetrics
from kubesched.server.security import Access, ServingTLS
from kubesched.state.snapshot import Snapshot

log = logging.getLogger("kubesched.live")

EXIT_OK = 0
EXIT_LEADERSHIP_LOST = 1
LEFTOVER_FLUSH_PERIOD = 30.0  # kube-scheduler flushes long-unschedulable pods every 30 s
MAX_DRAIN = 10_000  # deltas applied between two scheduling attempts at most


@dataclass
class RunOptions:
    qps: float = 50.0
    burst: int = 100
    leader_elect: bool = False
    lease: LeaseConfig | None = None
    metrics_listen: tuple[str, int] | None = ("127.0.0.1", 10251)
    # Few threads: under the GIL, more threads contend for locks without adding throughput
    # (16 binders + 8 writers: 336-356 pods/s; 4 + 2: 432, bench/live.py).
    bind_workers: int = 4
    # How far scheduling may run ahead of binding: past this many bindings in flight (waiting
    # for a binder or a rate-limiter token, or sent), no pod is popped until one completes.
    max_in_flight_bindings: int = 16
    # Bindings of pods with PersistentVolumeClaims run on threads of their own: their PreBind may
    # wait for the PV controller and a provisioner (up to bindTimeoutSeconds), and must neither
    # hold a binder nor count toward max_in_flight_bindings (kube-scheduler gives every binding a
    # goroutine); past this many at once, further ones queue behind them.
    volume_bind_workers: int = 64
    event_writers: int = 2
    watch_idle_timeout: float = 90.0
    watch_backoff: float = 0.2
    watch_backoff_max: float = 30.0
    shutdown_timeout: float = 30.0
    seed: int | None = None
    tls: ServingTLS | None = None  # HTTPS for the metrics port
    access: Access | None = None  # who may read /metrics
    identity: str = field(default_factory=lambda: f"{socket.gethostname()}_{uuid.uuid4()}")


def needs_workloads(sched: LiveScheduler) -> bool:
    """PodTopologySpread's system default constraints select pods by their Service/RC/RS/StatefulSet."""
    return any(
        getattr(pl, "default_constraints", None) for fw in sched.frameworks.values() for pl in fw.plugins.values()
    )


def plugin_resources(sched: LiveScheduler) -> list[Resource]:
    """Resources the enabled plugins read: PodGroups for Coscheduling, ElasticQuotas for
    CapacityScheduling, the storage kinds for the volume plugins, DeviceClasses, ResourceSlices
    and ResourceClaims for DynamicResources."""
    names = {name for fw in sched.frameworks.values() for name in fw.plugins}
    out: list[Resource] = []
    for name, resources in PLUGIN_RESOURCES.items():
        if name in names:
            out += [r for r in resources if r not in out]
    return out


def watched_resources(sched: LiveScheduler) -> list[Resource]:
    """What the scheduler's informers watch: the required kinds, the workloads when
    PodTopologySpread's default constraints read them, and what the enabled plugins read."""
    resources: list[Resource] = list(REQUIRED)
    if needs_workloads(sched):
        resources += WORKLOADS
    return resources + plugin_resources(sched)


class Runner:
    def __init__(
        self,
        config: SchedulerConfig,
        registry: Registry,
        client: KubeClient,
        options: RunOptions | None = None,
    ) -> None:
        self.options = opts = options or RunOptions()
        self.config = config
        self.events: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self.client = client.with_limiter(self._limiter())
        name = config.profiles[0].scheduler_name
        self.writers = Writers(threads=max(1, opts.event_writers))
        # kube-scheduler records events through a client of its own: they never starve bindings
        self.recorder = EventRecorder(
            client.with_limiter(self._limiter()),
            self.writers,
            controller=name,
            instance=f"{name}-{socket.gethostname()}",
        )
        self.backend = LiveCluster(self.client, self.writers, self.recorder, name, check_target=self._target_problem)
        self.sched = LiveScheduler(
            config, Snapshot(), self.backend, registry, seed=opts.seed, clock=time.monotonic, submit=self._submit
        )
        self.cache = ClusterCache(self.sched)
        self.metrics = SchedulerMetrics(seed=opts.seed)
        self.sched.hooks.on_scheduled.append(self._on_scheduled)
        self.sched.hooks.on_failed.append(self._on_failed)
        self.sched.hooks.on_skipped.append(self._on_skipped)
        self.metrics.attach(self.sched)
        self._binders = ThreadPoolExecutor(max_workers=max(1, opts.bind_workers), thread_name_prefix="bind")
        self._volume_binders = ThreadPoolExecutor(
            max_workers=max(1, opts.volume_bind_workers), thread_name_prefix="bind-volumes"
        )
        self._volume_bindings: set[str] = set()  # uids of in-flight bindings on _volume_binders
        self._stop_informers = threading.Event()
        self.failures = FailureLog()  # one line per distinct failure of the informers, not one per retry
        resources = watched_resources(self.sched)
        self.informers = [
            Informer(
                client.with_limiter(self._limiter()),
                r,
                self._sink,
                self._stop_informers,
                idle_timeout=opts.watch_idle_timeout,
                backoff=Backoff(opts.watch_backoff, opts.watch_backoff_max),
                failures=self.failures,
            )
            for r in resources
        ]
        self._nodes = next(inf for inf in self.informers if inf.resource is NODES)
        self._pods = next(inf for inf in self.informers if inf.resource is PODS)
        # PreBind's writes besides the binding (claims, volumes) go to the API; it reads back
        # through these informers
        self.objects = LiveObjects(self.client, {inf.kind: inf for inf in self.informers})
        for fw in self.sched.frameworks.values():
            fw.handle.api = self.objects
        self.elector: LeaderElector | None = None
        if opts.leader_elect:
            lease = opts.lease or LeaseConfig(name)
            if not lease.identity:
                lease = LeaseConfig(
                    lease.name, lease.namespace, opts.identity, lease.lease_duration, lease.renew_deadline, lease.retry_period
                )
            # its own token bucket: renewals never wait behind a burst of bindings
            self.elector = LeaderElector(client.with_limiter(self._limiter()), lease)
        self.ready = threading.Event()  # caches synced (a standby is ready too)
        self.http: HTTPServer | None = None
        if opts.metrics_listen is not None:
            self.http = HTTPServer(
                opts.metrics_listen, metrics=self.metrics, ready=self.ready.is_set, tls=opts.tls, access=opts.access
            )
        self._stopping = threading.Event()
        self._victims_seen = 0
        self.exit_code = EXIT_OK
        self.outcomes: dict[str, int] = {"bound": 0, "dropped": 0, "requeued": 0}

    # ---- plumbing -----------------------------------------------------------------------
    def _limiter(self) -> TokenBucket | None:
        """A token bucket of its own for one client; none for a negative QPS (client-go's rule)."""
        opts = self.options
        return TokenBucket(opts.qps, opts.burst) if opts.qps > 0 else None

    def _sink(self, deltas: list[Delta]) -> None:
        self.events.put(("deltas", deltas))
        self.objects.notify({kind for kind, _, _ in deltas})

    def _submit(self, b: InFlight) -> None:
        if any(v.uses_claim for v in b.pod.volumes):
            self._volume_bindings.add(b.pod.uid)
            self._volume_binders.submit(self._bind, b)
        else:
            self._binders.submit(self._bind, b)

    def _target_problem(self, pod: Pod, node: str) -> str | None:
        """Why a binding of ``pod`` to ``node`` must not be sent now: the node informer (fresher
        than the snapshot, which takes changes between attempts) no longer has the node the pod
        was assumed on. Called from binding workers; dict reads need no lock."""
        cur = self._nodes.store.get(node)
        if cur is None:
            return f'node "{node}" was deleted after the pod was assumed on it'
        b = self.sched.in_flight.get(pod.uid)
        if b is not None and b.node_uid and cur.uid != b.node_uid:
            return f'node "{node}" was deleted and recreated (uid {cur.uid}) after the pod was assumed on it'
        return None

    def _bind(self, b: InFlight) -> None:
        """PreBind + Bind on a worker thread; the outcome goes back to the scheduling thread.

        The node is checked before PreBind, and again by the backend just before the POST."""
        why = self._target_problem(b.pod, b.node)
        if why:
            st = Status.error(f"binding rejected: {why}")
        else:
            try:
                st = b.fw.run_pre_bind(b.state, b.pod, b.node)
                if st.ok:
                    st = b.fw.run_bind(b.state, b.pod, b.node)
            except Exception as e:  # noqa: BLE001 - a plugin failure is this binding's error status
                st = getattr(e, "status", None) or Status.error(f"binding failed: {e}")
        self.events.put(("bound", b, st, not st.ok and self.settled(b.pod)))

    def settled(self, pod: Pod) -> bool:
        """After a failed binding, whether the pod informer no longer has ``pod`` unbound (deleted,
        replaced by a pod of another uid, or bound): handleSchedulingFailure's lister check, which
        decides whether kube-scheduler requeues the pod. Whatever the API answered (a 404 may come
        from a proxy or a stale route while the pod exists), the informer decides. Called from
        binding workers; dict reads need no lock."""
        cur = self._pods.store.get(pod.key)  # the informer keys pods by namespace/name
        return cur is None or cur.uid != pod.uid or bool(cur.node_name)

    def stop(self) -> None:
        """Ask ``serve`` to shut down gracefully (safe from signal handlers and other threads)."""
        self._stopping.set()
        self.events.put(("wake",))

    @property
    def leading(self) -> bool:
        return self.elector is None or self.elector.leading.is_set()

    # ---- hooks (scheduling thread) --------------------------------------------------------
    def _on_scheduled(self, res: ScheduleResult) -> None:
        pod = res.pod
        self.recorder.record(pod, bodies.SCHEDULED, f"Successfully assigned {pod.key} to {res.node}")
        log.info(
            "scheduled",
            extra={
                "kv": {
                    "pod": pod.key,
                    "node": res.node,
                    "profile": res.profile,
                    "attempt": res.attempt,
                    "evaluated": res.evaluated,
                    "feasible": res.feasible,
                    "duration_ms": round(res.duration * 1000, 3),
                }
            },
        )

    def _on_failed(self, res: ScheduleResult) -> None:
        pod = res.pod
        unschedulable = res.code in (Code.Unschedulable, Code.UnschedulableAndUnresolvable)
        reason = bodies.REASON_UNSCHEDULABLE if unschedulable else bodies.REASON_SCHEDULER_ERROR
        message = res.message or ""
        self.recorder.record(pod, bodies.FAILED_SCHEDULING, message)
        if not bodies.has_condition(pod, "False", reason, message):
            self.backend.patch_status(pod, bodies.scheduled_condition_patch("False", reason, message, time.time()))
        if res.nominated_node:
            victims = self.backend.victims - self._victims_seen
            if victims > 0:
                self.metrics.record_preemption(victims)
        log.info(
            "unschedulable" if unschedulable else "error",
            extra={
                "kv": {
                    "pod": pod.key,
                    "profile": res.profile,
                    "attempt": res.attempt,
                    "reason": message,
                    "nominated_node": res.nominated_node or None,
                    "duration_ms": round(res.duration * 1000, 3),
                }
            },
        )

    def _on_skipped(self, res: ScheduleResult) -> None:
        """A pod being deleted is not scheduled: only the event says so (no status update)."""
        self.recorder.record(res.pod, bodies.FAILED_SCHEDULING, res.message or "")
        log.info("skipped", extra={"kv": {"pod": res.pod.key, "reason": res.message}})

    # ---- the loop ------------------------------------------------------------------------
    def start(self) -> None:
        if self.http is not None:
            self.http.start()
            log.info("serving", extra={"kv": {"url": self.http.url, "paths": "/healthz /livez /readyz /metrics"}})
        for inf in self.informers:
            inf.start()
        if self.elector is not None:
            self.elector.start()

    def serve(self) -> int:
        """Run until ``stop()`` (0) or until leadership is lost (1); always shuts down cleanly."""
        self.start()
        try:
            self.exit_code = self._loop()
        finally:
            self._shutdown()
        return self.exit_code

    def _loop(self) -> int:
        sched = self.sched
        last_flush = time.monotonic()
        was_leading = False
        while not self._stopping.is_set():
            self._drain(0.0)
            if self._stopping.is_set():
                break
            if self.elector is not None and self.elector.lost.is_set():
                log.error("leadership lost: stopping", extra={"kv": {"lease": self.elector.config.name}})
                return EXIT_LEADERSHIP_LOST
            if not self.ready.is_set():
                if all(inf.synced.is_set() for inf in self.informers):
                    self.ready.set()
                    log.info(
                        "caches synced",
                        extra={"kv": {"nodes": sched.snapshot.n, "pods": len(sched.snapshot.pod_by_uid),
                                      "pending": len(sched.queue)}},
                    )
                else:
                    self._drain(0.05)
                    continue
            timeout = 0.25
            if self.leading:
                if not was_leading:
                    was_leading = True
                    log.info("scheduling", extra={"kv": {"profiles": ",".join(sched.frameworks)}})
                sched.expire_waiting_pods()  # Permit timeouts
                # Run ahead of binding only so far: beyond the bound, wait for an outcome (drained
                # below) so that decisions are not made long before the cluster sees them.
                if len(sched.in_flight) - len(self._volume_bindings) < self.options.max_in_flight_bindings:
                    qpi = sched.queue.pop()
                    if qpi is not None:
                        self._attempt(qpi)
                        continue
                for nxt in (sched.queue.next_backoff_expiry(), sched.next_waiting_deadline()):
                    if nxt is not None:
                        timeout = min(timeout, max(0.0, nxt - time.monotonic()))
            now = time.monotonic()
            if now - last_flush >= LEFTOVER_FLUSH_PERIOD:
                last_flush = now
                sched.queue.flush_unschedulable_leftover()
            self._drain(timeout)
        return EXIT_OK

    def _attempt(self, qpi: QueuedPodInfo) -> None:
        if qpi.pod.deleting:
            self.sched.queue.delete(qpi.pod.uid)  # skipPodSchedule: being deleted
            return
        self._victims_seen = self.backend.victims
        self.sched.attempt(qpi)

    def _drain(self, timeout: float) -> int:
        """Apply queued deltas and binding outcomes; wait up to ``timeout`` for the first one."""
        n = 0
        try:
            item = self.events.get(timeout=timeout) if timeout > 0 else self.events.get_nowait()
        except queue.Empty:
            return 0
        while True:
            self._apply(item)
            n += 1
            if n >= MAX_DRAIN:
                return n
            try:
                item = self.events.get_nowait()
            except queue.Empty:
                return n

    def _apply(self, item: tuple[Any, ...]) -> None:
        if item[0] == "deltas":
            for kind, old, new in item[1]:
                try:
                    self.cache.apply(kind, old, new)
                except Exception:  # noqa: BLE001 - one bad object must not stop the scheduler
                    log.exception("applying a %s change failed", kind)
        elif item[0] == "bound":
            _, b, st, gone = item
            self._volume_bindings.discard(b.pod.uid)
            outcome = self.sched.complete(b, st, gone)
            self.outcomes[outcome] += 1
            if outcome != "bound":
                log.info(
                    "binding " + ("dropped" if outcome == "dropped" else "failed; requeued"),
                    extra={"kv": {"pod": b.pod.key, "node": b.node, "reason": st.message or None}},
                )

    def _shutdown(self) -> None:
        """Stop popping; finish the bindings in flight (bounded); flush writes; release the lease."""
        deadline = time.monotonic() + self.options.shutdown_timeout
        while self.sched.in_flight and time.monotonic() < deadline:
            self._drain(0.05)
        if self.sched.in_flight:
            log.warning("shutdown: bindings still in flight", extra={"kv": {"count": len(self.sched.in_flight)}})
        self._stop_informers.set()
        for inf in self.informers:
            inf.close()
        self.failures.close()
        self._binders.shutdown(wait=False, cancel_futures=True)
        self._volume_binders.shutdown(wait=False, cancel_futures=True)
        self.writers.drain(max(0.5, deadline - time.monotonic()))
        self.writers.close()
        if self.elector is not None:
            self.elector.stop(release=self.exit_code == EXIT_OK)
        if self.http is not None:
            self.http.shutdown()
        log.info("stopped", extra={"kv": {"bound": self.outcomes["bound"], "exit_code": self.exit_code}})
