"""kube-scheduler v1.36 pkg/scheduler/schedule_one_test.go: TestSchedulerSchedulePod and
TestSchedulerScheduleOne, with the fake plugins of testing/framework (tests/framework/fake_plugins.py).

TestSchedulerSchedulePod (30 cases, 29 ported). Left out: "test with extender which filters out
some Nodes" (kube-scheduler's scheduler-side extender calls; kubesched serves the extender
protocol but does not call extenders). The PVC cases load their claims and PVs into the
snapshot's storage with the bind-completed annotation, as upstream's test does. Each case runs with the equivalence cache on and off.
Upstream compares the FitError struct; here its parts are compared: the message (``Error()``),
each node's status (code, reasons, plugin), the absent nodes' status, the PreFilter message and
the unschedulable plugins.

TestSchedulerScheduleOne (17 cases, 15 ported). The Go test swaps ``SchedulePod`` for a mock
returning ``mockScheduleResult``/``injectSchedulingError``; here ``Scheduler.propose_pod`` (the
cycle up to host selection) is replaced the same way. Upstream runs each case with AsyncAPICalls, NominatedNodeNameForExpectation
and pod-group scheduling on and off; kubesched has one behaviour, v1.36's defaults (synchronous
API calls, NominatedNodeNameForExpectation on, no pod groups), so each case runs once with those.
Left out: "nominated node name is not set, permit plugin is working, but the feature gate
NominatedNodeNameForExpectation is disabled" (the gate is off only) and "prebind pod cancelled
during prebind (external preemption)" (a PreBind blocked on a goroutine and cancelled from
outside; kubesched's binding cycle is synchronous). Upstream's assumed/forgotten pods carry the
suggested node; here the snapshot's add/remove of the pod's uid are recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from fake_plugins import (
    ERR_REASON_FAKE,
    EqualPrioritizer,
    FakeFilter,
    FakePermit,
    FakePreBind,
    FakePreFilter,
    FakeReserve,
    FalseFilter,
    FalseMap,
    MatchFilter,
    NoPodsFilter,
    NumericMap,
    RecordingCluster,
    ReverseNumericMap,
    SkipPreScoreAndScore,
    SkipThenErrorFilter,
    TrueFilter,
    TrueMap,
    new_scheduler,
    variant,
)

from kubesched.api.objects import Pod
from kubesched.framework.cycle import Feasible, Proposal
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.failures import PluginFailure
from kubesched.framework.status import Code, Status
from kubesched.plugins.podtopologyspread import PodTopologySpread
from kubesched.plugins.volumebinding import VolumeBinding
from kubesched.scheduler import ScheduleResult
from kubesched.testing import make_node, make_pod
from kubesched.testing_storage import make_pv, make_pvc, pvc_volume, with_storage

U, UU = Code.Unschedulable, Code.UnschedulableAndUnresolvable


def nodes(*names: str) -> list[dict]:
    """``{ObjectMeta: {Name: n, Labels: {kubernetes.io/hostname: n}}}``: no capacity at all."""
    return [make_node(n, pods=None) for n in names]


def pod(name: str, **kw: Any) -> dict:
    return make_pod(name, uid=name, **kw)


def running(name: str, node: str, **kw: Any) -> dict:
    d = pod(name, node=node, **kw)
    d["status"] = {"phase": "Running"}
    return d


def spread(name: str, max_skew: int) -> dict:
    """st.MakePod().Label("foo", "").SpreadConstraint(maxSkew, hostname, DoNotSchedule, foo Exists)."""
    constraint = {
        "maxSkew": max_skew,
        "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
    }
    return pod(name, labels={"foo": ""}, spec={"topologySpreadConstraints": [constraint]})


@dataclass
class Fit:
    """The expected FitError: message, explicit node statuses, absent status, PreFilter message,
    unschedulable plugins."""

    message: str
    nodes: dict[str, tuple[Code, str, str]] = field(default_factory=dict)  # node -> (code, reason, plugin)
    absent: tuple[Code, str] = (UU, "")
    pre_filter_msg: str = ""
    plugins: frozenset[str] = frozenset()


@dataclass
class SchedulePodCase:
    name: str
    plugins: list
    nodes: list[dict]
    pod: dict
    want_nodes: set[str] | None = None
    pods: list[dict] = field(default_factory=list)
    want_evaluated: int | None = None
    err: Fit | str | None = None
    storage: list[dict] = field(default_factory=list)  # PVCs and PVs (upstream's pvcs, pvs)


VB = (VolumeBinding, "preFilter")


def bound_pvc(name: str, volume: str = "", **meta: Any) -> dict:
    """A claim as upstream's test creates it: bind-completed annotation, volumeName, no spec else."""
    d = make_pvc(name, uid=name, volume_name=volume or None, request=None, access_modes=(),
                 annotations={"pv.kubernetes.io/bind-completed": "true"})
    d["metadata"].update(meta)
    return d


