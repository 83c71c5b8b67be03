"""Node readiness and node-group health, as Cluster Autoscaler's ``clusterstate`` keeps them
(``clusterstate/clusterstate.go``: ``updateReadinessStats``, ``IsClusterHealthy``,
``IsNodeGroupHealthy``; ``utils/kubernetes/ready.go``: ``GetNodeReadiness``). The loop reads it
through ``ClusterState`` whether it runs in the simulator or live, and the status ConfigMap shows it.

A node is Ready when its ``Ready`` condition is ``True``, no ``DiskPressure`` or
``NetworkUnavailable`` condition is ``True`` and it carries none of the not-ready, disk-pressure
and network-unavailable taints. A node that reports no conditions at all (the simulator's, a
dump's without status) is Ready unless one of those taints says otherwise: upstream reads it
as unready ("readiness information not found"), but kubesched's simulated nodes carry no
conditions and are Ready from the moment they register.

Each registered node falls in one category: being deleted (the ``ToBeDeletedByClusterAutoscaler``
taint), Ready, NotStarted (unready and created less than ``maxNodeStartupTime`` ago, 15 min by
default; a node without ``creationTimestamp`` was created long ago, as Go's zero time) or
Unready. Nodes asked for and not registered are Unregistered; none is LongUnregistered, as the
loop gives up on a node at ``maxNodeProvisionTime``, nor ResourceUnready.

Health: the cluster is unhealthy when more than ``okTotalUnreadyCount`` (3) nodes are Unready and
they are more than ``maxTotalUnreadyPercentage`` (45) % of the registered nodes; the loop then
does nothing else that iteration. A node group is unhealthy when its Ready nodes fall short of its
acceptable minimum (its target size, less its nodes being deleted and the nodes of its scale-up
still under way) by more than ``okTotalUnreadyCount`` nodes and more than
``maxTotalUnreadyPercentage`` % of its Ready, Unready and NotStarted nodes; no scale-up goes to it.
A scale-up is under way while one of its nodes is unregistered or NotStarted (CA's
``ScaleUpRequest``, dropped when no upcoming node is left); a node given up on leaves it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.objects import Node
from kubesched.api.taints import NO_SCHEDULE, Taint
from kubesched.autoscale.eligibility import TO_BE_DELETED_TAINT
from kubesched.live.bodies import rfc3339
from kubesched.state.snapshot import Snapshot

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
# GetNodeReadiness: a node with any of these taints cannot be ready
NOT_READY_TAINTS = frozenset({NOT_READY_TAINT, "node.kubernetes.io/disk-pressure", "node.kubernetes.io/network-unavailable"})
PRESSURE_CONDITIONS = ("DiskPressure", "NetworkUnavailable")


def node_ready(node: Node) -> bool:
    """GetNodeReadiness's ``Ready`` (a node with no conditions at all: Ready, see above)."""
    if any(t.key in NOT_READY_TAINTS for t in node.taints):
        return False
    status = node.raw.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    if not isinstance(conditions, list) or not conditions:
        return True
    found = False
    for c in conditions:
        if not isinstance(c, dict):
            continue
        kind, value = c.get("type"), c.get("status")
        if kind == "Ready":
            found = True
            if value in ("False", "Unknown"):
                return False
        elif kind in PRESSURE_CONDITIONS and value == "True":
            return False
    return found


def created(node: Node) -> float:
    """``metadata.creationTimestamp`` in seconds; -inf without one (Go's zero time)."""
    metadata = node.raw.get("metadata")
    stamp = metadata.get("creationTimestamp") if isinstance(metadata, dict) else None
    if isinstance(stamp, str):
        try:
            return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return -math.inf


def never_ready(node: Node, now: float) -> Node:
    """``node`` as it registers when its kubelet never reports Ready: condition ``Ready=False``
    and the not-ready taint the node lifecycle controller sets (no pod without a toleration
    goes there), created ``now`` (the simulator's nodes that never become ready)."""
    taint = Taint(NOT_READY_TAINT, "", NO_SCHEDULE)
    raw = dict(node.raw)
    raw["metadata"] = {**(raw.get("metadata") or {}), "creationTimestamp": rfc3339(now)}
    raw["spec"] = {**(raw.get("spec") or {}), "taints": [*((raw.get("spec") or {}).get("taints") or []), {"key": taint.key, "effect": taint.effect}]}
    raw["status"] = {**(raw.get("status") or {}), "conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady"}]}
    return dataclasses.replace(node, taints=(*node.taints, taint), raw=raw)


@dataclass
class Readiness:
    """One node group's nodes, or the cluster's, by category (clusterstate's ``Readiness``)."""

    ready: int = 0
    unready: list[str] = field(default_factory=list)
    not_started: list[str] = field(default_factory=list)
    deleted: int = 0
    unregistered: int = 0

    @property
    def registered(self) -> int:
        return self.ready + len(self.unready) + len(self.not_started) + self.deleted

    def counts(self) -> dict[str, Any]:
        """api.NodeCount (``beingDeleted`` left out at 0, as its ``omitempty``)."""
        registered: dict[str, Any] = {"total": self.registered, "ready": self.ready, "notStarted": len(self.not_started)}
        if self.deleted:
            registered["beingDeleted"] = self.deleted
        registered["unready"] = {"total": len(self.unready), "resourceUnready": 0}
        return {"registered": registered, "longUnregistered": 0, "unregistered": self.unregistered}


