"""Node readiness and cluster / node-group health (kubesched.autoscale.health), ported from
kubernetes/autoscaler cluster-autoscaler/clusterstate/clusterstate_test.go: TestOKWithScaleUp,
TestEmptyOK, TestOKOneUnreadyNode, TestNodeWithoutNodeGroupDontCrash,
TestOKOneUnreadyNodeWithScaleDownCandidate, TestTooManyUnready, TestUnreadyLongAfterCreation,
TestUnreadyAfterCreationWithIncreasedStartupTime, TestNotStarted, TestUpcomingNodes (its five
groups). Upstream's configuration in all of them: MaxTotalUnreadyPercentage 10, OkTotalUnreadyCount 1.

Not ported: TestMissingNodes, TestExpiredScaleUp and TestScaleUpUnhealthy make a group unhealthy
by a cloud-provider target above its nodes with no scale-up under way; kubesched's target is
registered plus upcoming nodes, each of them part of a scale-up until it registers or is given
up on, so that state does not arise (test_an_unhealthy_group_gets_no_scale_up has a group made
unhealthy by unready nodes instead). TestScaleUpBackoff is in test_ca_backoff.py; the others test
bookkeeping kubesched does not have (scale-down requests, incorrect sizes, cloud instances).
"""

from __future__ import annotations

from collections import Counter

import pytest

from kubesched.api.objects import Node
from kubesched.autoscale.health import never_ready, node_ready
from kubesched.autoscale.interface import LoopRecord
from kubesched.autoscale.live import LiveView
from kubesched.autoscale.status import StatusBuilder
from tests.autoscale.loop_helpers import FRAMEWORKS, UNSCHEDULABLE
from tests.autoscale.readiness_helpers import (
    MIN,
    NOW,
    ask,
    build_node,
    groups,
    loop,
    measured,
    not_ready_taint,
    remove_not_ready_taint,
    set_ready,
)
from tests.autoscale.scaleup_cases import ViewAt, pod

UPSTREAM = {"max_total_unready_percentage": 10.0, "ok_total_unready_count": 1}


def status(ca, view, unneeded=()) -> dict:
    return StatusBuilder().build(ca, view.snapshot, LoopRecord(unneeded=list(unneeded)), NOW)


def by_group(doc: dict) -> dict[str, dict]:
    return {g["name"]: g for g in doc["nodeGroups"]}


# ---- readiness of one node (utils/kubernetes/ready.go) ----------------------------------------
@pytest.mark.parametrize(
    ("conditions", "taints", "want"),
    [
        ([{"type": "Ready", "status": "True"}], [], True),
        ([{"type": "Ready", "status": "False"}], [], False),
        ([{"type": "Ready", "status": "Unknown"}], [], False),
        ([{"type": "Ready", "status": "True"}, {"type": "DiskPressure", "status": "True"}], [], False),
        ([{"type": "Ready", "status": "True"}, {"type": "NetworkUnavailable", "status": "True"}], [], False),
        ([{"type": "Ready", "status": "True"}, {"type": "MemoryPressure", "status": "True"}], [], True),
        ([{"type": "Ready", "status": "True"}], [{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}], False),
        ([{"type": "MemoryPressure", "status": "False"}], [], False),  # conditions without Ready: not found
        ([], [], True),  # no conditions at all: the simulator's nodes
        ([], [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}], False),
    ],
)
def test_get_node_readiness(conditions, taints, want):
    d = build_node("n", ready=None)
    d["status"]["conditions"] = conditions
    d["spec"]["taints"] = taints
    assert node_ready(Node.parse(d)) is want


def test_a_node_that_never_becomes_ready_is_tainted_and_created_when_it_registers():
    n = never_ready(Node.parse(build_node("n", "ng1", ready=None)), NOW)
    assert not node_ready(n)
    assert [t.key for t in n.taints] == ["node.kubernetes.io/not-ready"]
    assert n.raw["metadata"]["creationTimestamp"] == "2023-11-14T22:13:20Z"