def pvc_pod(name: str, claim: str) -> dict:
    return pod(name, spec={"volumes": [pvc_volume(claim)]})


FAKE_FILTER_3_U = variant(FakeFilter, "FakeFilter", codes={"3": U})
PTS = (PodTopologySpread, "preFilter", "filter")

SCHEDULE_POD_CASES = [
    SchedulePodCase(
        "test 1",
        [FalseFilter],
        nodes("node1", "node2"),
        pod("2"),
        err=Fit(
            f"0/2 nodes are available: 2 {ERR_REASON_FAKE}.",
            {"node1": (U, ERR_REASON_FAKE, "FalseFilter"), "node2": (U, ERR_REASON_FAKE, "FalseFilter")},
            plugins=frozenset({"FalseFilter"}),
        ),
    ),
    SchedulePodCase("test 2", [TrueFilter, (EqualPrioritizer, 1)], nodes("node1", "node2"), pod("ignore"), {"node1", "node2"}),
    SchedulePodCase("test 3", [MatchFilter], nodes("node1", "node2"), pod("node2"), {"node2"}),
    SchedulePodCase("test 4", [TrueFilter, (NumericMap, 1)], nodes("3", "2", "1"), pod("ignore"), {"3"}),
    SchedulePodCase("test 5", [MatchFilter, (NumericMap, 1)], nodes("3", "2", "1"), pod("2"), {"2"}),
    SchedulePodCase(
        "test 6", [TrueFilter, (NumericMap, 1), (ReverseNumericMap, 2)], nodes("3", "2", "1"), pod("2"), {"1"}
    ),
    SchedulePodCase(
        "test 7",
        [TrueFilter, FalseFilter, (NumericMap, 1)],
        nodes("3", "2", "1"),
        pod("2"),
        err=Fit(
            f"0/3 nodes are available: 3 {ERR_REASON_FAKE}.",
            {n: (U, ERR_REASON_FAKE, "FalseFilter") for n in ("3", "2", "1")},
            plugins=frozenset({"FalseFilter"}),
        ),
    ),
    SchedulePodCase(
        "test 8",
        [NoPodsFilter, MatchFilter, (NumericMap, 1)],
        nodes("1", "2"),
        pod("2"),
        pods=[running("2", "2")],
        err=Fit(
            f"0/2 nodes are available: 2 {ERR_REASON_FAKE}.",
            {"1": (U, ERR_REASON_FAKE, "MatchFilter"), "2": (U, ERR_REASON_FAKE, "NoPodsFilter")},
            plugins=frozenset({"MatchFilter", "NoPodsFilter"}),
        ),
    ),
    SchedulePodCase(
        "existing PVC",
        [VB, TrueFilter, (EqualPrioritizer, 1)],
        nodes("node1", "node2"),
        pvc_pod("ignore", "existingPVC"),
        want_nodes={"node1", "node2"},
        storage=[bound_pvc("existingPVC", "existingPV"), make_pv("existingPV", capacity=None, access_modes=(), phase=None)],
    ),
    SchedulePodCase(
        "unknown PVC",
        [VB, TrueFilter],
        nodes("node1", "node2"),
        pvc_pod("ignore", "unknownPVC"),
        err=Fit(
            '0/2 nodes are available: persistentvolumeclaim "unknownPVC" not found.',
            absent=(UU, 'persistentvolumeclaim "unknownPVC" not found'),
            pre_filter_msg='persistentvolumeclaim "unknownPVC" not found',
            plugins=frozenset({"VolumeBinding"}),
        ),
    ),
    SchedulePodCase(
        "deleted PVC",
        [VB, TrueFilter],
        nodes("node1", "node2"),
        pvc_pod("ignore", "existingPVC"),
        storage=[bound_pvc("existingPVC", deletionTimestamp="2026-01-01T00:00:00Z")],
        err=Fit(
            '0/2 nodes are available: persistentvolumeclaim "existingPVC" is being deleted.',
            absent=(UU, 'persistentvolumeclaim "existingPVC" is being deleted'),
            pre_filter_msg='persistentvolumeclaim "existingPVC" is being deleted',
            plugins=frozenset({"VolumeBinding"}),
        ),
    ),
    SchedulePodCase(
        "test error with priority map",
        [TrueFilter, (FalseMap, 1), (TrueMap, 2)],
        nodes("2", "1"),
        pod("2"),
        err='running Score plugins: plugin "FalseMap" failed with: priority map encounters an error',
    ),
    SchedulePodCase(
        "test podtopologyspread plugin - 2 nodes with maxskew=1",
        [PTS],
        nodes("node1", "node2"),
        spread("p", 1),
        pods=[running("pod1", "node1", labels={"foo": ""})],
        want_nodes={"node2"},
    ),
    SchedulePodCase(
        "test podtopologyspread plugin - 3 nodes with maxskew=2",
        [PTS, (EqualPrioritizer, 1)],
        nodes("node1", "node2", "node3"),
        spread("p", 2),
        pods=[
            running("pod1a", "node1", labels={"foo": ""}),
            running("pod1b", "node1", labels={"foo": ""}),
            running("pod2", "node2", labels={"foo": ""}),
        ],
        want_nodes={"node2", "node3"},
    ),
    SchedulePodCase(
        "test with filter plugin returning Unschedulable status",
        [FAKE_FILTER_3_U, (NumericMap, 1)],
        nodes("3"),
        pod("test-filter"),
        err=Fit(
            "0/1 nodes are available: 1 injecting failure for pod test-filter.",
            {"3": (U, "injecting failure for pod test-filter", "FakeFilter")},
            plugins=frozenset({"FakeFilter"}),
        ),
    ),
    SchedulePodCase(
        "test with filter plugin returning UnschedulableAndUnresolvable status",
        [variant(FakeFilter, "FakeFilter", codes={"3": UU}), (NumericMap, 1)],
        nodes("3"),
        pod("test-filter"),
        err=Fit(
            "0/1 nodes are available: 1 injecting failure for pod test-filter.",
            {"3": (UU, "injecting failure for pod test-filter", "FakeFilter")},
            plugins=frozenset({"FakeFilter"}),
        ),
    ),
    SchedulePodCase(
        "test with partial failed filter plugin",
        [variant(FakeFilter, "FakeFilter", codes={"1": U}), (NumericMap, 1)],
        nodes("1", "2"),
        pod("test-filter"),
    ),
    SchedulePodCase(
        "test prefilter plugin returning Unschedulable status",
        [variant(FakePreFilter, "FakePreFilter", status=Status(UU, ("injected unschedulable status",)))],
        nodes("1", "2"),
        pod("test-prefilter"),
        err=Fit(
            "0/2 nodes are available: injected unschedulable status.",
            absent=(UU, "injected unschedulable status"),
            pre_filter_msg="injected unschedulable status",
            plugins=frozenset({"FakePreFilter"}),
        ),
    ),
    SchedulePodCase(
        "test prefilter plugin returning error status",
        [variant(FakePreFilter, "FakePreFilter", status=Status(Code.Error, ("injected error status",)))],
        nodes("1", "2"),
        pod("test-prefilter"),
        err='running PreFilter plugin "FakePreFilter": injected error status',
    ),
    SchedulePodCase(
        "test prefilter plugin returning node",
        [
            variant(FakePreFilter, "FakePreFilter1"),
            variant(FakePreFilter, "FakePreFilter2", result=frozenset({"node2"})),
            variant(FakePreFilter, "FakePreFilter3", result=frozenset({"node1", "node2"})),
        ],
        nodes("node1", "node2", "node3"),
        pod("test-prefilter"),
        want_nodes={"node2"},
        want_evaluated=1,  # no score plugin: Filter looks for one node only
    ),
    SchedulePodCase(
        "test prefilter plugin returning non-intersecting nodes",
        [
            variant(FakePreFilter, "FakePreFilter1"),
            variant(FakePreFilter, "FakePreFilter2", result=frozenset({"node2"})),
            variant(FakePreFilter, "FakePreFilter3", result=frozenset({"node1"})),
        ],
        nodes("node1", "node2", "node3"),
        pod("test-prefilter"),
        err=Fit(
            "0/3 nodes are available: node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3] simultaneously.",
            absent=(UU, "node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3] simultaneously"),
            pre_filter_msg="node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3] simultaneously",
            plugins=frozenset({"FakePreFilter2", "FakePreFilter3"}),
        ),
    ),
    SchedulePodCase(
        "test prefilter plugin returning empty node set",
        [variant(FakePreFilter, "FakePreFilter1"), variant(FakePreFilter, "FakePreFilter2", result=frozenset())],
        nodes("node1"),
        pod("test-prefilter"),
        err=Fit(
            "0/1 nodes are available: node(s) didn't satisfy plugin FakePreFilter2.",
            absent=(UU, "node(s) didn't satisfy plugin FakePreFilter2"),
            pre_filter_msg="node(s) didn't satisfy plugin FakePreFilter2",
            plugins=frozenset({"FakePreFilter2"}),
        ),
    ),
    SchedulePodCase(
        "test some nodes are filtered out by prefilter plugin and other are filtered out by filter plugin",
        [
            variant(FakePreFilter, "FakePreFilter", result=frozenset({"node2"})),
            variant(FakeFilter, "FakeFilter", codes={"node2": U}),
        ],
        nodes("node1", "node2"),
        pod("test-prefilter"),
        err=Fit(
            "0/2 nodes are available: 1 injecting failure for pod test-prefilter, "
            "1 node(s) didn't satisfy plugin(s) [FakePreFilter].",
            {"node2": (U, "injecting failure for pod test-prefilter", "FakeFilter")},
            absent=(UU, "node(s) didn't satisfy plugin(s) [FakePreFilter]"),
            plugins=frozenset({"FakePreFilter", "FakeFilter"}),
        ),
    ),
    SchedulePodCase(
        "test prefilter plugin returning skip",
        [
            variant(FakePreFilter, "FakePreFilter1"),
            variant(FakeFilter, "FakeFilter1", codes={"node1": U}),
            variant(SkipThenErrorFilter, "FakeFilter2"),
            (EqualPrioritizer, 1),
        ],
        nodes("node1", "node2", "node3"),
        pod("test-prefilter"),
        want_nodes={"node2", "node3"},
        want_evaluated=3,
    ),
    SchedulePodCase(
        "test all prescore plugins return skip",
        [TrueFilter, SkipPreScoreAndScore],
        nodes("node1", "node2"),
        pod("ignore"),
        want_nodes={"node1", "node2"},
    ),
    SchedulePodCase(
        "test without score plugin no extra nodes are evaluated",
        [TrueFilter],
        nodes("node1", "node2", "node3"),
        pod("pod1"),
        want_nodes={"node1", "node2", "node3"},
        want_evaluated=1,
    ),
    SchedulePodCase(
        "test no score plugin, prefilter plugin returning 2 nodes",
        [variant(FakePreFilter, "FakePreFilter", result=frozenset({"node1", "node2"}))],
        nodes("node1", "node2", "node3"),
        pod("test-prefilter"),
        want_nodes={"node1", "node2"},
        want_evaluated=1,
    ),
    SchedulePodCase(
        "test prefilter plugin returned an invalid node",
        [variant(FakePreFilter, "FakePreFilter", result=frozenset({"invalid-node"})), TrueFilter],
        nodes("1", "2"),
        pod("test-prefilter"),
        err=Fit(
            "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [FakePreFilter].",
            absent=(UU, "node(s) didn't satisfy plugin(s) [FakePreFilter]"),
            plugins=frozenset({"FakePreFilter"}),
        ),
    ),
    SchedulePodCase(
        "hostname and nodename of the node do not match",
        [VB, TrueFilter, (EqualPrioritizer, 1)],
        [make_node("node1", pods=None, labels={"kubernetes.io/hostname": "host1"})],
        pvc_pod("pod1", "PVC1"),
        want_nodes={"node1"},
        storage=[
            bound_pvc("PVC1", "PV1"),
            make_pv("PV1", capacity=None, access_modes=(), phase=None,
                    node_affinity=[{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["host1"]}]}]),
        ],
    ),
]


