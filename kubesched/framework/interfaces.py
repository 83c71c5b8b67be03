"""Extension-point interfaces. Built-in plugins implement the vectorised forms.

A plugin is one class; it declares the extension points it implements by subclassing the
matching mixins below. Vectorised methods receive ``rows`` (int array of snapshot rows) and
return one value per row. Per-node authoring lives in ``kubesched.framework.simple``.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

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
    #: EventsToRegister: the cluster events that may make a pod this plugin rejected schedulable
    #: (NodeAdd, NodeUpdate, AssignedPodAdd, AssignedPodUpdate, AssignedPodDelete, NamespaceUpdate).
    #: Only those events move such a pod out of the unschedulable pool; an empty set, none does.
    #: None (undeclared): every event does.
    events_to_register: ClassVar[frozenset[str] | None] = None

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.args: dict[str, Any] = args or {}
        self.handle = handle

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

    def add_pod(self, state: CycleState, pod: Pod, added: Pod, row: int, snap: Snapshot) -> Status | None:
        """PreFilterExtensions.AddPod (preemption dry runs, nominated pods): ``added`` was put on
        node ``row``. Default: recompute. A status other than Success fails the preemption dry
        run with an Error, as upstream."""
        self._recompute(state, pod, snap)
        return None

    def remove_pod(self, state: CycleState, pod: Pod, removed: Pod, row: int, snap: Snapshot) -> Status | None:
        """PreFilterExtensions.RemovePod: ``removed`` was taken off node ``row``."""
        self._recompute(state, pod, snap)
        return None

    def _recompute(self, state: CycleState, pod: Pod, snap: Snapshot) -> None:
        self.pre_filter(state, pod, snap)


class FilterPlugin(Plugin):
    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        raise NotImplementedError


class PostFilterPlugin(Plugin):
    def post_filter(self, state: CycleState, pod: Pod, snap: Snapshot, diagnosis: Any) -> tuple[str | None, Status]:
        """Returns (nominated node name or None, status)."""
        raise NotImplementedError


class PreScorePlugin(Plugin):
    def pre_score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> Status | None:
        raise NotImplementedError


class ScorePlugin(Plugin):
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
        """Skip: let the next bind plugin handle it (when all skip, the binding fails)."""
        raise NotImplementedError


class PostBindPlugin(Plugin):
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        raise NotImplementedError


class Signature(NamedTuple):
    """How a plugin's Filter verdicts and raw Scores for one pod depend on the cluster: what
    ``SignPlugin.sign_pod`` answers.

    ``reads``: ``NODE`` (the node object alone: labels, taints, allocatable, images), ``ROW`` (the
    node and the pods on it) or ``NOTHING`` (the plugin takes no part: its PreFilter and PreScore
    certainly return Skip for this pod, and its Reserve, Unreserve, Permit, PreBindPreFlight and
    PreBind would do nothing for it, so a cycle the equivalence cache serves does not call them and
    shares its cycle state with the binding cycle). ``key``: what the plugin reads of the pod beyond
    ``Pod.signature()`` (its spec), e.g. annotation values; pods with equal signatures and keys
    get equal verdicts. ``pre_filter_each_cycle``: the verdicts read the node's row, but through
    state PreFilter builds from the whole cluster, so PreFilter runs again every cycle and rows
    whose pods changed are judged with that state.
    """

    reads: str
    key: Hashable = ()
    pre_filter_each_cycle: bool = False


NOTHING, NODE, ROW = "nothing", "node", "row"
NOT_INVOLVED = Signature(NOTHING)
NODE_LOCAL = Signature(NODE)
ROW_LOCAL = Signature(ROW)


class SignPlugin(Plugin):
    """Opt-in batching, in the spirit of upstream's SignPlugin (KEP-5598): a plugin that says how
    its work for a pod depends on the cluster lets the framework reuse that work across pods with
    equal signatures (the equivalence cache: verdicts and raw scores kept per node, re-judged only
    on rows whose pods changed). Plugins that do not opt in run every cycle, which is always right.

    ``sign_pod`` is asked every cycle, before PreFilter; its answer must hold for the whole cycle.
    NormalizeScore must depend on the raw scores alone. The two other methods are optional.
    """

    #: A Pod attribute (``volumes``, ``resource_claims``) without which the plugin takes no part:
    #: for a pod where it is empty ``sign_pod`` answers NOT_INVOLVED and PreEnqueue admits it, and
    #: the framework answers so itself instead of calling (a plugin most pods do not concern costs
    #: them nothing).
    needs_pod_field: ClassVar[str] = ""

    def sign_pod(self, pod: Pod, snap: Snapshot) -> Signature | None:
        """This pod's Signature, or None when the plugin cannot sign it (it then runs every cycle)."""
        return None

    def passes(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray | None:
        """Filter's verdicts without the reasons, faster (a bool per row, True where Filter would
        return Success), for re-judging rows; raise where Filter would return an Error. None: use Filter."""
        return None

    def passes_everywhere(self, state: CycleState, pod: Pod, snap: Snapshot) -> bool:
        """For a pod the plugin cannot sign: True only when, after this cycle's PreFilter wrote
        ``state``, Filter certainly returns Success on every node (it need not run this cycle)."""
        return False


class NodeLocal(SignPlugin):
    """A SignPlugin whose verdicts read the pod and the node object alone, for every pod."""

    def sign_pod(self, pod: Pod, snap: Snapshot) -> Signature | None:
        return NODE_LOCAL


class RowLocal(SignPlugin):
    """A SignPlugin whose verdicts read the pod and the node's row (node and pods), for every pod."""

    def sign_pod(self, pod: Pod, snap: Snapshot) -> Signature | None:
        return ROW_LOCAL


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
