"""What the autoscaler's loop reads and acts through, and what it reports: a ``ClusterView``
(the scheduler's snapshot and the pods it found unschedulable), a ``NodeProvider`` (where nodes
come from and go), ``Stats`` (counts over a run) and a ``LoopRecord`` (what one iteration did,
with its ``ScaleUpInfo`` and ``ScaleDownInfo``). The simulator and ``kubesched autoscale`` each
supply a view and a provider; the live loop's watchers (status, events, metrics) read the record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from kubesched.api.objects import Node, Pod
from kubesched.autoscale.config import NodeGroup
from kubesched.framework.runtime import Framework
from kubesched.state.snapshot import Snapshot


class ClusterView(Protocol):
    """What the autoscaler reads: the scheduler's snapshot (nodes and their pods) and the pods
    the scheduler marked unschedulable (PodScheduled=False, reason Unschedulable). A node's
    readiness is its own conditions and taints (kubesched.autoscale.health), so a live view
    and the simulator's give it the same way."""

    snapshot: Snapshot

    def now(self) -> float: ...

    def unschedulable(self) -> list[Pod]: ...

    def created(self, pod: Pod) -> float: ...

    def framework_for(self, pod: Pod) -> Framework | None: ...


class NodeProvider(Protocol):
    """Where nodes come from. ``create`` asks for a node (it registers later, or never);
    ``delete`` removes a registered node, evicting its pods (their controllers recreate them);
    ``cancel`` gives up on a node that has not registered."""

    def create(self, group: NodeGroup, node: Node) -> None: ...

    def delete(self, name: str) -> None: ...

    def cancel(self, name: str) -> None: ...


@dataclass
class Stats:
    scale_ups: int = 0  # scale-up decisions
    nodes_added: int = 0
    scale_downs: int = 0  # nodes removed
    failed_nodes: int = 0  # nodes that did not register within maxNodeProvisionTime
    drained_pods: int = 0  # pods evicted by scale-down / consolidation
    estimations: int = 0

    def removed(self, pods: int) -> None:
        """One node deleted with ``pods`` on it, each evicted."""
        self.scale_downs += 1
        self.drained_pods += pods


@dataclass
class ScaleUpInfo:
    """One group grown (CA's ``nodegroupset.ScaleUpInfo``)."""

    group: str
    current: int
    new: int
    max: int

    def __str__(self) -> str:  # as CA prints it in events: {group 1->2 (max: 5)}
        return f"{{{self.group} {self.current}->{self.new} (max: {self.max})}}"


@dataclass
class ScaleDownInfo:
    node: str
    group: str
    empty: bool
    pods: list[Pod]  # the pods evicted
    unready: bool = False  # removed as an unready node (CA's scale-down reason "unready")


@dataclass
class LoopRecord:
    """What one iteration did, for whoever watches the loop (``kubesched autoscale``'s status
    ConfigMap, events and metrics). The loop fills ``record`` when one is set before
    ``run_once``; the simulator sets none and pays nothing."""

    pending: list[Pod] = field(default_factory=list)  # considered for scale-up (upcoming nodes take the others)
    scale_ups: list[ScaleUpInfo] = field(default_factory=list)
    triggered: list[Pod] = field(default_factory=list)  # the pods the scale-up is for
    failed: list[tuple[str, str]] = field(default_factory=list)  # (group, node) never registered
    scale_downs: list[ScaleDownInfo] = field(default_factory=list)
    unneeded: list[str] = field(default_factory=list)  # scale-down candidates
    unremovable: dict[str, str] = field(default_factory=dict)  # node -> CA's UnremovableReason
    cooldown: bool = False  # scale-down held by a delay after a scale-up, deletion or failure
    cluster_unhealthy: bool = False  # too many unready nodes: the iteration did nothing (CA's ClusterUnhealthy)
    durations: dict[str, float] = field(default_factory=dict)  # CA's function label -> seconds