def _statuses(sched: Any, res: ScheduleResult) -> dict[str, tuple[Code, str, str]]:
    diag = res.diagnosis
    assert diag is not None
    out = {}
    for row, st in diag.statuses().items():
        out[sched.snapshot.nodes[row].name] = (st.code, ", ".join(st.reasons), st.plugin)
    return out


@pytest.mark.parametrize("cache", [True, False], ids=["cache", "no-cache"])
@pytest.mark.parametrize("case", SCHEDULE_POD_CASES, ids=[c.name for c in SCHEDULE_POD_CASES])
def test_scheduler_schedule_pod(case: SchedulePodCase, cache: bool) -> None:
    sched = new_scheduler(case.plugins, case.nodes, case.pods)
    with_storage(sched.snapshot, *case.storage)
    sched.use_equivalence_cache = cache
    fw = sched.frameworks["default-scheduler"]
    try:
        res = sched.schedule_pod(fw, CycleState(), Pod.parse(case.pod))
    except PluginFailure as e:  # a plugin's Error status (the scheduler turns it into the result)
        res = ScheduleResult(Pod.parse(case.pod), fw.profile_name, code=Code.Error, message=e.status.message)
    if case.err is None:
        assert res.code == Code.Success and res.message is None, res.message
        if case.want_nodes is not None:
            assert res.node in case.want_nodes
        want = len(case.nodes) if case.want_evaluated is None else case.want_evaluated
        assert res.evaluated == want
        return
    assert res.node is None
    if isinstance(case.err, str):
        assert (res.code, res.message) == (Code.Error, case.err)
        return
    fit = case.err
    assert res.code in (U, UU)
    assert res.message == fit.message
    assert _statuses(sched, res) == fit.nodes
    absent = res.diagnosis.absent_status or Status(UU)
    assert (absent.code, absent.message) == fit.absent
    assert res.diagnosis.pre_filter_msg == fit.pre_filter_msg
    assert frozenset(res.diagnosis.unschedulable_plugins) == fit.plugins


