"""The scheduler: pods from the queue through the scheduling cycle (``kubesched.framework.cycle``)
and the binding cycle (Reserve, Permit, PreBind, Bind, PostBind), as kube-scheduler's
schedule_one.go; the queue's events; offline runs to completion."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from kubesched.alias import Alias
from kubesched.api.objects import Pod
from kubesched.config import SchedulerConfig
from kubesched.framework import cycle
from kubesched.framework.cycle import CycleContext, ScheduleResult
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import Diagnosis
from kubesched.framework.failures import PluginFailure
from kubesched.framework.handle import ClusterBackend, Handle
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework
from kubesched.framework.scoring import Scores
from kubesched.framework.status import Code, Status
from kubesched.framework.waiting import (
    PODS_TO_ACTIVATE,
    WaitingPod,
    WaitingPods,
)
from kubesched.queue.scheduling_queue import (
    QueuedPodInfo,
    SchedulingQueue,
    merge_event_plugins,
    priority_less,
)
from kubesched.state.snapshot import Snapshot

#: (bind/deletion count, pod tried, pods waiting at Permit and their nodes): see ``schedule_one_tracked``.
CircleKey = tuple[int, str, frozenset[tuple[str, str]]]
#: (a pod waited at Permit since the last progress, progress, pods waiting): see ``circle_mark``.
CircleMark = tuple[bool, int, frozenset[tuple[str, str]]]

@dataclass
class SchedulerHooks:
    """Callbacks for the live/simulated worlds (events, metrics, status updates)."""

    on_scheduled: list[Callable[[ScheduleResult], None]] = field(default_factory=list)
    on_failed: list[Callable[[ScheduleResult], None]] = field(default_factory=list)
    # a popped pod that is not scheduled at all (being deleted): no attempt, not requeued
    on_skipped: list[Callable[[ScheduleResult], None]] = field(default_factory=list)


@dataclass(slots=True)
class Attempt:
    """A popped pod between ``Scheduler.propose`` and ``Scheduler.commit``: the scheduling
    cycle's proposal (None: the pod is being deleted and is skipped) waiting for its host."""

    qpi: QueuedPodInfo
    fw: Framework
    state: CycleState
    proposal: cycle.Proposal | None
    t0: float
    result: ScheduleResult | None = None  # set by commit

    @property
    def pod(self) -> Pod:
        return self.qpi.pod

    @property
    def rows(self) -> np.ndarray:
        """The feasible snapshot rows, in evaluation order."""
        return self.proposal.rows if self.proposal is not None else np.zeros(0, np.intp)

    @property
    def scores(self) -> Scores | None:
        """Their scores (None with fewer than two)."""
        return self.proposal.scores if self.proposal is not None else None


@dataclass
class _Parked:
    """A binding cycle paused at Permit (WaitOnPermit), resumed once its waiting pod is resolved."""

    fw: Framework
    state: CycleState
    qpi: QueuedPodInfo
    res: ScheduleResult
    t0: float
    nominated: bool = False  # the binding cycle nominated the pod to its node (cleared on failure)
    generation: int = -1  # the snapshot's generation before the pod was assumed


