"""`kubesched schedule`'s run: place every pending pod of a session and account for every one.

Each pod with no node ends up in exactly one list: ``placements`` (the pods taken from the queue:
scheduled, unschedulable, or skipped there because they are being deleted, with the pods
preempted for them and the node they were nominated to) or ``skipped`` (pods never taken from
the queue, with why). Both are the JSON contract documented in docs/cli.md.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.objects import Pod
from kubesched.app import Session
from kubesched.scheduler import ScheduleResult

#: ``skipped[].reason`` values
GATED = "SchedulingGated"  # a PreEnqueue plugin holds it (spec.schedulingGates: SchedulingGates)
OTHER_SCHEDULER = "OtherScheduler"  # spec.schedulerName names no profile
TERMINAL = "Terminal"  # status.phase Succeeded or Failed


@dataclass
class BatchResult:
    placements: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    nodes: int = 0
    profiles: list[str] = field(default_factory=list)
    # set by ``in_namespace``: the run is the whole cluster's, the entries shown one namespace's
    namespace: str | None = None
    numbers: list[int] = field(default_factory=list)  # each placement's place (1-based) in the whole run
    pending_all: int = 0  # pods with no node in every namespace
    preempted_by_others: list[dict[str, str]] = field(default_factory=list)  # {pod, node, by}

    def to_json(self) -> dict[str, Any]:
        return {"placements": self.placements, "skipped": self.skipped}

    def in_namespace(self, namespace: str) -> BatchResult:
        """The entries of the pods in ``namespace`` (``schedule -n``), and that namespace's pods
        preempted for pods of other namespaces (shown in no entry of its own)."""

        def mine(key: str) -> bool:
            return key.partition("/")[0] == namespace

        kept = [(i, p) for i, p in enumerate(self.placements, 1) if mine(p["pod"])]
        return BatchResult(
            placements=[p for _, p in kept],
            skipped=[e for e in self.skipped if mine(e["pod"])],
            nodes=self.nodes,
            profiles=self.profiles,
            namespace=namespace,
            numbers=[i for i, _ in kept],
            pending_all=len(self.placements) + len(self.skipped),
            preempted_by_others=[
                {**v, "by": p["pod"]} for p in self.placements if not mine(p["pod"]) for v in p["victims"] if mine(v["pod"])
            ],
        )

    def entry(self, key: str) -> dict[str, Any] | None:
        """The pod's placement or skipped entry, by ``namespace/name``."""
        return next((e for e in (*self.placements, *self.skipped) if e["pod"] == key), None)


def _skip(pod: Pod, reason: str, message: str, plugin: str | None = None) -> dict[str, Any]:
    return {"pod": pod.key, "reason": reason, "plugin": plugin, "message": message}


def schedule_all(s: Session) -> BatchResult:
    """Schedule every pending pod of ``s`` (its scheduler runs on the session's virtual clock)."""
    sched = s.scheduler
    final: dict[str, tuple[int, ScheduleResult]] = {}
    victims: dict[str, list[dict[str, str]]] = {}
    nominated: dict[str, str] = {}
    deleted_seen = len(s.cluster.deleted)

    def record(res: ScheduleResult) -> None:
        # The run is synchronous: the pods deleted since the last attempt ended were deleted by
        # this attempt's PostFilter (preemption), for this pod.
        nonlocal deleted_seen
        uid = res.pod.uid
        for v in s.cluster.deleted[deleted_seen:]:
            victims.setdefault(uid, []).append({"pod": v.key, "node": v.node_name})
        deleted_seen = len(s.cluster.deleted)
        if res.nominated_node:
            nominated[uid] = res.nominated_node
        final[uid] = (next(seq), res)  # the order in which each pod's last outcome was decided

    seq = itertools.count()

    sched.hooks.on_scheduled.append(record)
    sched.hooks.on_failed.append(record)
    sched.hooks.on_skipped.append(record)  # being deleted: kube-scheduler's skipPodSchedule
    out = BatchResult(nodes=sched.snapshot.n, profiles=list(sched.frameworks))
    queued: list[Pod] = []
    for pod in s.objects.pods:
        if pod.node_name:
            continue
        if pod.terminal:
            out.skipped.append(_skip(pod, TERMINAL, f"status.phase is {pod.phase}: the pod has finished"))
        elif not sched.responsible_for(pod):
            out.skipped.append(
                _skip(
                    pod,
                    OTHER_SCHEDULER,
                    f'spec.schedulerName "{pod.scheduler_name}" matches no profile ({", ".join(sched.frameworks)})',
                )
            )
        else:
            queued.append(pod)
    for pod in queued:
        sched.add_pending(pod)
    sched.run_until_idle(advance=s.clock.advance)
    for _, res in sorted(final.values(), key=lambda x: x[0]):
        uid = res.pod.uid
        out.placements.append(
            {
                "pod": res.pod.key,
                "node": res.node,
                "profile": res.profile,
                "message": None if res.node else res.message,
                "nominated_node": nominated.get(uid),
                "victims": victims.get(uid, []),
            }
        )
    for pod in queued:
        if pod.uid in final:
            continue
        qpi = sched.queue.gated.get(pod.uid)
        if qpi is not None and qpi.gated is not None:
            out.skipped.append(_skip(pod, GATED, qpi.gated.message, qpi.gated.plugin or None))
    order = {p.key: i for i, p in enumerate(s.objects.pods)}
    out.skipped.sort(key=lambda e: order.get(e["pod"], len(order)))  # as they appear in the files
    return out
