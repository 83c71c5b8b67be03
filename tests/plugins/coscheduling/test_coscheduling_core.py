"""PodGroupManager: ports of scheduler-plugins' pkg/coscheduling/core/core_test.go tables.

TestPreFilter, TestPermit and TestCheckClusterResource, case by case. As in the Go tests the
pod lister holds the "pending" pods only (not the pod under test); the snapshot holds pods
bound to nodes.
"""

from __future__ import annotations

import pytest
from gang_testlib import member, pod_group

from kubesched.api.objects import Pod, PodGroup
from kubesched.plugins.coscheduling import PodGroupManager, check_cluster_resource
from kubesched.plugins.coscheduling.groups import (
    LEGACY_POD_GROUP_LABEL,
    POD_GROUP_NOT_FOUND,
    POD_GROUP_NOT_SPECIFIED,
    SUCCESS,
    WAIT,
    pod_group_label,
)
from kubesched.state.snapshot import Snapshot
from kubesched.testing import build_snapshot, make_node, make_pod


def snapshot(pods: list[dict], groups: list[dict], cpu: str = "4") -> Snapshot:
    nodes = [make_node("node-a", cpu=cpu, memory="16Gi"), make_node("node-b", cpu=cpu, memory="16Gi")]
    snap = build_snapshot(nodes, pods)
    for d in groups:
        pg = PodGroup.parse(d)
        snap.pod_groups[(pg.namespace, pg.name)] = pg
    return snap


def manager(snap: Snapshot, pending: list[dict], now: list[float] | None = None) -> PodGroupManager:
    clock = now or [0.0]
    pods = [Pod.parse(p) for p in pending]
    return PodGroupManager(lambda: snap, lambda: pods, 10.0, lambda: clock[0])


PG12 = [pod_group("pg1", min_member=1), pod_group("pg2", min_member=1)]
TWO_TWO = [pod_group("pg1", min_member=2), pod_group("pg2", min_member=2)]
P1BC = [member("p1b", "pg1"), member("p1c", "pg1")]


@pytest.mark.parametrize(
    ("name", "pod", "pending", "groups", "ok"),
    [
        ("pod does not belong to any pg", make_pod("p"), [member("p1", "pg1"), member("p2", "pg2")], PG12, True),
        ("pod belongs to a non-existent pg", member("p", "pg-non-existent"), [], PG12[:1], True),
        ("pod count less than minMember", member("p", "pg1"), [member("pg2-1", "pg2")], TWO_TWO, False),
        ("pod count equal minMember", member("p1a", "pg1"), P1BC, TWO_TWO, True),
        ("pod count more than minMember", member("p1a", "pg1"), P1BC, TWO_TWO, True),
        # two nodes of 4 CPUs: minResources of 6 CPUs is there (though Filter may fail later) ...
        (
            "cluster's resource satisfies minResource",
            member("p1a", "pg1"),
            P1BC,
            [pod_group("pg1", min_member=2, min_resources={"cpu": "6"})],
            True,
        ),
        # ... 10 CPUs is not
        (
            "cluster's resource cannot satisfy minResource",
            member("p1a", "pg1"),
            P1BC,
            [pod_group("pg1", min_member=2, min_resources={"cpu": "10"})],
            False,
        ),
    ],
)
def test_pre_filter(name: str, pod: dict, pending: list[dict], groups: list[dict], ok: bool) -> None:
    snap = snapshot([], groups)
    msg = manager(snap, pending).pre_filter(Pod.parse(pod), snap)
    assert (msg is None) == ok, msg


def test_pre_filter_messages() -> None:
    snap = snapshot([], TWO_TWO)
    msg = manager(snap, [member("pg2-1", "pg2")]).pre_filter(Pod.parse(member("p", "pg1")), snap)
    assert msg == "pre-filter pod p cannot find enough sibling pods, current pods number: 0, minMember of group: 2"
    snap = snapshot([], [pod_group("pg1", min_member=2, min_resources={"cpu": "10", "memory": "1Gi"})])
    msg = manager(snap, P1BC).pre_filter(Pod.parse(member("p1a", "pg1")), snap)
    assert msg == "resource gap: map[cpu:2]"  # memory (1Gi of 32Gi) and pods are covered


