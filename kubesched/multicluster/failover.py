"""Karmada's failover (v1.18): cluster taints from conditions, NoExecute eviction, application
failover and graceful eviction, on one clock.

Four Karmada controllers, as they behave with their v1.18 defaults:

- the **cluster controller** (``taintClusterByCondition``) taints a member by its ``Ready``
  condition: ``False`` gives ``cluster.karmada.io/not-ready:NoSchedule``, ``Unknown`` (unreachable)
  ``cluster.karmada.io/unreachable:NoSchedule``, ``True`` removes both. Always on. Since v1.14 it
  adds no NoExecute taint by itself: **ClusterTaintPolicy** objects do (:class:`ClusterTaintPolicy`,
  :data:`~kubesched.multicluster.taints.NOT_READY_NO_EXECUTE` is the usual one);
- the **taint manager** evicts a binding from a member whose NoExecute taints its
  ``placement.clusterTolerations`` do not tolerate, at once, or when the shortest
  ``tolerationSeconds`` of the tolerations it uses has run out since the taint's ``timeAdded``. It
  runs only with the ``Failover`` feature gate (default off since v1.12) and acts only with
  ``--enable-no-execute-taint-eviction`` (default off); :class:`FailoverOptions` holds both;
- the **application failover controller** evicts a binding from a member where its application has
  been ``Unhealthy`` for ``spec.failover.application.decisionConditions.tolerationSeconds``
  (the binding needs ``propagateDeps: true``, as upstream's filter asks);
- the **graceful eviction controller** keeps an evicted member in the binding's
  ``gracefulEvictionTasks`` (the scheduler's ClusterEviction filter keeps it out meanwhile) until
  the new placement is scheduled and healthy everywhere, or the task's grace period
  (``gracePeriodSeconds``, else ``--graceful-eviction-timeout``, 10 minutes) ends. Then the old
  replicas are purged. Purge modes: ``Directly`` (``Immediately``) purges at eviction,
  ``Gracefully`` (``Graciously``) when the task ends, ``Never`` (application failover only) never:
  the task stays until someone deletes it.

An eviction removes the member from ``spec.clusters``; the scheduler then schedules the binding as
Karmada's ``doScheduleBinding`` would: a Divided binding whose assigned replicas no longer sum to
``spec.replicas`` (scale schedule), any Duplicated or non-workload binding. When a member comes
back (``Ready`` True) its taints go, and a Duplicated binding returns to it at its next scheduling
once its eviction task has ended; a Divided binding keeps its replicas where they went (Karmada
does not move replicas back by itself).

The pure functions carry upstream's names (``set_current_cluster_taints`` for
``SetCurrentClusterTaints``, ...) and are tested against upstream's own tables: the taints in
``kubesched.multicluster.taints``, the eviction tasks and application failover in
``kubesched.multicluster.eviction``, the taint manager and the scheduler's trigger here.
:class:`FailoverController` drives them over time::

    ctl = FailoverController(clusters, schedule, FailoverOptions(failover=True, no_execute_eviction=True,
                             taint_policies=(NOT_READY_NO_EXECUTE,)))
    ctl.track(binding, decision)               # after its first decision
    ctl.set_condition("edge-1", "Unknown", now=t)   # the site goes offline: tainted
    events = ctl.step(now=t)                   # evictions, new decisions, purges (FailoverEvent)
    t_next = ctl.next_time()                   # when step has something to do again (or None)

Call :meth:`FailoverController.step` after each change (``set_condition``, a health change) and at
:meth:`FailoverController.next_time`; ``untrack`` a binding whose workload is gone.

Times are seconds on the caller's clock. ``schedule`` is the scheduler (``Federation.decide``, or
a wrapper that also creates the new replicas); the controller sets the given Cluster objects'
``taints``, which the scheduler reads. ``health(binding, cluster)`` reports the application's
health there (``Healthy``, ``Unhealthy``, ``Unknown``), by default Healthy on a Ready member and
Unknown elsewhere. A site going offline is ``set_condition(site, "Unknown", t)``, its return
``set_condition(site, "True", t)``; an ``evict`` event with purge mode Directly, or a ``purge``
event, is when the old replicas are to be deleted, a ``schedule`` event where the new ones go.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from kubesched.api.taints import Taint, Toleration
from kubesched.multicluster.api import (
    DIVIDED,
    DUPLICATED,
    PURGE_DIRECTLY,
    PURGE_GRACEFULLY,
    PURGE_IMMEDIATELY,
    Binding,
    Cluster,
    ClusterTaintPolicy,
    FailoverBehavior,
    TargetCluster,
)
from kubesched.multicluster.eviction import (
    GRACEFUL_EVICTION_TIMEOUT,
    HEALTHY,
    PRODUCER_TAINT_MANAGER,
    REASON_TAINT_UNTOLERATED,
    EvictionTask,
    UnhealthySince,
    application_task,
    assess_eviction_tasks,
    distinguish_unhealthy_clusters,
    graceful_evict_cluster,
)
from kubesched.multicluster.taints import (
    READY,
    TRUE,
    UNKNOWN,
    TimedTaint,
    apply_taint_policies,
    matching_tolerations,
    min_toleration_time,
    no_execute_taints,
    taint_cluster_by_condition,
)

if TYPE_CHECKING:
    from kubesched.multicluster.scheduler import BindingDecision


# ---- the taint manager (pkg/controllers/cluster/taint_manager.go) ------------------------------
def cluster_purge_mode(failover: FailoverBehavior | None, flag: str) -> str:
    """getPurgeMode: the policy's ``failover.cluster.purgeMode`` (Gracefully when empty), else
    ``--no-execute-taint-eviction-purge-mode`` (Directly, anything else Gracefully)."""
    if failover is not None and failover.cluster is not None:
        return failover.cluster.purge_mode or PURGE_GRACEFULLY
    return PURGE_DIRECTLY if flag == PURGE_DIRECTLY else PURGE_GRACEFULLY


def need_eviction(
    taints: Sequence[TimedTaint] | None, tolerations: Sequence[Toleration], now: float, *, enabled: bool = True
) -> tuple[bool, float]:
    """needEvictionWithCurrentTime on a cluster's taints (None: the cluster is gone): whether to
    evict now, and else the seconds until a toleration runs out (-1: never)."""
    if taints is None:
        return False, -1
    ne = no_execute_taints(taints)
    if not enabled or not ne:
        return False, -1
    ok, used = matching_tolerations(ne, tolerations)
    if not ok:
        return True, 0
    wait = min_toleration_time(ne, used, now)
    if wait == 0:
        return True, 0
    return False, wait


# ---- the scheduler's trigger (pkg/scheduler/scheduler.go doScheduleBinding) --------------------
def replicas_changed(binding: Binding) -> bool:
    """IsBindingReplicasChanged: a Duplicated cluster without all replicas, or Divided replicas
    that no longer sum to spec.replicas (no strategy: never)."""
    rs = binding.placement.replica_scheduling
    if rs is None:
        return False
    if rs.replica_scheduling_type == DUPLICATED:
        return any(t.replicas != binding.replicas for t in binding.clusters)
    if rs.replica_scheduling_type == DIVIDED:
        return sum(t.replicas for t in binding.clusters) != binding.replicas
    return False


def schedule_needed(binding: Binding) -> bool:
    """Whether doScheduleBinding schedules a binding that was not changed by its policy: replicas
    changed, or a Duplicated (or non-workload) binding, which is scheduled every time."""
    return replicas_changed(binding) or not binding.is_workload or binding.placement.replica_scheduling_type() == DUPLICATED


# ---- the controllers on one clock --------------------------------------------------------------
@dataclass(frozen=True)
class FailoverOptions:
    """karmada-controller-manager's flags for failover, with their defaults."""

    failover: bool = False  # --feature-gates=Failover=true: the taint manager runs
    no_execute_eviction: bool = False  # --enable-no-execute-taint-eviction
    purge_mode: str = PURGE_GRACEFULLY  # --no-execute-taint-eviction-purge-mode
    graceful_eviction_timeout: float = GRACEFUL_EVICTION_TIMEOUT  # --graceful-eviction-timeout
    taint_policies: tuple[ClusterTaintPolicy, ...] = ()  # the ClusterTaintPolicy objects


