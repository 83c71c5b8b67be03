"""DefaultPreemption: upstream default_preemption_test.go tables, plus an end-to-end preemption.

Cases needing extenders, volumes or pod groups are left out. PDBs are not in the snapshot
yet, so PDB cases inject budgets through the plugin's ``pdb_lister``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from kubesched.api.objects import Pod
from kubesched.api.selectors import LabelSelector
from kubesched.cluster.memory import MemoryCluster
from kubesched.config import EXTENSION_POINTS, PluginRef, Profile
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import Diagnosis, NodeFailures
from kubesched.framework.handle import Handle
from kubesched.framework.interfaces import FilterPlugin, PreFilterPlugin
from kubesched.framework.preemption.candidates import aggregate_errors, select_candidate
from kubesched.framework.runtime import Framework
from kubesched.framework.status import Code, FilterResult, Status
from kubesched.plugins import in_tree_registry
from kubesched.plugins.defaultpreemption import (
    NAME,
    Candidate,
    DefaultPreemption,
    PodDisruptionBudget,
    pick_one_node_for_preemption,
)
from kubesched.state.snapshot import Snapshot
from kubesched.testing import build_snapshot, make_node, make_pod
from tests.framework.fake_plugins import ERR_REASON_FAKE, FalseFilter, MatchFilter, TrueFilter

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
NODE_RES = {"cpu": "200m", "memory": "400"}
UU = Code.UnschedulableAndUnresolvable
U = Code.Unschedulable
FIT = "NodeResourcesFit"
FAKE_REASON = ERR_REASON_FAKE


# ---- builders ---------------------------------------------------------------------------
def pod(
    name: str,
    *,
    node: str | None = None,
    prio: int | None = None,
    req: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    start: int | None = None,
    uid: str | None = None,
    spec: dict[str, Any] | None = None,
    nominated: str | None = None,
    terminating: bool = False,
    conditions: list[dict] | None = None,
) -> Pod:
    """st.MakePod(); ``start`` is StartTime in seconds after the epoch."""
    d = make_pod(name, node=node, priority=prio, requests=req, labels=labels, uid=uid or name, spec=spec)
    status: dict[str, Any] = {}
    if start is not None:
        status["startTime"] = f"1970-01-01T00:00:{start:02d}Z"
    if nominated:
        status["nominatedNodeName"] = nominated
    if conditions:
        status["conditions"] = conditions
    if status:
        d["status"] = status
    if terminating:
        d["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return Pod.parse(d)


def node(name: str, res: dict[str, str] | None = None, labels: dict[str, str] | None = None) -> dict:
    """st.MakeNode().Capacity(res): pods defaults to 32 unless ``res`` sets it."""
    res = dict(res or {})
    pods = int(res.pop("pods", 32))
    return make_node(name, cpu=res.get("cpu"), memory=res.get("memory"), pods=pods, labels=labels)


def topo_node(spec: str, res: dict[str, str]) -> dict:
    """``"name/zone/region"`` -> labels hostname/zone/region, as the Go tests split node names."""
    parts = spec.split("/")
    labels = dict(zip(("hostname", "zone", "region"), parts, strict=False))
    return node(parts[0], res, labels)


class FakeFilter(FilterPlugin):
    """tf.FakeFilterPlugin: one code for every node, counting the nodes it filtered."""

    name = "FakeFilter"

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        self.code = Code.Success
        self.calls = 0

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        self.calls += len(rows)
        if self.code == Code.Success:
            return FilterResult.all_pass(len(rows))
        return FilterResult.from_mask(
            np.ones(len(rows), bool), f"injecting failure for pod {pod.name}", self.code
        )


class ErrorOnRemove(PreFilterPlugin):
    """The Go TestPlugin: its RemovePod fails on a node labelled error=true."""

    name = "test-plugin"

    def pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot) -> Status | None:
        return None

    def add_pod(self, state: CycleState, pod: Pod, added: Pod, row: int, snap: Snapshot) -> Status | None:
        return None

    def remove_pod(self, state: CycleState, pod: Pod, removed: Pod, row: int, snap: Snapshot) -> Status | None:
        if snap.nodes[row].labels.get("error") == "true":
            return Status.error(f"failed to remove pod: {pod.name}")
        return None


class FakeNominator:
    """What the Scheduler offers preemption: deletes, and the pods nominated to nodes."""

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap
        self.nominated: dict[str, Pod] = {}
        self.deleted: list[str] = []

    def delete_pod(self, p: Pod) -> None:
        self.deleted.append(p.name)
        self.snap.remove_pod(p.uid)
        self.nominated.pop(p.uid, None)

    def nominated_pods_on(self, node_name: str) -> list[Pod]:
        return [p for p in self.nominated.values() if p.nominated_node_name == node_name]

    def pending_pods(self) -> list[Pod]:
        return []


TEST_PLUGINS = (FakeFilter, TrueFilter, FalseFilter, MatchFilter, ErrorOnRemove)


def build(
    snap: Snapshot,
    plugins: tuple[str, ...] = (FIT,),
    *,
    args: dict | None = None,
    fake: bool = False,
    nominator: Any = None,
    cluster: Any = None,
    seed: int = 0,
    extra: tuple[type, ...] = (),
) -> tuple[DefaultPreemption, Framework]:
    """A one-profile framework (PreFilter+Filter of ``plugins``) with DefaultPreemption."""
    reg = in_tree_registry(entry_points=False)
    for cls in TEST_PLUGINS + extra:
        reg.register(cls)
    points: dict[str, list[PluginRef]] = {p: [] for p in EXTENSION_POINTS}
    for name in (("FakeFilter",) if fake else ()) + plugins:
        cls = reg.resolve(name)
        if issubclass(cls, PreFilterPlugin):
            points["preFilter"].append(PluginRef(name))
        if issubclass(cls, FilterPlugin):
            points["filter"].append(PluginRef(name))
    points["postFilter"].append(PluginRef(NAME))
    handle = Handle(snap, cluster, np.random.default_rng(seed))
    handle.nominator = nominator
    fw = Framework(Profile("default-scheduler", None, points, {NAME: args or {}}), reg, handle)
    pl = fw.plugins[NAME]
    assert isinstance(pl, DefaultPreemption)
    return pl, fw


def diagnosis(snap: Snapshot, statuses: dict[str, Code], absent: Code | None = UU) -> Diagnosis:
    """framework.NewNodeToStatus(statuses, absent) as a scheduler Diagnosis."""
    d = Diagnosis(absent_status=None if absent is None else Status(absent))
    for name, code in statuses.items():
        row = np.asarray([snap.row_of[name]], np.int32)
        d.failures.append(NodeFailures("", row, np.asarray([int(code)], np.int8), np.zeros(1, np.int64), ()))
    return d


def all_unschedulable(snap: Snapshot) -> Diagnosis:
    return diagnosis(snap, {n.name: U for n in snap.nodes})


def offsets(*values: int) -> Iterator[int]:
    """The Go tests' getOffsetRand = rand.New(rand.NewSource(4)).Int31n, as a fixed sequence."""
    yield from values