class Scheduler:
    def __init__(
        self,
        config: SchedulerConfig,
        snapshot: Snapshot,
        cluster: ClusterBackend | None,
        registry: Registry,
        *,
        seed: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        tie_break: str = "random",
    ) -> None:
        if tie_break not in ("random", "first"):
            raise ValueError(f"tie_break must be 'random' or 'first', not {tie_break!r}")
        self.config = config
        self.snapshot = snapshot
        self.cluster = cluster
        self.rng = np.random.default_rng(seed)
        # the rotating start index, the tie-break and the equivalence cache's use: see CycleContext
        self.cycle = CycleContext(self.rng, config.percentage_of_nodes_to_score, tie_break)
        self.clock = clock
        self.frameworks: dict[str, Framework] = {}
        self.waiting = WaitingPods()  # pods parked at Permit, shared by every profile
        for prof in config.profiles:
            handle = Handle(snapshot, cluster, self.rng, config.parallelism, waiting_pods=self.waiting, clock=clock)
            handle.nominator = self
            self.frameworks[prof.scheduler_name] = Framework(prof, registry, handle)
        first = next(iter(self.frameworks.values()))
        less = priority_less
        if first.queue_sort is not None and first.queue_sort.name != "PrioritySort":
            less = first.queue_sort.less
        self.queue = SchedulingQueue(
            clock,
            less=less,
            pre_enqueue=self._pre_enqueue,
            initial_backoff=config.pod_initial_backoff_seconds,
            max_backoff=config.pod_max_backoff_seconds,
            event_plugins=merge_event_plugins(declared := self._declared_events()),
            declared=declared,
        )
        # the storage objects' changes (a claim bound at PreBind) are cluster events, as the informers'
        snapshot.storage.listeners.append(self.queue.move_for_event)
        self.nominated: dict[str, Pod] = {}  # uid -> pod with a nominated node
        self.hooks = SchedulerHooks()
        self.attempts = 0
        self.progress = 0  # binds and deletions: what offline runs count as getting somewhere
        self._waited_since_progress = False
        self._resolving = False

    # The cycle's settings, as attributes of the scheduler (CycleContext holds them).
    next_start_node_index = Alias[int]("cycle.start", writable=True)
    tie_break = Alias[str]("cycle.tie_break")
    use_equivalence_cache = Alias[bool]("cycle.use_cache", writable=True)
    #: False: a pod the equivalence cache finds no node for gets a FitError without per-node
    #: reasons, for callers that never read them (the trace replay drops such a pod at once).
    failure_detail = Alias[bool]("cycle.failure_detail", writable=True)

    @contextmanager
    def what_if(self) -> Iterator[Snapshot]:
        """A hypothetical run: inside the block the snapshot is in a trial (``Snapshot.trial``)
        and cycles move the rotating start index and draw tie-breaks as usual; on exit the
        snapshot, the start index and the random state are put back, so what the block tried
        leaves no trace in later cycles. Yields the snapshot. The queue, nominations and
        binding-cycle state are not covered: run scheduling cycles (``schedule_pod``), not binds."""
        start, state = self.cycle.start, self.rng.bit_generator.state
        try:
            with self.snapshot.trial():
                yield self.snapshot
        finally:
            self.cycle.start = start
            self.rng.bit_generator.state = state

    def _declared_events(self) -> dict[str, frozenset[str]]:
        """plugin -> the events it registers (EventsToRegister), over every profile's plugins."""
        out: dict[str, frozenset[str]] = {}
        for fw in self.frameworks.values():
            for name, pl in fw.plugins.items():
                if pl.events_to_register is not None:
                    out[name] = out.get(name, frozenset()) | pl.events_to_register
        return out

    # ---- pods entering ---------------------------------------------------------------
    def responsible_for(self, pod: Pod) -> bool:
        return pod.scheduler_name in self.frameworks

    def _pre_enqueue(self, pod: Pod) -> Status:
        fw = self.frameworks.get(pod.scheduler_name)
        return fw.run_pre_enqueue(pod) if fw else Status()

    def add_pending(self, pod: Pod) -> None:
        if self.responsible_for(pod) and not pod.node_name:
            if pod.nominated_node_name:
                self.nominated[pod.uid] = pod
            self.queue.add(pod)

    def pending_pods(self) -> list[Pod]:
        """The pods waiting to be scheduled (Nominator)."""
        return [q.pod for q in self.queue.pending_pods()]

    def nominated_pods_on(self, node_name: str) -> list[Pod]:
        return [p for p in self.nominated.values() if p.nominated_node_name == node_name]

    # ---- the cycle ---------------------------------------------------------------------
    def schedule_pod(self, fw: Framework, state: CycleState, pod: Pod) -> ScheduleResult:
        """schedulePod: PreFilter, Filter (adaptive node count), Score, select host."""
        return cycle.schedule_pod(fw, state, pod, self.snapshot, self.cycle)

    def propose_pod(self, fw: Framework, state: CycleState, pod: Pod) -> cycle.Proposal:
        """schedulePod up to selectHost: PreFilter, Filter (adaptive node count), Score."""
        return cycle.propose(fw, state, pod, self.snapshot, self.cycle)

    def schedule_one(self) -> ScheduleResult | None:
        """Pop one pod and run its scheduling cycle and (synchronous) binding cycle."""
        a = self.propose()
        return None if a is None else self.commit(a)

    def attempt(self, qpi: QueuedPodInfo) -> ScheduleResult:
        """One popped pod's scheduling and binding cycles."""
        return self.commit(self._propose(qpi))

    def propose(self) -> Attempt | None:
        """Pop the next pod and run its scheduling cycle up to host selection: the attempt's
        feasible nodes and scores, for ``commit`` (None: nothing to pop). Nothing happens between
        the two steps unless the caller does it; commit each attempt once."""
        self.expire_waiting_pods()
        qpi = self.queue.pop()
        return None if qpi is None else self._propose(qpi)

    def _propose(self, qpi: QueuedPodInfo) -> Attempt:
        pod = qpi.pod
        fw = self.frameworks[pod.scheduler_name]
        state = CycleState()
        if pod.deleting:
            return Attempt(qpi, fw, state, None, 0.0)
        t0 = time.perf_counter()
        self.attempts += 1
        qpi.failed_generation = self.snapshot.generation  # as of the start of this attempt
        try:
            prop = self.propose_pod(fw, state, pod)
        except PluginFailure as e:
            res = ScheduleResult(pod, fw.profile_name, code=Code.Error, message=e.status.message, error=e.cause)
            prop = cycle.Proposal(fw, cycle.Feasible(np.zeros(0, np.intp), 0, None, state), res)
        return Attempt(qpi, fw, state, prop, t0)

    def commit(self, a: Attempt, node: str | None = None) -> ScheduleResult:
        """The rest of a proposed attempt: the host (``node``, a caller's choice among the
        feasible nodes, or the cycle's own selection when None), then Reserve, Permit and the
        binding cycle, or PostFilter and the queue when no node fits. A node that is not
        feasible is refused with a ValueError before anything changes."""
        if a.result is not None:
            raise ValueError(f"pod {a.qpi.pod.key}: this attempt was already committed")
        if a.proposal is None:
            a.result = self._skip(a.qpi, a.fw)
            return a.result
        row = None
        if node is not None:
            row = self.snapshot.row_of.get(node)
            if row is None:
                raise ValueError(f"pod {a.qpi.pod.key}: no node {node} in the cluster")
        res = a.result = cycle.commit(a.proposal, self.snapshot, self.cycle, row)
        pod, fw, state, qpi, t0 = a.qpi.pod, a.fw, a.state, a.qpi, a.t0
        res.attempt = qpi.attempts
        if res.state is not None:
            state = res.state
        if res.node is None:
            if res.code in (Code.Unschedulable, Code.UnschedulableAndUnresolvable) and res.diagnosis and fw.post_filter:
                self._post_filter(fw, state, pod, res)
            else:
                self._nominate(pod, "")  # clearNominatedNode
            res.duration = time.perf_counter() - t0
            self._failed(qpi, res)
            self._process_waiting()  # a PostFilter may have rejected waiting pods (a gang giving up)
            return res
        self._assume_and_bind(fw, state, qpi, res, t0)
        return res

    def _skip(self, qpi: QueuedPodInfo, fw: Framework) -> ScheduleResult:
        """skipPodSchedule: a pod being deleted is not scheduled, nor put back in the queue; the
        FailedScheduling event says so."""
        pod = qpi.pod
        res = ScheduleResult(
            pod, fw.profile_name, code=Code.Skip, message=f"skip schedule deleting pod: {pod.namespace}/{pod.name}"
        )
        self.queue.done(pod.uid)
        for cb in self.hooks.on_skipped:
            cb(res)
        return res

    def _post_filter(self, fw: Framework, state: CycleState, pod: Pod, res: ScheduleResult) -> None:
        cycle.post_filter(fw, state, pod, self.snapshot, res)
        if res.nominated_node is not None:
            self._nominate(pod, res.nominated_node)

    def _nominate(self, pod: Pod, node: str) -> None:
        """The pod's nomination (the nominator's and the cluster's record); "" clears it."""
        if node:
            pod.nominated_node_name = node
            self.nominated[pod.uid] = pod
            if self.cluster is not None:
                self.cluster.set_nominated_node(pod, node)
            return
        self.nominated.pop(pod.uid, None)
        if pod.nominated_node_name:
            if self.cluster is not None:
                self.cluster.set_nominated_node(pod, "")
            pod.nominated_node_name = ""

    def _failed(self, qpi: QueuedPodInfo, res: ScheduleResult) -> None:
        plugins = set(res.diagnosis.unschedulable_plugins) if res.diagnosis else set()
        self.queue.add_unschedulable(qpi, plugins, error=res.code == Code.Error)
        for cb in self.hooks.on_failed:
            cb(res)

    def _assume_and_bind(
        self, fw: Framework, state: CycleState, qpi: QueuedPodInfo, res: ScheduleResult, t0: float
    ) -> None:
        """Assume, Reserve, Permit; then bind now, or park the binding cycle when Permit says Wait."""
        pod, node = qpi.pod, res.node
        assert node is not None
        assumed = pod.with_node(node)
        assumed.nominated_node_name = ""
        parked = _Parked(fw, state, qpi, res, t0, generation=self.snapshot.generation)
        self.snapshot.add_pod(assumed)
        self.nominated.pop(pod.uid, None)
        try:
            st = fw.run_reserve(state, pod, node)
        except PluginFailure as e:
            st, res.error = e.status, e.cause
        if not st.ok:
            return self._forget(parked, st, fit_error=True, scheduling_cycle=True)
        try:
            st, waits = fw.run_permit(state, pod, node)
        except PluginFailure as e:
            st, waits, res.error = e.status, {}, e.cause
        if st.code != Code.Wait and not st.ok:
            return self._forget(parked, st, fit_error=True, scheduling_cycle=True)
        self._activate(state)  # the end of a successful scheduling cycle (not after a rejection)
        # the binding cycle's start: PreBindPreFlight, then (NominatedNodeNameForExpectation) the
        # pod is nominated to its node while Permit's wait or PreBind's work keeps it from binding
        try:
            flight = fw.run_pre_bind_pre_flights(state, pod, node)
        except PluginFailure as e:
            flight, res.error = e.status, e.cause
        if flight.code == Code.Error:
            return self._forget(parked, flight)
        if (flight.ok or st.code == Code.Wait) and self.cluster is not None:
            self.cluster.set_nominated_node(pod, node)
            parked.nominated = True
        if st.code == Code.Wait:
            # The pod stays assumed (its resources held) and in flight until it is resolved.
            wp = WaitingPod(assumed, node, waits, self.clock())
            wp.context = parked
            self.waiting.add(wp)
            self._waited_since_progress = True
            res.code, res.message = Code.Wait, st.message
            return None
        self._process_waiting()  # pods this Permit allowed (the rest of a gang) bind first
        self._bind(parked)
        return None

    def _bind(self, p: _Parked) -> None:
        """The binding cycle after Permit: skip a pod deleted meanwhile, take the pod off the queue's
        books, then ``_bind_cycle``. Subclasses change how the binding runs through ``_bind_cycle``
        alone, so these checks hold for every way of binding."""
        pod = p.qpi.pod
        assert p.res.node is not None
        # Deleted while it waited at Permit (also after it was allowed): nothing to bind.
        if not self.queue.contains(pod.uid):
            return self._forget(p, Status(Code.Unschedulable, ("removed",)))
        self.queue.done(pod.uid)
        return self._bind_cycle(p)

    def _bind_cycle(self, p: _Parked) -> None:
        """PreBind, Bind, PostBind, synchronously (the pod is assumed and off the queue's books)."""
        fw, state, qpi, res = p.fw, p.state, p.qpi, p.res
        pod, node = qpi.pod, res.node
        assert node is not None
        try:
            st = fw.run_pre_bind(state, pod, node)
            if st.ok:
                # Skip (every Bind plugin skipped) is no binding: bindingCycle fails on any status
                # but Success, so the pod is unreserved, forgotten and retried, without PostBind
                st = fw.run_bind(state, pod, node)
        except PluginFailure as e:
            st, res.error = e.status, e.cause
        if not st.ok:
            self.queue.restore(qpi)  # back in the queue's books for the retry
            return self._forget(p, st)
        return self._bound(p, node)

    def _bound(self, p: _Parked, node: str) -> None:
        """The end of a successful binding cycle, however the pod was bound (here or by the live
        scheduler's binding workers): PostBind, the pods PreBind/Bind/PostBind asked to activate,
        AssignedPodAdd, the on_scheduled hooks."""
        res = p.res
        res.code, res.message = Code.Success, None
        self.progress += 1
        self._waited_since_progress = False
        p.fw.run_post_bind(p.state, p.qpi.pod, node)
        self._activate(p.state)
        self.queue.move_for_event("AssignedPodAdd")
        res.duration = time.perf_counter() - p.t0
        for cb in self.hooks.on_scheduled:
            cb(res)

    def _forget(self, p: _Parked, st: Status, *, fit_error: bool = False, scheduling_cycle: bool = False) -> None:
        """Unreserve and forget an assumed pod, clear its nomination; requeue it with the failure
        unless it was deleted. ``fit_error``: a rejection at Reserve or Permit (also while
        waiting) is a FitError over the one suggested node, as schedule_one.go builds it.
        ``scheduling_cycle``: Reserve or Permit failed in the scheduling cycle, where v1.36
        forgets the pod without an AssignedPodDelete event (handleBindingCycleError sends one)."""
        fw, state, qpi, res = p.fw, p.state, p.qpi, p.res
        pod, node = qpi.pod, res.node
        assert node is not None
        fw.run_unreserve(state, pod, node)
        self.snapshot.remove_pod(pod.uid)
        if self.snapshot.generation == p.generation + 2:
            # Assume + forget and nothing else is no progress: pods that failed on the cluster as
            # it was see it so again (or an offline run waits on them for ever when a binding
            # cycle fails each time, since every failure moves them back).
            for q in self.queue.pending_pods():
                if q.failed_generation == p.generation:
                    q.failed_generation = self.snapshot.generation
        qpi.failed_generation = self.snapshot.generation
        self._nominate(pod, "")  # clearNominatedNode
        if p.nominated and self.cluster is not None:
            self.cluster.set_nominated_node(pod, "")
        res.node, res.code = None, st.code if st.rejected else Code.Error
        if fit_error and st.rejected:
            res.diagnosis = Diagnosis(absent_status=st, unschedulable_plugins={st.plugin} if st.plugin else set())
            res.message = res.diagnosis.fit_error(1)
        else:
            res.message = st.message
        res.duration = time.perf_counter() - p.t0
        if not self.queue.contains(pod.uid):  # deleted while assumed: nothing to requeue
            self.queue.move_for_event("AssignedPodDelete")
            return None
        self._failed(qpi, res)
        if not scheduling_cycle:
            # Forgetting the assumed pod frees its resources: move the others (never the pod itself).
            self.queue.move_for_event("AssignedPodDelete", except_uid=pod.uid)
        return None

    def _process_waiting(self) -> None:
        """Resume the parked binding cycles of waiting pods that were allowed or rejected, in the order
        they started waiting (kube-scheduler's WaitOnPermit returning in their binding goroutines)."""
        if self._resolving:
            return  # the outer call picks up pods resolved meanwhile (e.g. rejected by an Unreserve)
        self._resolving = True
        try:
            while (wp := self.waiting.first_resolved()) is not None:
                self.waiting.remove(wp.pod.uid)
                assert wp.status is not None
                if wp.status.ok:
                    self._bind(wp.context)
                else:
                    self._forget(wp.context, wp.status, fit_error=True)
        finally:
            self._resolving = False

    def _activate(self, state: CycleState) -> None:
        """framework.PodsToActivate: pods a plugin asked for leave backoff/unschedulable for activeQ."""
        want = state.read(PODS_TO_ACTIVATE)
        if not want:
            return
        state.delete(PODS_TO_ACTIVATE)
        self.queue.activate(want)

    def expire_waiting_pods(self) -> int:
        """Reject the waiting pods whose Permit timeout has passed on the scheduler's clock, and
        finish the binding cycles of every resolved waiting pod (also those allowed or rejected
        through the handle outside a cycle). Live callers run it when ``next_waiting_deadline``
        comes; ``schedule_one`` runs it first thing."""
        if not len(self.waiting):
            return 0
        n = self.waiting.expire(self.clock())
        if self.waiting.first_resolved() is not None:
            self._process_waiting()
        return n

    def next_waiting_deadline(self) -> float | None:
        return self.waiting.next_deadline()

    # ---- cluster events --------------------------------------------------------------
    def delete_pod(self, pod: Pod) -> None:
        """A pod was deleted (e.g. a preemption victim)."""
        if pod.uid in self.waiting:  # RejectWaitingPod: its parked binding cycle unreserves and forgets it
            self.queue.delete(pod.uid)
            self.waiting.reject(pod.uid, "", "removed")
            self._process_waiting()
        if self.snapshot.remove_pod(pod.uid) is not None:
            self.queue.move_for_event("AssignedPodDelete")
        self.progress += 1
        self._waited_since_progress = False
        self.queue.delete(pod.uid)
        self.nominated.pop(pod.uid, None)

    def schedule_one_tracked(self, seen: set[CircleKey]) -> tuple[ScheduleResult | None, bool]:
        """``schedule_one``, and whether the attempt repeats one recorded in ``seen``: the same pod
        tried again with the same pods waiting at Permit where they were and nothing bound or
        deleted since (a gang going round in circles; only another change can break the circle).
        A caller between ``propose`` and ``commit`` does the same with ``circle_mark`` and
        ``went_round``."""
        mark = self.circle_mark()
        res = self.schedule_one()
        return res, self.went_round(seen, mark, res)

    def circle_mark(self) -> CircleMark:
        """What ``went_round`` compares after the next attempt (expires Permit timeouts first, so
        that the pods parked are those the attempt sees)."""
        self.expire_waiting_pods()
        waited = self._waited_since_progress
        parked = frozenset((wp.pod.uid, wp.node_name) for wp in self.waiting) if waited else frozenset()
        return waited, self.progress, parked

    def went_round(self, seen: set[CircleKey], mark: CircleMark, res: ScheduleResult | None) -> bool:
        """Whether the attempt with result ``res``, marked before with ``circle_mark``, repeats one
        recorded in ``seen`` (see ``schedule_one_tracked``); records it."""
        waited, progress, parked = mark
        if res is None or not waited or self.progress != progress:
            return False
        key = (progress, res.pod.uid, parked)
        if key in seen:
            return True
        seen.add(key)
        return False

    def run_until_idle(self, advance: Callable[[float], None] | None = None, max_attempts: int = 1_000_000) -> None:
        """Drain the queue; ``advance(t)`` moves a virtual clock to the next backoff expiry or Permit timeout.

        Offline runs stop when waiting cannot help: no pod waits at Permit and every backoff pod
        failed after the last change. Pods parked at Permit never end a run early: the clock moves
        on to their timeouts. A gang that cannot fit would cycle forever (its members wait, one
        fails, the others are released and retried, as in a live cluster): once a pod is tried
        again with the same pods waiting where they were and nothing bound or deleted since, the
        run ends, after the pods still waiting got their timeouts.
        """
        seen: set[CircleKey] = set()
        while self.attempts < max_attempts:
            res, circling = self.schedule_one_tracked(seen)
            if circling:
                break
            if res is not None:
                continue
            if advance is None:
                return
            nxt = self.queue.useful_backoff_expiry(self.snapshot.generation)
            deadline = self.waiting.next_deadline()
            if nxt is None and deadline is None:
                return
            advance(min(t for t in (nxt, deadline) if t is not None))
        if advance is not None:
            while (deadline := self.waiting.next_deadline()) is not None:
                advance(deadline)
                self.expire_waiting_pods()
