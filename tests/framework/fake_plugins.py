"""Fake plugins of kube-scheduler's testing/framework package (``tf.*``) and of
schedule_one_test.go, and a one-profile scheduler built from them, for the whole-cycle tables.

Go factories that take parameters (``tf.NewFakeFilterPlugin(map)``, ``tf.NewFakePreFilterPlugin(
name, result, status)``) become subclasses made with ``variant(Base, "Name", attr=...)``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from kubesched.api.objects import Pod
from kubesched.cluster.memory import MemoryCluster
from kubesched.config import EXTENSION_POINTS, PluginRef, Profile, SchedulerConfig
from kubesched.config.args import default_args
from kubesched.config.defaults import ARGS_PLUGINS
from kubesched.config.types import V1
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    FilterPlugin,
    PermitPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ReservePlugin,
    ScorePlugin,
)
from kubesched.framework.status import Code, FilterResult, PluginError, PreFilterResult, Status
from kubesched.plugins import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.state.snapshot import Snapshot
from kubesched.testing import build_snapshot

#: tf.ErrReasonFake
ERR_REASON_FAKE = "Nodes failed the fake plugin"


def variant(base: type, name: str, **attrs: Any) -> type:
    """A copy of fake plugin ``base`` named ``name`` with class attributes ``attrs``."""
    return type(name, (base,), {"name": name, **attrs})


def _names(snap: Snapshot, rows: np.ndarray) -> list[str]:
    return [snap.nodes[int(r)].name for r in rows]


# ---- Filter ---------------------------------------------------------------------------------
class TrueFilter(FilterPlugin):
    name = "TrueFilter"

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        return FilterResult.all_pass(len(rows))


class FalseFilter(FilterPlugin):
    name = "FalseFilter"

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        return FilterResult.from_mask(np.ones(len(rows), bool), ERR_REASON_FAKE)


class MatchFilter(FilterPlugin):
    """Passes the node named like the pod."""

    name = "MatchFilter"

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        return FilterResult.from_mask(np.asarray([n != pod.name for n in _names(snap, rows)], bool), ERR_REASON_FAKE)


class NoPodsFilter(FilterPlugin):
    """noPodsFilterPlugin: passes nodes without pods."""

    name = "NoPodsFilter"

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        return FilterResult.from_mask(np.asarray([bool(snap.pods_on[int(r)]) for r in rows], bool), ERR_REASON_FAKE)


class FakeFilter(FilterPlugin):
    """tf.FakeFilterPlugin: ``codes`` node -> Code; those nodes fail with
    ``injecting failure for pod <name>``."""

    name = "FakeFilter"
    codes: ClassVar[dict[str, Code]] = {}

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        code = np.asarray([int(self.codes.get(n, Code.Success)) for n in _names(snap, rows)], np.int8)
        return FilterResult(code, (code != 0).astype(np.int64), (f"injecting failure for pod {pod.name}",))


# ---- PreFilter ------------------------------------------------------------------------------
class FakePreFilter(PreFilterPlugin):
    """tf.FakePreFilterPlugin: a fixed PreFilterResult (node names, or None: all nodes) and status."""

    name = "FakePreFilter"
    result: ClassVar[frozenset[str] | None] = None
    status: ClassVar[Status | None] = None

    def pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot) -> PreFilterResult | Status | None:
        st = Status(self.status.code, self.status.reasons) if self.status is not None else Status()
        return PreFilterResult(self.result, st)


class SkipThenErrorFilter(FakePreFilter, FakeFilter):
    """tf.FakePreFilterAndFilterPlugin: PreFilter Skips, so its Filter (an Error on every node)
    must never run."""

    status = Status(Code.Skip)

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        return FilterResult.from_mask(np.ones(len(rows), bool), "must not run", Code.Error)


# ---- Score ----------------------------------------------------------------------------------
class EqualPrioritizer(ScorePlugin):
    name = "EqualPrioritizerPlugin"

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        return np.ones(len(rows), np.int64)


class NumericMap(ScorePlugin):
    """numericMapPlugin: a node's score is its name as a number."""

    name = "NumericMap"

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        out = []
        for n in _names(snap, rows):
            if not n.isdigit():
                raise PluginError(f"Error converting nodename to int: {n}")
            out.append(int(n))
        return np.asarray(out, np.int64)


class ReverseNumericMap(NumericMap):
    """reverseNumericMapPlugin: NormalizeScore to max + min - score (max starts at 0, as in Go)."""

    name = "ReverseNumericMap"

    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        hi = max(0, int(scores.max()))
        lo = int(scores.min())
        return hi + lo - scores


class TrueMap(ScorePlugin):
    name = "TrueMap"

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        return np.ones(len(rows), np.int64)

    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        return scores


