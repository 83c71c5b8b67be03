"""The binding: a resource template with its placement, as the scheduler schedules it."""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.api.objects import Pod
from kubesched.multicluster.api.placement import Placement
from kubesched.multicluster.api.policy import FailoverBehavior


# ---- the binding: a resource template with its placement ---------------------------------------
@dataclass(frozen=True)
class TargetCluster:
    name: str
    replicas: int = 0


@dataclass
class Binding:
    """What Karmada's scheduler schedules (ResourceBindingSpec/Status, the fields it reads)."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str
    replicas: int
    template: Pod | None  # the pod template replicas are made from (None: not a workload)
    placement: Placement
    clusters: tuple[TargetCluster, ...] = ()  # the previous result (spec.clusters)
    eviction_clusters: frozenset[str] = frozenset()  # spec.gracefulEvictionTasks[*].fromCluster
    observed_affinity_name: str = ""  # status.schedulerObservedAffinityName
    policy: str = ""
    requirements: bool = False  # ReplicaRequirements != nil: the template asks resources or nodes
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    failover: FailoverBehavior | None = None  # spec.failover, from the policy
    propagate_deps: bool = False  # spec.propagateDeps: application failover needs it

    @property
    def key(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"

    @property
    def is_workload(self) -> bool:
        """ResourceBindingSpec.IsWorkload: it has replicas or replica requirements."""
        return self.replicas > 0 or self.requirements

    def target_contains(self, name: str) -> bool:
        return any(t.name == name for t in self.clusters)

    def assigned_replicas_for(self, name: str) -> int:
        return next((t.replicas for t in self.clusters if t.name == name), 0)
