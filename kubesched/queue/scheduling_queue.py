"""PriorityQueue: activeQ, backoffQ and unschedulable pods, as kube-scheduler keeps them.

Time comes from an injected clock so the same queue runs live (wall clock) and in
simulation (virtual clock).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from kubesched.api.objects import Pod
from kubesched.framework.status import Status

UNSCHEDULABLE_TIMEOUT = 300.0  # podMaxInUnschedulablePodsDuration
_FORCE_ACTIVATE = "ForceActivate"  # the in-flight event of a pod activated while in flight

#: The cluster events plugins register for (EventsToRegister). Another event (a PodGroup or an
#: ElasticQuota changed) moves every unschedulable pod, unless some plugin declares it.
CLUSTER_EVENTS = ("NodeAdd", "NodeUpdate", "AssignedPodAdd", "AssignedPodUpdate", "AssignedPodDelete", "NamespaceUpdate")


def merge_event_plugins(declared: Mapping[str, Iterable[str]]) -> dict[str, frozenset[str]]:
    """The event -> plugins map of plugins' declared events (plugin -> events, EventsToRegister)."""
    out: dict[str, set[str]] = {event: set() for event in CLUSTER_EVENTS}
    for plugin, events in declared.items():
        for event in events:
            out.setdefault(event, set()).add(plugin)
    return {event: frozenset(plugins) for event, plugins in out.items()}


@dataclass(eq=False)
class QueuedPodInfo:
    pod: Pod
    timestamp: float  # when it (re-)entered the queue: PrioritySort's tie-break
    initial_attempt: float | None = None
    attempts: int = 0
    unschedulable_plugins: set[str] = field(default_factory=set)
    backoff_expiry: float = 0.0
    gated: Status | None = None
    seq: int = 0
    failed_generation: int = -1  # snapshot generation when it last failed (offline runs stop on no progress)


class _HeapItem:
    __slots__ = ("qpi", "less")

    def __init__(self, qpi: QueuedPodInfo, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]) -> None:
        self.qpi = qpi
        self.less = less

    def __lt__(self, other: _HeapItem) -> bool:
        if self.less(self.qpi, other.qpi):
            return True
        if self.less(other.qpi, self.qpi):
            return False
        return self.qpi.seq < other.qpi.seq


def priority_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """PrioritySort: higher priority first, then earlier timestamp."""
    if a.pod.priority != b.pod.priority:
        return a.pod.priority > b.pod.priority
    return a.timestamp < b.timestamp


