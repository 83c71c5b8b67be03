"""The engine's event loops, as generators that stop at every decision point.

A decision point is a pod whose scheduling cycle found two or more feasible nodes: the loop
yields the scheduler's ``Attempt`` (``Scheduler.propose``) before its host is chosen. The caller
may ``engine.sched.commit(attempt, node)`` it with a node of its own choice among
``attempt.rows``; an attempt left uncommitted gets the scheduler's own choice when the loop
resumes. Exhausting the generator without a look at the attempts is ``Engine.run``.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from kubesched.errors import InputError
from kubesched.scheduler import Attempt, CircleKey
from kubesched.sim.states import FAILED, QUEUED
from kubesched.sim.workload import NodeEvent

if TYPE_CHECKING:
    from kubesched.sim.engine import Engine

# Event kinds, in the order they apply at one instant: new capacity first, then completions
# free resources, then nodes go away, then pods arrive (and may use all of the above); timers
# (``Engine.call_at``: components such as an autoscaler) see the instant's other events applied.
NODE_ADD, COMPLETE, NODE_UPDATE, NODE_REMOVE, ARRIVE, WITHDRAW, TIMER = range(7)
NODE_EVENT_KINDS = {"add": NODE_ADD, "remove": NODE_REMOVE, "cordon": NODE_UPDATE, "uncordon": NODE_UPDATE}


def first_line(message: str) -> str:
    return message.split("\n", 1)[0]


class Driver:
    """Moves an engine's virtual clock from event to event and drains the scheduling queue."""

    def __init__(self, eng: Engine) -> None:
        self.eng = eng
        # time mode: attempts seen since the last timeline event, and whether one repeated (a gang
        # going round in circles at Permit; see Scheduler.schedule_one_tracked)
        self.seen: set[CircleKey] = set()
        self.circling = False
        self.arrived = 0
        self.started = (0.0, 0.0)  # wall and CPU time when the run started

    # ---- the whole run ---------------------------------------------------------------------
    def run(self) -> Iterator[Attempt]:
        eng = self.eng
        self.started = (time.perf_counter(), time.process_time())
        yield from self._run_time() if eng.opts.mode == "time" else self._run_arrival()
        self.stop_watch()

    def stop_watch(self) -> None:
        t0, c0 = self.started
        self.eng.wall = time.perf_counter() - t0
        self.eng.cpu = time.process_time() - c0  # CPU seconds: steadier than wall on a busy machine

    # ---- draining the queue -----------------------------------------------------------------
    def drain(self) -> Iterator[Attempt]:
        """Schedule until the queue has nothing to pop, yielding each decision point."""
        eng = self.eng
        sched = eng.sched
        t0 = time.perf_counter()
        eng.mark_attempt()
        limit = eng.opts.max_attempts
        while True:
            mark = sched.circle_mark()
            a = sched.propose()
            if a is None:
                break
            if a.rows.size > 1:
                eng.sched_wall += time.perf_counter() - t0
                yield a  # the caller may commit it to a node of its choice
                t0 = time.perf_counter()
            res = a.result if a.result is not None else sched.commit(a)
            self.circling |= sched.went_round(self.seen, mark, res)
            if limit is not None and sched.attempts > limit:
                self._too_many_attempts(limit)
        eng.sched_wall += time.perf_counter() - t0

    def _too_many_attempts(self, limit: int) -> None:
        eng = self.eng
        n = len(eng.pods)
        raise InputError(
            f"stopped after {limit:,} scheduling attempts ({limit / max(n, 1):g} per pod) at t = "
            f"{eng.clock.now - eng.t_start:,.0f} s of the replay: {eng.n_queued:,} pods are waiting and every "
            "pod completion retries each of them, as kube-scheduler does; the cluster is too small for this "
            "workload (add nodes, lower the arrival rate, or give --max-wait SECONDS or --max-attempts-per-pod N)",
            source=eng.wl.source or None,
        )

    def next_wake(self) -> float | None:
        """The scheduler's own next moment before the next timeline event: a useful backoff
        expiry, or a Permit timeout (waiting pods are released at exactly their deadline). Once a
        gang goes round in circles (wait, time out, wait again, nothing else changing), retries
        wait for the next timeline event, so that a gang that cannot complete does not spin the
        virtual clock forever; the pending timeouts still fire, releasing the pods."""
        sched = self.eng.sched
        backoff = None if self.circling else sched.queue.useful_backoff_expiry(sched.snapshot.generation)
        times = [t for t in (backoff, sched.next_waiting_deadline()) if t is not None]
        return min(times) if times else None

    # ---- time mode ---------------------------------------------------------------------------
    def setup_timeline(self, arrivals: bool = True) -> None:
        eng = self.eng
        if arrivals:
            order = np.argsort(np.asarray(eng.arrival), kind="stable")
            for i in order:
                eng.push(eng.arrival[i], ARRIVE, int(i))
        for ev in eng.wl.node_events:
            eng.push(ev.time, NODE_EVENT_KINDS[ev.action], ev)

    def _run_time(self) -> Iterator[Attempt]:
        eng = self.eng
        self.setup_timeline()
        finite = [a + d for a, d in zip(eng.arrival, eng.duration, strict=True) if d is not None]
        start = float(eng.heap[0][0]) if eng.heap else 0.0
        end = max([start, *(float(x) for x in eng.arrival), *finite, *(e.time for e in eng.wl.node_events)])
        stop = math.inf if eng.opts.end_time is None else eng.opts.end_time
        self.open(start, min(end, stop))
        yield from self.until(stop)  # a finite end: the run lasts until then, nothing after it is replayed
        self.close()

    def open(self, start: float, end: float) -> None:
        eng = self.eng
        eng.rec.start_time_bins(start, end, eng.opts.bins)
        eng.clock.advance(start)
        eng.t_start = eng.clock.now

    def _move_to(self, t: float) -> None:
        """The levels held until ``t`` count; the clock moves there."""
        eng = self.eng
        eng.rec.sample_until(t, eng)
        eng.totals.accumulate(t - eng.clock.now)
        eng.clock.advance(t)

    def until(self, t: float) -> Iterator[Attempt]:
        """Apply every event and scheduler wake-up up to and including ``t``; the clock ends at
        ``t`` (the last event's time when ``t`` is infinite)."""
        eng = self.eng
        n = len(eng.pods)
        heap = eng.heap
        while True:
            t_next = heap[0][0] if heap else math.inf
            wake = self.next_wake()
            if wake is not None and wake < t_next:  # a backoff expires or a Permit timeout passes first
                if wake > t:
                    break
                self._move_to(wake)
                eng.n_events += 1
                if self.circling:  # only timeouts wake a circling scheduler: release, try nothing
                    eng.sched.expire_waiting_pods()
                else:
                    yield from self.drain()
                continue
            if not heap or t_next > t:
                break
            self._move_to(t_next)
            self.seen.clear()  # the cluster changes: what circled before may go through now
            self.circling = False
            while heap and heap[0][0] == t_next:
                _, kind, _, arg = heapq.heappop(heap)
                eng.apply(kind, arg)
                eng.n_events += 1
                if kind == ARRIVE:
                    self.arrived += 1
                    if eng.progress is not None and (self.arrived & 63 == 0 or self.arrived == n):
                        eng.progress(self.arrived, n)
            yield from self.drain()
        if math.isfinite(t) and t > eng.clock.now:
            self._move_to(t)

    def close(self) -> None:
        """The end of the timeline: pods still waiting never got a node; gated ones were never tried."""
        eng = self.eng
        eng.totals.accumulate(0.0)
        eng.rec.sample_until(eng.clock.now, eng, final=True)
        for i in [k for k, st in enumerate(eng.state) if st == QUEUED]:
            eng.n_queued -= 1
            if eng.gate(i):
                continue
            eng.state[i] = FAILED
            eng.row("failed", i, message=first_line(eng.message[i]))

    # ---- arrival mode ------------------------------------------------------------------------
    def _run_arrival(self) -> Iterator[Attempt]:
        eng = self.eng
        order = np.argsort(np.asarray(eng.arrival), kind="stable")
        events = sorted(eng.wl.node_events, key=lambda e: e.time)
        ei = 0
        n = len(eng.pods)
        eng.t_start = eng.arrival[order[0]] if n else 0.0
        eng.rec.start_arrival_bins()
        eng.rec.sample_arrival(eng)
        sched = eng.sched
        for k, i in enumerate(order):
            i = int(i)
            t = eng.arrival[i]
            while ei < len(events) and events[ei].time <= t:
                self._node_event_at(events[ei])
                ei += 1
            eng.clock.advance(t)
            eng.arrive(i)
            eng.n_events += 1
            eng.rec.attempted += 1
            failed = 0
            if eng.state[i] == QUEUED:  # its one scheduling attempt (a decision point when it has a choice)
                ts = time.perf_counter()
                eng.mark_attempt()
                a = sched.propose()
                if a is not None:
                    if a.rows.size > 1:
                        eng.sched_wall += time.perf_counter() - ts
                        yield a
                        ts = time.perf_counter()
                    if a.result is None:
                        sched.commit(a)
                eng.sched_wall += time.perf_counter() - ts
                if eng.state[i] == QUEUED:
                    failed = self._drop_unscheduled(i)
            eng.attempt_failed.append(failed)
            eng.totals.accumulate(1.0)
            eng.rec.sample_arrival(eng)
            if eng.progress is not None and ((k + 1) & 63 == 0 or k + 1 == n):
                eng.progress(k + 1, n)
        for ev in events[ei:]:
            self._node_event_at(ev)
        eng.rec.sample_arrival(eng, final=True)

    def _node_event_at(self, ev: NodeEvent) -> None:
        eng = self.eng
        eng.clock.advance(ev.time)
        eng.node_event(ev)
        eng.n_events += 1

    def _drop_unscheduled(self, i: int) -> int:
        """A pod still queued after its one attempt (or gated) is never retried: 1 when it failed."""
        eng = self.eng
        gated = eng.gate(i)
        eng.sched.delete_pod(eng.pods[i])
        eng.release(i)
        eng.n_queued -= 1
        if gated:
            return 0
        eng.state[i] = FAILED
        eng.row("failed", i, message=first_line(eng.message[i]))
        return 1