def summarize(cands: list[Candidate]) -> list[tuple[str, list[str], int]]:
    """Candidates sorted by node, victims by name, as the Go test compares them."""
    return sorted((c.name, sorted(v.name for v in c.victims), c.num_pdb_violations) for c in cands)


def pod_state(snap: Snapshot) -> tuple:
    return (
        [list(d) for d in snap.pods_on],
        snap.requested.copy().tolist(),
        snap.non_zero_requested.copy().tolist(),
        sorted(snap.pod_by_uid),
    )


# ---- TestPostFilter ---------------------------------------------------------------------
ONE_POD = {"pods": "1"}

POST_FILTER_CASES = [
    (
        "pod with higher priority can be made schedulable",
        pod("p", prio=HIGH),
        [pod("p1", node="node1")],
        [node("node1", ONE_POD)],
        {"node1": U},
        UU,
        ("node1", Status()),
    ),
    (
        "pod with tied priority is still unschedulable",
        pod("p"),
        [pod("p1", node="node1")],
        [node("node1", ONE_POD)],
        {"node1": U},
        UU,
        (
            "",
            Status(
                U, ("preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",)
            ),
        ),
    ),
    (
        "preemption should respect filteredNodesStatuses",
        pod("p", prio=HIGH),
        [pod("p1", node="node1")],
        [node("node1", ONE_POD)],
        {"node1": UU},
        UU,
        (
            "",
            Status(U, ("preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",)),
        ),
    ),
    (
        "preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable",
        pod("p", prio=HIGH),
        [pod("p1", node="node1")],
        [node("node1", ONE_POD)],
        {},
        None,
        (
            "",
            Status(U, ("preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",)),
        ),
    ),
    (
        "pod can be made schedulable on one node",
        pod("p", prio=MID),
        [pod("p1", node="node1", prio=HIGH), pod("p2", node="node2", prio=LOW)],
        [node("node1", ONE_POD), node("node2", ONE_POD)],
        {"node1": U, "node2": U},
        UU,
        ("node2", Status()),
    ),
    (
        "no candidate nodes found, no enough resource after removing low priority pods",
        pod("p", prio=HIGH, req=LARGE),
        [pod("p1", node="node1"), pod("p2", node="node2")],
        [node("node1", NODE_RES), node("node2", NODE_RES)],
        {"node1": U, "node2": U},
        UU,
        ("", Status(U, ("preemption: 0/2 nodes are available: 2 Insufficient cpu.",))),
    ),
    (
        "no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
        pod("p", prio=HIGH, req=LARGE),
        [pod("p1", node="node1", prio=HIGH), pod("p2", node="node2"), pod("p3", node="node3", prio=HIGH)],
        [node("node1", ONE_POD), node("node2", NODE_RES), node("node3", ONE_POD)],
        {"node1": U, "node2": U, "node3": U},
        UU,
        (
            "",
            Status(
                U,
                (
                    "preemption: 0/3 nodes are available: 1 Insufficient cpu, "
                    "2 No preemption victims found for incoming pod.",
                ),
            ),
        ),
    ),
    (
        "no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes "
        "don't have enough CPU resource",
        pod("p", prio=HIGH, req=LARGE),
        [pod("p1", node="node1"), pod("p2", node="node2")],
        [node(f"node{i}", NODE_RES) for i in range(1, 5)],
        {"node1": U, "node2": U, "node4": UU},
        UU,
        (
            "",
            Status(
                U,
                (
                    "preemption: 0/4 nodes are available: 2 Insufficient cpu, "
                    "2 Preemption is not helpful for scheduling.",
                ),
            ),
        ),
    ),
    (
        "one failed with TestPlugin and the other pass",
        pod("p", prio=HIGH, req=LARGE),
        [pod("p1", node="node1"), pod("p2", node="node2", req=MEDIUM)],
        [node("node1", LARGE, {"error": "true"}), node("node2", LARGE)],
        {"node1": U, "node2": U},
        UU,
        ("node2", Status()),
    ),
    (
        "pod with SchedulingGroup with TAS and WAP disabled should preempt",
        pod("p-with-podgroup", prio=HIGH),
        [pod("p1", node="node1")],
        [node("node1", ONE_POD)],
        {"node1": U},
        UU,
        ("node1", Status()),
    ),
]


@pytest.mark.parametrize(
    ("name", "preemptor", "pods", "nodes", "statuses", "absent", "want"),
    POST_FILTER_CASES,
    ids=[c[0] for c in POST_FILTER_CASES],
)
def test_post_filter(
    name: str,
    preemptor: Pod,
    pods: list[Pod],
    nodes: list[dict],
    statuses: dict[str, Code],
    absent: Code | None,
    want: tuple[str | None, Status],
) -> None:
    snap = build_snapshot(nodes, pods)
    cluster = MemoryCluster()
    nominator = FakeNominator(snap)
    pl, fw = build(snap, (FIT, "test-plugin"), nominator=nominator, cluster=cluster)
    got = pl.post_filter(pre_filtered(fw, preemptor, snap), preemptor, snap, diagnosis(snap, statuses, absent))
    assert got == want


def pre_filtered(fw: Framework, p: Pod, snap: Snapshot) -> CycleState:
    """A CycleState populated by the profile's PreFilter, as upstream's TestPostFilter makes it."""
    state = CycleState()
    fw.run_pre_filter(state, p, snap)
    return state


def test_post_filter_pdb_min_highest_priority() -> None:
    """'pod can be made schedulable on minHighestPriority node': PDB violations tie, priority decides."""
    key = "test.kubernetes.io/is-violating-pdb"
    snap = build_snapshot(
        [node("node1", ONE_POD), node("node2", ONE_POD)],
        [
            pod("p1", node="node1", prio=HIGH, labels={key: "non-violating"}),
            pod("p2", node="node1", prio=LOW, labels={key: "violating"}),
            pod("p3", node="node2", prio=MID, labels={key: "violating"}),
        ],
    )
    pl, _ = build(snap, nominator=FakeNominator(snap), cluster=MemoryCluster())
    pl.pdb_lister = lambda: [
        PodDisruptionBudget("default", LabelSelector.from_match_labels({key: "violating"}), 0),
        PodDisruptionBudget("default", LabelSelector.from_match_labels({key: "non-violating"}), 2**31 - 1),
    ]
    got = pl.post_filter(CycleState(), pod("p", prio=VERY_HIGH), snap, all_unschedulable(snap))
    assert got == ("node2", Status())


def test_post_filter_only_node_errors() -> None:
    """'only one node but failed with TestPlugin': the PreFilter error is the plugin's Error status.

    The dry run runs the plugin's RemovePod extension on a copy of the cycle's state.
    """
    snap = build_snapshot([node("node1", LARGE, {"error": "true"})], [pod("p1", node="node1")])
    pl, fw = build(snap, (FIT, "test-plugin"), nominator=FakeNominator(snap))
    preemptor = pod("p", prio=HIGH, req=LARGE)
    nominated, st = pl.post_filter(pre_filtered(fw, preemptor, snap), preemptor, snap, all_unschedulable(snap))
    assert nominated is None
    assert st.code == Code.Error
    assert st.message == 'preemption: running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p'


