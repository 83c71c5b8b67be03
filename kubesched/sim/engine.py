"""The discrete-event engine: a virtual clock drives the real Scheduler through a simulated cluster.

Two replay modes:

- ``time``: pods arrive at their arrival times, wait in the scheduling queue (backoff, the
  unschedulable pool, moves on cluster events, exactly as the live queue), run for their
  duration once bound and then free their resources. Time jumps from event to event.
- ``arrival``: pods are tried once each, in arrival order; nothing ever completes (the
  "inflation" protocol of the FGD paper, for any scheduler configuration).
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.api.resources import CPU, MEMORY
from kubesched.app import VirtualClock
from kubesched.config import SchedulerConfig
from kubesched.debug import PluginTracebacks
from kubesched.framework.registry import Registry
from kubesched.framework.status import Code
from kubesched.gpu.model import GPU_INDEX, format_index
from kubesched.gpu.state import GpuState
from kubesched.scheduler import Attempt, Scheduler, ScheduleResult
from kubesched.sim.backend import SimCluster
from kubesched.sim.driver import ARRIVE, COMPLETE, TIMER, WITHDRAW, Driver, first_line
from kubesched.sim.gpu import FragMeter, node_gpu_milli, pod_gpu_milli
from kubesched.sim.metrics import Recorder
from kubesched.sim.states import (
    DONE,
    EVICTED,
    FAILED,
    GATED,
    PREEMPTED,
    QUEUED,
    RUNNING,
    STATE_NAMES,
    WAITING,
    WITHDRAWN,
)
from kubesched.sim.totals import Totals
from kubesched.sim.usage import SimUtilization, UsageModel
from kubesched.sim.volumes import detach_unused
from kubesched.sim.workload import NodeEvent, Workload
from kubesched.state.snapshot import Snapshot

MODES = ("time", "arrival")


Progress = Callable[[int, int], None]  # (pods arrived, pods in the workload)


@dataclass(frozen=True)
class SimOptions:
    mode: str = "time"
    seed: int | None = None
    usage: UsageModel = UsageModel()
    bins: int = 100  # time mode: number of time bins over the expected span
    max_wait: float | None = None  # time mode: a pod pending longer than this is withdrawn
    tie_break: str = "random"
    record_events: bool = True
    debug: bool = False  # write the traceback of any exception a plugin raises to stderr
    end_time: float | None = None  # time mode: nothing after this instant is replayed
    # time mode: more scheduling attempts than this end the run with an InputError (a cluster far
    # too small for its pods: every completion retries every waiting pod, as kube-scheduler does)
    max_attempts: int | None = None


def _copy_pod(pod: Pod) -> Pod:
    """A private copy: plugins and the queue may write to pods (nomination, GPU index)."""
    p = pod.with_node(pod.node_name)
    p.annotations = dict(pod.annotations)
    return p


class Engine:
    """One replay: ``run()`` to the end, or ``decisions()`` to choose the node of each pod that
    has a choice (see ``kubesched.sim.driver``); time mode can also be driven from outside
    (``open``, ``run_until``, ``submit``, ``close``)."""

    def __init__(
        self,
        config: SchedulerConfig,
        workload: Workload,
        registry: Registry,
        options: SimOptions,
        progress: Progress | None = None,
    ) -> None:
        if options.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {options.mode!r}")
        self.opts = options
        self.wl = workload
        self.progress = progress
        self.clock = VirtualClock()
        # the cluster's objects, without nodes and pods: those come as the run's events
        self.snap = Snapshot.of(workload.objects, nodes=(), pods=())
        self.cluster = SimCluster(self._noop_bind, self._on_evict)
        self.sched = Scheduler(
            config, self.snap, self.cluster, registry, seed=options.seed, clock=self.clock, tie_break=options.tie_break
        )
        # one stream for the engine's own draws, independent of the scheduler's tie-breaks
        self.util = SimUtilization(options.usage, np.random.default_rng([options.seed or 0, 1]))
        for fw in self.sched.frameworks.values():
            fw.handle.utilization = self.util
        self.sched.hooks.on_scheduled.append(self._on_scheduled)
        self.sched.hooks.on_failed.append(self._on_failed)
        self.sched.hooks.on_skipped.append(self._on_skipped)
        if options.debug:
            PluginTracebacks().attach(self.sched)
        self._init_pods(workload)
        self.heap: list[tuple[float, int, int, object]] = []
        self._seq = 0
        self.rec = Recorder(options.record_events)
        self.frag = FragMeter(self.snap, self.pods, workload.typical)
        self.totals = Totals(self.util)  # capacity, allocation, their levels over the run
        self.n_queued = 0
        self.n_running = 0
        self.arrived_work = 0.0
        self.n_events = 0
        self.t_start = 0.0
        self.wall = 0.0
        self.cpu = 0.0
        # wall time inside the scheduler: scheduling cycles and its handling of pod deletions
        # (cache and queue); the rest is the engine's own
        self.sched_wall = 0.0
        self.attempt_failed: list[int] = []  # arrival mode: 1 per attempted pod that failed
        self.driver = Driver(self)
        for node in workload.nodes:
            self._add_node(node, initial=True)
        cap = self.totals.capacity
        gpu = cap.gpu > 0  # "arrived workload" counts GPUs when there are any
        self.work_resource = "gpu" if gpu else "cpu"
        self._work_index = 2 if gpu else 0  # in req3
        self.work_total = float(cap.gpu if gpu else cap.cpu) or 1.0

    def _init_pods(self, workload: Workload) -> None:
        """Per-pod state as plain lists (indexed one at a time in the hot path); numpy at the end."""
        n = len(workload.pods)
        self.pods = [_copy_pod(p) for p in workload.pods]
        self.index = {p.uid: i for i, p in enumerate(self.pods)}
        if len(self.index) != n:
            raise ValueError("workload pods must have distinct uids")
        self.arrival = [float(a) for a in workload.arrival]
        self.duration = workload.duration
        self.state = [WAITING] * n
        self.bind_time = [math.nan] * n
        self.end_time = [math.nan] * n
        self.node_of: list[str] = [""] * n
        self.message: list[str] = [""] * n
        self.attempts = [0] * n
        self.gpu_index: list[str] = [""] * n  # the GPUs a bound pod got (alibabacloud.com/gpu-index)
        # one row per scheduling attempt (attempts.csv): see ``_attempt_row``
        self.attempt_rows: list[tuple] = []
        self._attempt_seq = 0  # event rows recorded before the attempt in progress
        self.run_id = [0] * n  # bumps on every start: stale completions are ignored
        self.cpu_req = np.fromiter((p.requests.get(CPU, 0) for p in self.pods), np.int64, n)
        self.mem_req = np.fromiter((p.requests.get(MEMORY, 0) for p in self.pods), np.int64, n)
        self.gpu_req = np.fromiter((pod_gpu_milli(p, self.snap.dra) for p in self.pods), np.int64, n)
        self.req3 = list(zip(self.cpu_req.tolist(), self.mem_req.tolist(), self.gpu_req.tolist(), strict=True))
        use = self.opts.usage.draw(self.util.rng, n)  # each pod's used share of cpu and memory
        self.use2 = [(c * f, m * g) for (c, m, _), (f, g) in zip(self.req3, use.tolist(), strict=True)]

    def arrays(self) -> dict[str, np.ndarray]:
        """Per-pod state as numpy arrays (for metrics after the run)."""
        return {
            "arrival": np.asarray(self.arrival, float),
            "state": np.asarray(self.state, np.int8),
            "bind_time": np.asarray(self.bind_time, float),
            "end_time": np.asarray(self.end_time, float),
            "attempts": np.asarray(self.attempts, np.int64),
        }

    # ---- event heap ----------------------------------------------------------------------
    def push(self, t: float, kind: int, arg: object) -> None:
        self._seq += 1
        heapq.heappush(self.heap, (t, kind, self._seq, arg))

    def row(self, event: str, i: int = -1, node: str = "", delay: float = math.nan, message: str = "") -> None:
        if not self.rec.keep_events:
            return
        cpu, mem, gpu = self.totals.allocated_pct()
        ucpu, umem = self.totals.used_pct()
        self.rec.events.append(
            (
                len(self.rec.events),
                self.clock.now,
                event,
                self.pods[i].key if i >= 0 else "",
                node,
                delay,
                message,
                cpu,
                mem,
                gpu,
                ucpu,
                umem,
                self.n_queued,
                self.n_running,
                100.0 * self.arrived_work / self.work_total,
            )
        )

    # ---- nodes ---------------------------------------------------------------------------
    def _add_node(self, node: Node, initial: bool = False) -> None:
        if node.name in self.snap.row_of:
            raise ValueError(f"node {node.name} is already in the cluster")
        self.snap.add_node(node)
        self.util.add_node(node)
        self._capacity(node, 1)
        if not initial:
            self.sched.queue.move_for_event("NodeAdd")
            self.row("node_add", node=node.name)

    # ---- hooks for components that change the cluster mid-run (an autoscaler) -------------
    def call_at(self, t: float, fn: Callable[[], None]) -> None:
        """Run ``fn()`` at virtual time ``t`` (after the other events of that instant)."""
        self.push(t, TIMER, fn)

    def add_node(self, node: Node) -> None:
        """A node joins now; pods waiting for capacity are moved to be retried."""
        self._add_node(node)

    def remove_node(self, name: str, *, requeue: bool = False) -> list[int]:
        """The node leaves now; returns the indices of the pods that ran on it. With ``requeue``
        they are evicted and created again (as a controller would), pending from now and
        running their whole duration once bound again; without, they are terminated."""
        row = self.snap.row_of[name]
        victims = [self.index[uid] for uid in self.snap.pods_on[row] if uid in self.index]
        self.node_event(NodeEvent(self.clock.now, "remove", name))
        if requeue:
            for i in victims:
                self._requeue(i)
        return victims

    def _requeue(self, i: int) -> None:
        if self.state[i] not in (EVICTED, PREEMPTED):
            return
        pod = _copy_pod(self.wl.pods[i])
        pod.node_name = ""  # recreated: pending, whatever the original was bound to
        self.pods[i] = pod
        self.state[i] = QUEUED
        self.n_queued += 1
        self._make_claims(pod)  # a pod made anew gets claims anew
        self.sched.add_pending(self.pods[i])
        self.row("arrive", i, message="recreated after eviction")

    def _capacity(self, node: Node, sign: int) -> None:
        alloc = node.allocatable
        self.totals.capacity.add(alloc.get(CPU, 0), alloc.get(MEMORY, 0), node_gpu_milli(node, self.snap.dra), sign)

    def node_event(self, ev: NodeEvent) -> None:
        name = ev.node_name
        if ev.action == "add":
            assert isinstance(ev.node, Node)
            self._add_node(ev.node)
            return
        row = self.snap.row_of.get(name)
        if row is None:
            self.row(f"node_{ev.action}", node=name, message="node not in the cluster: ignored")
            return
        node = self.snap.nodes[row]
        if ev.action in ("cordon", "uncordon"):
            self.snap.update_node(replace(node, unschedulable=ev.action == "cordon"))
            self.sched.queue.move_for_event("NodeUpdate")
            self.row(f"node_{ev.action}", node=name)
            return
        # remove: the node's pods are terminated with it (no controller recreates them)
        for uid in list(self.snap.pods_on[row]):
            i = self.index.get(uid)
            self.sched.delete_pod(self.snap.pod_by_uid[uid])
            if i is not None:
                self._stop(i, EVICTED, "node removed")
        self.snap.remove_node(name)
        self.util.remove_node(name)
        self._capacity(node, -1)
        self.row("node_remove", node=name)

    # ---- pods ----------------------------------------------------------------------------
    # ---- the resourceclaim controller (claims made when a pod is created, released when it is gone)
    def _make_claims(self, pod: Pod) -> None:
        if pod.resource_claims:  # a template the input lacks was warned about when it was read
            self.snap.dra.create_pod_claims(pod)

    def release(self, i: int) -> None:
        """The pod is gone: its claims no longer hold devices for it (pods waiting for devices
        are moved as on a ResourceClaim update)."""
        pod = self.pods[i]
        if pod.resource_claims and self.snap.dra.release_pod(pod):
            self.sched.queue.move_for_event("ResourceClaimUpdate")

    def arrive(self, i: int) -> None:
        pod = self.pods[i]
        self.arrived_work += self.req3[i][self._work_index]
        self._make_claims(pod)
        if pod.node_name:  # already bound (a cluster dump's running pods): no scheduling cycle
            if pod.node_name not in self.snap.row_of:
                self.state[i] = FAILED
                self.message[i] = f'bound to node "{pod.node_name}", which is not in the cluster'
                self.row("failed", i, message=self.message[i])
                return
            self.snap.add_pod(pod)
            # bound as far as the cluster knows: a preemption that evicts it must end its run
            self.cluster.bindings[pod.uid] = pod.node_name
            self.sched.queue.move_for_event("AssignedPodAdd")
            self.state[i] = QUEUED
            self.n_queued += 1
            self._start(i, pod.node_name)
            return
        if not self.sched.responsible_for(pod):
            self.state[i] = FAILED
            self.message[i] = f'no profile for schedulerName "{pod.scheduler_name}"'
            self.row("failed", i, message=self.message[i])
            return
        self.state[i] = QUEUED
        self.n_queued += 1
        self.sched.add_pending(pod)
        if self.opts.mode == "time":
            self.row("arrive", i)
            if self.opts.max_wait is not None:
                self.push(self.arrival[i] + self.opts.max_wait, WITHDRAW, i)

    def _start(self, i: int, node: str) -> None:
        """A pod is bound: it runs from now for its duration."""
        now = self.clock.now
        self.state[i] = RUNNING
        self.n_queued -= 1
        self.n_running += 1
        self.bind_time[i] = now
        self.node_of[i] = node
        alloc, r = self.totals.allocated, self.req3[i]
        alloc.cpu += r[0]
        alloc.memory += r[1]
        alloc.gpu += r[2]
        self.util.start(self.pods[i].uid, node, *self.use2[i])
        self.run_id[i] += 1
        d = self.duration[i]
        if d is not None and self.opts.mode == "time":
            self.push(now + d, COMPLETE, (i, self.run_id[i]))
        self.row("scheduled", i, node, now - self.arrival[i])

    def _stop(self, i: int, state: int, why: str) -> None:
        """A running pod ends (completed, preempted, node removed): its resources are free."""
        if self.state[i] != RUNNING:
            return
        self.state[i] = state
        self.end_time[i] = self.clock.now
        self.n_running -= 1
        alloc, r = self.totals.allocated, self.req3[i]
        alloc.cpu -= r[0]
        alloc.memory -= r[1]
        alloc.gpu -= r[2]
        self.util.stop(self.pods[i].uid)
        self.cluster.bindings.pop(self.pods[i].uid, None)
        self.release(i)
        self.row(STATE_NAMES[state] if state != DONE else "complete", i, self.node_of[i], message=why)
        self._detach(i)

    def _detach(self, i: int) -> None:
        """Pod ``i`` left its node: the volumes it alone used there are detached."""
        pod, node = self.pods[i], self.node_of[i]
        row = self.snap.row_of.get(node)
        if not pod.volumes or row is None:
            return
        staying = [p for uid, p in self.snap.pods_on[row].items() if uid != pod.uid]
        detach_unused(self.snap.storage, node, pod, staying)

    def _complete(self, i: int, run: int) -> None:
        if self.state[i] != RUNNING or self.run_id[i] != run:
            return  # preempted or evicted before it finished
        uid = self.pods[i].uid
        pod = self.snap.pod_by_uid.get(uid)
        self._stop(i, DONE, "")
        if pod is not None:
            t0 = time.perf_counter()
            self.sched.delete_pod(pod)  # frees the row and moves pods waiting for resources
            self.sched_wall += time.perf_counter() - t0

    def _withdraw(self, i: int) -> None:
        if self.state[i] != QUEUED:
            return
        self.sched.delete_pod(self.pods[i])
        self.release(i)
        self.state[i] = WITHDRAWN
        self.n_queued -= 1
        self.end_time[i] = self.clock.now
        self.row("withdrawn", i, message=self.message[i])

    # ---- scheduler callbacks -------------------------------------------------------------
    def _noop_bind(self, pod: Pod, node: str) -> None:
        pass  # bookkeeping happens in _on_scheduled, whichever binder ran

    def _on_scheduled(self, res: ScheduleResult) -> None:
        i = self.index.get(res.pod.uid)
        if i is None or res.node is None:
            return
        self.attempts[i] += 1
        bound = self.snap.pod_by_uid.get(res.pod.uid)
        if bound is not None:
            self.gpu_index[i] = bound.annotations.get(GPU_INDEX, "")
            if not self.gpu_index[i] and bound.resource_claims and self.snap.dra.slices:  # GPUs of its claims
                held = GpuState.of(self.snap).indices_of(bound.uid)
                self.gpu_index[i] = format_index(held) if held else ""
        self._attempt_row(i, res, "scheduled")
        self._start(i, res.node)
        self._attempt_seq = len(self.rec.events)

    def _on_failed(self, res: ScheduleResult) -> None:
        i = self.index.get(res.pod.uid)
        if i is None:
            return
        self.attempts[i] += 1
        self.message[i] = res.message or ""
        self._attempt_row(i, res, "error" if res.code == Code.Error else "unschedulable")
        if self.attempts[i] == 1 and self.opts.mode == "time":
            self.row("unschedulable", i, message=first_line(self.message[i]))
        self._attempt_seq = len(self.rec.events)

    def _attempt_row(self, i: int, res: ScheduleResult, outcome: str) -> None:
        """pod, attempt, time, outcome, node, nominated node, message, milliseconds, and
        ``event_seq``: the event rows recorded before the attempt (the cluster it saw)."""
        if self.rec.keep_events:
            self.attempt_rows.append(
                (
                    self.pods[i].key, self.attempts[i], self.clock.now, outcome, res.node or "",
                    res.nominated_node or "", first_line(res.message or ""), res.duration * 1000.0,
                    self._attempt_seq,
                )
            )

    def _on_skipped(self, res: ScheduleResult) -> None:
        """A pod being deleted leaves the queue unscheduled: it never runs."""
        i = self.index.get(res.pod.uid)
        if i is None or self.state[i] != QUEUED:
            return
        self.state[i] = FAILED
        self.n_queued -= 1
        self.message[i] = res.message or ""
        self.release(i)
        self.row("failed", i, message=self.message[i])

    def gate(self, i: int) -> bool:
        """Mark a pod a PreEnqueue plugin still holds as gated (with the plugin's message)."""
        qpi = self.sched.queue.gated.get(self.pods[i].uid)
        if qpi is None or qpi.gated is None:
            return False
        self.state[i] = GATED
        self.message[i] = f"{qpi.gated.message} ({qpi.gated.plugin})" if qpi.gated.plugin else qpi.gated.message
        self.row("gated", i, message=self.message[i])
        return True

    def _on_evict(self, pod: Pod, reason: str) -> None:
        i = self.index.get(pod.uid)
        if i is not None:
            self._stop(i, PREEMPTED, reason)

    def mark_attempt(self) -> None:
        """A scheduling attempt starts: its attempts.csv row counts the event rows before it."""
        self._attempt_seq = len(self.rec.events)

    def apply(self, kind: int, arg: object) -> None:
        """One event off the heap."""
        if kind == ARRIVE:
            self.arrive(arg)  # type: ignore[arg-type]
        elif kind == COMPLETE:
            self._complete(*arg)  # type: ignore[misc]
        elif kind == WITHDRAW:
            self._withdraw(arg)  # type: ignore[arg-type]
        elif kind == TIMER:
            arg()  # type: ignore[operator]
        else:
            self.node_event(arg)  # type: ignore[arg-type]

    # ---- running -------------------------------------------------------------------------
    def run(self) -> None:
        """The whole replay, each pod on the scheduler's own choice."""
        for _ in self.driver.run():
            pass

    def decisions(self) -> Iterator[Attempt]:
        """The whole replay, stopped at each decision point: a pod with two or more feasible
        nodes, before its host is chosen. Commit the attempt (``self.sched.commit(attempt,
        node)``) to place the pod on a node of your choice among ``attempt.rows``; one left
        uncommitted gets the scheduler's own choice. Iterating to the end without committing
        anything is ``run()``."""
        return self.driver.run()

    # ---- a timeline driven from outside (time mode) ----------------------------------------
    # A caller that decides when pods arrive (the multi-cluster layer: a pod reaches a member
    # cluster when it is sent there) opens the timeline, moves it with ``run_until`` and
    # ``next_time``, sends pods with ``submit`` and ends it with ``close``.
    def open(self, start: float, end: float) -> None:
        """Start an externally driven timeline at ``start`` (bins over [start, end]): node events
        run as scheduled; pods arrive only when ``submit`` sends them."""
        if self.opts.mode != "time":
            raise ValueError("an externally driven timeline needs time mode")
        self.arrival = [math.nan] * len(self.pods)  # a pod's arrival is when it is submitted
        self.driver.setup_timeline(arrivals=False)
        self.driver.open(start, end)
        self.driver.started = (time.perf_counter(), time.process_time())

    def next_time(self) -> float:
        """When this cluster next has something to do (an event, a backoff, a Permit timeout)."""
        t_next = self.heap[0][0] if self.heap else math.inf
        wake = self.driver.next_wake()
        return min(t_next, wake) if wake is not None else t_next

    def run_until(self, t: float) -> None:
        """Apply every event and scheduler wake-up up to and including ``t``; the clock ends at
        ``t`` (the last event's time when ``t`` is infinite)."""
        for _ in self.driver.until(t):
            pass

    def submit(self, i: int, deadline: float | None = None) -> None:
        """Pod ``i`` arrives now; with a ``deadline`` it is withdrawn if still pending then."""
        self.arrival[i] = self.clock.now
        self.arrive(i)
        self.n_events += 1
        if deadline is not None and self.state[i] == QUEUED:
            self.push(deadline, WITHDRAW, i)
        for _ in self.driver.drain():
            pass

    def close(self, t: float) -> None:
        """End an externally driven timeline at ``t``."""
        self.run_until(t)
        self.driver.close()
        self.driver.stop_watch()
