"""Coscheduling's extension points: ports of scheduler-plugins' coscheduling_test.go.

TestLess (all 13 cases), TestPermit, TestPostFilter and TestPodGroupBackoffTime, plus the args.
The Go tests give the plugin a fake pod lister; here the plugin's manager gets the same pods.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import cmp_to_key

import numpy as np
import pytest
from gang_testlib import member, pod_group

from kubesched.api.objects import Pod, PodGroup
from kubesched.errors import InputError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interfaces import NOT_INVOLVED
from kubesched.framework.status import Code
from kubesched.framework.waiting import PODS_TO_ACTIVATE, WaitingPod, WaitingPods, attach_waiting
from kubesched.plugins.coscheduling import Coscheduling, CoschedulingArgs, parse_args
from kubesched.queue.scheduling_queue import QueuedPodInfo
from kubesched.state.snapshot import Snapshot
from kubesched.testing import build_snapshot, make_node, make_pod

LOW, HIGH = 10, 100
NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)


def at(seconds: int) -> str:
    return (NOW + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def epoch(seconds: int) -> float:
    return (NOW + timedelta(seconds=seconds)).timestamp()


def plugin(
    pods: list[dict] = (),  # type: ignore[assignment]
    groups: list[dict] = (),  # type: ignore[assignment]
    *,
    lister: list[dict] = (),  # type: ignore[assignment]
    args: dict | None = None,
    now: list[float] | None = None,
) -> tuple[Coscheduling, Snapshot, WaitingPods]:
    snap = build_snapshot([make_node("node", cpu="4")], pods)
    for d in groups:
        pg = PodGroup.parse(d)
        snap.pod_groups[(pg.namespace, pg.name)] = pg
    handle = Handle(snap, None, np.random.default_rng(0))
    waiting = WaitingPods()
    clock = now or [0.0]
    attach_waiting(handle, waiting, lambda: clock[0])
    pl = Coscheduling(args, handle)
    listed = [Pod.parse(p) for p in lister]
    pl.manager.pending_pods = lambda: listed
    return pl, snap, waiting


def qpi(pod: dict, attempt: float | None = None) -> QueuedPodInfo:
    return QueuedPodInfo(Pod.parse(pod), 0.0, initial_attempt=attempt)


def p(name: str, ns: str, prio: int, group: str | None = None) -> dict:
    d = member(name, group, ns=ns)
    d["spec"]["priority"] = prio
    return d


# ---- QueueSort ---------------------------------------------------------------------------
LESS_CASES = [
    ("p1.priority less than p2.priority", p("p1", "ns1", LOW), None, p("p2", "ns2", HIGH), None, [], False),
    ("p1.priority greater than p2.priority", p("p1", "ns1", HIGH), None, p("p2", "ns2", LOW), None, [], True),
    ("equal priority. p1 is added to schedulingQ earlier than p2", p("p1", "ns1", HIGH), 1, p("p2", "ns2", HIGH), 2, [], True),
    ("equal priority. p2 is added to schedulingQ earlier than p1", p("p1", "ns1", HIGH), 2, p("p2", "ns2", HIGH), 1, [], False),
    (
        "p1.priority less than p2.priority, p1 belongs to pg1",
        p("p1", "ns1", LOW, "pg1"), None, p("p2", "ns2", HIGH), None,
        [pod_group("pg1", ns="ns1")], False,
    ),
    (
        "p1.priority greater than p2.priority, p1 belongs to pg1",
        p("p1", "ns1", HIGH, "pg1"), None, p("p2", "ns2", LOW), None,
        [pod_group("pg1", ns="ns1")], True,
    ),
    (
        "equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1",
        p("p1", "ns1", HIGH, "pg1"), 1, p("p2", "ns2", HIGH), 2,
        [pod_group("pg1", ns="ns1", created=at(1))], True,
    ),
    (
        "equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg1",
        p("p1", "ns1", HIGH, "pg1"), 2, p("p2", "ns2", HIGH), 1,
        [pod_group("pg1", ns="ns1", created=at(2))], False,
    ),
    (
        "p1.priority less than p2.priority, p1 belongs to pg1 and p2 belongs to pg2",
        p("p1", "ns1", LOW, "pg1"), None, p("p2", "ns2", HIGH, "pg2"), None,
        [pod_group("pg1", ns="ns1", created=at(1)), pod_group("pg2", ns="ns2", created=at(2))], False,
    ),
    (
        "p1.priority greater than p2.priority, p1 belongs to pg1 and and p2 belongs to pg2",
        p("p1", "ns1", HIGH, "pg1"), None, p("p2", "ns2", LOW, "pg1"), None,
        [pod_group("pg1", ns="ns1", created=at(1)), pod_group("pg2", ns="ns2", created=at(2))], True,
    ),
    (
        "equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1 and p2 belongs to pg2",
        p("p1", "ns1", HIGH, "pg1"), 1, p("p2", "ns2", HIGH, "pg2"), 2,
        [pod_group("pg1", ns="ns1", created=at(1)), pod_group("pg2", ns="ns2", created=at(2))], True,
    ),
    (
        "equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg2 and p2 belongs to pg1",
        p("p1", "ns", LOW, "pg2"), 1, p("p2", "ns", HIGH, "pg1"), 2,
        [pod_group("pg1", ns="ns", created=at(1)), pod_group("pg2", ns="ns", created=at(2))], False,
    ),
    (
        "equal priority and creation time, p1 belongs pg1 and p2 belong to pg2",
        p("p1", "ns1", HIGH, "pg2"), 1, p("p2", "ns2", HIGH, "pg2"), 1,
        [pod_group("pg1", ns="ns1", created=at(1)), pod_group("pg2", ns="ns2", created=at(2))], True,
    ),
    (
        "equal priority and creation time, and p2 belong to pg2",
        p("p1", "ns1", HIGH), 1, p("p2", "ns2", HIGH, "pg2"), 1,
        [pod_group("pg2", ns="ns2", created=at(2))], True,
    ),
]


@pytest.mark.parametrize(("name", "p1", "t1", "p2", "t2", "groups", "want"), LESS_CASES, ids=[c[0] for c in LESS_CASES])
def test_less(name: str, p1: dict, t1: int | None, p2: dict, t2: int | None, groups: list[dict], want: bool) -> None:
    pl, _, _ = plugin(groups=groups)
    a = qpi(p1, None if t1 is None else epoch(t1))
    b = qpi(p2, None if t2 is None else epoch(t2))
    assert pl.less(a, b) is want


def test_less_keeps_a_group_together_and_breaks_ties_by_pod_name() -> None:
    pl, _, _ = plugin(groups=[pod_group("a", created=at(0)), pod_group("b", created=at(5))])
    queued = [qpi(member(n, g), epoch(t)) for n, g, t in [("b-0", "b", 1), ("a-1", "a", 2), ("x", None, 3), ("a-0", "a", 9)]]
    order = sorted(range(len(queued)), key=cmp_to_key(lambda i, j: -1 if pl.less(queued[i], queued[j]) else 1))
    # a's members sort by their group's time (0), then by name; x by its own first attempt (3); then b (5)
    assert [queued[i].pod.name for i in order] == ["a-0", "a-1", "x", "b-0"]


# ---- Permit ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "pod", "want"),
    [
        ("pods do not belong to any podGroup", make_pod("p", namespace="ns", uid="p"), Code.Success),
        ("pods belong to a pg1, but quorum not satisfied", member("p", "pg2"), Code.Wait),
        ("pods belong to a podGroup, and quorum satisfied", member("p", "pg1"), Code.Success),
    ],
)
def test_permit(name: str, pod: dict, want: Code) -> None:
    pl, _, _ = plugin(groups=[pod_group("pg1", min_member=1), pod_group("pg2", min_member=2)], args={"permitWaitingTimeSeconds": 10})
    st, timeout = pl.permit(CycleState(), Pod.parse(pod), "node")
    assert st.code == want
    assert timeout == (10.0 if want == Code.Wait else 0.0)


def test_permit_wait_time_precedence_and_missing_group() -> None:
    groups = [pod_group("own", min_member=2, timeout=30), pod_group("zero", min_member=2, timeout=0), pod_group("dflt", min_member=2)]
    pl, _, _ = plugin(groups=groups, args={"permitWaitingTimeSeconds": 10})
    wait = {g: pl.permit(CycleState(), Pod.parse(member("p", g)), "node")[1] for g in ("own", "zero", "dflt")}
    assert wait == {"own": 30.0, "zero": 10.0, "dflt": 10.0}  # scheduleTimeoutSeconds, unless 0
    st, _ = pl.permit(CycleState(), Pod.parse(member("p", "nope")), "node")
    assert (st.code, st.message) == (Code.Unschedulable, "PodGroup not found")
    pl0, _, _ = plugin(groups=[pod_group("dflt", min_member=2)], args={"permitWaitingTimeSeconds": 0})
    assert pl0.permit(CycleState(), Pod.parse(member("p", "dflt")), "node")[1] == 60.0  # util.DefaultWaitTime


def test_permit_success_allows_the_waiting_members() -> None:
    pl, snap, waiting = plugin(
        [member("a", "pg", node="node"), member("b", "pg", node="node"), member("c", "other", node="node")],
        [pod_group("pg", min_member=3), pod_group("other", min_member=2)],
    )
    for uid in ("a", "b", "c"):
        waiting.add(WaitingPod(snap.pod_by_uid[uid], "node", {"Coscheduling": 10.0, "Other": 5.0}, 0.0))
    st, _ = pl.permit(CycleState(), Pod.parse(member("d", "pg")), "node")
    assert st.ok
    a, b, c = (waiting.get(u) for u in "abc")
    assert a.get_pending_plugins() == b.get_pending_plugins() == ["Other"]  # Coscheduling allowed them ...
    assert not a.resolved  # ... but another plugin still holds them
    assert c.get_pending_plugins() == ["Coscheduling", "Other"]  # another group's pod is untouched


# ---- PostFilter --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "pod", "existing", "min_member", "code", "message"),
    [
        ("pod does not belong to any pod group", make_pod("p", namespace="ns", uid="p"), [], 2, Code.Unschedulable, "can not find pod group"),
        ("enough pods assigned, do not reject all", member("p", "pg1"), [member("p1", "pg1", node="node")], 1, Code.Unschedulable, ""),
        (
            "pod failed at filter phase, reject all pods",
            member("p", "pg1"),
            [member("p1", "pg1", node="node")],
            2,
            Code.Unschedulable,
            "PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter",
        ),
    ],
)
def test_post_filter(name: str, pod: dict, existing: list[dict], min_member: int, code: Code, message: str) -> None:
    pl, snap, waiting = plugin(existing, [pod_group("pg1", min_member=min_member)])
    for e in existing:
        waiting.add(WaitingPod(snap.pod_by_uid[e["metadata"]["uid"]], "node", {"Coscheduling": 10.0}, 0.0))
    node, st = pl.post_filter(CycleState(), Pod.parse(pod), snap, None)
    assert node is None
    assert (st.code, st.message) == (code, message)
    rejected = [wp.status.message for wp in waiting if wp.resolved]
    assert rejected == (["optimistic rejection in PostFilter"] if message.startswith("PodGroup") else [])


def test_post_filter_keeps_the_group_within_ten_percent_of_its_quorum() -> None:
    members = [member(f"m{i}", "pg", node="node") for i in range(9)]
    pl, snap, waiting = plugin(members, [pod_group("pg", min_member=10)])
    waiting.add(WaitingPod(snap.pod_by_uid["m0"], "node", {"Coscheduling": 10.0}, 0.0))
    _, st = pl.post_filter(CycleState(), Pod.parse(member("m9", "pg")), snap, None)
    assert (st.code, st.message) == (Code.Unschedulable, "")  # 1/10 missing: try later members
    assert not waiting.get("m0").resolved


def test_pod_group_backoff_time() -> None:
    """TestPodGroupBackoffTime: "prevent pod falling into infinite scheduling loop"."""
    pods = [member(f"pod{i}", "pg1") for i in (1, 2, 3)]
    now = [0.0]
    pl, snap, _ = plugin(groups=[pod_group("pg1", min_member=3)], lister=pods, args={"podGroupBackoffSeconds": 1}, now=now)
    state = CycleState()
    st, _ = pl.permit(state, Pod.parse(pods[0]), "node")
    assert st.code == Code.Wait
    assert sorted(p.name for p in state.read(PODS_TO_ACTIVATE).values()) == ["pod2", "pod3"]
    pl.post_filter(CycleState(), Pod.parse(pods[1]), snap, None)
    st = pl.pre_filter(CycleState(), Pod.parse(pods[2]), snap)
    assert (st.code, st.message) == (Code.UnschedulableAndUnresolvable, "podGroup ns/pg1 failed recently")
    now[0] = 1.0  # the backoff is over
    assert pl.pre_filter(CycleState(), Pod.parse(pods[2]), snap).ok


def test_pre_filter_skips_pods_outside_groups() -> None:
    pl, snap, _ = plugin(groups=[pod_group("pg1", min_member=3)], lister=[member("a", "pg1")])
    free = Pod.parse(make_pod("free", namespace="ns"))
    assert pl.sign_pod(free, snap) == NOT_INVOLVED and pl.pre_filter(CycleState(), free, snap).code == Code.Skip
    assert pl.sign_pod(Pod.parse(member("a", "pg1")), snap) is None  # a gang member reads its group
    st = pl.pre_filter(CycleState(), Pod.parse(member("a", "pg1")), snap)
    assert st.code == Code.UnschedulableAndUnresolvable
    assert st.message == "pre-filter pod a cannot find enough sibling pods, current pods number: 1, minMember of group: 3"


# ---- Unreserve ---------------------------------------------------------------------------
def test_unreserve_rejects_the_groups_waiting_pods() -> None:
    pl, snap, waiting = plugin(
        [member("a", "pg", node="node"), member("b", "pg", node="node"), member("c", "pg", ns="other", node="node")],
        [pod_group("pg", min_member=3)],
    )
    for uid in "abc":
        waiting.add(WaitingPod(snap.pod_by_uid[uid], "node", {"Coscheduling": 10.0}, 0.0))
    pl.unreserve(CycleState(), Pod.parse(member("d", "pg")), "node")
    assert {wp.pod.name: wp.status.message if wp.status else None for wp in waiting} == {
        "a": "rejection in Unreserve",
        "b": "rejection in Unreserve",
        "c": None,  # same group name, other namespace
    }


# ---- args --------------------------------------------------------------------------------
def test_args_defaults_and_values() -> None:
    assert parse_args(None) == CoschedulingArgs(60, 0)
    assert parse_args({"permitWaitingTimeSeconds": 5, "podGroupBackoffSeconds": 2}) == CoschedulingArgs(5, 2)
    assert parse_args({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "CoschedulingArgs"}) == CoschedulingArgs()
    assert parse_args({"kubeConfigPath": "/etc/kubernetes/scheduler.conf"}) == CoschedulingArgs()  # older versions'


@pytest.mark.parametrize(
    ("args", "path", "text"),
    [
        ({"podGroupBackoffSeconds": -1}, "CoschedulingArgs.podGroupBackoffSeconds", "cannot be negative"),
        ({"permitWaitingTimeSeconds": "10s"}, "CoschedulingArgs.permitWaitingTimeSeconds", "expected an integer"),
        ({"permitWaitingTimeSeconds": True}, "CoschedulingArgs.permitWaitingTimeSeconds", "expected an integer"),
        ({"permitWaitTime": 3}, "CoschedulingArgs.permitWaitTime", "unknown field"),
        ({"kind": "CapacitySchedulingArgs"}, "CoschedulingArgs.kind", "has to match"),
    ],
)
def test_args_errors(args: dict, path: str, text: str) -> None:
    with pytest.raises(InputError) as e:
        parse_args(args)
    assert e.value.path == path and text in e.value.reason
