"""The simulated cluster the scheduler binds to: bindings and evictions become timeline events."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kubesched.api.objects import Pod


@dataclass
class SimCluster:
    """ClusterBackend for simulation (same contract as ``MemoryCluster``).

    The engine reacts through the callbacks: a binding starts the pod's run (its completion is
    scheduled), an eviction (preemption) ends it early.
    """

    on_bind: Callable[[Pod, str], None]
    on_evict: Callable[[Pod, str], None]
    bindings: dict[str, str] = field(default_factory=dict)  # uid -> node, running pods only
    nominations: dict[str, str] = field(default_factory=dict)  # uid -> nominated node

    def bind(self, pod: Pod, node_name: str) -> None:
        if pod.uid in self.bindings:
            raise RuntimeError(f"pod {pod.key} is already bound to {self.bindings[pod.uid]}")
        self.bindings[pod.uid] = node_name
        self.nominations.pop(pod.uid, None)
        self.on_bind(pod, node_name)

    def delete_pod(self, pod: Pod, reason: str) -> None:
        if self.bindings.pop(pod.uid, None) is not None:
            self.on_evict(pod, reason)

    def set_nominated_node(self, pod: Pod, node_name: str) -> None:
        if node_name:
            self.nominations[pod.uid] = node_name
        else:
            self.nominations.pop(pod.uid, None)
