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
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.api.resources import CPU, MEMORY
from kubesched.app import VirtualClock
from kubesched.config import SchedulerConfig
from kubesched.debug import PluginTracebacks
from kubesched.errors import InputError
from kubesched.framework.registry import Registry
from kubesched.framework.status import Code
from kubesched.gpu.model import GPU_INDEX, format_index
from kubesched.gpu.state import GpuState
from kubesched.scheduler import CircleKey, Scheduler, ScheduleResult
from kubesched.sim.backend import SimCluster
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
from kubesched.sim.usage import SimUtilization, UsageModel
from kubesched.sim.volumes import detach_unused
from kubesched.sim.workload import NodeEvent, Workload
from kubesched.state.snapshot import Snapshot

MODES = ("time", "arrival")

# Event kinds, in the order they apply at one instant: new capacity first, then completions
# free resources, then nodes go away, then pods arrive (and may use all of the above); timers
# (``Engine.call_at``: components such as an autoscaler) see the instant's other events applied.
NODE_ADD, COMPLETE, NODE_UPDATE, NODE_REMOVE, ARRIVE, WITHDRAW, TIMER = range(7)


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
    def __init__(
        self,
        config: SchedulerConfig,
        workload: Workload,
        registry: Registry,
        options: SimOptions,
        progress: Progress | None = None,
        *,
        scheduler_cls: type[Scheduler] = Scheduler,
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
        # a Scheduler subclass may choose hosts itself (the learning environment's time mode)
        self.sched = scheduler_cls(
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

        n = len(workload.pods)
        self.pods = [_copy_pod(p) for p in workload.pods]
        self.index = {p.uid: i for i, p in enumerate(self.pods)}
        if len(self.index) != n:
            raise ValueError("workload pods must have distinct uids")
        # per-pod state as plain lists (indexed one at a time in the hot path); numpy at the end
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

        self.heap: list[tuple[float, int, int, object]] = []
        self._seq = 0
        self.rec = Recorder(options.record_events)
        self.frag = FragMeter(self.snap, self.pods, workload.typical)
        # cluster totals, kept up to date per event (O(1) per-event metrics)
        # plain floats, not numpy: these change on every event and small-array ops cost microseconds
        self.cap = [0.0, 0.0, 0.0]  # cpu milli, memory bytes, gpu milli
        self.used_req = [0.0, 0.0, 0.0]
        self.req3 = list(zip(self.cpu_req.tolist(), self.mem_req.tolist(), self.gpu_req.tolist(), strict=True))
        use = options.usage.draw(self.util.rng, n)  # each pod's used share of cpu and memory
        self.use2 = [(c * f, m * g) for (c, m, _), (f, g) in zip(self.req3, use.tolist(), strict=True)]
        self.n_queued = 0
        self.n_running = 0
        self.arrived_work = 0.0
        # time-weighted (time mode) or per-attempt (arrival mode) sums of ``levels()``, and peaks
        self.acc = [0.0] * 5
        self.peak = [0.0] * 5
        self.span = 0.0
        self.n_events = 0
        self.t_start = 0.0
        self.wall = 0.0
        self.cpu = 0.0
        # wall time inside the scheduler: scheduling cycles and its handling of pod deletions
        # (cache and queue); the rest is the engine's own
        self.sched_wall = 0.0
        self.attempt_failed: list[int] = []  # arrival mode: 1 per attempted pod that failed
        # time mode: attempts seen since the last timeline event, and whether one repeated (a gang
        # going round in circles at Permit; see Scheduler.schedule_one_tracked)
        self._seen: set[CircleKey] = set()
        self._circling = False
        self._arrived = 0
        for node in workload.nodes:
            self._add_node(node, initial=True)
        self.work_key = 2 if self.cap[2] > 0 else 0  # "arrived workload" counts GPUs when there are any
        self.work_total = float(self.cap[self.work_key]) or 1.0

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

    # ---- totals --------------------------------------------------------------------------
    def pct(self) -> tuple[float, float, float]:
        c = self.cap
        u = self.used_req
        return (
            100.0 * u[0] / c[0] if c[0] else 0.0,
            100.0 * u[1] / c[1] if c[1] else 0.0,
            100.0 * u[2] / c[2] if c[2] else 0.0,
        )

    def used_pct(self) -> tuple[float, float]:
        c = self.cap
        u = self.util
        return (100.0 * u.total_cpu_used / c[0] if c[0] else 0.0, 100.0 * u.total_mem_used / c[1] if c[1] else 0.0)

    def levels(self) -> tuple[float, ...]:
        """Allocated CPU, memory, GPU and used CPU, memory, in percent of capacity."""
        return self.pct() + self.used_pct()

    def _accumulate(self, weight: float) -> None:
        lv = self.levels()
        self.peak = [max(a, b) for a, b in zip(self.peak, lv, strict=True)]
        if weight > 0:
            self.acc = [a + weight * b for a, b in zip(self.acc, lv, strict=True)]
            self.span += weight

    def row(self, event: str, i: int = -1, node: str = "", delay: float = math.nan, message: str = "") -> None:
        if not self.rec.keep_events:
            return
        cpu, mem, gpu = self.pct()
        ucpu, umem = self.used_pct()
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
        self._node_event(NodeEvent(self.clock.now, "remove", name))
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
        amounts = (node.allocatable.get(CPU, 0), node.allocatable.get(MEMORY, 0), node_gpu_milli(node, self.snap.dra))
        self.cap = [c + sign * a for c, a in zip(self.cap, amounts, strict=True)]

    def _node_event(self, ev: NodeEvent) -> None:
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

    def _release(self, i: int) -> None:
        """The pod is gone: its claims no longer hold devices for it (pods waiting for devices
        are moved as on a ResourceClaim update)."""
        pod = self.pods[i]
        if pod.resource_claims and self.snap.dra.release_pod(pod):
            self.sched.queue.move_for_event("ResourceClaimUpdate")

    def _arrive(self, i: int) -> None:
        pod = self.pods[i]
        self.arrived_work += self.req3[i][self.work_key]
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
        u, r = self.used_req, self.req3[i]
        u[0] += r[0]
        u[1] += r[1]
        u[2] += r[2]
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
        u, r = self.used_req, self.req3[i]
        u[0] -= r[0]
        u[1] -= r[1]
        u[2] -= r[2]
        self.util.stop(self.pods[i].uid)
        self.cluster.bindings.pop(self.pods[i].uid, None)
        self._release(i)
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
        self._release(i)
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
        self._release(i)
        self.row("failed", i, message=self.message[i])

    def _gate(self, i: int) -> bool:
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

    # ---- running -------------------------------------------------------------------------
    def run(self) -> None:
        t0, c0 = time.perf_counter(), time.process_time()
        if self.opts.mode == "time":
            self._run_time()
        else:
            self._run_arrival()
        self.wall = time.perf_counter() - t0
        self.cpu = time.process_time() - c0  # CPU seconds: steadier than wall on a busy machine

    def _drain(self) -> None:
        sched = self.sched
        t0 = time.perf_counter()
        self._attempt_seq = len(self.rec.events)
        limit = self.opts.max_attempts
        while True:
            res, circling = sched.schedule_one_tracked(self._seen)
            if res is None:
                break
            self._circling |= circling
            if limit is not None and sched.attempts > limit:
                self._too_many_attempts(limit)
        self.sched_wall += time.perf_counter() - t0

    def _too_many_attempts(self, limit: int) -> None:
        n = len(self.pods)
        raise InputError(
            f"stopped after {limit:,} scheduling attempts ({limit / max(n, 1):g} per pod) at t = "
            f"{self.clock.now - self.t_start:,.0f} s of the replay: {self.n_queued:,} pods are waiting and every "
            "pod completion retries each of them, as kube-scheduler does; the cluster is too small for this "
            "workload (add nodes, lower the arrival rate, or give --max-wait SECONDS or --max-attempts-per-pod N)",
            source=self.wl.source or None,
        )

    def _useful_backoff(self) -> float | None:
        """The next backoff expiry worth waking for: some pod there saw a change since it failed."""
        q = self.sched.queue
        nxt = q.next_backoff_expiry()
        if nxt is None:
            return None
        gen = self.snap.generation
        if all(p.failed_generation == gen for p in q.backoff_pods()):
            return None  # retrying now gives the same answer; the next event will move them
        return nxt

    def _next_wake(self) -> float | None:
        """The scheduler's own next moment before the next timeline event: a useful backoff
        expiry, or a Permit timeout (waiting pods are released at exactly their deadline). Once a
        gang goes round in circles (wait, time out, wait again, nothing else changing), retries
        wait for the next timeline event, so that a gang that cannot complete does not spin the
        virtual clock forever; the pending timeouts still fire, releasing the pods."""
        backoff = None if self._circling else self._useful_backoff()
        times = [t for t in (backoff, self.sched.next_waiting_deadline()) if t is not None]
        return min(times) if times else None

    def _setup_timeline(self, arrivals: bool = True) -> None:
        if arrivals:
            order = np.argsort(np.asarray(self.arrival), kind="stable")
            for i in order:
                self.push(self.arrival[i], ARRIVE, int(i))
        kinds = {"add": NODE_ADD, "remove": NODE_REMOVE, "cordon": NODE_UPDATE, "uncordon": NODE_UPDATE}
        for ev in self.wl.node_events:
            self.push(ev.time, kinds[ev.action], ev)

    def _apply(self, kind: int, arg: object) -> None:
        if kind == ARRIVE:
            self._arrive(arg)  # type: ignore[arg-type]
        elif kind == COMPLETE:
            self._complete(*arg)  # type: ignore[misc]
        elif kind == WITHDRAW:
            self._withdraw(arg)  # type: ignore[arg-type]
        elif kind == TIMER:
            arg()  # type: ignore[operator]
        else:
            self._node_event(arg)  # type: ignore[arg-type]

    def _run_time(self) -> None:
        self._setup_timeline()
        finite = [a + d for a, d in zip(self.arrival, self.duration, strict=True) if d is not None]
        start = float(self.heap[0][0]) if self.heap else 0.0
        end = max([start, *(float(x) for x in self.arrival), *finite, *(e.time for e in self.wl.node_events)])
        stop = math.inf if self.opts.end_time is None else self.opts.end_time
        self._open(start, min(end, stop))
        self.run_until(stop)  # a finite end: the run lasts until then, nothing after it is replayed
        self._close()

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
        self._setup_timeline(arrivals=False)
        self._open(start, end)
        self._t0 = (time.perf_counter(), time.process_time())

    def _open(self, start: float, end: float) -> None:
        self.rec.start_time_bins(start, end, self.opts.bins)
        self.clock.advance(start)
        self.t_start = self.clock.now

    def next_time(self) -> float:
        """When this cluster next has something to do (an event, a backoff, a Permit timeout)."""
        t_next = self.heap[0][0] if self.heap else math.inf
        wake = self._next_wake()
        return min(t_next, wake) if wake is not None else t_next

    def run_until(self, t: float) -> None:
        """Apply every event and scheduler wake-up up to and including ``t``; the clock ends at
        ``t`` (the last event's time when ``t`` is infinite)."""
        n = len(self.pods)
        heap = self.heap
        while True:
            t_next = heap[0][0] if heap else math.inf
            wake = self._next_wake()
            if wake is not None and wake < t_next:  # a backoff expires or a Permit timeout passes first
                if wake > t:
                    break
                self.rec.sample_until(wake, self)
                self._accumulate(wake - self.clock.now)
                self.clock.advance(wake)
                self.n_events += 1
                if self._circling:  # only timeouts wake a circling scheduler: release, try nothing
                    self.sched.expire_waiting_pods()
                else:
                    self._drain()
                continue
            if not heap or t_next > t:
                break
            self.rec.sample_until(t_next, self)
            self._accumulate(t_next - self.clock.now)
            self.clock.advance(t_next)
            self._seen.clear()  # the cluster changes: what circled before may go through now
            self._circling = False
            while heap and heap[0][0] == t_next:
                _, kind, _, arg = heapq.heappop(heap)
                self._apply(kind, arg)
                self.n_events += 1
                if kind == ARRIVE:
                    self._arrived += 1
                    if self.progress is not None and (self._arrived & 63 == 0 or self._arrived == n):
                        self.progress(self._arrived, n)
            self._drain()
        if math.isfinite(t) and t > self.clock.now:
            self.rec.sample_until(t, self)
            self._accumulate(t - self.clock.now)
            self.clock.advance(t)

    def submit(self, i: int, deadline: float | None = None) -> None:
        """Pod ``i`` arrives now; with a ``deadline`` it is withdrawn if still pending then."""
        self.arrival[i] = self.clock.now
        self._arrive(i)
        self.n_events += 1
        if deadline is not None and self.state[i] == QUEUED:
            self.push(deadline, WITHDRAW, i)
        self._drain()

    def close(self, t: float) -> None:
        """End an externally driven timeline at ``t``."""
        self.run_until(t)
        self._close()
        t0, c0 = self._t0
        self.wall = time.perf_counter() - t0
        self.cpu = time.process_time() - c0

    def _close(self) -> None:
        self._accumulate(0.0)
        self.rec.sample_until(self.clock.now, self, final=True)
        # pods still waiting at the end never got a node; gated ones were never tried
        for i in [k for k, st in enumerate(self.state) if st == QUEUED]:
            self.n_queued -= 1
            if self._gate(i):
                continue
            self.state[i] = FAILED
            self.row("failed", i, message=first_line(self.message[i]))

    def _run_arrival(self) -> None:
        order = np.argsort(np.asarray(self.arrival), kind="stable")
        events = sorted(self.wl.node_events, key=lambda e: e.time)
        ei = 0
        n = len(self.pods)
        self.t_start = self.arrival[order[0]] if n else 0.0
        self.rec.start_arrival_bins()
        self.rec.sample_arrival(self)
        sched = self.sched
        for k, i in enumerate(order):
            i = int(i)
            t = self.arrival[i]
            while ei < len(events) and events[ei].time <= t:
                self.clock.advance(events[ei].time)
                self._node_event(events[ei])
                self.n_events += 1
                ei += 1
            self.clock.advance(t)
            self._arrive(i)
            self.n_events += 1
            self.rec.attempted += 1
            failed = 0
            if self.state[i] == QUEUED:
                ts = time.perf_counter()
                self._attempt_seq = len(self.rec.events)
                sched.schedule_one()
                self.sched_wall += time.perf_counter() - ts
                if self.state[i] == QUEUED:  # tried once (or gated), never retried
                    gated = self._gate(i)
                    sched.delete_pod(self.pods[i])
                    self._release(i)
                    self.n_queued -= 1
                    if not gated:
                        self.state[i] = FAILED
                        self.row("failed", i, message=first_line(self.message[i]))
                        failed = 1
            self.attempt_failed.append(failed)
            self._accumulate(1.0)
            self.rec.sample_arrival(self)
            if self.progress is not None and ((k + 1) & 63 == 0 or k + 1 == n):
                self.progress(k + 1, n)
        for ev in events[ei:]:
            self.clock.advance(ev.time)
            self._node_event(ev)
            self.n_events += 1
        self.rec.sample_arrival(self, final=True)


def first_line(message: str) -> str:
    return message.split("\n", 1)[0]