@dataclass(frozen=True)
class FailoverEvent:
    """What happened at ``time``: ``taint`` (``cluster``'s taints changed to ``taints``),
    ``evict`` (``binding`` left ``cluster``; ``detail`` is the reason and purge mode), ``purge``
    (the replicas ``binding`` left on ``cluster`` are deleted), ``schedule`` (a new decision:
    ``clusters`` is spec.clusters) or ``unschedulable`` (``detail`` is the scheduler's message)."""

    time: float
    kind: str
    binding: str = ""
    cluster: str = ""
    clusters: tuple[TargetCluster, ...] = ()
    taints: tuple[Taint, ...] = ()
    detail: str = ""


@dataclass
class Tracked:
    """One binding as the controllers see it: spec (``binding``, whose ``clusters`` are
    spec.clusters), the eviction tasks, and whether the scheduler saw its latest spec."""

    binding: Binding
    tasks: list[EvictionTask] = field(default_factory=list)
    scheduled: bool = True
    retry_at: float = math.inf  # when its taint or application toleration runs out


class FailoverController:
    """The cluster controller, ClusterTaintPolicy controller, taint manager, application failover
    and graceful eviction controllers and the scheduler's trigger, stepped by the caller's clock.
    See the module docstring for an example."""

    def __init__(
        self,
        clusters: Iterable[Cluster],
        schedule: Callable[[Binding], BindingDecision],
        options: FailoverOptions | None = None,
        health: Callable[[Binding, str], str] | None = None,
        *,
        conditions: Mapping[str, Mapping[str, str]] | None = None,
        taints_added: float | None = None,
    ) -> None:
        """``conditions``: the members' conditions now (none given: Ready); ``taints_added``: the
        ``timeAdded`` of the taints the clusters carry now (None: not recorded)."""
        self.clusters: dict[str, Cluster] = {c.name: c for c in clusters}
        self.schedule = schedule
        self.options = options or FailoverOptions()
        self.health = health or self.default_health
        self.conditions: dict[str, dict[str, str]] = {n: dict((conditions or {}).get(n, {})) for n in self.clusters}
        self.taints = {n: [TimedTaint(t, taints_added) for t in c.taints] for n, c in self.clusters.items()}
        self.bindings: dict[str, Tracked] = {}
        self.unhealthy = UnhealthySince()
        self._clusters_changed = False

    # ---- inputs ----------------------------------------------------------------------------------
    def track(self, binding: Binding, decision: BindingDecision | None = None) -> None:
        """Follow ``binding``, already scheduled: its ``clusters`` are where its replicas are, or,
        given its ``decision``, the decision's clusters and affinity term."""
        if decision is not None:
            binding = replace(binding, clusters=tuple(decision.clusters), observed_affinity_name=decision.affinity_name)
        self.bindings[binding.key] = Tracked(binding)

    def untrack(self, key: str) -> None:
        """Forget a binding (its workload is gone)."""
        self.bindings.pop(key, None)
        self.unhealthy.since.pop(key, None)

    def binding(self, key: str) -> Binding:
        """The binding now: spec.clusters, and the members being evicted as ``eviction_clusters``."""
        return self.bindings[key].binding

    def tasks(self, key: str) -> list[EvictionTask]:
        return list(self.bindings[key].tasks)

    def set_condition(self, cluster: str, status: str, now: float, condition_type: str = READY) -> list[FailoverEvent]:
        """A member's condition changed (``True``, ``False``, ``Unknown``): the cluster controller
        and the ClusterTaintPolicy controller retaint it at once."""
        self.conditions[cluster][condition_type] = status
        before = self.taints[cluster]
        after = before
        if condition_type == READY:
            after = taint_cluster_by_condition(status, after, now)
        after = apply_taint_policies(self.options.taint_policies, self.clusters[cluster], self.conditions[cluster], after, now)
        if [t.taint for t in after] == [t.taint for t in before]:
            return []
        self.taints[cluster] = after
        self.clusters[cluster].taints = tuple(t.taint for t in after)
        self._clusters_changed = True
        return [FailoverEvent(now, "taint", cluster=cluster, taints=self.clusters[cluster].taints)]

    # ---- one pass --------------------------------------------------------------------------------
    def step(self, now: float) -> list[FailoverEvent]:
        """Run every controller once at ``now``; returns what they did, in order."""
        events: list[FailoverEvent] = []
        every = self._clusters_changed  # a cluster update: the scheduler looks at every binding
        self._clusters_changed = False
        changed: list[Tracked] = []
        for tr in self.bindings.values():
            tr.retry_at = math.inf
            # both controllers run (no short circuit): each keeps its own clock for the binding
            if self._taint_manager(tr, now, events) | self._application_failover(tr, now, events) or every:
                changed.append(tr)
        for tr in changed:
            self._maybe_schedule(tr, now, events)
        for tr in self.bindings.values():
            if tr.tasks and self._graceful_eviction(tr, now, events):
                self._maybe_schedule(tr, now, events)
        return events

    def next_time(self) -> float | None:
        """When :meth:`step` next has something to do by the clock alone (a toleration or a grace
        period running out), or None."""
        times = [tr.retry_at for tr in self.bindings.values()]
        for tr in self.bindings.values():
            for t in tr.tasks:
                if t.suppress_deletion is None and t.creation_timestamp is not None:
                    grace = t.grace_period_seconds if t.grace_period_seconds is not None else self.options.graceful_eviction_timeout
                    times.append(math.nextafter(t.creation_timestamp + grace, math.inf))  # assessSingleTask's test is strict
        best = min(times, default=math.inf)
        return None if best == math.inf else best

    # ---- the controllers -------------------------------------------------------------------------
    def _evict(self, tr: Tracked, cluster: str, task: EvictionTask, now: float, events: list[FailoverEvent]) -> None:
        b = tr.binding
        clusters, tasks = graceful_evict_cluster(list(b.clusters), tr.tasks, cluster, task)
        tr.tasks = tasks
        tr.binding = replace(b, clusters=tuple(clusters), eviction_clusters=frozenset(t.from_cluster for t in tasks))
        tr.scheduled = False
        events.append(FailoverEvent(now, "evict", b.key, cluster, detail=f"{task.reason}, purgeMode {task.purge_mode}"))
        if task.purge_mode in (PURGE_DIRECTLY, PURGE_IMMEDIATELY):
            events.append(FailoverEvent(now, "purge", b.key, cluster))

    def _taint_manager(self, tr: Tracked, now: float, events: list[FailoverEvent]) -> bool:
        if not self.options.failover:
            return False
        evicted = False
        for t in list(tr.binding.clusters):
            taints = self.taints.get(t.name)
            evict, wait = need_eviction(taints, tr.binding.placement.cluster_tolerations, now, enabled=self.options.no_execute_eviction)
            if evict:
                mode = cluster_purge_mode(tr.binding.failover, self.options.purge_mode)
                self._evict(tr, t.name, EvictionTask("", mode, reason=REASON_TAINT_UNTOLERATED, producer=PRODUCER_TAINT_MANAGER), now, events)
                evicted = True
            elif wait > 0:
                tr.retry_at = min(tr.retry_at, now + wait)
        return evicted

    def _observed(self, tr: Tracked) -> list[tuple[str, str]]:
        """status.aggregatedStatus: the health on every cluster that holds the binding's work: its
        targets and the members being evicted, but for a Directly task's (purged already)."""
        names = [t.name for t in tr.binding.clusters]
        names += [t.from_cluster for t in tr.tasks if t.purge_mode not in (PURGE_DIRECTLY, PURGE_IMMEDIATELY)]
        return [(n, self.health(tr.binding, n)) for n in dict.fromkeys(names)]

    def _application_failover(self, tr: Tracked, now: float, events: list[FailoverEvent]) -> bool:
        b = tr.binding
        app = b.failover.application if b.failover else None
        if app is None or not b.propagate_deps:
            self.unhealthy.since.pop(b.key, None)
            return False
        observed = self._observed(tr)
        unhealthy, others = distinguish_unhealthy_clusters(observed, tr.tasks)
        _, evict = self.unhealthy.detect_failure(unhealthy, app.toleration_seconds, b.key, now)
        all_clusters = {t.name for t in b.clusters}
        for c in evict:
            self._evict(tr, c, application_task(app), now, events)
            all_clusters.discard(c)
        self.unhealthy.delete_irrelevant_clusters(b.key, all_clusters, others)
        for c in unhealthy:
            since = self.unhealthy.since.get(b.key, {}).get(c)
            if since is not None and c not in evict:  # detectFailure's test is strict: just past the toleration
                tr.retry_at = min(tr.retry_at, math.nextafter(since + app.toleration_seconds, math.inf))
        return bool(evict)

    def _maybe_schedule(self, tr: Tracked, now: float, events: list[FailoverEvent]) -> None:
        b = tr.binding
        if not schedule_needed(b):
            tr.scheduled = True
            return
        d = self.schedule(b)
        if d.scheduled:  # spec.clusters and status.schedulerObservedAffinityName
            tr.binding = replace(b, clusters=tuple(d.clusters), observed_affinity_name=d.affinity_name)
            tr.scheduled = True
            events.append(FailoverEvent(now, "schedule", b.key, clusters=tuple(d.clusters)))
        else:
            tr.scheduled = False
            events.append(FailoverEvent(now, "unschedulable", b.key, detail=d.message))

    def _graceful_eviction(self, tr: Tracked, now: float, events: list[FailoverEvent]) -> bool:
        """The graceful eviction controller; whether the binding's tasks changed (a spec change)."""
        def assess(tasks: list[EvictionTask]) -> tuple[list[EvictionTask], list[str]]:
            return assess_eviction_tasks(tasks, now, self.options.graceful_eviction_timeout, tr.binding.clusters,
                                         self._observed(tr), tr.scheduled)

        kept, ended = assess(tr.tasks)
        if any(t.creation_timestamp is None for t in tr.tasks):  # stamping is a binding update: reconciled again at once
            kept, more = assess(kept)
            ended += more
        directly = {t.from_cluster for t in tr.tasks if t.purge_mode in (PURGE_DIRECTLY, PURGE_IMMEDIATELY)}
        tr.tasks = kept
        for c in ended:
            if c not in directly:  # a Directly task's replicas went at eviction
                events.append(FailoverEvent(now, "purge", tr.binding.key, c))
        if not ended:
            return False
        tr.binding = replace(tr.binding, eviction_clusters=frozenset(t.from_cluster for t in kept))
        return True

    # ---- defaults --------------------------------------------------------------------------------
    def default_health(self, binding: Binding, cluster: str) -> str:
        """Healthy on a Ready member; Unknown where the member's status is not collected."""
        return HEALTHY if self.conditions.get(cluster, {}).get(READY, TRUE) == TRUE else UNKNOWN