# ---- TestSchedulerScheduleOne -------------------------------------------------------------------
TEST_NODE = "node1"


@dataclass
class ScheduleOneCase:
    name: str
    plugins: list = field(default_factory=list)
    send_pod: dict = field(default_factory=lambda: pod("foo"))
    inject_bind_error: str | None = None
    inject_scheduling_error: str | None = None
    pod_to_admit: str | None = None  # plugin that allows the waiting pod
    mock_ok: bool = True  # mockScheduleResult: scheduleResultOk (node1, 1 evaluated, 1 feasible) or empty
    expect_error_pod: bool = False
    expect_forget_pod: bool = False
    expect_assumed_pod: bool = False
    expect_backoff: bool = False
    expect_unschedulable: bool = False
    expect_error: str | None = None
    expect_nominated: str = ""
    expect_bind: bool = False
    event_reason: str = ""
    pre_bind_calls: int | None = None


def deleting(name: str) -> dict:
    d = pod(name)
    d["metadata"]["deletionTimestamp"] = "1970-01-01T00:00:00Z"
    return d


def with_nominated(d: dict, node: str) -> dict:
    d["status"] = {"nominatedNodeName": node}
    return d


def reserve(status: Status) -> type:
    return variant(FakeReserve, "FakeReserve", status=status)