def test_post_filter_preemption_policy_never() -> None:
    snap = build_snapshot([node("node1", ONE_POD)], [pod("p1", node="node1")])
    pl, _ = build(snap)
    p = pod("p", prio=HIGH, spec={"preemptionPolicy": "Never"})
    assert pl.post_filter(CycleState(), p, snap, all_unschedulable(snap)) == (
        None,
        Status(U, ("preemption: not eligible due to preemptionPolicy=Never.",)),
    )


def test_post_filter_waits_for_terminating_victims() -> None:
    """A nominated pod whose earlier victims are still terminating does not preempt again."""
    cond = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
    snap = build_snapshot(
        [node("node1", ONE_POD)], [pod("p1", node="node1", prio=LOW, terminating=True, conditions=cond)]
    )
    pl, _ = build(snap, nominator=FakeNominator(snap))
    p = pod("p", prio=HIGH, nominated="node1")
    assert pl.post_filter(CycleState(), p, snap, all_unschedulable(snap)) == (
        None,
        Status(U, ("preemption: not eligible due to a terminating pod on the nominated node.",)),
    )


def test_fit_error_matches_scheduler_message_format() -> None:
    """The scheduler appends the PostFilter message to its own FitError after a space (one final period)."""
    snap = build_snapshot([node("node1", ONE_POD), node("node2", ONE_POD)], [])
    pl, _ = build(snap)
    diag = diagnosis(snap, {"node1": UU, "node2": UU})
    nominated, st = pl.post_filter(CycleState(), pod("p", prio=HIGH), snap, diag)
    assert nominated == ""
    diag.post_filter_msg = st.message
    assert diag.fit_error(snap.n) == (
        "0/2 nodes are available: preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


# ---- TestDryRunPreemption ---------------------------------------------------------------
def pdb_foo(allowed: int, disrupted: tuple[str, ...] = ()) -> PodDisruptionBudget:
    return PodDisruptionBudget(
        "default", LabelSelector.from_match_labels({"app": "foo"}), allowed, frozenset(disrupted)
    )


FOO = {"app": "foo"}
FIVE = ["node1", "node2", "node3", "node4", "node5"]
ARGS_40_1 = {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1}

# (name, plugins, node specs, preemptors, init pods, pdbs, fake filter code, args, offsets,
#  expected candidates per cycle [(node, victims, numPDBViolations)], expected filter calls per cycle)
DRY_RUN_CASES = [
    (
        "a pod that does not fit on any node",
        ("FalseFilter",),
        ["node1", "node2"],
        [pod("p", prio=HIGH)],
        [pod("p1", node="node1", prio=MID), pod("p2", node="node2", prio=MID)],
        [],
        Code.Success,
        None,
        (0,),
        [[]],
        [2],
    ),
    (
        "a pod that fits with no preemption",
        ("TrueFilter",),
        ["node1", "node2"],
        [pod("p", prio=HIGH)],
        [pod("p1", node="node1", prio=MID), pod("p2", node="node2", prio=MID)],
        [],
        U,
        None,
        (0,),
        [[]],
        [2],
    ),
    (
        "a pod that fits on one node with no preemption",
        ("MatchFilter",),
        ["node1", "node2"],
        [pod("node1", prio=HIGH)],
        [pod("p1", node="node1", prio=MID), pod("p2", node="node2", prio=MID)],
        [],
        U,
        None,
        (0,),
        [[]],
        [2],
    ),
    (
        "a pod that fits on both nodes when lower priority pods are preempted",
        (FIT,),
        ["node1", "node2"],
        [pod("p", prio=HIGH, req=LARGE)],
        [pod("p1", node="node1", prio=MID, req=LARGE), pod("p2", node="node2", prio=MID, req=LARGE)],
        [],
        Code.Success,
        None,
        (0,),
        [[("node1", ["p1"], 0), ("node2", ["p2"], 0)]],
        [4],
    ),
    (
        "a pod that would fit on the nodes, but other pods running are higher priority, no preemption would happen",
        (FIT,),
        ["node1", "node2"],
        [pod("p", prio=LOW, req=LARGE)],
        [pod("p1", node="node1", prio=MID, req=LARGE), pod("p2", node="node2", prio=MID, req=LARGE)],
        [],
        Code.Success,
        None,
        (0,),
        [[]],
        [0],
    ),
    (
        "medium priority pod is preempted, but lower priority one stays as it is small",
        (FIT,),
        ["node1", "node2"],
        [pod("p", prio=HIGH, req=LARGE)],
        [
            pod("p1.1", node="node1", prio=LOW, req=SMALL),
            pod("p1.2", node="node1", prio=MID, req=LARGE),
            pod("p2", node="node2", prio=MID, req=LARGE),
        ],
        [],
        Code.Success,
        None,
        (0,),
        [[("node1", ["p1.2"], 0), ("node2", ["p2"], 0)]],
        [5],
    ),
    (
        "mixed priority pods are preempted",
        (FIT,),
        ["node1", "node2"],
        [pod("p", prio=HIGH, req=LARGE)],
        [
            pod("p1.1", node="node1", prio=MID, req=SMALL),
            pod("p1.2", node="node1", prio=LOW, req=SMALL),
            pod("p1.3", node="node1", prio=MID, req=MEDIUM),
            pod("p1.4", node="node1", prio=HIGH, req=SMALL),
            pod("p2", node="node2", prio=HIGH, req=LARGE),
        ],
        [],
        Code.Success,
        None,
        (0,),
        [[("node1", ["p1.2", "p1.3"], 0)]],
        [4],
    ),
    (
        "mixed priority pods are preempted, pick later StartTime one when priorities are equal",
        (FIT,),
        ["node1", "node2"],
        [pod("p", prio=HIGH, req=LARGE)],
        [
            pod("p1.1", node="node1", prio=LOW, req=SMALL, start=5),
            pod("p1.2", node="node1", prio=LOW, req=SMALL, start=4),
            pod("p1.3", node="node1", prio=MID, req=MEDIUM, start=3),
            pod("p1.4", node="node1", prio=HIGH, req=SMALL, start=2),
            pod("p2", node="node2", prio=HIGH, req=LARGE, start=1),
        ],
        [],
        Code.Success,
        None,
        (0,),
        [[("node1", ["p1.1", "p1.3"], 0)]],
        [4],
    ),
    (
        "pod with anti-affinity is preempted",
        (FIT, "InterPodAffinity"),
        ["node1", "node2"],
        [pod("p", prio=HIGH, req=SMALL, labels={"foo": ""})],
        [
            pod(
                "p1.1",
                node="node1",
                prio=LOW,
                req=SMALL,
                labels={"foo": ""},
                spec={
                    "affinity": {
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "labelSelector": {
                                        "matchExpressions": [{"key": "foo", "operator": "Exists"}]
                                    },
                                    "topologyKey": "hostname",
                                }
                            ]
                        }
                    }
                },
            ),
            pod("p1.2", node="node1", prio=MID, req=SMALL),
            pod("p1.3", node="node1", prio=HIGH, req=SMALL),
            pod("p2", node="node2", prio=HIGH, req=SMALL),
        ],
        [],
        Code.Success,
        None,
        (0,),
        [[("node1", ["p1.1"], 0)]],
        [3],
    ),
    (
        "preemption to resolve pod topology spread filter failure",
        ("PodTopologySpread",),
        ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
        [
            pod(
                "p",
                prio=HIGH,
                labels={"foo": ""},
                spec={
                    "topologySpreadConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": key,
                            "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
                        }
                        for key in ("zone", "hostname")
                    ]
                },
            )
        ],
        [
            pod("pod-a1", node="node-a", prio=MID, labels={"foo": ""}),
            pod("pod-a2", node="node-a", prio=LOW, labels={"foo": ""}),
            pod("pod-b1", node="node-b", prio=LOW, labels={"foo": ""}),
            pod("pod-x1", node="node-x", prio=HIGH, labels={"foo": ""}),
            pod("pod-x2", node="node-x", prio=HIGH, labels={"foo": ""}),
        ],
        [],
        Code.Success,
        None,
        (0,),
        [[("node-a", ["pod-a2"], 0), ("node-b", ["pod-b1"], 0)]],
        [5],
    ),
    (
        "get Unschedulable in the preemption phase when the filter plugins filtering the nodes",
        (FIT,),
        ["node1", "node2"],
        [pod("p", prio=HIGH, req=LARGE)],
        [pod("p1", node="node1", prio=MID, req=LARGE), pod("p2", node="node2", prio=MID, req=LARGE)],
        [],
        U,
        None,
        (0,),
        [[]],
        [2],
    ),
    (
        "preemption with violation of same pdb",
        (FIT,),
        ["node1"],
        [pod("p", prio=HIGH, req=VERY_LARGE)],
        [
            pod("p1.1", node="node1", prio=MID, req=MEDIUM, labels=FOO),
            pod("p1.2", node="node1", prio=MID, req=MEDIUM, labels=FOO),
        ],
        [pdb_foo(1)],
        Code.Success,
        None,
        (0,),
        [[("node1", ["p1.1", "p1.2"], 1)]],
        [3],
    ),
    (
        "preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't "
        "belong to DisruptedPods",
        (FIT,),
        ["node1"],
        [pod("p", prio=HIGH, req=VERY_LARGE)],
        [
            pod("p1.1", node="node1", prio=MID, req=MEDIUM, labels=FOO),
            pod("p1.2", node="node1", prio=MID, req=MEDIUM, labels=FOO),
        ],
        [pdb_foo(1, ("p2",))],
        Code.Success,
        None,
        (0,),
        [[("node1", ["p1.1", "p1.2"], 1)]],
        [3],
    ),
    (
        "preemption with violation of the pdb with pod whose eviction was processed, the victim belongs to "
        "DisruptedPods",
        (FIT,),
        ["node1"],
        [pod("p", prio=HIGH, req=VERY_LARGE)],
        [
            pod("p1.1", node="node1", prio=MID, req=MEDIUM, labels=FOO),
            pod("p1.2", node="node1", prio=MID, req=MEDIUM, labels=FOO),
        ],
        [pdb_foo(1, ("p1.2",))],
        Code.Success,
        None,
        (0,),
        [[("node1", ["p1.1", "p1.2"], 0)]],
        [3],
    ),
    (
        "preemption with violation of the pdb with pod whose eviction was processed, the victim which belongs "
        "to DisruptedPods is treated as 'nonViolating'",
        (FIT,),
        ["node1"],
        [pod("p", prio=HIGH, req=VERY_LARGE)],
        [
            pod("p1.1", node="node1", prio=MID, req=MEDIUM, labels=FOO),
            pod("p1.2", node="node1", prio=MID, req=MEDIUM, labels=FOO),
            pod("p1.3", node="node1", prio=MID, req=MEDIUM, labels=FOO),
        ],
        [pdb_foo(1, ("p1.3",))],
        Code.Success,
        None,
        (0,),
        [[("node1", ["p1.1", "p1.2", "p1.3"], 1)]],
        [4],
    ),
    (
        "all nodes are possible candidates, but DefaultPreemptionArgs limits to 2",
        (FIT,),
        FIVE,
        [pod("p", prio=HIGH, req=LARGE)],
        [pod(f"p{i}", node=f"node{i}", prio=MID, req=LARGE) for i in range(1, 6)],
        [],
        Code.Success,
        ARGS_40_1,
        (4,),  # cycle 0 => offset 4 => node5 (yes), node1 (yes)
        [[("node1", ["p1"], 0), ("node5", ["p5"], 0)]],
        [4],
    ),
    (
        "some nodes are not possible candidates, DefaultPreemptionArgs limits to 2",
        (FIT,),
        FIVE,
        [pod("p", prio=HIGH, req=LARGE)],
        [
            pod("p1", node="node1", prio=MID, req=LARGE),
            pod("p2", node="node2", prio=VERY_HIGH, req=LARGE),
            pod("p3", node="node3", prio=MID, req=LARGE),
            pod("p4", node="node4", prio=MID, req=LARGE),
            pod("p5", node="node5", prio=VERY_HIGH, req=LARGE),
        ],
        [],
        Code.Success,
        ARGS_40_1,
        (4,),  # node5 (no), node1 (yes), node2 (no), node3 (yes)
        [[("node1", ["p1"], 0), ("node3", ["p3"], 0)]],
        [4],
    ),
    (
        "preemption offset across multiple scheduling cycles and wrap around",
        (FIT,),
        FIVE,
        [pod(f"tp{i}", prio=HIGH, req=LARGE) for i in range(1, 4)],
        [pod(f"p{i}", node=f"node{i}", prio=MID, req=LARGE) for i in range(1, 6)],
        [],
        Code.Success,
        ARGS_40_1,
        (4, 1, 3),
        [
            [("node1", ["p1"], 0), ("node5", ["p5"], 0)],
            [("node2", ["p2"], 0), ("node3", ["p3"], 0)],
            [("node4", ["p4"], 0), ("node5", ["p5"], 0)],
        ],
        [4, 4, 4],
    ),
    (
        "preemption looks past numCandidates until a non-PDB violating node is found",
        (FIT,),
        FIVE,
        [pod("p", prio=HIGH, req=LARGE)],
        [
            pod("p1", node="node1", prio=MID, req=LARGE, labels=FOO),
            pod("p2", node="node2", prio=MID, req=LARGE, labels=FOO),
            pod("p3", node="node3", prio=MID, req=LARGE),
            pod("p4", node="node4", prio=MID, req=LARGE),
            pod("p5", node="node5", prio=MID, req=LARGE, labels=FOO),
        ],
        [pdb_foo(0)],
        Code.Success,
        {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2},
        (4,),  # node5 (yes, pdb), node1 (yes, pdb), node2 (no room left, pdb), node3 (yes)
        [[("node1", ["p1"], 1), ("node3", ["p3"], 0), ("node5", ["p5"], 1)]],
        [8],
    ),
]