# ---- clusterstate_test.go ---------------------------------------------------------------------
def test_ok_with_scale_up():
    """TestOKWithScaleUp: ng1 at target 5 has 1 node and a scale-up of 4 under way."""
    ca = loop(groups(("ng1", 1, 10), ("ng2", 1, 10)), **UPSTREAM)
    ask(ca, "ng1", 4)
    view = measured(ca, [build_node("ng1-1", "ng1"), build_node("ng2-1", "ng2")])
    assert ca.health.cluster_healthy()
    doc = status(ca, view)
    assert doc["clusterWide"]["scaleUp"]["status"] == "InProgress"
    assert len(doc["nodeGroups"]) == 2
    assert by_group(doc)["ng1"]["scaleUp"]["status"] == "InProgress"
    assert by_group(doc)["ng2"]["scaleUp"]["status"] == "NoActivity"


def test_empty_ok():
    """TestEmptyOK: an empty group at target 0 is healthy and not scaling up; asked for 3 nodes,
    it is healthy and scaling up."""
    ca = loop(groups(("ng1", 0, 10)), **UPSTREAM)
    measured(ca, [], NOW - 5)
    assert ca.health.cluster_healthy() and ca.health.group_healthy("ng1")
    assert not ca.health.scaling_up("ng1")
    ask(ca, "ng1", 3, NOW - 3)
    measured(ca, [])
    assert ca.health.cluster_healthy() and ca.health.group_healthy("ng1")
    assert ca.health.scaling_up("ng1")


def test_ok_one_unready_node():
    """TestOKOneUnreadyNode"""
    ca = loop(groups(("ng1", 1, 10), ("ng2", 1, 10)), **UPSTREAM)
    view = measured(ca, [build_node("ng1-1", "ng1"), build_node("ng2-1", "ng2", ready=False)])
    assert ca.health.cluster_healthy() and ca.health.group_healthy("ng1")
    doc = status(ca, view)
    assert doc["clusterWide"]["health"]["status"] == "Healthy"
    assert doc["clusterWide"]["scaleUp"]["status"] == "NoActivity"
    assert by_group(doc)["ng1"]["health"]["status"] == "Healthy"


def test_node_without_node_group_dont_crash():
    """TestNodeWithoutNodeGroupDontCrash: a node of no group counts in the cluster's total only."""
    ca = loop(groups(("ng1", 0, 10)), **UPSTREAM)
    view = measured(ca, [build_node("no_ng")])
    doc = status(ca, view, unneeded=["no_ng"])
    assert doc["clusterWide"]["health"]["nodeCounts"]["registered"]["ready"] == 1
    assert by_group(doc)["ng1"]["health"]["nodeCounts"]["registered"]["total"] == 0
    assert doc["clusterWide"]["scaleDown"]["status"] == "NoCandidates"  # a candidate of no group is not counted


def test_ok_one_unready_node_with_scale_down_candidate():
    """TestOKOneUnreadyNodeWithScaleDownCandidate"""
    ca = loop(groups(("ng1", 1, 10), ("ng2", 1, 10)), **UPSTREAM)
    view = measured(ca, [build_node("ng1-1", "ng1"), build_node("ng2-1", "ng2", ready=False)])
    assert ca.health.cluster_healthy() and ca.health.group_healthy("ng1")
    doc = status(ca, view, unneeded=["ng1-1"])
    assert doc["clusterWide"]["health"]["status"] == "Healthy"
    assert doc["clusterWide"]["scaleUp"]["status"] == "NoActivity"
    assert doc["clusterWide"]["scaleDown"]["status"] == "CandidatesPresent"
    ng = by_group(doc)
    assert (ng["ng1"]["health"]["status"], ng["ng1"]["scaleDown"]["status"]) == ("Healthy", "CandidatesPresent")
    assert (ng["ng2"]["health"]["status"], ng["ng2"]["scaleDown"]["status"]) == ("Healthy", "NoCandidates")


def test_too_many_unready():
    """TestTooManyUnready: both nodes unready: more than 1 and more than 10 % of 2."""
    ca = loop(groups(("ng1", 1, 10), ("ng2", 1, 10)), **UPSTREAM)
    measured(ca, [build_node("ng1-1", "ng1", ready=False), build_node("ng2-1", "ng2", ready=False)])
    assert not ca.health.cluster_healthy()
    assert ca.health.group_healthy("ng1")


