"""What plugins may reach beyond their arguments: the snapshot, the cluster, other pods."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.runtime import Framework
    from kubesched.state.snapshot import Snapshot


class ClusterBackend(Protocol):
    """The cluster the scheduler binds to (memory, Kubernetes API, simulator)."""

    def bind(self, pod: Pod, node_name: str) -> None: ...

    def delete_pod(self, pod: Pod, reason: str) -> None: ...

    def set_nominated_node(self, pod: Pod, node_name: str) -> None: ...


class Handle:
    """framework.Handle: shared by every plugin of one profile."""

    def __init__(
        self,
        snapshot: Snapshot,
        cluster: ClusterBackend | None = None,
        rng: np.random.Generator | None = None,
        parallelism: int = 16,
    ) -> None:
        self.snapshot = snapshot
        self.cluster = cluster
        self.rng = rng if rng is not None else np.random.default_rng()
        self.parallelism = parallelism
        self.framework: Framework | None = None  # set once the profile's framework is built
        self.nominator: Any = None  # the queue's nominated pods, when a scheduler owns this handle
        # measured node utilization (kubesched.framework.utilization.UtilizationSource), set by
        # the simulator; live, load-aware plugins build their own from their args
        self.utilization: Any = None