@pytest.mark.parametrize(
    (
        "name",
        "plugins",
        "node_specs",
        "preemptors",
        "init_pods",
        "pdbs",
        "fake_code",
        "args",
        "offs",
        "want",
        "calls",
    ),
    DRY_RUN_CASES,
    ids=[c[0] for c in DRY_RUN_CASES],
)
def test_dry_run_preemption(
    name: str,
    plugins: tuple[str, ...],
    node_specs: list[str],
    preemptors: list[Pod],
    init_pods: list[Pod],
    pdbs: list[PodDisruptionBudget],
    fake_code: Code,
    args: dict | None,
    offs: tuple[int, ...],
    want: list[list[tuple[str, list[str], int]]],
    calls: list[int],
) -> None:
    snap = build_snapshot([topo_node(s, VERY_LARGE) for s in node_specs], init_pods)
    pl, fw = build(snap, plugins, args=args, fake=True)
    fake = fw.plugins["FakeFilter"]
    assert isinstance(fake, FakeFilter)
    fake.code = fake_code
    seq = offsets(*offs)
    pl.random_offset = lambda n: next(seq)  # type: ignore[method-assign]
    rows = np.arange(snap.n, dtype=np.int32)  # the Go test passes every node, sorted by name
    before = pod_state(snap)
    for cycle, p in enumerate(preemptors):
        prev = fake.calls
        offset, num = pl.get_offset_and_num_candidates(snap.n)
        got, _, _ = pl.dry_run_preemption(p, snap, rows, pdbs, offset, num)
        assert summarize(got) == want[cycle], f"cycle {cycle}"
        assert fake.calls - prev == calls[cycle], f"cycle {cycle}"
        assert pod_state(snap) == before  # every dry run leaves the snapshot as it found it


