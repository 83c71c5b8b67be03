"""kube-scheduler's Prometheus metrics (names, labels, buckets of pkg/scheduler/metrics), wired to
the Scheduler's hooks.

Everything lives on a dedicated ``CollectorRegistry`` so two schedulers (or a test and the
process) never share series. The scheduler is not changed to be measured: results come from
``scheduler.hooks``, queue moves from ``scheduler.queue.on_incoming``, plugin timings from each
``Framework.add_observer``; queue lengths and cache sizes are read when Prometheus scrapes.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector

from kubesched.framework.status import Code

if TYPE_CHECKING:
    from kubesched.framework.runtime import Framework
    from kubesched.scheduler import Scheduler, ScheduleResult

T = TypeVar("T")

#: kube-scheduler's pluginMetricsSamplePercent: plugin timings are kept for 10% of cycles.
PLUGIN_METRICS_SAMPLE_PERCENT = 10.0
#: Extension points whose total duration upstream records once per cycle (Filter runs per node
#: upstream and is recorded per plugin only).
CYCLE_EXTENSION_POINTS = ("PreFilter", "PostFilter", "PreScore", "Score")
QUEUES = ("active", "backoff", "unschedulable", "gated")
CACHE_TYPES = ("nodes", "pods", "assumed_pods")
#: Worst status wins when several plugins ran at one extension point.
_STATUS_RANK = {
    "Success": 0,
    "Skip": 0,
    "Wait": 1,
    "Pending": 1,
    "Unschedulable": 2,
    "UnschedulableAndUnresolvable": 3,
    "Error": 4,
}
_RANK_NAME = {0: "Success", 1: "Wait", 2: "Unschedulable", 3: "UnschedulableAndUnresolvable", 4: "Error"}


def exponential_buckets(start: float, factor: float, count: int) -> list[float]:
    """prometheus.ExponentialBuckets: ``count`` upper bounds, the first ``start``."""
    return [start * factor**i for i in range(count)]


def attempts_label(attempts: int) -> str:
    """getAttemptsLabel: 1..14, then "15+"."""
    return "15+" if attempts >= 15 else str(attempts)


@dataclass
class _Cycle:
    """What one scheduling cycle observed so far (one per thread: cycles never interleave there)."""

    points: dict[str, list[float]] = field(default_factory=dict)  # point -> [seconds, worst rank]
    pre_filter_open: bool = True  # PreFilter calls after any other point belong to preemption dry runs
    post_filter_ran: bool = False
    sampled: bool = False


@dataclass
class _Late:
    """A result whose duration the scheduler sets only after its hooks return."""

    res: ScheduleResult
    result: str
    sli: float | None  # seconds since the first attempt, when known from the scheduler's clock


class _StateCollector(Collector):
    """Gauges read at scrape time: queue lengths and cache sizes of the attached schedulers."""

    def __init__(self) -> None:
        self.schedulers: list[Scheduler] = []
        # (plugin, profile) series seen so far: they stay, at 0, once no pod counts (a gauge's series)
        self._rejection_keys: set[tuple[str, str]] = set()

    def describe(self) -> Iterable[Metric]:
        return [self._pending({}), self._cache(0, 0, 0), self._unschedulable({})]

    @staticmethod
    def _pending(counts: dict[str, int]) -> GaugeMetricFamily:
        return _gauge(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; "
            "'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in "
            "unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the number "
            "of unschedulable pods that the scheduler never attempted to schedule because they are gated.",
            ["queue"],
            (([q], counts.get(q, 0)) for q in QUEUES),
        )

    @staticmethod
    def _cache(nodes: int, pods: int, assumed: int) -> GaugeMetricFamily:
        return _gauge(
            "scheduler_cache_size",
            "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
            ["type"],
            (([t], v) for t, v in zip(CACHE_TYPES, (nodes, pods, assumed), strict=True)),
        )

    @staticmethod
    def _unschedulable(counts: dict[tuple[str, str], int]) -> GaugeMetricFamily:
        return _gauge(
            "scheduler_unschedulable_pods",
            "The number of unschedulable pods broken down by plugin name. A pod will increment the gauge "
            "for all plugins that caused it to not schedule and so this metric have meaning only when "
            "broken down by plugin.",
            ["plugin", "profile"],
            (([plugin, profile], v) for (plugin, profile), v in sorted(counts.items())),
        )

    def collect(self) -> Iterable[Metric]:
        counts = dict.fromkeys(QUEUES, 0)
        rejections: dict[tuple[str, str], int] = {}
        nodes = pods = assumed = 0
        for s in list(self.schedulers):
            for q, v in _queue_counts(s).items():
                counts[q] = counts.get(q, 0) + v
            for key, v in _retry(s.queue.rejections, {}).items():
                rejections[key] = rejections.get(key, 0) + v
            nodes += s.snapshot.n
            pods += len(s.snapshot.pod_by_uid)
            # offline binding is synchronous (nothing stays assumed); the live scheduler binds
            # asynchronously and keeps its assumed pods in ``in_flight``
            assumed += len(getattr(s, "in_flight", ()))
        self._rejection_keys |= rejections.keys()
        rejections = {key: rejections.get(key, 0) for key in self._rejection_keys}
        return [self._pending(counts), self._cache(nodes, pods, assumed), self._unschedulable(rejections)]


def _gauge(name: str, doc: str, labels: list[str], values: Iterable[tuple[list[str], float]]) -> GaugeMetricFamily:
    """A gauge family with one sample per (label values, value)."""
    g = GaugeMetricFamily(name, doc, labels=labels)
    for label_values, value in values:
        g.add_metric(label_values, value)
    return g


def _histogram(r: CollectorRegistry, name: str, doc: str, labels: list[str], buckets: list[float]) -> Histogram:
    return Histogram(name, doc, labels, buckets=buckets, registry=r)


def _retry(read: Callable[[], T], empty: T) -> T:
    """A read of the queue from the scrape thread; the scheduler may move pods meanwhile, so retry."""
    for _ in range(5):
        try:
            return read()
        except RuntimeError:  # dictionary changed size during iteration
            continue
    return empty


def _queue_counts(s: Scheduler) -> dict[str, int]:
    return _retry(s.queue.counts, {})


class SchedulerMetrics:
    """kube-scheduler's ``scheduler_*`` metrics on a registry of their own.

    ``attach(scheduler)`` wires a Scheduler; ``observe_framework(fw)`` + ``end_cycle(profile)``
    serve callers that run framework code outside the scheduling loop (the extender).
    """

    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        *,
        plugin_sample_percent: float = PLUGIN_METRICS_SAMPLE_PERCENT,
        seed: int | None = None,
    ) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.plugin_sample_percent = plugin_sample_percent
        self._rng = random.Random(seed)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._late: list[_Late] = []
        self._first_attempt: dict[str, float] = {}  # pod uid -> scheduler clock at its first attempt
        self._deleted_seen: dict[int, int] = {}  # id(scheduler) -> victims deleted so far (memory backend)
        r = self.registry
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts_total",
            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be "
            "scheduled, while 'error' means an internal scheduler problem.",
            ["result", "profile"],
            registry=r,
        )
        self.scheduling_attempt_duration = _histogram(
            r, "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"], exponential_buckets(0.001, 2, 15),
        )
        self.queue_incoming_pods = Counter(
            "scheduler_queue_incoming_pods_total",
            "Number of pods added to scheduling queues by event and queue type.",
            ["queue", "event"],
            registry=r,
        )
        self.framework_extension_point_duration = _histogram(
            r, "scheduler_framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            ["extension_point", "status", "profile"], exponential_buckets(0.0001, 2, 12),
        )
        self.plugin_execution_duration = _histogram(
            r, "scheduler_plugin_execution_duration_seconds",
            "Duration for running a plugin at a specific extension point.",
            ["plugin", "extension_point", "status"], exponential_buckets(0.00001, 1.5, 20),
        )
        self.pod_scheduling_sli_duration = _histogram(
            r, "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue "
            "and might involve multiple scheduling attempts.",
            ["attempts"], exponential_buckets(0.01, 2, 20),
        )
        self.pod_scheduling_attempts = _histogram(
            r, "scheduler_pod_scheduling_attempts", "Number of attempts to successfully schedule a pod.",
            [], exponential_buckets(1, 2, 5),
        )
        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts_total", "Total preemption attempts in the cluster till now", registry=r
        )
        self.preemption_victims = _histogram(
            r, "scheduler_preemption_victims", "Number of selected preemption victims", [], exponential_buckets(1, 2, 7)
        )
        self.extender_requests = Counter(
            "kubesched_extender_requests_total",
            "Extender protocol requests served, by verb and HTTP status code.",
            ["verb", "code"],
            registry=r,
        )
        self.extender_request_duration = _histogram(
            r, "kubesched_extender_request_duration_seconds", "Time to answer one extender protocol request, by verb.",
            ["verb"], exponential_buckets(0.0001, 2, 16),
        )
        self._state = _StateCollector()
        r.register(self._state)

    # ---- wiring ----------------------------------------------------------------------
    def attach(self, scheduler: Scheduler) -> None:
        """Record this scheduler's attempts, queue moves, plugin timings, queue and cache sizes."""
        scheduler.hooks.on_scheduled.append(lambda res: self._on_scheduled(scheduler, res))
        scheduler.hooks.on_failed.append(lambda res: self._on_failed(scheduler, res))
        previous = scheduler.queue.on_incoming

        def incoming(queue: str, event: str) -> None:
            self.queue_incoming_pods.labels(queue, event).inc()
            if previous is not None:
                previous(queue, event)

        scheduler.queue.on_incoming = incoming
        for fw in scheduler.frameworks.values():
            self.observe_framework(fw)
        deleted = getattr(scheduler.cluster, "deleted", None)
        if isinstance(deleted, list):
            self._deleted_seen[id(scheduler)] = len(deleted)
        self._state.schedulers.append(scheduler)

    def observe_framework(self, fw: Framework) -> None:
        """Time this framework's plugins (kept per cycle; flushed by ``end_cycle``)."""
        fw.add_observer(self._observe)

    def _cycle(self) -> _Cycle:
        c: _Cycle | None = getattr(self._local, "cycle", None)
        if c is None:
            c = self._local.cycle = _Cycle(sampled=self._sample())
        return c

    def _sample(self) -> bool:
        return self._rng.random() * 100 < self.plugin_sample_percent

    def _observe(self, plugin: str, point: str, status: str, seconds: float) -> None:
        c = self._cycle()
        if c.sampled:
            self.plugin_execution_duration.labels(plugin, point, status).observe(seconds)
        if point == "Sign":
            return  # signing pods for the equivalence cache: no extension point of the cycle
        if point == "PreFilter" and not c.pre_filter_open:
            return  # a preemption dry run re-running PreFilter: part of PostFilter's time
        if point != "PreFilter":
            c.pre_filter_open = False
        if point == "PostFilter":
            c.post_filter_ran = True
        if point not in CYCLE_EXTENSION_POINTS:
            return
        acc = c.points.setdefault(point, [0.0, 0])
        acc[0] += seconds
        acc[1] = max(acc[1], _STATUS_RANK.get(status, 4))

    def end_cycle(self, profile: str, *, record: bool = True) -> None:
        """Close the calling thread's cycle: per-extension-point totals, preemption attempts.

        ``record=False`` drops the totals (framework code that is no scheduling cycle).
        """
        c = self._cycle()
        if record:
            for point, (seconds, rank) in c.points.items():
                self.framework_extension_point_duration.labels(point, _RANK_NAME[rank], profile).observe(seconds)
            if c.post_filter_ran:
                self.preemption_attempts.inc()
        self._local.cycle = _Cycle(sampled=self._sample())

    def record_preemption(self, victims: int) -> None:
        """For backends that know the victims of a preemption (the live one deletes them)."""
        self.preemption_victims.observe(victims)

    # ---- hooks -----------------------------------------------------------------------
    def _on_failed(self, scheduler: Scheduler, res: ScheduleResult) -> None:
        result = "error" if res.code == Code.Error else "unschedulable"
        self.schedule_attempts.labels(result, res.profile).inc()
        self.end_cycle(res.profile)
        qpi = scheduler.queue.info(res.pod.uid)
        if qpi is not None and qpi.initial_attempt is not None:
            self._first_attempt[res.pod.uid] = qpi.initial_attempt
            if len(self._first_attempt) > 2 * len(scheduler.queue) + 1024:
                self._first_attempt = {
                    u: t for u, t in self._first_attempt.items() if scheduler.queue.contains(u)
                }
        if res.nominated_node:
            self._count_victims(scheduler)
        self._sync_deleted(scheduler)
        self._later(_Late(res, result, None))

    def _on_scheduled(self, scheduler: Scheduler, res: ScheduleResult) -> None:
        self.schedule_attempts.labels("scheduled", res.profile).inc()
        self.end_cycle(res.profile)
        first = self._first_attempt.pop(res.pod.uid, None)
        sli = scheduler.clock() - first if first is not None and res.attempt > 1 else None
        self.pod_scheduling_attempts.observe(res.attempt)
        self._sync_deleted(scheduler)
        self._later(_Late(res, "scheduled", sli))

    def _count_victims(self, scheduler: Scheduler) -> None:
        """In-memory backends list deleted pods: the growth during a preempting cycle = victims."""
        deleted = getattr(scheduler.cluster, "deleted", None)
        if isinstance(deleted, list):
            n = len(deleted) - self._deleted_seen.get(id(scheduler), len(deleted))
            if n > 0:
                self.preemption_victims.observe(n)

    def _sync_deleted(self, scheduler: Scheduler) -> None:
        deleted = getattr(scheduler.cluster, "deleted", None)
        if isinstance(deleted, list):
            self._deleted_seen[id(scheduler)] = len(deleted)

    def _later(self, item: _Late) -> None:
        """Observe durations: the previous results' are set by now; this one's maybe not yet."""
        with self._lock:
            pending, self._late = self._late, []
            for old in pending:
                self._observe_durations(old)
            if item.res.duration > 0:
                self._observe_durations(item)
            else:
                self._late.append(item)

    def _observe_durations(self, item: _Late) -> None:
        res = item.res
        self.scheduling_attempt_duration.labels(item.result, res.profile).observe(res.duration)
        if item.result == "scheduled":
            sli = item.sli if item.sli is not None else res.duration
            self.pod_scheduling_sli_duration.labels(attempts_label(res.attempt)).observe(sli)

    def flush(self) -> None:
        """Observe results whose durations have been set since their hooks ran."""
        with self._lock:
            keep = []
            for item in self._late:
                if item.res.duration > 0:
                    self._observe_durations(item)
                else:
                    keep.append(item)
            self._late = keep

    # ---- exposition ------------------------------------------------------------------
    def exposition(self, accept: str | None = None) -> tuple[bytes, str]:
        """(body, content type) for ``GET /metrics``: text format, or OpenMetrics if asked for."""
        self.flush()
        encoder, content_type = choose_encoder(accept or "")
        return encoder(self.registry), content_type


class RequestTimer:
    """Counts and times one extender request (``with metrics.request("filter") as t: t.code = 200``)."""

    def __init__(self, metrics: SchedulerMetrics | None, verb: str) -> None:
        self.metrics = metrics
        self.verb = verb
        self.code = 200
        self._t0 = 0.0

    def __enter__(self) -> RequestTimer:
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.metrics is not None:
            self.metrics.extender_requests.labels(self.verb, str(self.code)).inc()
            self.metrics.extender_request_duration.labels(self.verb).observe(time.perf_counter() - self._t0)


__all__ = [
    "CYCLE_EXTENSION_POINTS",
    "PLUGIN_METRICS_SAMPLE_PERCENT",
    "RequestTimer",
    "SchedulerMetrics",
    "attempts_label",
    "exponential_buckets",
]
