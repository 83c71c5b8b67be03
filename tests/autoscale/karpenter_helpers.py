"""What the Karpenter-like provisioner's loop-level tests share: a ClusterView of Nodes, bound
Pods and PDBs at one instant (the live view has no PDBs and reads the wall clock)."""

from __future__ import annotations

import time

from kubesched.api.objects import Node, Pod, PodDisruptionBudget
from kubesched.load import ClusterObjects
from kubesched.state.snapshot import Snapshot
from tests.autoscale.loop_helpers import FRAMEWORKS


class View:
    def __init__(self, nodes: list[dict], pods: list[dict], pdbs: list[dict] = (), now: float | None = None) -> None:
        objs = ClusterObjects(
            nodes=[Node.parse(n) for n in nodes],
            pods=[Pod.parse(p) for p in pods],
            pdbs=[PodDisruptionBudget.parse(d) for d in pdbs],
        )
        self.snapshot = Snapshot.of(objs)
        self.snapshot.storage.tracked = self.snapshot.dra.tracked = False
        self.t = time.time() if now is None else now

    def now(self) -> float:
        return self.t

    def unschedulable(self) -> list[Pod]:
        return []

    def created(self, pod: Pod) -> float:
        return self.t

    def framework_for(self, pod: Pod):
        return FRAMEWORKS.get(pod.scheduler_name)