# ---- TestSelectBestCandidate ------------------------------------------------------------
def nodes_pods(*per_node: list[tuple[int, dict[str, str], int]]) -> list[Pod]:
    """Pods ``p<node>.<i>`` on node<node> from (priority, requests, start seconds)."""
    out = []
    for n, specs in enumerate(per_node, start=1):
        for i, (prio, req, start) in enumerate(specs, start=1):
            out.append(pod(f"p{n}.{i}", node=f"node{n}", prio=prio, req=req, start=start))
    return out


SELECT_BEST_CASES = [
    (
        "a pod that fits on both nodes when lower priority pods are preempted",
        pod("p", prio=HIGH, req=LARGE),
        nodes_pods([(MID, LARGE, 0)], [(MID, LARGE, 0)]),
        {"node1", "node2"},
    ),
    (
        "node with min highest priority pod is picked",
        pod("p", prio=HIGH, req=VERY_LARGE),
        nodes_pods(
            [(MID, MEDIUM, 0), (MID, LARGE, 0)],
            [(MID, MEDIUM, 0), (LOW, MEDIUM, 0)],
            [(LOW, MEDIUM, 0), (LOW, MEDIUM, 0)],
        ),
        {"node3"},
    ),
    (
        "when highest priorities are the same, minimum sum of priorities is picked",
        pod("p", prio=HIGH, req=VERY_LARGE),
        nodes_pods(
            [(MID, MEDIUM, 0), (MID, LARGE, 0)],
            [(MID, LARGE, 0), (LOW, MEDIUM, 0)],
            [(MID, MEDIUM, 0), (MID, MEDIUM, 0)],
        ),
        {"node2"},
    ),
    (
        "when highest priority and sum are the same, minimum number of pods is picked",
        pod("p", prio=HIGH, req=VERY_LARGE),
        nodes_pods(
            [(MID, SMALL, 0), (NEG, SMALL, 0), (MID, SMALL, 0), (NEG, SMALL, 0)],
            [(MID, LARGE, 0), (NEG, MEDIUM, 0)],
            [(MID, MEDIUM, 0), (NEG, SMALL, 0), (LOW, SMALL, 0)],
        ),
        {"node2"},
    ),
    (
        "sum of adjusted priorities is considered",
        pod("p", prio=HIGH, req=VERY_LARGE),
        nodes_pods(
            [(MID, SMALL, 0), (NEG, SMALL, 0), (NEG, SMALL, 0)],
            [(MID, LARGE, 0), (NEG, MEDIUM, 0)],
            [(MID, MEDIUM, 0), (NEG, SMALL, 0), (LOW, SMALL, 0)],
        ),
        {"node2"},
    ),
    (
        "non-overlapping lowest high priority, sum priorities, and number of pods",
        pod("p", prio=VERY_HIGH, req=VERY_LARGE),
        nodes_pods(
            [(MID, SMALL, 0), (LOW, SMALL, 0), (LOW, SMALL, 0)],
            [(HIGH, LARGE, 0)],
            [(MID, MEDIUM, 0), (LOW, SMALL, 0), (LOW, SMALL, 0), (LOW, MEDIUM, 0)],
            [(MID, MEDIUM, 0), (MID, SMALL, 0), (MID, SMALL, 0), (NEG, SMALL, 0)],
        ),
        {"node1"},
    ),
    (
        "same priority, same number of victims, different start time for each node's pod",
        pod("p", prio=HIGH, req=VERY_LARGE),
        nodes_pods(
            [(MID, MEDIUM, 2), (MID, MEDIUM, 2)],
            [(MID, MEDIUM, 3), (MID, MEDIUM, 3)],
            [(MID, MEDIUM, 1), (MID, MEDIUM, 1)],
        ),
        {"node2"},
    ),
    (
        "same priority, same number of victims, different start time for all pods",
        pod("p", prio=HIGH, req=VERY_LARGE),
        nodes_pods(
            [(MID, MEDIUM, 4), (MID, MEDIUM, 2)],
            [(MID, MEDIUM, 5), (MID, MEDIUM, 1)],
            [(MID, MEDIUM, 3), (MID, MEDIUM, 6)],
        ),
        {"node3"},
    ),
    (
        "different priority, same number of victims, different start time for all pods",
        pod("p", prio=HIGH, req=VERY_LARGE),
        nodes_pods(
            [(LOW, MEDIUM, 4), (MID, MEDIUM, 2)],
            [(MID, MEDIUM, 6), (LOW, MEDIUM, 1)],
            [(LOW, MEDIUM, 3), (MID, MEDIUM, 5)],
        ),
        {"node2"},
    ),
]


@pytest.mark.parametrize(
    ("name", "preemptor", "pods", "want"), SELECT_BEST_CASES, ids=[c[0] for c in SELECT_BEST_CASES]
)
def test_select_best_candidate(name: str, preemptor: Pod, pods: list[Pod], want: set[str]) -> None:
    names = sorted({p.node_name for p in pods} | {f"node{i}" for i in range(1, 4)})
    snap = build_snapshot([node(n, VERY_LARGE) for n in names], pods)
    pl, _ = build(snap)
    rows = np.arange(snap.n, dtype=np.int32)
    offset, num = pl.get_offset_and_num_candidates(snap.n)
    cands, _, _ = pl.dry_run_preemption(preemptor, snap, rows, [], offset, num)
    best = pl.select_candidate(cands)
    assert best is not None and best.name in want