@pytest.mark.parametrize(("startup", "unready", "not_started"), [(15 * MIN, 1, 0), (35 * MIN, 0, 1)], ids=["TestUnreadyLongAfterCreation", "TestUnreadyAfterCreationWithIncreasedStartupTime"])
def test_unready_after_creation(startup, unready, not_started):
    """Unready 30 minutes after its creation: Unready past a 15-minute startup time, NotStarted
    within a 35-minute one. Nothing is upcoming for ng1 either way."""
    ca = loop(groups(("ng1", 1, 10), ("ng2", 1, 10)), max_node_startup_time=startup, **UPSTREAM)
    measured(ca, [build_node("ng1-1", "ng1"), build_node("ng2-1", "ng2", ready=False, created=NOW - 30 * MIN)])
    assert (len(ca.health.total.unready), len(ca.health.total.not_started)) == (unready, not_started)
    assert ca.health.groups["ng1"].unregistered == 0 and not ca.health.groups["ng1"].not_started


def test_not_started():
    """TestNotStarted: created 10 minutes ago, unready and tainted not-ready: NotStarted; Ready
    but still tainted: NotStarted; the taint gone: Ready."""
    ca = loop(groups(("ng1", 1, 10), ("ng2", 1, 10)), max_node_startup_time=35 * MIN, **UPSTREAM)
    ng1_1 = build_node("ng1-1", "ng1")
    ng2_1 = not_ready_taint(build_node("ng2-1", "ng2", ready=False, created=NOW - 10 * MIN))
    measured(ca, [ng1_1, ng2_1])
    assert (len(ca.health.total.not_started), ca.health.total.ready) == (1, 1)
    set_ready(ng2_1, True)
    measured(ca, [ng1_1, ng2_1])
    assert (len(ca.health.total.not_started), ca.health.total.ready) == (1, 1)
    remove_not_ready_taint(ng2_1)
    measured(ca, [ng1_1, ng2_1])
    assert (len(ca.health.total.not_started), ca.health.total.ready) == (0, 2)


def test_upcoming_nodes():
    """TestUpcomingNodes: ng1 at target 7 with 1 node: 6 upcoming; ng2 at 2 with 1 node unready
    long: 1; ng3 at 2, one node just started (NotStarted) and one not there: 2, one of them
    registered; ng4 at 1 with its node unready: none; ng5 at 2, its second node being deleted:
    none."""
    ca = loop(groups(*((f"ng{i}", 1, 10) for i in range(1, 6))), **UPSTREAM)
    ask(ca, "ng1", 6)
    ask(ca, "ng2", 1)
    ask(ca, "ng3", 1)
    deleting = {"key": "ToBeDeletedByClusterAutoscaler", "value": str(int(NOW)), "effect": "NoSchedule"}
    ng5_2 = build_node("ng5-2", "ng5")
    ng5_2["spec"]["taints"] = [deleting]
    measured(ca, [
        build_node("ng1-1", "ng1"), build_node("ng2-1", "ng2", ready=False), build_node("ng3-1", "ng3", ready=False, created=NOW - MIN),
        build_node("ng4-1", "ng4", ready=False), build_node("ng5-1", "ng5"), ng5_2,
    ])  # fmt: skip
    upcoming = {g: r.unregistered + len(r.not_started) for g, r in ca.health.groups.items()}
    assert upcoming == {"ng1": 6, "ng2": 1, "ng3": 2, "ng4": 0, "ng5": 0}
    assert {g: r.not_started for g, r in ca.health.groups.items() if r.not_started} == {"ng3": ["ng3-1"]}
    assert ca.health.groups["ng5"].deleted == 1


# ---- what health does to the loop (static_autoscaler.go, the scale-up orchestrator) -------------
def unhealthy_ng2(ready_ng2: int) -> list[dict]:
    """ng1: 6 small nodes, all Ready; ng2: 5 nodes, ``ready_ng2`` of them Ready, the others
    Unready for long. 4 unready of 11 (3 below 45 %): the cluster stays healthy."""
    nodes = [build_node(f"ng1-{i}", "ng1", cpu="100m") for i in range(6)]
    nodes += [build_node(f"ng2-{i}", "ng2", ready=i < ready_ng2) for i in range(5)]
    return nodes


