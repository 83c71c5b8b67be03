"""``kubesched multicluster schedule --events FILE``: failover over time on the command line.

The file (``kind: FailoverTimeline``) sets karmada-controller-manager's failover flags and lists
timed changes: a member's condition (``status`` True, False or Unknown; ``condition`` Ready by
default) or a workload's application health on a member (``health`` Healthy, Unhealthy,
Unknown)::

    kind: FailoverTimeline
    failover: true                         # --feature-gates=Failover=true (default false)
    enableNoExecuteTaintEviction: true     # default false
    noExecuteTaintEvictionPurgeMode: Gracefully
    gracefulEvictionTimeoutSeconds: 600
    until: 900                             # run the clock to here (default: the last event)
    events:
    - {at: 0, cluster: edge-tokyo, status: Unknown}
    - {at: 120, workload: Deployment/default/web, cluster: edge-seoul, health: Unhealthy}
    - {at: 300, cluster: edge-tokyo, status: "True"}

After the decisions at time 0, a :class:`~kubesched.multicluster.failover.FailoverController`
follows every scheduled workload; the clock goes from event to event and to every moment a
toleration or grace period runs out. Health not given is Unknown on a member not Ready and, on a
Ready one, Unhealthy while a replica created there is not bound (a member with a dump), else
Healthy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubesched.api.fields import as_bool, as_list, as_map, as_str, one_of
from kubesched.errors import InputError, join_path
from kubesched.load import read_documents
from kubesched.multicluster.api import CLUSTER_PURGE_MODES, PURGE_GRACEFULLY, Binding, ClusterTaintPolicy
from kubesched.multicluster.eviction import HEALTHY, UNHEALTHY
from kubesched.multicluster.failover import FailoverController, FailoverEvent, FailoverOptions
from kubesched.multicluster.taints import FALSE, READY, TRUE, UNKNOWN

if TYPE_CHECKING:
    from kubesched.multicluster.federation import Federation
    from kubesched.multicluster.scheduler import BindingDecision

_KEYS = ("apiVersion", "kind", "failover", "enableNoExecuteTaintEviction", "noExecuteTaintEvictionPurgeMode",
         "gracefulEvictionTimeoutSeconds", "until", "events")


@dataclass(frozen=True)
class TimedChange:
    at: float
    cluster: str
    path: str  # where the file gives it
    status: str = ""  # a condition change ...
    condition: str = READY
    workload: str = ""  # ... or an application's health on the cluster (KIND/NAMESPACE/NAME)
    health: str = ""


@dataclass
class Timeline:
    failover: bool = False
    no_execute_eviction: bool = False
    purge_mode: str = PURGE_GRACEFULLY
    graceful_eviction_timeout: float = 600.0
    until: float | None = None
    changes: list[TimedChange] = field(default_factory=list)

    def options(self, policies: tuple[ClusterTaintPolicy, ...]) -> FailoverOptions:
        return FailoverOptions(self.failover, self.no_execute_eviction, self.purge_mode, self.graceful_eviction_timeout, policies)


def _seconds(value: Any, path: str, default: float | None) -> float | None:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise InputError("must be a number of seconds, 0 or more", path=path)
    return float(value)


def load_timeline(path: str, clusters: set[str]) -> Timeline:
    """The ``--events`` file; ``clusters``: the member names the events may name."""
    docs = read_documents(path)
    if len(docs) != 1:
        raise InputError("expected one FailoverTimeline document", source=path)
    dpath, doc = docs[0]
    try:
        return parse_timeline(doc, dpath, clusters)
    except InputError as e:
        raise e.within(source=path) from None


def parse_timeline(doc: Any, path: str, clusters: set[str]) -> Timeline:
    m = as_map(doc, path or "document")
    for k in m:
        if k not in _KEYS:
            raise InputError(f'unknown field "{k}"', path=join_path(path, k))
    if m.get("kind") != "FailoverTimeline":
        raise InputError('kind must be "FailoverTimeline"', path=join_path(path, "kind"))
    tl = Timeline(
        as_bool(m.get("failover"), join_path(path, "failover")),
        as_bool(m.get("enableNoExecuteTaintEviction"), join_path(path, "enableNoExecuteTaintEviction")),
        one_of(m.get("noExecuteTaintEvictionPurgeMode"), join_path(path, "noExecuteTaintEvictionPurgeMode"), CLUSTER_PURGE_MODES,
               PURGE_GRACEFULLY),
        _seconds(m.get("gracefulEvictionTimeoutSeconds"), join_path(path, "gracefulEvictionTimeoutSeconds"), 600.0) or 0.0,
        _seconds(m.get("until"), join_path(path, "until"), None),
    )
    ep = join_path(path, "events")
    for i, e in enumerate(as_list(m.get("events"), ep)):
        ip = join_path(ep, i)
        em = as_map(e, ip)
        for k in em:
            if k not in ("at", "cluster", "condition", "status", "workload", "health"):
                raise InputError(f'unknown field "{k}"', path=join_path(ip, k))
        at = _seconds(em.get("at"), join_path(ip, "at"), None)
        if at is None:
            raise InputError("Required value", path=join_path(ip, "at"))
        cluster = as_str(em.get("cluster"), join_path(ip, "cluster"))
        if cluster not in clusters:
            raise InputError(f'no member cluster "{cluster}"', path=join_path(ip, "cluster"))
        if ("status" in em) == ("health" in em):
            raise InputError("give either status (a condition) or health (a workload's)", path=ip)
        if "status" in em:
            tl.changes.append(TimedChange(at, cluster, ip, one_of(em["status"], join_path(ip, "status"), (TRUE, FALSE, UNKNOWN), ""),
                                          as_str(em.get("condition"), join_path(ip, "condition"), READY) or READY))
        else:
            workload = as_str(em.get("workload"), join_path(ip, "workload"))
            if not workload:
                raise InputError("Required value (KIND/NAMESPACE/NAME) with health", path=join_path(ip, "workload"))
            health = one_of(em["health"], join_path(ip, "health"), (HEALTHY, UNHEALTHY, UNKNOWN), "")
            tl.changes.append(TimedChange(at, cluster, ip, workload=workload, health=health))
    tl.changes.sort(key=lambda c: c.at)  # stable: events at one time keep the file's order
    return tl


def workload_ref(b: Binding) -> str:
    return f"{b.kind}/{b.namespace}/{b.name}"


def run_timeline(
    tl: Timeline, source: str, fed: Federation, scheduled: list[BindingDecision],
    conditions: Mapping[str, Mapping[str, str]], policies: tuple[ClusterTaintPolicy, ...], *, apply: bool = True,
) -> tuple[list[FailoverEvent], FailoverController]:
    """Follow the ``scheduled`` decisions through ``tl``'s changes (``source``: the events file),
    stepping at each change and whenever a toleration or grace period runs out, up to
    ``tl.until`` (default: the last change). ``conditions``: the members' conditions at time 0
    (their taints count as added then); ``apply``: create the replicas each rescheduling adds in
    the members. Returns the events and the controller, which holds the bindings at the end."""
    keys = {workload_ref(d.binding): d.binding.key for d in scheduled}
    for c in tl.changes:
        if c.workload and c.workload not in keys:
            raise InputError(f'no scheduled workload "{c.workload}"', source=source, path=join_path(c.path, "workload"))
    health: dict[tuple[str, str], str] = {}

    def app_health(b: Binding, cluster: str) -> str:
        """The file's health, else Unknown on a member not Ready, else what its replicas say."""
        given = health.get((b.key, cluster))
        if given:
            return given
        default = ctl.default_health(b, cluster)
        return default if default != HEALTHY else fed.workload_health(b, cluster) or default

    def schedule(b: Binding) -> BindingDecision:
        """The scheduler, and the new replicas created in the members at once, so the next
        decision sees them (as ``schedule`` does at time 0)."""
        d = fed.decide(b)
        if d.scheduled and apply:
            fed.apply_changes(d)
        return d

    ctl = FailoverController([m.cluster for m in fed.members], schedule, tl.options(policies), app_health,
                             conditions=conditions, taints_added=0.0)
    for d in scheduled:
        ctl.track(d.binding, d)
    end = tl.until if tl.until is not None else max((c.at for c in tl.changes), default=0.0)
    events: list[FailoverEvent] = []
    pending = list(tl.changes)
    now = 0.0  # the controllers first look at the decisions at time 0
    while True:
        if now > end or now == math.inf:
            return events, ctl
        while pending and pending[0].at == now:
            c = pending.pop(0)
            if c.health:
                health[(keys[c.workload], c.cluster)] = c.health
            else:
                events += ctl.set_condition(c.cluster, c.status, now, c.condition)
        events += ctl.step(now)
        due = ctl.next_time()
        now = min(pending[0].at if pending else math.inf, math.inf if due is None else due)


def event_json(e: FailoverEvent) -> dict[str, Any]:
    return {
        "time": e.time,
        "event": e.kind,
        "workload": e.binding or None,
        "cluster": e.cluster or None,
        "clusters": [{"name": t.name, "replicas": t.replicas} for t in e.clusters] if e.kind == "schedule" else None,
        "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in e.taints] if e.kind == "taint" else None,
        "detail": e.detail or None,
    }


def failover_json(events: list[FailoverEvent], ctl: FailoverController) -> dict[str, Any]:
    """The ``failover`` part of ``schedule --events``: the events, then each workload at the end."""
    return {
        "events": [event_json(e) for e in events],
        "final": [
            {
                "workload": workload_ref(tr.binding).replace("/", " ", 1),
                "clusters": [{"name": t.name, "replicas": t.replicas} for t in tr.binding.clusters],
                "evicting": [t.from_cluster for t in tr.tasks],
                "affinityName": tr.binding.observed_affinity_name or None,
            }
            for tr in ctl.bindings.values()
        ],
    }
