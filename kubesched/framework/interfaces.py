"""Extension-point interfaces. Built-in plugins implement the vectorised forms.

A plugin is one class; it declares the extension points it implements by subclassing the
matching mixins below. Vectorised methods receive ``rows`` (int array of snapshot rows) and
return one value per row. Per-node authoring lives in ``kubesched.framework.simple``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from kubesched.framework.status import FilterResult, PreFilterResult, Status

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.state.snapshot import Snapshot

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0


class Plugin:
    """Base of every plugin: a name, its args (already defaulted/validated), the handle."""

    name: ClassVar[str] = ""
    #: True when Filter/Score judge a node from the pod and that node's own row only (no other
    #: nodes' pods) and NormalizeScore depends on the scores alone: the equivalence cache may
    #: then reuse verdicts across equal pods. Leave False unless that holds.
    row_local: ClassVar[bool] = False
    #: True (with ``row_local``) when Filter/Score read the pod and the node object only, not
    #: the pods assigned to it: the equivalence cache then skips the plugin when a row's pods
    #: change (node changes rebuild the cache anyway). Leave False unless that holds.
    node_only: ClassVar[bool] = False
    #: Annotation keys this plugin reads from the pod being scheduled. ``Pod.signature`` leaves
    #: annotations out, so a ``row_local`` plugin that reads some must name them here: their values
    #: become part of the equivalence cache's key.
    pod_annotations: ClassVar[tuple[str, ...]] = ()
    #: EventsToRegister: the cluster events that may make a pod this plugin rejected schedulable
    #: (NodeAdd, NodeUpdate, AssignedPodAdd, AssignedPodUpdate, AssignedPodDelete, NamespaceUpdate).
    #: Only those events move such a pod out of the unschedulable pool; an empty set, none does.
    #: None (undeclared): every event does.
    events_to_register: ClassVar[frozenset[str] | None] = None

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.args: dict[str, Any] = args or {}
        self.handle = handle

    def skips(self, pod: Pod, snap: Snapshot) -> bool:
        """Cheap, exact hint for the equivalence cache: True only when this plugin's PreFilter and
        PreScore certainly return Skip for this pod in this snapshot (so it need not run)."""
        return False

    def row_local_for(self, pod: Pod, snap: Snapshot) -> bool:
        """Per-pod row-locality hint for the equivalence cache, for a plugin that is not
        ``row_local`` in general. True only when, for this pod in this snapshot, Filter judges
        every node from the pod and that node's own row (its node object and its pods), given the
        plugin's PreFilter run in the same cycle, and PreScore certainly returns Skip. The cache
        then keeps the plugin's verdicts per row, runs its PreFilter every cycle and re-judges
        only rows whose pods changed, with that fresh state. It asks again every cycle; a False
        answer is always safe (the plugin runs fresh)."""
        return False

    @classmethod
    def extension_points(cls) -> frozenset[str]:
        return frozenset(point for point, base in POINT_CLASSES.items() if issubclass(cls, base))


class PreEnqueuePlugin(Plugin):
    def pre_enqueue(self, pod: Pod) -> Status | None:
        raise NotImplementedError


class QueueSortPlugin(Plugin):
    def less(self, a: Any, b: Any) -> bool:
        """a, b are QueuedPodInfo."""
        raise NotImplementedError


class PreFilterPlugin(Plugin):
    def pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot) -> PreFilterResult | Status | None:
        """None/Success: go on. Skip: this plugin's Filter is skipped for the cycle."""
        raise NotImplementedError

    def add_pod(self, state: CycleState, pod: Pod, added: Pod, row: int, snap: Snapshot) -> None:
        """PreFilterExtensions.AddPod (preemption dry runs, nominated pods). Default: recompute."""
        self._recompute(state, pod, snap)

    def remove_pod(self, state: CycleState, pod: Pod, removed: Pod, row: int, snap: Snapshot) -> None:
        self._recompute(state, pod, snap)

    def _recompute(self, state: CycleState, pod: Pod, snap: Snapshot) -> None:
        self.pre_filter(state, pod, snap)


class FilterPlugin(Plugin):
    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        raise NotImplementedError

    def passes(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray | None:
        """Optional fast path: a bool per row, True where Filter would return Success, without
        the reasons. The equivalence cache uses it to re-judge rows whose pods changed; it must
        agree with ``filter`` (raise where ``filter`` would return Error). None: use ``filter``."""
        return None

    def passes_everywhere(self, state: CycleState, pod: Pod, snap: Snapshot) -> bool:
        """Optional, for plugins that read other nodes' pods: True only when this cycle's Filter
        (after its PreFilter wrote ``state``) certainly returns Success for every node, so the
        equivalence cache need not run it (e.g. every spreading domain is within its skew)."""
        return False


class PostFilterPlugin(Plugin):
    def post_filter(self, state: CycleState, pod: Pod, snap: Snapshot, diagnosis: Any) -> tuple[str | None, Status]:
        """Returns (nominated node name or None, status)."""
        raise NotImplementedError


class PreScorePlugin(Plugin):
    def pre_score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> Status | None:
        raise NotImplementedError


class ScorePlugin(Plugin):
    #: True when ``normalize`` provably returns scores within [MIN_NODE_SCORE, MAX_NODE_SCORE]
    #: (e.g. a min-max scaling): the framework then skips its per-cycle range check.
    normalized_in_range: ClassVar[bool] = False

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        """Raw int64 score per row."""
        raise NotImplementedError

    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray | None:
        """NormalizeScore; None means the plugin has no normalization."""
        return None


class ReservePlugin(Plugin):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        raise NotImplementedError

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None


class PermitPlugin(Plugin):
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        """(status, timeout seconds for Wait)."""
        raise NotImplementedError


class PreBindPlugin(Plugin):
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """PreBindPreFlight, before Permit's wait: Success (None) when PreBind has work for this
        pod (the pod is then nominated to the node while it binds), Skip when it has none (its
        PreBind is not called), or an Error. The default says it has work."""
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        raise NotImplementedError


class BindPlugin(Plugin):
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Skip: let the next bind plugin handle it."""
        raise NotImplementedError


class PostBindPlugin(Plugin):
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        raise NotImplementedError


POINT_CLASSES: dict[str, type[Plugin]] = {
    "preEnqueue": PreEnqueuePlugin,
    "queueSort": QueueSortPlugin,
    "preFilter": PreFilterPlugin,
    "filter": FilterPlugin,
    "postFilter": PostFilterPlugin,
    "preScore": PreScorePlugin,
    "score": ScorePlugin,
    "reserve": ReservePlugin,
    "permit": PermitPlugin,
    "preBind": PreBindPlugin,
    "bind": BindPlugin,
    "postBind": PostBindPlugin,
}
EXTENSION_POINTS = tuple(POINT_CLASSES)


def default_normalize(scores: np.ndarray, reverse: bool = False) -> np.ndarray:
    """helper.DefaultNormalizeScore: scale to [0, 100] by the max, optionally reversed."""
    if scores.size == 0:
        return scores
    max_count = max(0, int(scores.max()))  # upstream starts the running max at 0
    if max_count == 0:
        if reverse:
            return np.full_like(scores, MAX_NODE_SCORE)
        return scores
    out = go_div(scores * MAX_NODE_SCORE, max_count)
    if reverse:
        out = MAX_NODE_SCORE - out
    return out


def go_div(a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray:
    """Integer division truncating toward zero, as Go's int64 ``/`` (numpy floors)."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)