class FalseMap(ScorePlugin):
    """falseMapPlugin: Score returns ``fwk.AsStatus(errPrioritize)``."""

    name = "FalseMap"

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        raise PluginError("priority map encounters an error")


class SkipPreScoreAndScore(PreScorePlugin, ScorePlugin):
    """tf.NewFakePreScoreAndScorePlugin(name, 0, Skip, Error): Score must never run."""

    name = "FakePreScoreAndScorePlugin"

    def pre_score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> Status | None:
        return Status(Code.Skip, ("fake skip",))

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        raise PluginError("this score function shouldn't be executed because this plugin returned Skip in the PreScore")


# ---- Reserve, Permit, PreBind ---------------------------------------------------------------
class FakeReserve(ReservePlugin):
    """tf.NewFakeReservePlugin(status)."""

    name = "FakeReserve"
    status: ClassVar[Status] = Status()

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return Status(self.status.code, self.status.reasons)


class FakePermit(PermitPlugin):
    """tf.NewFakePermitPlugin(status, timeout)."""

    name = "FakePermit"
    status: ClassVar[Status] = Status()
    timeout: ClassVar[float] = 60.0

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        return Status(self.status.code, self.status.reasons), self.timeout


class FakePreBind(PreBindPlugin):
    """tf.NewFakePreBindPlugin(preFlightStatus, preBindStatus); ``calls`` counts PreBind calls."""

    name = "FakePreBind"
    pre_flight: ClassVar[Status] = Status()
    status: ClassVar[Status] = Status()
    calls: ClassVar[list[str]] = []

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return Status(self.pre_flight.code, self.pre_flight.reasons)

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.calls.append(pod.name)
        return Status(self.status.code, self.status.reasons)


# ---- a one-profile scheduler ------------------------------------------------------------------
#: extension point of each fake base class, as tf.Register<Point>Plugin registers it
_POINTS = {
    PreEnqueuePlugin: "preEnqueue",
    FilterPlugin: "filter",
    PreFilterPlugin: "preFilter",
    PreScorePlugin: "preScore",
    ScorePlugin: "score",
    ReservePlugin: "reserve",
    PermitPlugin: "permit",
    PreBindPlugin: "preBind",
}


class RecordingCluster(MemoryCluster):
    """MemoryCluster that records nominations (the status patches' nominatedNodeName) and can
    fail bindings (the fake clientset's binding reactor returning an error)."""

    def __init__(self, bind_error: str | None = None) -> None:
        super().__init__()
        self.bind_error = bind_error
        self.nominations: list[tuple[str, str]] = []

    def bind(self, pod: Pod, node_name: str) -> None:
        if self.bind_error is not None:
            raise RuntimeError(self.bind_error)
        super().bind(pod, node_name)

    def set_nominated_node(self, pod: Pod, node_name: str) -> None:
        self.nominations.append((pod.name, node_name))
        super().set_nominated_node(pod, node_name)


def new_scheduler(
    plugins: list[type | tuple[type, str, ...] | tuple[type, int]],
    nodes: list[dict],
    pods: list[dict] = (),  # type: ignore[assignment]
    *,
    cluster: MemoryCluster | None = None,
    seed: int = 0,
) -> Scheduler:
    """tf.NewFramework with PrioritySort and DefaultBinder plus ``plugins``: a class (registered
    at every point it implements), ``(class, weight)`` for a score plugin, or ``(class, point,
    ...)`` for named points only (tf.RegisterPluginAsExtensions). Built-in classes keep their
    registry entry."""
    reg = in_tree_registry(entry_points=False)
    points: dict[str, list[PluginRef]] = {p: [] for p in EXTENSION_POINTS}
    points["queueSort"].append(PluginRef("PrioritySort"))
    points["bind"].append(PluginRef("DefaultBinder"))
    args: dict[str, dict] = {}
    for spec in plugins:
        cls, *rest = spec if isinstance(spec, tuple) else (spec,)
        weight = rest[0] if rest and isinstance(rest[0], int) else 1
        named = [p for p in rest if isinstance(p, str)]
        if reg.points_of(cls.name) is None:
            reg.register(cls)
        elif cls.name in ARGS_PLUGINS:  # in-tree args, defaulted as the config layer does
            args[cls.name] = default_args(cls.name)
        for base, point in _POINTS.items():
            if issubclass(cls, base) and (not named or point in named):
                points[point].append(PluginRef(cls.name, weight if point == "score" else 0))
    profile = Profile("default-scheduler", None, points, args)
    config = SchedulerConfig(V1, 16, 0, 1, 10, [profile])
    snap = build_snapshot(nodes, pods)
    return Scheduler(config, snap, cluster, reg, seed=seed)