@pytest.mark.parametrize(("ready_ng2", "want"), [(5, {"ng2": 1}), (1, {})])
def test_an_unhealthy_group_gets_no_scale_up(ready_ng2, want):
    """As upstream's TestScaleUpUnhealthy: the pending pod fits only ng2's nodes; with 4 of its 5
    nodes unready ng2 is unhealthy (4 missing: more than 3 and more than 45 % of 5), so no
    scale-up goes to it (IsNodeGroupSafeToScaleUp); with all ready it grows by one."""
    ng = groups(("ng1", 1, 10), ("ng2", 1, 10))
    ng[0].template = Node.parse(build_node("t", cpu="100m", ready=None))
    ca = loop(ng)
    full = [pod(f"p{i}", 800, on=f"ng2-{i}") for i in range(5)]
    view = ViewAt(NOW, unhealthy_ng2(ready_ng2), [*full, {**pod("p-new", 550), "status": UNSCHEDULABLE}])
    ca.run_once(view)
    assert ca.health.cluster_healthy()
    assert ca.health.group_healthy("ng2") is (ready_ng2 == 5)
    assert dict(Counter(u.group for u in ca.upcoming.values())) == want


def test_an_unhealthy_cluster_does_nothing_and_forgets_unneeded_nodes():
    """static_autoscaler.go: past okTotalUnreadyCount and maxTotalUnreadyPercentage (4 unready of
    5) the iteration stops: no scale-up for the pending pod, no scale-down, and the unneeded
    timers start again (CleanUpUnneededNodes). Healthy again, it scales up."""
    ca = loop(groups(("ng1", 0, 10)))
    ca.unneeded_since["ng1-0"] = NOW - 3600
    record = ca.record = LoopRecord()
    pending = [{**pod("p", 500), "status": UNSCHEDULABLE}]
    sick = [build_node(f"ng1-{i}", "ng1", cpu="100m", ready=i == 0) for i in range(5)]
    ca.run_once(ViewAt(NOW, sick, pending))
    assert record.cluster_unhealthy and not ca.upcoming and not ca.unneeded_since
    assert ca.provider.deleted == []
    record = ca.record = LoopRecord()
    ca.run_once(ViewAt(NOW + 10, [build_node(f"ng1-{i}", "ng1", cpu="100m") for i in range(5)], pending))
    assert not record.cluster_unhealthy and len(ca.upcoming) == 1


def test_nodes_of_no_group_count_towards_cluster_health_only():
    """Unready nodes of no node group make the cluster unhealthy (CA counts every node), but no
    group."""
    ca = loop(groups(("ng1", 0, 10)), **UPSTREAM)
    measured(ca, [build_node("a", ready=False), build_node("b", ready=False), build_node("ng1-1", "ng1")])
    assert not ca.health.cluster_healthy()
    assert ca.health.group_healthy("ng1")


def test_status_counts_not_started_unready_and_being_deleted_nodes():
    ca = loop(groups(("ng1", 0, 10)))
    deleting = build_node("d", "ng1")
    deleting["spec"]["taints"] = [{"key": "ToBeDeletedByClusterAutoscaler", "value": str(int(NOW)), "effect": "NoSchedule"}]
    nodes = [build_node("r", "ng1"), build_node("s", "ng1", ready=False, created=NOW - MIN), build_node("u", "ng1", ready=False), deleting]
    doc = status(ca, LiveView(nodes, [], FRAMEWORKS))
    assert by_group(doc)["ng1"]["health"]["nodeCounts"] == {
        "registered": {"total": 4, "ready": 1, "notStarted": 1, "beingDeleted": 1, "unready": {"total": 1, "resourceUnready": 0}},
        "longUnregistered": 0,
        "unregistered": 0,
    }


def test_a_node_not_started_is_upcoming_for_pending_pods():
    """GetUpcomingNodes: a NotStarted node of ng1 stands for a template node, so the pending pod
    waits for it; once it is Unready (15 minutes after its creation) the pod asks for a node."""
    ca = loop(groups(("ng1", 0, 10)))
    starting = build_node("ng1-9", "ng1", ready=False, created=NOW - MIN)
    pending = [{**pod("p", 500), "status": UNSCHEDULABLE}]
    ca.run_once(ViewAt(NOW, [starting], pending))
    assert not ca.upcoming
    ca.run_once(ViewAt(NOW + 15 * MIN, [starting], pending))
    assert [u.group for u in ca.upcoming.values()] == ["ng1"]
