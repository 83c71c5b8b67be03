"""What plugins may reach beyond their arguments: the snapshot, the cluster, other pods."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from kubesched.cluster.store import StoreAPI
from kubesched.framework.waiting import WaitingPod, WaitingPods

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.cluster.api import ObjectAPI
    from kubesched.framework.runtime import Framework
    from kubesched.state.snapshot import Snapshot


class ClusterBackend(Protocol):
    """The cluster the scheduler binds to (memory, Kubernetes API, simulator)."""

    def bind(self, pod: Pod, node_name: str) -> None: ...

    def delete_pod(self, pod: Pod, reason: str) -> None: ...

    def set_nominated_node(self, pod: Pod, node_name: str) -> None: ...


class Nominator(Protocol):
    """What plugins may ask of the scheduler that owns their handle (upstream's PodNominator,
    and the pods its queue holds)."""

    #: uid -> pod nominated to a node (``nominated_node_name``), as preemption left it
    nominated: dict[str, Pod]

    def delete_pod(self, pod: Pod) -> None:
        """A pod was deleted (a preemption victim): the scheduler forgets it everywhere."""
        ...

    def pending_pods(self) -> list[Pod]:
        """The pods waiting to be scheduled (gated, queued, in flight, waiting at Permit)."""
        ...


class Handle:
    """framework.Handle: shared by every plugin of one profile.

    ``waiting_pods`` is the scheduler's map of pods parked at Permit (shared by every profile;
    a standalone handle gets an empty one of its own) and ``clock`` the scheduler's clock, wall
    or virtual: the time Permit timeouts and plugins' caches run on.
    """

    def __init__(
        self,
        snapshot: Snapshot,
        cluster: ClusterBackend | None = None,
        rng: np.random.Generator | None = None,
        parallelism: int = 16,
        *,
        waiting_pods: WaitingPods | None = None,
        clock: Callable[[], float] = time.monotonic,
        api: ObjectAPI | None = None,
    ) -> None:
        self.snapshot = snapshot
        self.cluster = cluster
        # the API calls of PreBind besides the binding (claims, volumes): offline the snapshot's
        # stores answer them; ``kubesched run`` puts the Kubernetes API here
        self.api: ObjectAPI = api if api is not None else StoreAPI(snapshot)
        self.rng = rng if rng is not None else np.random.default_rng()
        self.parallelism = parallelism
        self.framework: Framework | None = None  # set once the profile's framework is built
        self.nominator: Nominator | None = None  # the scheduler that owns this handle, if any
        # measured node utilization (kubesched.framework.utilization.UtilizationSource), set by
        # the simulator; live, load-aware plugins build their own from their args
        self.utilization: Any = None
        self.waiting_pods = waiting_pods if waiting_pods is not None else WaitingPods()
        self.clock = clock

    # ---- waiting pods (upstream's IterateOverWaitingPods, GetWaitingPod, RejectWaitingPod) ----
    def iterate_over_waiting_pods(self, fn: Callable[[WaitingPod], None]) -> None:
        """Call ``fn`` on every pod waiting at Permit (it may allow or reject them)."""
        self.waiting_pods.iterate(fn)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting_pods.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        """Reject the pod if it waits at Permit (its binding cycle then unreserves it); True if it did."""
        return self.waiting_pods.reject(uid, "", "removed")