class SchedulingQueue:
    def __init__(
        self,
        clock: Callable[[], float],
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool] = priority_less,
        pre_enqueue: Callable[[Pod], Status] | None = None,
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        event_plugins: Mapping[str, frozenset[str]] | None = None,
        declared: Iterable[str] = (),
    ) -> None:
        self.clock = clock
        # event -> plugins whose rejections it may resolve (``merge_event_plugins``); a pod rejected
        # by a plugin named in none of them moves on any event, unless the plugin is in
        # ``declared`` (it registered its events, maybe none: then no event moves its pods)
        self.event_plugins: Mapping[str, frozenset[str]] = (
            merge_event_plugins({}) if event_plugins is None else event_plugins
        )
        self._registered: frozenset[str] = frozenset().union(*self.event_plugins.values(), declared)
        self.less = less
        self.pre_enqueue = pre_enqueue
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self._active: list[tuple] = []
        self._backoff: list[tuple[float, int, QueuedPodInfo]] = []
        self.unschedulable: dict[str, QueuedPodInfo] = {}
        self.gated: dict[str, QueuedPodInfo] = {}
        self._where: dict[str, str] = {}  # uid -> "active" | "backoff" | "unschedulable" | "gated" | "inflight"
        self._info: dict[str, QueuedPodInfo] = {}
        self._seq = itertools.count()
        # uid -> the events since the pod was popped (it is in flight: in its cycle, waiting at
        # Permit): upstream's in-flight events, which decide where a failed pod goes
        self._inflight_events: dict[str, list[str]] = {}
        self.on_incoming: Callable[[str, str], None] | None = None  # (queue, event) for metrics

    # ---- bookkeeping -----------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._info)

    def counts(self) -> dict[str, int]:
        c = {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 0}
        for where in self._where.values():
            if where in c:
                c[where] += 1
        return c

    def rejections(self) -> dict[tuple[str, str], int]:
        """(plugin, schedulerName) -> pods held here whose last attempt the plugin rejected, or
        that a PreEnqueue plugin gates: kube-scheduler's ``scheduler_unschedulable_pods``. A pod
        counts until its next attempt (popped) or its removal."""
        out: dict[tuple[str, str], int] = {}
        for uid, where in self._where.items():
            qpi = self._info.get(uid)
            if qpi is None or where == "inflight":
                continue
            if where == "gated":
                plugins: set[str] = {qpi.gated.plugin} if qpi.gated is not None and qpi.gated.plugin else set()
            else:
                plugins = qpi.unschedulable_plugins
            for plugin in plugins:
                key = (plugin, qpi.pod.scheduler_name)
                out[key] = out.get(key, 0) + 1
        return out

    def _incoming(self, queue: str, event: str) -> None:
        if self.on_incoming:
            self.on_incoming(queue, event)

    def _push_active(self, qpi: QueuedPodInfo, event: str) -> None:
        if qpi.initial_attempt is None:  # v1.36 moveToActiveQ: InitialAttemptTimestamp, set once
            qpi.initial_attempt = self.clock()
        if self.less is priority_less:  # plain tuples compare in C: PrioritySort's key
            heapq.heappush(self._active, (-qpi.pod.priority, qpi.timestamp, qpi.seq, qpi))
        else:
            heapq.heappush(self._active, (_HeapItem(qpi, self.less), 0, 0, qpi))
        self._where[qpi.pod.uid] = "active"
        self._incoming("active", event)

    def _push_backoff(self, qpi: QueuedPodInfo, event: str) -> None:
        heapq.heappush(self._backoff, (qpi.backoff_expiry, qpi.seq, qpi))
        self._where[qpi.pod.uid] = "backoff"
        self._incoming("backoff", event)

    def backoff_duration(self, attempts: int) -> float:
        if attempts <= 0:
            return 0.0
        d = self.initial_backoff * (2 ** (attempts - 1))
        return min(d, self.max_backoff)

    # ---- API -------------------------------------------------------------------------
    def add(self, pod: Pod) -> None:
        now = self.clock()
        qpi = QueuedPodInfo(pod, now, seq=next(self._seq))
        self._info[pod.uid] = qpi
        self._enqueue_new(qpi, "PodAdd")

    def _enqueue_new(self, qpi: QueuedPodInfo, event: str) -> None:
        if not self._gate(qpi):
            self._push_active(qpi, event)

    def _gate(self, qpi: QueuedPodInfo) -> bool:
        """Run PreEnqueue; a pod it rejects waits with the gated pods (True)."""
        qpi.gated = None
        if self.pre_enqueue is not None:
            st = self.pre_enqueue(qpi.pod)
            if not st.ok:
                qpi.gated = st
                self.gated[qpi.pod.uid] = qpi
                self._where[qpi.pod.uid] = "gated"
                return True
        return False

    def update(self, pod: Pod) -> None:
        """A pending pod changed (e.g. its gates were removed)."""
        qpi = self._info.get(pod.uid)
        if qpi is None:
            self.add(pod)
            return
        qpi.pod = pod
        if self._where.get(pod.uid) == "inflight":
            # v1.36 Update -> addEventsIfPodInFlight: the update is an event the pod saw in flight,
            # so if its attempt fails it backs off (the update may have made it schedulable)
            self._inflight_events[pod.uid].append("PodUpdate")
        elif self._where.get(pod.uid) == "gated":
            del self.gated[pod.uid]
            self._requeue(qpi, "PodUpdate")  # backs off if it was tried before being gated again
        elif self._where.get(pod.uid) == "unschedulable":
            del self.unschedulable[pod.uid]
            self._requeue(qpi, "PodUpdate")

    def delete(self, uid: str) -> None:
        self._info.pop(uid, None)
        self._inflight_events.pop(uid, None)
        where = self._where.pop(uid, None)
        if where == "unschedulable":
            self.unschedulable.pop(uid, None)
        elif where == "gated":
            self.gated.pop(uid, None)
        # heap entries are dropped lazily on pop

    def contains(self, uid: str) -> bool:
        return uid in self._info

    def info(self, uid: str) -> QueuedPodInfo | None:
        return self._info.get(uid)

    def pop(self) -> QueuedPodInfo | None:
        """Next pod to schedule, or None when activeQ is empty (after flushing backoff)."""
        self.flush_backoff()
        while self._active:
            qpi = heapq.heappop(self._active)[3]
            uid = qpi.pod.uid
            if self._where.get(uid) != "active" or self._info.get(uid) is not qpi:
                continue
            self._where[uid] = "inflight"
            qpi.attempts += 1
            self._inflight_events[uid] = []
            return qpi
        return None

    def done(self, uid: str) -> None:
        """The pod was scheduled (assumed): it leaves the queue."""
        self._info.pop(uid, None)
        self._where.pop(uid, None)
        self._inflight_events.pop(uid, None)

    def restore(self, qpi: QueuedPodInfo) -> None:
        """A pod taken off the books by ``done`` is in flight again: its binding failed, and
        ``add_unschedulable`` follows with the failure."""
        self._info[qpi.pod.uid] = qpi
        self._where[qpi.pod.uid] = "inflight"
        self._inflight_events.setdefault(qpi.pod.uid, [])

    def activate(self, uids: Iterable[str]) -> int:
        """framework.PodsToActivate: the pods among ``uids`` waiting in backoff or as unschedulable
        go to activeQ now; others (unknown, gated, active, in flight) are left alone."""
        moved = 0
        for uid in uids:
            qpi = self._info.get(uid)
            where = self._where.get(uid)
            if where == "inflight":
                # v1.36 Activate -> addEventsIfPodInFlight(EventForceActivate): a wildcard event for
                # this pod alone, so it backs off rather than waits as unschedulable if it fails
                self._inflight_events[uid].append(_FORCE_ACTIVATE)
                continue
            if qpi is None or where not in ("backoff", "unschedulable"):
                continue
            if where == "unschedulable":
                del self.unschedulable[uid]
                # v1.36 moveToActiveQ runs PreEnqueue again, unless the pod comes from backoffQ
                # (SchedulerPopFromBackoffQ: it passed PreEnqueue on entering backoffQ)
                if self._gate(qpi):
                    continue
            self._push_active(qpi, "ForceActivate")  # a backoff heap entry left behind is dropped on pop
            moved += 1
        return moved

    def add_unschedulable(self, qpi: QueuedPodInfo, plugins: set[str], error: bool = False) -> None:
        """AddUnschedulableIfNotPresent after a failed attempt."""
        uid = qpi.pod.uid
        if uid not in self._info:
            return  # deleted meanwhile
        now = self.clock()
        qpi.timestamp = now
        qpi.unschedulable_plugins = set(plugins)
        qpi.backoff_expiry = now + self.backoff_duration(qpi.attempts)
        # v1.36 (queueing hints): the pod retries after its backoff when an event it saw in flight
        # may help what rejected it, as that event would have moved it (not any event at all)
        events = self._inflight_events.pop(uid, [])
        if error or not plugins or any(self._may_help(event, qpi.unschedulable_plugins) for event in events):
            self._push_backoff(qpi, "ScheduleAttemptFailure")
        else:
            self.unschedulable[uid] = qpi
            self._where[uid] = "unschedulable"
            self._incoming("unschedulable", "ScheduleAttemptFailure")

    def _requeue(self, qpi: QueuedPodInfo, event: str) -> None:
        """A pod leaves the unschedulable (or gated) pods: v1.36 moveToActiveQ / moveToBackoffQ run
        the PreEnqueue plugins first (SchedulerPopFromBackoffQ), and a pod they reject is gated."""
        if self._gate(qpi):
            return
        if qpi.backoff_expiry > self.clock():
            self._push_backoff(qpi, event)
        else:
            self._push_active(qpi, event)

    def flush_backoff(self) -> None:
        now = self.clock()
        while self._backoff and self._backoff[0][0] <= now:
            _, _, qpi = heapq.heappop(self._backoff)
            if self._where.get(qpi.pod.uid) == "backoff" and self._info.get(qpi.pod.uid) is qpi:
                self._push_active(qpi, "BackoffComplete")

    def flush_unschedulable_leftover(self) -> None:
        now = self.clock()
        for uid, qpi in list(self.unschedulable.items()):
            if now - qpi.timestamp > UNSCHEDULABLE_TIMEOUT:  # strictly longer, as flushUnschedulablePodsLeftover
                del self.unschedulable[uid]
                self._requeue(qpi, "UnschedulableTimeout")

    def move_for_event(self, event: str, *, except_uid: str | None = None) -> int:
        """MoveAllToActiveOrBackoffQueue, limited to pods a plugin says the event may help;
        ``except_uid`` stays where it is (a forgotten pod is not moved by its own forgetting)."""
        for uid, events in self._inflight_events.items():
            if uid != except_uid:
                events.append(event)
        if not self.unschedulable and not self.gated:  # the common case: every bind sends AssignedPodAdd
            return 0
        moved = 0
        for uid, qpi in list(self.unschedulable.items()):
            if uid != except_uid and self._may_help(event, qpi.unschedulable_plugins):
                del self.unschedulable[uid]
                self._requeue(qpi, event)
                moved += 1
        # A pod a PreEnqueue plugin gates is moved only by the events that plugin registered
        # (v1.36: a gated pod's UnschedulablePlugins is its gating plugin): DynamicResources'
        # ResourceClaimAdd lets in a pod that waited for its claim to be created.
        helped = self.event_plugins.get(event, ())
        for uid, qpi in list(self.gated.items()):
            gate = qpi.gated.plugin if qpi.gated is not None else ""
            if uid != except_uid and gate and gate in helped:
                del self.gated[uid]
                self._requeue(qpi, event)
                moved += 1
        return moved

    def _may_help(self, event: str, plugins: set[str]) -> bool:
        """Whether ``event`` may make a pod ``plugins`` rejected schedulable: one of them registered
        it, or one registered nothing at all (undeclared), or the event is none a plugin declares."""
        if event == _FORCE_ACTIVATE:
            return True  # recorded only for the activated pod (activate)
        helped = self.event_plugins.get(event)
        return helped is None or not plugins or bool(plugins & helped) or not plugins <= self._registered

    def next_backoff_expiry(self) -> float | None:
        while self._backoff:
            expiry, _, qpi = self._backoff[0]
            if self._where.get(qpi.pod.uid) == "backoff" and self._info.get(qpi.pod.uid) is qpi:
                return expiry
            heapq.heappop(self._backoff)
        return None

    def useful_backoff_expiry(self, generation: int) -> float | None:
        """The next backoff expiry worth waiting for in an offline run: None when every pod in
        backoff failed on the cluster as it is (snapshot ``generation``), since retrying them
        gives the same answer until something changes (and that change moves them anyway)."""
        nxt = self.next_backoff_expiry()
        if nxt is None or all(q.failed_generation == generation for q in self.backoff_pods()):
            return None
        return nxt

    def backoff_pods(self) -> list[QueuedPodInfo]:
        return [qpi for _, _, qpi in self._backoff if self._where.get(qpi.pod.uid) == "backoff"]

    def pending_pods(self) -> list[QueuedPodInfo]:
        return list(self._info.values())