@dataclass
class _Unready:
    name: str
    group: str | None
    created: float


@dataclass
class _Classified:
    """What a snapshot's nodes are, as long as its nodes do not change: Ready and deleted
    counts per group, and the unready nodes (NotStarted or Unready depends on the time)."""

    snap: Snapshot
    generation: int
    ready: dict[str | None, int]
    deleted: dict[str | None, int]
    unready: list[_Unready]


class ClusterState:
    """CA's ClusterStateRegistry as far as kubesched models it. ``update`` at the start of each
    iteration; then ``cluster_healthy``, ``group_healthy`` and the readiness it measured."""

    def __init__(self, ok_total_unready: int = 3, max_unready_percentage: float = 45.0, max_node_startup_time: float = 900.0) -> None:
        self.ok_total_unready = ok_total_unready
        self.max_unready_percentage = max_unready_percentage
        self.max_node_startup_time = max_node_startup_time
        self.total = Readiness()
        self.groups: dict[str, Readiness] = {}
        self.targets: dict[str, int] = {}  # registered plus upcoming nodes per group
        self.scale_ups: dict[str, set[str]] = {}  # group -> the nodes of its scale-up under way
        self._classified: _Classified | None = None

    def update(self, snap: Snapshot, group_of: Callable[[Node], str | None], groups: list[str], upcoming: Mapping[str, str], now: float) -> None:
        """UpdateNodes: ``upcoming`` maps each node asked for and not registered to its group."""
        c = self._classify(snap, group_of)
        per = {g: Readiness(ready=c.ready.get(g, 0), deleted=c.deleted.get(g, 0)) for g in groups}
        total = Readiness(ready=sum(c.ready.values()), deleted=sum(c.deleted.values()), unregistered=len(upcoming))
        for u in c.unready:
            starting = u.created + self.max_node_startup_time > now
            for r in (total, per.get(u.group) if u.group is not None else None):
                if r is not None:
                    (r.not_started if starting else r.unready).append(u.name)
        for g in upcoming.values():
            if g in per:
                per[g].unregistered += 1
        self.total, self.groups = total, per
        self.targets = {g: r.registered + r.unregistered for g, r in per.items()}
        self._track_scale_ups(snap, upcoming)

    def _classify(self, snap: Snapshot, group_of: Callable[[Node], str | None]) -> _Classified:
        c = self._classified
        if c is not None and c.snap is snap and c.generation == snap.node_generation:
            return c
        c = _Classified(snap, snap.node_generation, {}, {}, [])
        for node in snap.nodes[: snap.n]:
            g = group_of(node)
            if any(t.key == TO_BE_DELETED_TAINT for t in node.taints):  # whatever its age, as upstream
                c.deleted[g] = c.deleted.get(g, 0) + 1
            elif node_ready(node):
                c.ready[g] = c.ready.get(g, 0) + 1
            else:
                c.unready.append(_Unready(node.name, g, created(node)))
        self._classified = c
        return c

    def _track_scale_ups(self, snap: Snapshot, upcoming: Mapping[str, str]) -> None:
        for name, g in upcoming.items():
            self.scale_ups.setdefault(g, set()).add(name)
        for g in list(self.scale_ups):
            r = self.groups.get(g)
            nodes = {n for n in self.scale_ups[g] if n in upcoming or n in snap.row_of}  # a node given up on leaves it
            if r is None or not nodes or not (r.unregistered or r.not_started):
                del self.scale_ups[g]
            else:
                self.scale_ups[g] = nodes

    # ---- health ------------------------------------------------------------------------------
    def _too_many(self, unready: int, of: int) -> bool:
        return unready > self.ok_total_unready and unready > self.max_unready_percentage / 100.0 * of

    def cluster_healthy(self) -> bool:
        """IsClusterHealthy."""
        return not self._too_many(len(self.total.unready), self.total.registered)

    def acceptable_min(self, group: str) -> int:
        """AcceptableRange.MinNodes: the target less nodes being deleted and the scale-up under way."""
        return self.targets.get(group, 0) - self.groups[group].deleted - len(self.scale_ups.get(group, ()))

    def group_healthy(self, group: str) -> bool:
        """IsNodeGroupHealthy."""
        r = self.groups.get(group)
        if r is None:
            return True
        # Ready nodes short of the acceptable minimum; a group with no nodes yet has none short,
        # as upstream's group at target 0 or scaling up from nothing
        missing = max(0, self.acceptable_min(group) - r.ready)
        return not self._too_many(missing, r.ready + len(r.unready) + len(r.not_started))

    def starting(self, snap: Snapshot) -> list[str]:
        """The NotStarted nodes, if the last ``update`` measured ``snap`` as it is now (a loop
        that does not measure, the Karpenter-like one, has none)."""
        c = self._classified
        return self.total.not_started if c is not None and c.snap is snap and c.generation == snap.node_generation else []

    def scaling_up(self, group: str) -> bool:
        """IsNodeGroupScalingUp: a scale-up under way and nodes still to come."""
        r = self.groups.get(group)
        return group in self.scale_ups and r is not None and bool(r.unregistered or r.not_started)