def permit(status: Status) -> type:
    return variant(FakePermit, "FakePermit", status=status)


def pre_bind(pre_flight: Status, status: Status) -> type:
    return variant(FakePreBind, "FakePreBind", pre_flight=pre_flight, status=status, calls=[])


def predicate_error(reason: str) -> str:
    """makePredicateError: ``0/1 nodes are available: <reason>.``"""
    return f"0/1 nodes are available: {reason}."


ERR = Code.Error
SCHEDULE_ONE_CASES = [
    ScheduleOneCase(
        "schedule pod failed",
        inject_scheduling_error="scheduler",
        expect_error="scheduler",
        expect_error_pod=True,
        expect_backoff=True,
        event_reason="FailedScheduling",
    ),
    ScheduleOneCase(
        "reserve failed with status code error",
        [reserve(Status(ERR, ("reserve error",)))],
        expect_error_pod=True,
        expect_forget_pod=True,
        expect_assumed_pod=True,
        expect_backoff=True,
        expect_error='running Reserve plugin "FakeReserve": reserve error',
        event_reason="FailedScheduling",
    ),
    ScheduleOneCase(
        "reserve failed with status code rejected",
        [reserve(Status(UU, ("rejected on reserve",)))],
        expect_error_pod=True,
        expect_forget_pod=True,
        expect_assumed_pod=True,
        expect_unschedulable=True,
        expect_error=predicate_error("1 rejected on reserve"),
        event_reason="FailedScheduling",
    ),
    ScheduleOneCase(
        "permit failed with status code error",
        [permit(Status(ERR, ("permit error",)))],
        expect_error_pod=True,
        expect_forget_pod=True,
        expect_assumed_pod=True,
        expect_backoff=True,
        expect_error='running Permit plugin "FakePermit": permit error',
        event_reason="FailedScheduling",
    ),
    ScheduleOneCase(
        "permit failed with status code rejected",
        [permit(Status(U, ("rejected on permit",)))],
        expect_error_pod=True,
        expect_forget_pod=True,
        expect_assumed_pod=True,
        expect_unschedulable=True,
        expect_error=predicate_error("1 rejected on permit"),
        event_reason="FailedScheduling",
    ),
    ScheduleOneCase(
        "nominated node name is set, permit plugin is working in wait on permit phase",
        [permit(Status(Code.Wait, ("rejected on permit",)))],
        pod_to_admit="FakePermit",
        expect_nominated=TEST_NODE,
        expect_assumed_pod=True,
        expect_bind=True,
        event_reason="Scheduled",
    ),
    ScheduleOneCase(
        "prebindpreflight failed with status code error",
        [pre_bind(Status(ERR, ("on PreBindPreFlight",)), Status())],
        expect_error_pod=True,
        expect_forget_pod=True,
        expect_assumed_pod=True,
        expect_backoff=True,
        expect_error='running PreBindPreFlight "FakePreBind": on PreBindPreFlight',
        event_reason="FailedScheduling",
    ),
    ScheduleOneCase(
        "prebindpreflight failed with status code unschedulable",
        [pre_bind(Status(U, ("rejected on prebindpreflight",)), Status())],
        expect_error_pod=True,
        expect_forget_pod=True,
        expect_assumed_pod=True,
        expect_backoff=True,
        expect_error='PreBindPreFlight FakePreBind returned "Unschedulable", which is unsupported. '
        "It is supposed to return Success, Skip, or Error status",
        event_reason="FailedScheduling",
    ),
    ScheduleOneCase(
        "prebind isn't called and nominated node name isn't set, if preflight returns skip",
        # PreBind would fail: it must not be called
        [pre_bind(Status(Code.Skip), Status(ERR, ("rejected on prebind",)))],
        expect_assumed_pod=True,
        expect_bind=True,
        event_reason="Scheduled",
        pre_bind_calls=0,
    ),
    ScheduleOneCase(
        "prebind is called and nominated node name is set, if preflight returns success",
        [pre_bind(Status(), Status())],
        expect_nominated=TEST_NODE,
        expect_assumed_pod=True,
        expect_bind=True,
        event_reason="Scheduled",
        pre_bind_calls=1,
    ),
    ScheduleOneCase(
        "prebind failed with status code error",
        [pre_bind(Status(), Status(ERR, ("on PreBind",)))],
        expect_error_pod=True,
        expect_forget_pod=True,
        expect_nominated=TEST_NODE,
        expect_assumed_pod=True,
        expect_backoff=True,
        expect_error='running PreBind plugin "FakePreBind": on PreBind',
        event_reason="FailedScheduling",
    ),
    ScheduleOneCase(
        "binding failed",
        inject_bind_error="binder",
        expect_bind=True,
        expect_assumed_pod=True,
        expect_error='running Bind plugin "DefaultBinder": binder',
        expect_error_pod=True,
        expect_forget_pod=True,
        expect_backoff=True,
        event_reason="FailedScheduling",
    ),
    ScheduleOneCase(
        "bind assumed pod scheduled",
        expect_bind=True,
        expect_assumed_pod=True,
        event_reason="Scheduled",
    ),
    ScheduleOneCase(
        "deleting pod",
        send_pod=deleting("foo"),
        mock_ok=False,
        event_reason="FailedScheduling",
    ),
    ScheduleOneCase(
        "pod with existing nominated node name on scheduling error clears nomination",
        send_pod=with_nominated(pod("foo"), "existing-node"),
        inject_scheduling_error="scheduler",
        expect_error="scheduler",
        expect_error_pod=True,
        expect_backoff=True,
        expect_nominated="",
        event_reason="FailedScheduling",
    ),
]