# ---- TestCustomSelection / TestCustomOrdering -------------------------------------------
def label_is(key: str, val: str):  # noqa: ANN201
    return lambda snap, row, victim, preemptor: victim.labels.get(key) == val


def node_is(name: str):  # noqa: ANN201
    return lambda snap, row, victim, preemptor: snap.nodes[row].name == name


def preemptor_at_least(prio: int):  # noqa: ANN201
    return lambda snap, row, victim, preemptor: preemptor.priority >= prio


def victim_at_most(prio: int):  # noqa: ANN201
    return lambda snap, row, victim, preemptor: victim.priority <= prio


def labelled_victims(prio_v2: int = MID) -> list[Pod]:
    return [
        pod("v1", node="node1", prio=MID, req=LARGE, labels={"preemptible": "no"}, start=0),
        pod("v2", node="node2", prio=prio_v2, req=LARGE, labels={"preemptible": "yes"}, start=0),
        pod("v3", node="node3", prio=LOW, req=LARGE, labels={"preemptible": "yes"}, start=0),
        pod("v4", node="node4", prio=LOW, req=LARGE, start=0),
    ]


def node1_victims(v1_req: dict[str, str]) -> list[Pod]:
    return [
        pod("v1", node="node1", prio=HIGH, req=v1_req, start=0),
        pod("v2", node="node1", prio=MID, req=SMALL, start=0),
        pod("v3", node="node1", prio=LOW, req=SMALL, start=0),
        pod("v4", node="node2", prio=MID, req=LARGE, start=0),
        pod("v5", node="node3", prio=LOW, req=LARGE, start=0),
    ]


def three_victims() -> list[Pod]:
    return [
        pod("v1", node="node1", prio=HIGH, req=LARGE, start=0),
        pod("v2", node="node2", prio=MID, req=LARGE, start=0),
        pod("v3", node="node3", prio=LOW, req=LARGE, start=0),
    ]


CUSTOM_SELECTION_CASES = [
    ("filter for matching pod label: high priority", label_is("preemptible", "yes"), 4, pod("p1", prio=HIGH, req=LARGE), labelled_victims(), {"node2": ["v2"], "node3": ["v3"]}),
    ("filter for matching pod label: mid priority", label_is("preemptible", "yes"), 4, pod("p2", prio=MID, req=LARGE), labelled_victims(), {"node3": ["v3"]}),
    ("filter for matching pod label: low priority", label_is("preemptible", "yes"), 4, pod("p3", prio=LOW, req=LARGE), labelled_victims(), {}),
    ("filter for matching victim node: high priority", node_is("node1"), 3, pod("p3", prio=HIGH, req=LARGE), node1_victims(MEDIUM), {"node1": ["v2", "v3"]}),
    ("filter for matching victim node: mid priority", node_is("node1"), 3, pod("p3", prio=MID, req=LARGE), node1_victims(SMALL), {"node1": ["v3"]}),
    ("filter for matching victim node: low priority", node_is("node1"), 3, pod("p3", prio=LOW, req=LARGE), node1_victims(SMALL), {}),
    ("only pods at or above specified priority can preempted: high priority", preemptor_at_least(HIGH), 3, pod("p1", prio=HIGH, req=LARGE), three_victims(), {"node2": ["v2"], "node3": ["v3"]}),
    ("only pods at or above specified priority can preempted: mid priority", preemptor_at_least(HIGH), 3, pod("p2", prio=MID, req=LARGE), three_victims(), {}),
    ("only pods at or below specified priority can be preempted: high priority", victim_at_most(MID), 3, pod("p1", prio=HIGH, req=LARGE), three_victims(), {"node2": ["v2"], "node3": ["v3"]}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "eligible", "num_nodes", "preemptor", "pods", "want"),
    CUSTOM_SELECTION_CASES,
    ids=[c[0] for c in CUSTOM_SELECTION_CASES],
)
def test_custom_selection(
    name: str, eligible: Any, num_nodes: int, preemptor: Pod, pods: list[Pod], want: dict[str, list[str]]
) -> None:
    snap = build_snapshot([node(f"node{i}", VERY_LARGE) for i in range(1, num_nodes + 1)], pods)
    pl, _ = build(snap)
    pl.is_eligible_pod = eligible
    rows = np.arange(snap.n, dtype=np.int32)
    offset, num = pl.get_offset_and_num_candidates(snap.n)
    cands, _, _ = pl.dry_run_preemption(preemptor, snap, rows, [], offset, num)
    assert len(cands) == len(want)
    while cands:
        sel = select_candidate(cands)
        assert sel is not None and sel.name in want
        assert [v.name for v in sel.victims] == want[sel.name]
        cands = [c for c in cands if c.name != sel.name]


@pytest.mark.parametrize(
    ("name", "order", "pods", "want"),
    [
        (
            "select newest pods",
            lambda a, b: a.start_time < b.start_time,
            [
                pod("v1", uid="v1", node="node1", prio=LOW, req=MEDIUM, start=2),
                pod("v2", uid="v2", node="node1", prio=LOW, req=MEDIUM, start=0),
                pod("v3", uid="v3", node="node1", prio=MID, req=MEDIUM, start=1),
            ],
            ["v3", "v1"],
        ),
        (
            "select alphabetically-last pods",
            lambda a, b: a.name < b.name,
            [
                pod("foo", uid="v1", node="node1", prio=LOW, req=MEDIUM, start=0),
                pod("bar", uid="v2", node="node1", prio=LOW, req=MEDIUM, start=0),
                pod("baz", uid="v3", node="node1", prio=MID, req=MEDIUM, start=0),
            ],
            ["baz", "foo"],
        ),
    ],
)
def test_custom_ordering(name: str, order: Any, pods: list[Pod], want: list[str]) -> None:
    snap = build_snapshot([node("node1", VERY_LARGE)], pods)
    pl, _ = build(snap)
    pl.more_important_pod = order
    cands, _, _ = pl.dry_run_preemption(
        pod("p2", prio=HIGH, req=LARGE), snap, np.arange(1, dtype=np.int32), [], 0, 1
    )
    assert len(cands) == 1
    assert [v.name for v in cands[0].victims] == want


# ---- TestPodEligibleToPreemptOthers -----------------------------------------------------
DISRUPTED = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]


