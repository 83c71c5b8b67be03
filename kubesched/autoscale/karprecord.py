"""What one iteration of the Karpenter-like provisioner did, for the live loop's watchers: the
``LoopRecord`` Cluster Autoscaler's loop fills (scale-ups per instance type, the pods they are
for, nodes removed and their pods), plus what Karpenter itself reports: each pod's claim
(``Nominated``), the pods no NodePool can launch a node for, replacements launched for a
disruption, and each node disrupted with its reason (``Empty``, ``Underutilized``, ``Drifted``,
``Expired``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.api.objects import Node, Pod
from kubesched.autoscale.config import NodeGroup
from kubesched.autoscale.interface import LoopRecord, ScaleDownInfo, ScaleUpInfo
from kubesched.autoscale.nodepool import CAPACITY_TYPE, EMPTY, NODEPOOL_LABEL

EXPIRED = "Expired"
PROVISIONING = "provisioned"  # why a claim was made, when not for a disruption (metrics.ProvisionedReason)


@dataclass
class Launch:
    claim: str  # the claim's name (its node's)
    reason: str  # provisioning, or the disruption it replaces a node for
    pool: str
    capacity_type: str


@dataclass
class Disruption:
    node: str
    reason: str  # Empty, Underutilized, Drifted, Expired
    pool: str
    capacity_type: str


@dataclass
class KarpenterRecord(LoopRecord):
    nominated: list[tuple[Pod, str]] = field(default_factory=list)  # (pod, the claim made for it)
    unlaunchable: list[Pod] = field(default_factory=list)  # considered; no claim could hold them
    launched: list[Launch] = field(default_factory=list)
    disrupted: list[Disruption] = field(default_factory=list)
    blocked: list[tuple[str, str]] = field(default_factory=list)  # (node, why disruption may not take it)
    unconsolidatable: list[tuple[str, str]] = field(default_factory=list)  # (node, why consolidation left it)
    sizes: dict[str, int] = field(default_factory=dict)  # each instance type's nodes when the iteration began

    def removed(self) -> list[Disruption]:
        """The disruptions whose node did go: a provider may decline a deletion after all (its
        ``declined``), and the watcher then drops the node from ``scale_downs``."""
        gone = {sd.node for sd in self.scale_downs}
        return [d for d in self.disrupted if d.node in gone]


def note_launch(record: LoopRecord | None, group: NodeGroup, node: Node, pods: list[Pod], reason: str = PROVISIONING) -> None:
    """A claim made for ``group``: its group's scale-up grows by one node (CA's ScaleUpInfo,
    from the group's size when the iteration began) and its pods are nominated to it."""
    if not isinstance(record, KarpenterRecord):
        return
    info = next((i for i in record.scale_ups if i.group == group.name), None)
    if info is None:
        current = record.sizes.get(group.name, 0)
        info = ScaleUpInfo(group.name, current, current, group.max_size)
        record.scale_ups.append(info)
    info.new += 1
    record.triggered.extend(pods)
    record.nominated.extend((p, node.name) for p in pods)
    record.launched.append(Launch(node.name, reason, node.labels.get(NODEPOOL_LABEL, ""), node.labels.get(CAPACITY_TYPE, "on-demand")))


def note_blocked(record: LoopRecord | None, node: str, why: str) -> None:
    if isinstance(record, KarpenterRecord):
        record.blocked.append((node, why))


def note_unconsolidatable(record: LoopRecord | None, node: str, why: str) -> None:
    if isinstance(record, KarpenterRecord):
        record.unconsolidatable.append((node, why))


def note_removal(record: LoopRecord | None, node: Node, group: str, pods: list[Pod], reason: str) -> None:
    """A node deleted, for ``reason``: CA's ScaleDownInfo (empty when it had no pods) and
    Karpenter's disruption."""
    if not isinstance(record, KarpenterRecord):
        return
    record.scale_downs.append(ScaleDownInfo(node.name, group, reason == EMPTY or not pods, pods))
    record.disrupted.append(Disruption(node.name, reason, node.labels.get(NODEPOOL_LABEL, ""), node.labels.get(CAPACITY_TYPE, "on-demand")))
