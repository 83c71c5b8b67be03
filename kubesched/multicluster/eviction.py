"""Karmada's graceful eviction tasks and application failover (v1.18): the members a binding was
evicted from, kept until the new placement is healthy or the grace period ends
(binding_types_helper.go, gracefuleviction/evictiontask.go, pkg/controllers/applicationfailover).
The functions carry upstream's names and are tested against upstream's own tables;
``kubesched.multicluster.failover`` drives them over time."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from kubesched.multicluster.api import (
    PURGE_GRACEFULLY,
    PURGE_GRACIOUSLY,
    PURGE_NEVER,
    ApplicationFailoverBehavior,
    TargetCluster,
)

if TYPE_CHECKING:
    pass

from kubesched.multicluster.taints import UNKNOWN

HEALTHY, UNHEALTHY = "Healthy", "Unhealthy"  # ResourceHealth; UNKNOWN is "Unknown" too
REASON_TAINT_UNTOLERATED, REASON_APPLICATION_FAILURE = "TaintUntolerated", "ApplicationFailure"
PRODUCER_TAINT_MANAGER = "TaintManager"
PRODUCER_APPLICATION_FAILOVER = "resource-binding-application-failover-controller"
GRACEFUL_EVICTION_TIMEOUT = 600.0  # --graceful-eviction-timeout


# ---- graceful eviction tasks (binding_types_helper.go, gracefuleviction/evictiontask.go) --------
@dataclass
class EvictionTask:
    """GracefulEvictionTask: a member a binding was evicted from, kept until assessed."""

    from_cluster: str
    purge_mode: str = ""
    replicas: int | None = None
    reason: str = ""
    message: str = ""
    producer: str = ""
    grace_period_seconds: int | None = None
    suppress_deletion: bool | None = None
    creation_timestamp: float | None = None


def graceful_evict_cluster(
    clusters: list[TargetCluster], tasks: list[EvictionTask], name: str, task: EvictionTask
) -> tuple[list[TargetCluster], list[EvictionTask]]:
    """ResourceBindingSpec.GracefulEvictCluster: ``name`` leaves ``clusters``; a task for it (with
    its replicas, when any) is appended unless one exists. ``task`` gives the options."""
    i = next((k for k, t in enumerate(clusters) if t.name == name), None)
    if i is None:
        return clusters, tasks
    evicted = clusters[i]
    clusters = clusters[:i] + clusters[i + 1 :]
    if any(t.from_cluster == name for t in tasks):
        return clusters, tasks
    new = replace(task, from_cluster=name, replicas=evicted.replicas if evicted.replicas > 0 else None)
    return clusters, [*tasks, new]


def all_scheduled_healthy(scheduled: Sequence[TargetCluster], observed: Sequence[tuple[str, str]]) -> bool:
    """allScheduledResourceInHealthyState: every target cluster reports Healthy."""
    health = dict(observed)
    return all(health.get(t.name) == HEALTHY for t in scheduled)


def assess_single_task(
    task: EvictionTask, now: float, timeout: float, scheduled: Sequence[TargetCluster],
    observed: Sequence[tuple[str, str]], has_scheduled: bool,
) -> EvictionTask | None:
    """assessSingleTask: the task, or None when it ends (suppressDeletion false, timed out, or the
    new placement scheduled and healthy). suppressDeletion true keeps it for good."""
    if task.suppress_deletion is not None:
        return task if task.suppress_deletion else None
    assert task.creation_timestamp is not None
    if now > task.creation_timestamp + timeout:
        return None
    if has_scheduled and all_scheduled_healthy(scheduled, observed):
        return None
    return task


def assess_eviction_tasks(
    tasks: Sequence[EvictionTask], now: float, timeout: float, scheduled: Sequence[TargetCluster],
    observed: Sequence[tuple[str, str]], has_scheduled: bool,
) -> tuple[list[EvictionTask], list[str]]:
    """assessEvictionTasks: a new task is stamped ``now`` and kept; the others are assessed with
    their own grace period or ``timeout``. Returns the kept tasks and the clusters whose ended."""
    kept: list[EvictionTask] = []
    ended: list[str] = []
    for task in tasks:
        if task.creation_timestamp is None:
            kept.append(replace(task, creation_timestamp=now))
            continue
        t = float(task.grace_period_seconds) if task.grace_period_seconds is not None else timeout
        k = assess_single_task(task, now, t, scheduled, observed, has_scheduled)
        if k is not None:
            kept.append(k)
        else:
            ended.append(task.from_cluster)
    return kept, ended


def next_retry(tasks: Sequence[EvictionTask], timeout: float, now: float) -> float:
    """nextRetry: seconds until the first task (not suppressed) times out; 0 when none will."""
    waits = [
        (t.creation_timestamp or 0.0) + (t.grace_period_seconds if t.grace_period_seconds is not None else timeout) - now
        for t in tasks
        if t.suppress_deletion is None
    ]
    return min(waits) if waits else 0


# ---- application failover (pkg/controllers/applicationfailover) --------------------------------
def distinguish_unhealthy_clusters(
    observed: Sequence[tuple[str, str]], tasks: Sequence[EvictionTask]
) -> tuple[list[str], list[str]]:
    """distinguishUnhealthyClustersWithOthers: the clusters Unhealthy and not being evicted, and
    the ones Healthy or Unknown."""
    evicting = {t.from_cluster for t in tasks}
    unhealthy = [c for c, h in observed if h == UNHEALTHY and c not in evicting]
    others = [c for c, h in observed if h in (HEALTHY, UNKNOWN)]
    return unhealthy, others


class UnhealthySince:
    """workloadUnhealthyMap: since when each binding's application is unhealthy on each cluster."""

    def __init__(self) -> None:
        self.since: dict[str, dict[str, float]] = {}

    def detect_failure(self, clusters: Sequence[str], toleration_seconds: int, key: str, now: float) -> tuple[int, list[str]]:
        """detectFailure: the clusters unhealthy longer than ``toleration_seconds`` (a cluster
        seen for the first time starts its clock), and the seconds until the next may be."""
        evict: list[str] = []
        wait = math.inf
        seen = self.since.setdefault(key, {})
        for c in clusters:
            if c not in seen:
                seen[c] = now
                wait = min(wait, toleration_seconds)
                continue
            if now > seen[c] + toleration_seconds:
                evict.append(c)
            else:
                wait = min(wait, toleration_seconds - int(now - seen[c]))
        return (0 if wait == math.inf else int(wait)), evict

    def delete_irrelevant_clusters(self, key: str, all_clusters: set[str], healthy: Sequence[str]) -> None:
        seen = self.since.get(key)
        if seen is None:
            return
        for c in list(seen):
            if c not in all_clusters or c in healthy:
                del seen[c]


def application_task(behavior: ApplicationFailoverBehavior, producer: str = PRODUCER_APPLICATION_FAILOVER) -> EvictionTask:
    """buildTaskOptions (without state preservation): Gracefully carries the grace period, Never
    suppresses deletion."""
    task = EvictionTask("", behavior.purge_mode, reason=REASON_APPLICATION_FAILURE, producer=producer)
    if behavior.purge_mode in (PURGE_GRACEFULLY, PURGE_GRACIOUSLY):
        task.grace_period_seconds = behavior.grace_period_seconds
    elif behavior.purge_mode == PURGE_NEVER:
        task.suppress_deletion = True
    return task