@pytest.mark.parametrize(
    ("name", "preemptor", "pods", "nodes", "nominated_code", "want"),
    [
        (
            "Pod with nominated node",
            pod("p_with_nominated_node", uid="p", prio=HIGH, nominated="node1"),
            [pod("p1", prio=LOW, node="node1", terminating=True)],
            ["node1"],
            UU,
            True,
        ),
        (
            "Pod without nominated node",
            pod("p_without_nominated_node", uid="p", prio=HIGH),
            [],
            [],
            Code.Success,
            True,
        ),
        (
            "Pod with 'PreemptNever' preemption policy",
            pod("p_with_preempt_never_policy", uid="p", prio=HIGH, spec={"preemptionPolicy": "Never"}),
            [],
            [],
            Code.Success,
            False,
        ),
        (
            "preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition",
            pod("p_with_nominated_node", uid="p", prio=HIGH, nominated="node1"),
            [pod("p1", prio=LOW, node="node1", terminating=True, conditions=DISRUPTED)],
            ["node1"],
            Code.Success,
            False,
        ),
        (
            "non-victim Pods terminating",
            pod("p_with_nominated_node", uid="p", prio=HIGH, nominated="node1"),
            [pod("p1", prio=LOW, node="node1", terminating=True)],
            ["node1"],
            Code.Success,
            True,
        ),
    ],
)
def test_pod_eligible_to_preempt_others(
    name: str, preemptor: Pod, pods: list[Pod], nodes: list[str], nominated_code: Code, want: bool
) -> None:
    snap = build_snapshot([node(n) for n in nodes], pods)
    pl = DefaultPreemption()
    ok, _ = pl.pod_eligible_to_preempt_others(preemptor, snap, nominated_code)
    assert ok is want


# ---- TestPreempt ------------------------------------------------------------------------
SPREAD_POD = pod(
    "p",
    prio=HIGH,
    labels={"foo": ""},
    spec={
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": key,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
            }
            for key in ("zone", "hostname")
        ]
    },
)

PREEMPT_CASES = [
    (
        "basic preemption logic",
        pod("p", prio=HIGH, req=VERY_LARGE, spec={"preemptionPolicy": "PreemptLowerPriority"}),
        [
            pod("p1.1", node="node1", prio=LOW, req=SMALL),
            pod("p1.2", node="node1", prio=LOW, req=SMALL),
            pod("p2.1", node="node2", prio=HIGH, req=LARGE),
            pod("p3.1", node="node3", prio=MID, req=MEDIUM),
        ],
        ["node1", "node2", "node3"],
        FIT,
        "node1",
        ["p1.1", "p1.2"],
    ),
    (
        "preemption for topology spread constraints",
        SPREAD_POD,
        [
            pod("p-a1", node="node-a", prio=HIGH, labels={"foo": ""}),
            pod("p-a2", node="node-a", prio=HIGH, labels={"foo": ""}),
            pod("p-b1", node="node-b", prio=LOW, labels={"foo": ""}),
            pod("p-x1", node="node-x", prio=HIGH, labels={"foo": ""}),
            pod("p-x2", node="node-x", prio=HIGH, labels={"foo": ""}),
        ],
        ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
        "PodTopologySpread",
        "node-b",
        ["p-b1"],
    ),
    (
        "no preempting in pod",
        pod("p", prio=HIGH, req=VERY_LARGE, spec={"preemptionPolicy": "Never"}),
        [
            pod("p1.1", node="node1", prio=LOW, req=SMALL),
            pod("p1.2", node="node1", prio=LOW, req=SMALL),
            pod("p2.1", node="node2", prio=HIGH, req=LARGE),
            pod("p3.1", node="node3", prio=MID, req=MEDIUM),
        ],
        ["node1", "node2", "node3"],
        FIT,
        None,
        [],
    ),
    (
        "PreemptionPolicy is nil",
        pod("p", prio=HIGH, req=VERY_LARGE),
        [
            pod("p1.1", node="node1", prio=LOW, req=SMALL),
            pod("p1.2", node="node1", prio=LOW, req=SMALL),
            pod("p2.1", node="node2", prio=HIGH, req=LARGE),
            pod("p3.1", node="node3", prio=MID, req=MEDIUM),
        ],
        ["node1", "node2", "node3"],
        FIT,
        "node1",
        ["p1.1", "p1.2"],
    ),
]


@pytest.mark.parametrize(
    ("name", "preemptor", "pods", "node_specs", "plugin", "want_node", "want_victims"),
    PREEMPT_CASES,
    ids=[c[0] for c in PREEMPT_CASES],
)
def test_preempt(
    name: str,
    preemptor: Pod,
    pods: list[Pod],
    node_specs: list[str],
    plugin: str,
    want_node: str | None,
    want_victims: list[str],
) -> None:
    snap = build_snapshot([topo_node(s, VERY_LARGE) for s in node_specs], pods)
    cluster = MemoryCluster(pods={p.uid: p for p in pods})
    nominator = FakeNominator(snap)
    pl, _ = build(snap, (plugin,), nominator=nominator, cluster=cluster)
    got, st = pl.preempt(preemptor, snap, all_unschedulable(snap))
    assert st.ok or st.rejected
    assert got == want_node
    assert sorted(nominator.deleted) == want_victims
    assert sorted(p.name for p in cluster.deleted) == want_victims
    for ev in cluster.events:
        assert ev.reason == "Preempted"
        assert ev.message == f"Preempted by pod {preemptor.uid} on node {want_node}"
    # Victims are gone; a second attempt with no rejected nodes preempts nothing more.
    preemptor.nominated_node_name = want_node or ""
    got2, _ = pl.preempt(preemptor, snap, Diagnosis())
    assert got2 in ("", None)
    assert sorted(nominator.deleted) == want_victims


# ---- nominated pods ---------------------------------------------------------------------
def test_nominated_pods_of_higher_priority_take_room_in_the_dry_run() -> None:
    """addNominatedPods: a pod nominated to the node with >= priority is counted there."""
    snap = build_snapshot(
        [node("node1", {"cpu": "1", "memory": "1Gi"})],
        [pod("low", node="node1", prio=LOW, req={"cpu": "500m"})],
    )
    nominator = FakeNominator(snap)
    pl, _ = build(snap, nominator=nominator, cluster=MemoryCluster())
    preemptor = pod("p", prio=MID, req={"cpu": "600m"})
    rows = np.arange(1, dtype=np.int32)
    cands, _, _ = pl.dry_run_preemption(preemptor, snap, rows, [], 0, 1)
    assert summarize(cands) == [("node1", ["low"], 0)]
    other = pod("other", prio=MID, req={"cpu": "500m"}, nominated="node1")
    nominator.nominated[other.uid] = other
    before = pod_state(snap)
    cands, statuses, _ = pl.dry_run_preemption(preemptor, snap, rows, [], 0, 1)
    assert cands == []
    assert statuses[0].reasons == ("Insufficient cpu",)
    assert pod_state(snap) == before
    # A lower-priority nomination does not count.
    other.priority = LOW
    cands, _, _ = pl.dry_run_preemption(preemptor, snap, rows, [], 0, 1)
    assert summarize(cands) == [("node1", ["low"], 0)]


