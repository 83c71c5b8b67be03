"""The live binding cycle: assume, then bind on a worker thread (kube-scheduler's bind goroutine).

``LiveScheduler`` runs the scheduling cycle exactly as ``Scheduler`` does. After Reserve and
Permit (at once, or when a pod parked at Permit is allowed) it leaves the pod assumed in the
snapshot and hands PreBind/Bind to ``submit``; the outcome comes back to the scheduling
thread (``complete``), which alone touches the snapshot and the queue:

- bound: PostBind, the pod stays assumed until the watch shows it bound (``confirm``);
- a failure (any status: 404, 409, 500, a node gone): Unreserve and the assumed pod is
  forgotten; then, as kube-scheduler's handleSchedulingFailure asks its pod informer, the pod
  goes back to the queue with backoff (a FailedScheduling event says why) only if the informer
  still has it unbound: one deleted (or replaced by a pod of another uid) or bound meanwhile is
  dropped without error and not retried. So a 404 from a proxy or a stale route does not lose
  a pod that still exists, and a 409 for a pod bound elsewhere does not retry it.

A pod is in ``in_flight`` from the start of its binding until its outcome is processed, and
assumed (in the snapshot) from its scheduling cycle until then or until the watch shows it
bound; the cache ignores the API's (stale) view of it as pending meanwhile, so it is never
scheduled or bound twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.alias import Alias
from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.runtime import Framework
from kubesched.framework.status import Code, Status
from kubesched.queue.scheduling_queue import QueuedPodInfo
from kubesched.scheduler import Scheduler, ScheduleResult


@dataclass(eq=False)
class InFlight:
    """One pod between the start of its binding and the binding's outcome."""

    parked: Any  # the scheduler's binding-cycle context: fw, state, qpi, res, t0
    node: str
    assumed: Pod | None  # the copy on ``node`` held by the snapshot
    node_uid: str = ""  # the uid of the node the pod was assumed on (a node recreated by that name differs)
    confirmed: bool = False  # the watch showed the pod bound
    deleted: bool = False  # the watch showed the pod deleted

    fw = Alias[Framework]("parked.fw")
    state = Alias[CycleState]("parked.state")
    qpi = Alias[QueuedPodInfo]("parked.qpi")
    res = Alias[ScheduleResult]("parked.res")
    pod = Alias[Pod]("parked.qpi.pod")


class LiveScheduler(Scheduler):
    """A Scheduler whose binding cycle (PreBind, Bind) runs on worker threads.

    The scheduling cycle, Reserve and Permit (including pods parked at Permit) are the base
    class's, and so are ``_bind``'s checks (a pod deleted while it waited is forgotten, never
    bound); ``_bind_cycle`` is where the base class runs PreBind/Bind/PostBind synchronously,
    and where this class hands the binding to ``submit`` instead (when one is set).
    """

    def __init__(self, *args, submit: Callable[[InFlight], None] | None = None, **kwargs) -> None:  # noqa: ANN002,ANN003
        super().__init__(*args, **kwargs)
        self.submit: Callable[[InFlight], None] | None = submit
        self.in_flight: dict[str, InFlight] = {}  # pod uid -> its binding in progress

    def _bind_cycle(self, p: Any) -> None:
        if self.submit is None:
            return super()._bind_cycle(p)
        pod, node = p.qpi.pod, p.res.node
        assert node is not None
        snap = self.snapshot
        row = snap.row_of.get(node)
        b = InFlight(p, node, snap.pod_by_uid.get(pod.uid), snap.nodes[row].uid if row is not None else "")
        self.in_flight[pod.uid] = b
        self.submit(b)
        return None

    def _drop_assumed(self, b: InFlight) -> None:
        """Take our assumed copy out of the snapshot (not a copy the watch put there since)."""
        uid = b.pod.uid
        cur = self.snapshot.pod_by_uid.get(uid) or self.snapshot.orphans.get(uid)
        if cur is not None and cur is b.assumed:
            self.snapshot.remove_pod(uid)

    # ---- outcomes (scheduling thread) -------------------------------------------------
    def complete(self, b: InFlight, st: Status, gone: bool) -> str:
        """Apply a binding's outcome: ``bound``, ``dropped`` (deleted or bound meanwhile) or ``requeued``.

        ``gone``: after a failure, the pod informer no longer has the pod unbound (it was deleted,
        replaced, or bound): kube-scheduler does not requeue such a pod.
        """
        uid = b.pod.uid
        if self.in_flight.get(uid) is b:
            del self.in_flight[uid]
        pod, node, res = b.pod, b.node, b.res
        # Skip (no Bind plugin took it) fails the binding as any status but Success does, as offline
        if st.ok and not b.deleted:
            self._bound(b.parked, node)
            return "bound"
        b.fw.run_unreserve(b.state, pod, node)
        if b.deleted:
            return "dropped"
        if not b.confirmed:
            self._drop_assumed(b)
        if gone or b.confirmed:
            return "dropped"
        # Forget and retry with backoff (the base class's failed binding, minus the Unreserve done above).
        qpi = b.qpi
        qpi.failed_generation = self.snapshot.generation
        res.node, res.code, res.message = None, Code.Error, st.message
        res.duration = time.perf_counter() - b.parked.t0
        self.queue.restore(qpi)  # back in the queue's books (as Scheduler does on a failed bind)
        self._failed(qpi, res)
        self.queue.move_for_event("AssignedPodDelete")
        return "requeued"

    def confirm(self, uid: str) -> None:
        """The watch shows the pod bound: an in-flight binding must not be undone or retried."""
        b = self.in_flight.get(uid)
        if b is not None:
            b.confirmed = True

    def forget_deleted(self, uid: str) -> None:
        """The pod was deleted while its binding was in flight."""
        b = self.in_flight.get(uid)
        if b is not None:
            b.deleted = True