@pytest.mark.parametrize("case", SCHEDULE_ONE_CASES, ids=[c.name for c in SCHEDULE_ONE_CASES])
def test_scheduler_schedule_one(case: ScheduleOneCase, monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = RecordingCluster(case.inject_bind_error)
    sched = new_scheduler(case.plugins, [make_node(TEST_NODE)], cluster=cluster)
    sent = Pod.parse(case.send_pod)
    cluster.pods[sent.uid] = sent

    def propose_pod(fw: Any, state: CycleState, p: Pod) -> Proposal:
        if case.inject_scheduling_error is not None:
            raise PluginFailure(Status.error(case.inject_scheduling_error))
        if not case.mock_ok:
            return Proposal(fw, Feasible(np.zeros(0, np.intp), 0, None, state), ScheduleResult(p, fw.profile_name))
        rows = np.asarray([sched.snapshot.row_of[TEST_NODE]], np.intp)
        res = ScheduleResult(p, fw.profile_name, evaluated=1, feasible=1)
        return Proposal(fw, Feasible(rows, 1, None, state), res)  # the one feasible node: selected

    monkeypatch.setattr(sched, "propose_pod", propose_pod)
    assumed: list[str] = []
    forgotten: list[str] = []
    add, remove = sched.snapshot.add_pod, sched.snapshot.remove_pod
    monkeypatch.setattr(sched.snapshot, "add_pod", lambda p: (assumed.append(p.uid), add(p))[1])
    monkeypatch.setattr(sched.snapshot, "remove_pod", lambda uid: (forgotten.append(uid), remove(uid))[1])
    events: list[str] = []
    errors: list[ScheduleResult] = []
    sched.hooks.on_scheduled.append(lambda r: events.append("Scheduled"))
    sched.hooks.on_failed.append(lambda r: (events.append("FailedScheduling"), errors.append(r)))
    sched.hooks.on_skipped.append(lambda r: events.append("FailedScheduling"))

    sched.add_pending(sent)
    sched.schedule_one()
    if case.pod_to_admit is not None:
        wp = sched.frameworks["default-scheduler"].handle.get_waiting_pod(sent.uid)
        assert wp is not None
        wp.allow(case.pod_to_admit)
        sched.expire_waiting_pods()  # the parked binding cycle resumes

    assert events == [case.event_reason]
    assert (assumed == [sent.uid]) == case.expect_assumed_pod
    assert (forgotten == [sent.uid]) == case.expect_forget_pod
    assert bool(errors) == case.expect_error_pod
    if case.expect_error is None:
        assert not errors
        assert sched.cluster.pods[sent.uid].nominated_node_name == case.expect_nominated
    else:
        assert errors[0].message == case.expect_error
        # every failure clears the nomination (clearNominatedNode)
        assert sched.nominated == {} and cluster.pods[sent.uid].nominated_node_name == ""
    bound = cluster.bindings.get(sent.uid)
    if case.inject_bind_error is None:
        assert (bound == TEST_NODE) == case.expect_bind
    counts = sched.queue.counts()
    assert counts["backoff"] == int(case.expect_backoff)
    assert counts["unschedulable"] == int(case.expect_unschedulable)
    assert counts["active"] == 0 and "inflight" not in sched.queue._where.values()
    if case.pre_bind_calls is not None:
        assert len(case.plugins[0].calls) == case.pre_bind_calls
    if case.expect_nominated:
        assert (sent.name, case.expect_nominated) in cluster.nominations


def test_schedule_one_reserve_rejection_names_the_plugin_for_requeueing() -> None:
    """The FitError of a Reserve rejection records the plugin (Diagnosis.AddPluginStatus), so
    only events that plugin registered move the pod."""
    sched = new_scheduler([reserve(Status(UU, ("rejected on reserve",)))], [make_node(TEST_NODE, cpu="1")])
    sched.add_pending(Pod.parse(pod("foo")))
    res = sched.schedule_one()
    assert res is not None and res.code == UU
    assert res.diagnosis is not None and res.diagnosis.unschedulable_plugins == {"FakeReserve"}
    assert sched.queue.unschedulable["foo"].unschedulable_plugins == {"FakeReserve"}
    assert np.array_equal(sched.snapshot.requested, np.zeros_like(sched.snapshot.requested))