def test_prepare_candidate_clears_lower_priority_nominations() -> None:
    snap = build_snapshot(
        [node("node1", ONE_POD), node("node2", ONE_POD)], [pod("victim", node="node1", prio=LOW)]
    )
    cluster = MemoryCluster()
    nominator = FakeNominator(snap)
    lower = pod("lower", prio=LOW, nominated="node1")
    higher = pod("higher", prio=VERY_HIGH, nominated="node1")
    elsewhere = pod("elsewhere", prio=LOW, nominated="node2")
    for p in (lower, higher, elsewhere):
        nominator.nominated[p.uid] = p
    pl, _ = build(snap, nominator=nominator, cluster=cluster)
    st = pl.prepare_candidate(
        Candidate("node1", [snap.pod_by_uid["victim"]]), pod("p", uid="p-uid", prio=HIGH)
    )
    assert st.ok
    assert nominator.deleted == ["victim"]
    assert [e.message for e in cluster.events] == ["Preempted by pod p-uid on node node1"]
    assert lower.nominated_node_name == "" and lower.uid not in nominator.nominated
    assert higher.nominated_node_name == "node1" and higher.uid in nominator.nominated
    assert elsewhere.nominated_node_name == "node2" and elsewhere.uid in nominator.nominated


def test_dry_run_restores_snapshot_on_plugin_exception() -> None:
    """A filter that raises mid dry run still leaves every victim in the snapshot."""

    class Boom(FilterPlugin):
        name = "Boom"

        def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
            raise RuntimeError("boom")

    snap = build_snapshot([node("node1", ONE_POD)], [pod("a", node="node1"), pod("b", node="node1")])
    pl, _ = build(snap, ("Boom",), extra=(Boom,))
    before = pod_state(snap)
    cands, statuses, errors = pl.dry_run_preemption(
        pod("p", prio=HIGH), snap, np.arange(1, dtype=np.int32), [], 0, 1
    )
    assert cands == [] and statuses[0].code == Code.Error
    assert errors == ['running "Boom" filter plugin: RuntimeError: boom']
    assert pod_state(snap) == before


# ---- pickOneNodeForPreemption and helpers -----------------------------------------------
def victims(*specs: tuple[int, int | None]) -> list[Pod]:
    return [pod(f"v{i}", node="n", prio=prio, start=start) for i, (prio, start) in enumerate(specs)]


@pytest.mark.parametrize(
    ("name", "cands", "want"),
    [
        (
            "fewest PDB violations first",
            [Candidate("a", victims((LOW, 0)), 2), Candidate("b", victims((HIGH, 0)), 1)],
            "b",
        ),
        ("lowest highest-priority victim", [Candidate("a", victims((MID, 0))), Candidate("b", victims((LOW, 0), (LOW, 0)))], "b"),
        (
            "smallest sum of priorities, shifted by MaxInt32+1",
            [Candidate("a", victims((MID, 0), (NEG, 0), (NEG, 0))), Candidate("b", victims((MID, 0), (NEG, 0)))],
            "b",
        ),
        ("fewest victims", [Candidate("a", victims((MID, 0), (MID, 0))), Candidate("b", victims((MID, 0), (MID, 0)))], "a"),
        (
            "latest start of the highest-priority victims",
            [Candidate("a", victims((MID, 3), (LOW, 9))), Candidate("b", victims((MID, 5), (LOW, 1)))],
            "b",
        ),
        ("a victim that has not started counts as newest", [Candidate("a", victims((MID, 7))), Candidate("b", victims((MID, None)))], "b"),
        ("ties go to the first candidate", [Candidate("a", victims((MID, 1))), Candidate("b", victims((MID, 1)))], "a"),
    ],
)  # fmt: skip
def test_pick_one_node_for_preemption(name: str, cands: list[Candidate], want: str) -> None:
    assert pick_one_node_for_preemption(cands) == want


def test_pick_one_node_empty() -> None:
    assert pick_one_node_for_preemption([]) == ""
    assert select_candidate([]) is None


@pytest.mark.parametrize(
    ("n", "pct", "absolute", "want"),
    [(5, 40, 1, 2), (5, 40, 2, 2), (5, 10, 100, 5), (1000, 10, 100, 100), (5000, 10, 100, 500), (3, 0, 1, 1)],
)
def test_calculate_num_candidates(n: int, pct: int, absolute: int, want: int) -> None:
    pl = DefaultPreemption({"minCandidateNodesPercentage": pct, "minCandidateNodesAbsolute": absolute})
    assert pl.calculate_num_candidates(n) == want


def test_default_args() -> None:
    pl = DefaultPreemption(None)
    assert (pl.min_candidate_nodes_percentage, pl.min_candidate_nodes_absolute) == (10, 100)
    assert DefaultPreemption.extension_points() == frozenset({"postFilter"})


def test_aggregate_errors() -> None:
    assert aggregate_errors(["a"]) == "a"
    assert aggregate_errors(["a", "a"]) == "a"
    assert aggregate_errors(["a", "b", "a"]) == "[a, b]"


# ---- end to end through the Scheduler ---------------------------------------------------
def test_scheduler_preempts_nominates_and_binds_later() -> None:
    from kubesched.config import default_config
    from kubesched.scheduler import Scheduler

    reg = in_tree_registry(entry_points=False)
    cfg = default_config(reg.points_of)
    low = pod("low", node="n1", prio=LOW, req={"cpu": "800m"})
    other = pod("other", node="n2", prio=HIGH, req={"cpu": "800m"})
    snap = build_snapshot(
        [node("n1", {"cpu": "1", "memory": "1Gi"}), node("n2", {"cpu": "1", "memory": "1Gi"})], [low, other]
    )
    cluster = MemoryCluster(pods={low.uid: low, other.uid: other})
    now = [0.0]
    sched = Scheduler(cfg, snap, cluster, reg, seed=1, clock=lambda: now[0])
    high = pod("high", prio=HIGH, req={"cpu": "500m"})
    sched.add_pending(high)

    first = sched.schedule_one()
    assert first is not None and first.node is None
    assert first.nominated_node == "n1"
    assert first.message == "0/2 nodes are available: 2 Insufficient cpu."
    assert high.nominated_node_name == "n1" and high.uid in sched.nominated
    assert [p.name for p in cluster.deleted] == ["low"]
    assert [(e.reason, e.message) for e in cluster.events] == [
        ("Preempted", "Preempted by pod high on node n1")
    ]
    assert "low" not in snap.pod_by_uid

    def advance(t: float) -> None:
        now[0] = t

    sched.run_until_idle(advance)
    assert cluster.bindings == {"high": "n1"}
    assert high.uid not in sched.nominated


def test_scheduler_message_when_preemption_cannot_help() -> None:
    from kubesched.config import default_config
    from kubesched.scheduler import Scheduler

    reg = in_tree_registry(entry_points=False)
    cfg = default_config(reg.points_of)
    snap = build_snapshot(
        [node("n1", {"cpu": "1", "memory": "1Gi"}), node("n2", {"cpu": "1", "memory": "1Gi"})], []
    )
    sched = Scheduler(cfg, snap, MemoryCluster(), reg, seed=1, clock=lambda: 0.0)
    big = pod("big", prio=HIGH, req={"cpu": "2"})
    sched.add_pending(big)
    res = sched.schedule_one()
    assert res is not None and res.node is None
    assert res.nominated_node == ""
    assert res.message == (
        "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
