"""The fake plugins of test/integration/scheduler/plugins/plugins_test.go, loaded with
``--plugin-path``; each counts its calls (a node checked or scored counts once) and takes its
switches from its args. ``EVENTS`` is upstream's pluginInvokeEventChan: (plugin, its count) for
each Bind, Unreserve and PostBind call, in order (every load of this file has its own)."""

from __future__ import annotations

from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.failures import PluginFailure
from kubesched.framework.interfaces import (
    MAX_NODE_SCORE,
    BindPlugin,
    FilterPlugin,
    PermitPlugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
)
from kubesched.framework.status import Code, FilterResult, PluginError, PreFilterResult, Status
from kubesched.framework.waiting import request_activation
from kubesched.state.snapshot import Snapshot

EVENTS: list[tuple[str, int]] = []


class PreFilter(PreFilterPlugin):
    name = "prefilter-plugin"
    calls = 0

    def pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot) -> PreFilterResult | Status | None:
        self.calls += 1
        if self.args.get("fail"):
            raise PluginError(f"injecting failure for pod {pod.name}")
        if self.args.get("reject"):
            return Status(Code.Unschedulable, (f"reject pod {pod.name}",))
        nodes = self.args.get("nodes")
        return PreFilterResult(node_names=frozenset(nodes)) if nodes else None


class Filter(FilterPlugin):
    name = "filter-plugin"
    calls = 0

    def __init__(self, args: dict[str, Any] | None = None, handle: Any = None) -> None:
        super().__init__(args, handle)
        self.calls_per_pod: dict[str, int] = {}  # numCalledPerPod

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        self.calls += len(rows)
        self.calls_per_pod[pod.key] = self.calls_per_pod.get(pod.key, 0) + len(rows)
        if self.args.get("fail"):
            raise PluginError(f"injecting failure for pod {pod.name}")
        if self.args.get("reject"):
            return FilterResult.from_mask(np.ones(len(rows), bool), f"reject pod {pod.name}")
        return FilterResult.all_pass(len(rows))


class Score(ScorePlugin):
    """The first node ever scored gets the highest score, every other node 1."""

    name = "score-plugin"
    calls = 0
    high_score_node = ""

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        if self.args.get("fail"):
            self.calls += 1
            raise PluginError(f"injecting failure for pod {pod.name}")
        out = np.ones(len(rows), np.int64)
        if self.calls == 0 and len(rows):
            out[0] = MAX_NODE_SCORE
            self.high_score_node = snap.nodes[int(rows[0])].name
        self.calls += len(rows)
        return out


class ScoreWithNormalize(ScorePlugin):
    name = "score-with-normalize-plugin"
    calls = 0
    normalize_calls = 0

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        self.calls += len(rows)
        return np.full(len(rows), 10, np.int64)

    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray | None:
        self.normalize_calls += 1
        return scores


class PostFilter(PostFilterPlugin):
    """Runs the Filter plugins on every node and the Score plugins, then answers as its args say:
    reject (Unschedulable), break (UnschedulableAndUnresolvable) or make room (Success)."""

    name = "postfilter-plugin"
    calls = 0

    def post_filter(self, state: CycleState, pod: Pod, snap: Snapshot, diagnosis: Any) -> tuple[str | None, Status]:
        self.calls += 1
        fw = self.handle.framework
        rows = np.arange(snap.n, dtype=np.intp)
        try:
            fw.filter_rows(state, pod, snap, rows, None, nominated=False)  # RunFilterPlugins, node by node
            fw.run_score(state, pod, snap, rows)  # RunScorePlugins; its status is not looked at
        except PluginFailure:
            pass
        if self.args.get("reject"):
            return None, Status(Code.Unschedulable, (f"injecting unschedulable for pod {pod.name}",))
        if self.args.get("break"):
            return None, Status(Code.UnschedulableAndUnresolvable, (f"injecting unresolvable for pod {pod.name}",))
        return None, Status(Code.Success, (f"make room for pod {pod.name} to be schedulable",))


class PostFilter2(PostFilter):
    name = "postfilter-plugin2"
    calls = 0


class Reserve(ReservePlugin):
    """Counts Reserve and Unreserve calls; Reserve fails with ``fail``."""

    name = "reserve-plugin"
    calls = 0
    unreserve_calls = 0

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.calls += 1
        if self.args.get("fail"):
            return Status.error(f"injecting failure for pod {pod.name}")
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.unreserve_calls += 1
        EVENTS.append((self.name, self.unreserve_calls))


# the Reserve plugins TestUnReserve* configure, by name
for _name in (
    "failedReservePlugin1", "failedReservePlugin2", "succeedReservePlugin", "succeedReservePlugin1",
    "succeedReservePlugin2", "succeedReservePlugin3", "reservePlugin", "mock-reserve-plugin",
):  # fmt: skip
    globals()[_name] = type(_name, (Reserve,), {"name": _name, "__module__": __name__})


class PreBind(PreBindPlugin):
    """Fails (Error) with ``fail``, rejects (Unschedulable) with ``reject``; with
    ``succeedOnRetry`` a pod tried before always passes."""

    name = "prebind-plugin"
    calls = 0

    def __init__(self, args: dict[str, Any] | None = None, handle: Any = None) -> None:
        super().__init__(args, handle)
        self.tried: set[str] = set()

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.calls += 1
        if pod.uid in self.tried and self.args.get("succeedOnRetry"):
            return None
        self.tried.add(pod.uid)
        if self.args.get("fail"):
            return Status.error(f"injecting failure for pod {pod.name}")
        if self.args.get("reject"):
            return Status(Code.Unschedulable, (f"reject pod {pod.name}",))
        return None