def test_pre_filter_counts_bound_members_and_caches_the_resource_check() -> None:
    # one member bound, one pending: 2 pods for minMember 2
    snap = snapshot([member("p1b", "pg1", node="node-a", cpu="3")], [pod_group("pg1", min_member=2, min_resources={"cpu": "6"})])
    now = [0.0]
    mgr = manager(snap, [member("p1c", "pg1")], now)
    pod = Pod.parse(member("p1a", "pg1"))
    assert mgr.pre_filter(pod, snap) is None  # p1b's own 3 CPUs count as free for its group
    assert "ns/pg1" in mgr.permitted
    snap.add_pod(Pod.parse(member("hog", node="node-b", cpu="4")))
    assert mgr.pre_filter(pod, snap) is None  # still within permittedPG's lifetime (scheduleTimeout)
    now[0] = 10.0
    assert mgr.pre_filter(pod, snap) == "resource gap: map[cpu:2]"  # 4 free on node-a, 0 on node-b


@pytest.mark.parametrize(
    ("name", "pod", "existing", "want"),
    [
        ("pod does not belong to any pg", make_pod("p", namespace="ns"), [], POD_GROUP_NOT_SPECIFIED),
        ("pod specifies a non-existent pg", member("p", "pg-non-existent"), [], POD_GROUP_NOT_FOUND),
        ("pod belongs to a pg that doesn't have quorum", member("p", "pg1"), [], WAIT),
        (
            "pod belongs to a pg that have quorum satisfied",
            member("p1a", "pg1"),
            [member("p1b", "pg1", node="node-a")],
            SUCCESS,
        ),
    ],
)
def test_permit(name: str, pod: dict, existing: list[dict], want: str) -> None:
    snap = snapshot(existing, [pod_group("pg1", min_member=2)])
    assert manager(snap, []).permit(Pod.parse(pod), snap) == want


def test_permit_does_not_count_the_pod_itself_when_assumed() -> None:
    """Upstream's cycle snapshot predates the assume; here the pod is in the cache already."""
    p = member("p1a", "pg1", node="node-a")
    snap = snapshot([p], [pod_group("pg1", min_member=2)])
    assert manager(snap, []).permit(Pod.parse(p), snap) == WAIT


@pytest.mark.parametrize(
    ("name", "existing", "ok"),
    [
        ("Cluster resource enough", [make_pod("p1", namespace="ns", node="node-a", requests={"cpu": "2"})], True),
        (
            "Cluster resource not enough",
            [
                make_pod("p1", namespace="ns", node="node-a", requests={"cpu": "2"}),
                make_pod("p2", namespace="ns", node="node-b", requests={"cpu": "1"}),
            ],
            False,
        ),
        (
            "Cluster resource enough as p1's resource needs to be excluded from minResources",
            [member("p1", "pg1", node="node-a", cpu="2"), make_pod("p2", namespace="ns", node="node-b", requests={"cpu": "1"})],
            True,
        ),
    ],
)
def test_check_cluster_resource(name: str, existing: list[dict], ok: bool) -> None:
    snap = snapshot(existing, [], cpu="3")  # 2 x 3 CPUs
    assert (check_cluster_resource(snap, {"cpu": 4000}, "ns", "pg1") is None) == ok


def test_check_cluster_resource_pods_and_scalars() -> None:
    snap = build_snapshot(
        [make_node("a", cpu="4", pods=2, extra={"example.com/fpga": 1}), make_node("b", cpu="4", pods=1)],
        [make_pod("x", namespace="ns", node="a")],
    )
    assert check_cluster_resource(snap, {"pods": 2}, "ns", "g") is None  # 1 left on a, 1 on b
    assert check_cluster_resource(snap, {"pods": 3}, "ns", "g") == "resource gap: map[pods:1]"
    assert check_cluster_resource(snap, {"example.com/fpga": 2}, "ns", "g") == "resource gap: map[example.com/fpga:1]"


def test_legacy_label_names_the_group_too() -> None:
    legacy = Pod.parse(member("old", "pg1", label=LEGACY_POD_GROUP_LABEL))
    assert pod_group_label(legacy) == "pg1"
    snap = snapshot([member("p1b", "pg1", node="node-a", label=LEGACY_POD_GROUP_LABEL)], [pod_group("pg1", min_member=2)])
    assert manager(snap, []).permit(Pod.parse(member("p1a", "pg1")), snap) == SUCCESS