class Permit(PermitPlugin):
    """Asks for the pending pods labelled ``activate`` to be activated, then fails (Error) with
    ``fail``, rejects with ``reject``, waits 3s with ``timeout``. With
    ``waitAndReject`` or ``waitAndAllow`` the first pod it sees (or ``waitingPod``) waits 30s and every other pod
    rejects (and rejects every waiting pod) or allows every waiting pod."""

    name = "permit-plugin"
    calls = 0
    rejecting_pod = allowing_pod = ""

    def __init__(self, args: dict[str, Any] | None = None, handle: Any = None) -> None:
        super().__init__(args, handle)
        self.waiting_pod: str = self.args.get("waitingPod", "")  # the pod that waits, if set

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        self.calls += 1
        if label := self.args.get("activate"):  # ask for the pending pods with this label first
            assert self.handle is not None and self.handle.nominator is not None
            request_activation(state, [p for p in self.handle.nominator.pending_pods() if label in p.labels])
        if self.args.get("fail"):
            return Status.error(f"injecting failure for pod {pod.name}"), 0
        if self.args.get("reject"):
            return Status(Code.Unschedulable, (f"reject pod {pod.name}",)), 0
        if self.args.get("timeout"):
            return Status(Code.Wait), 3
        if self.args.get("waitAndReject") or self.args.get("waitAndAllow"):
            if self.waiting_pod in ("", pod.name):
                self.waiting_pod = pod.name
                return Status(Code.Wait), 30
            if self.args.get("waitAndReject"):
                self.rejecting_pod = pod.name
                self.handle.iterate_over_waiting_pods(lambda wp: wp.reject(self.name, f"reject pod {wp.get_pod().name}"))
                return Status(Code.Unschedulable, (f"reject pod {pod.name}",)), 0
            self.allowing_pod = pod.name
            self.allow_all_pods()
        return Status(), 0

    def allow_all_pods(self) -> None:
        self.handle.iterate_over_waiting_pods(lambda wp: wp.allow(self.name))

    def reject_all_pods(self) -> None:
        self.handle.iterate_over_waiting_pods(lambda wp: wp.reject(self.name, "rejectAllPods"))

    events_to_register = frozenset()  # EventsToRegister: nil, nil


for _name in ("rejectedPermitPlugin", "timeoutPermitPlugin", "succeedPermitPlugin", "permit-plugin-1", "permit-plugin-2"):
    globals()[_name] = type(_name, (Permit,), {"name": _name, "__module__": __name__})


class Bind(BindPlugin):
    """Returns the status its args name (``status``: Success, Skip or Error, ``message``); on
    Success it binds the pod first and notes it in ``bound`` (upstream's bindPluginName
    annotation). Default: Success."""

    name = "bind-plugin-1"
    calls = 0

    def __init__(self, args: dict[str, Any] | None = None, handle: Any = None) -> None:
        super().__init__(args, handle)
        self.bound: list[str] = []
        self.events = EVENTS  # this load's

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.calls += 1
        EVENTS.append((self.name, self.calls))
        code = Code[self.args.get("status", "Success")]
        if code == Code.Success:
            self.handle.cluster.bind(pod, node_name)
            self.bound.append(pod.key)
        return Status(code, (self.args.get("message", ""),))


for _name in ("bind-plugin-2", "SucceedBindPlugin", "FailedBindPlugin"):
    globals()[_name] = type(_name, (Bind,), {"name": _name, "__module__": __name__})


class PostBind(PostBindPlugin):
    name = "postbind-plugin"
    calls = 0

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.calls += 1
        EVENTS.append((self.name, self.calls))


class MockPostBind(PostBind):
    name = "mock-post-bind-plugin"
    calls = 0


class PreScore(PreScorePlugin):
    name = "prescore-plugin"
    calls = 0

    def pre_score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> Status | None:
        self.calls += 1
        if self.args.get("fail"):
            return Status.error(f"injecting failure for pod {pod.name}")
        return None


class PreEnqueue(PreEnqueuePlugin):
    """Admits every pod with ``admit``, else none."""

    name = "enqueue-plugin"
    calls = 0

    def pre_enqueue(self, pod: Pod) -> Status | None:
        self.calls += 1
        if self.args.get("admit"):
            return None
        return Status(Code.UnschedulableAndUnresolvable, ("not ready for scheduling",))


class QueueSort(QueueSortPlugin):
    """``order``: "timestamp" (earlier first) or "priority" (higher first, then earlier)."""

    name = "queuesort-plugin"

    def less(self, a: Any, b: Any) -> bool:
        if self.args.get("order") == "priority":
            pa, pb = a.pod.priority, b.pod.priority
            return pa > pb or (pa == pb and a.timestamp < b.timestamp)
        return a.timestamp < b.timestamp


class Job(PreFilterPlugin, PostBindPlugin):
    """A Spark-like job: PreFilter rejects every pod until a "driver"-labelled pod exists in the
    namespace (pending or bound); binding the driver activates the "executor" pods."""

    name = "job plugin"
    pods_activated = False

    def _pods(self, namespace: str, label: str) -> list[Pod]:
        assert self.handle is not None and self.handle.nominator is not None
        bound = self.handle.snapshot.pod_by_uid.values()
        return [p for p in (*bound, *self.handle.nominator.pending_pods()) if p.namespace == namespace and label in p.labels]

    def pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot) -> PreFilterResult | Status | None:
        if not self._pods(pod.namespace, "driver"):
            return Status(Code.UnschedulableAndUnresolvable, ("unable to find driver pod",))
        return None

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        if "driver" not in pod.labels:
            return
        executors = self._pods(pod.namespace, "executor")
        if executors:
            request_activation(state, executors)
            self.pods_activated = True
