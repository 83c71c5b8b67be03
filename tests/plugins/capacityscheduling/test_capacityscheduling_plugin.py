"""CapacityScheduling's extension points: ports of scheduler-plugins' capacity_scheduling_test.go.

TestPreFilter, TestReserve, TestUnreserve, TestDryRunPreemption, TestPostFilter and
TestPodEligibleToPreemptOthers. Upstream sets each quota's ``used`` by hand; here usage follows
the scheduler's cache, so every case puts pods on the node that add up to the same ``used``.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from quota_testlib import HIGH, MID, all_unschedulable, cluster, framework, qpod, quota, used

from kubesched.api.objects import Pod
from kubesched.errors import InputError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.plugins.capacityscheduling import CapacityScheduling, QuotaTracker


# ---- PreFilter ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "bound", "quotas", "pods", "codes"),
    [
        (
            "pod subjects to ElasticQuota",
            [qpod("u1", "ns1", 300, node="node-a")],
            [quota("ns1", {"memory": 1000}, {"memory": 2000})],
            [qpod("ns1-p1", "ns1", 500), qpod("ns1-p2", "ns1", 1800)],
            [Code.Success, Code.Unschedulable],
        ),
        (
            "the sum of used is bigger than the sum of min",
            [qpod("u1", "ns1", 1800, node="node-a"), qpod("u2", "ns2", 200, node="node-a")],
            [quota("ns1", {"memory": 1000}, {"memory": 2000}), quota("ns2", {"memory": 1000}, {"memory": 2000})],
            [qpod("ns2-p1", "ns2", 500)],
            [Code.Unschedulable],
        ),
        ("without elasticQuotaInfo", [], [], [qpod("ns2-p1", "ns2", 500)], [Code.Skip]),  # Success upstream
    ],
)
def test_pre_filter(name: str, bound: list[dict], quotas: list[dict], pods: list[dict], codes: list[Code]) -> None:
    snap = cluster(bound, quotas, node_mem="10000")
    pl, _ = framework(snap)
    state = CycleState()
    got = [pl.pre_filter(state, Pod.parse(p), snap).code for p in pods]
    assert got == codes


def test_pre_filter_messages_and_nominated_pods() -> None:
    snap = cluster([qpod("u1", "ns1", 300, node="node-a")], [quota("ns1", {"memory": 1000}, {"memory": 2000}), quota("ns2", {"memory": 1000})], node_mem="10000")
    nominated = Pod.parse(qpod("nom", "ns1", 1000, prio=HIGH, nominated="node-a"))
    pl, _ = framework(snap, nominator=SimpleNamespace(nominated={nominated.uid: nominated}))
    st = pl.pre_filter(CycleState(), Pod.parse(qpod("p", "ns1", 800)), snap)
    # 300 used + 1000 nominated (same quota, more important) + 800 > 2000
    assert st.message == "Pod ns1/p is rejected in PreFilter because ElasticQuota ns1 is more than Max"
    st = pl.pre_filter(CycleState(), Pod.parse(qpod("q", "ns2", 701)), snap)
    # the other quota's nominated pod counts too (ns1 is within its min): 300 + 1000 + 701 > 2000
    assert st.message == "Pod ns2/q is rejected in PreFilter because total ElasticQuota used is more than min"
    assert pl.pre_filter(CycleState(), Pod.parse(qpod("r", "ns2", 600)), snap).ok


# ---- Reserve / Unreserve -----------------------------------------------------------------
def test_reserve() -> None:
    snap = cluster([qpod("base", "ns1", 300, node="node-a")], [quota("ns1", {"memory": 1000}, {"memory": 2000})])
    pl, _ = framework(snap)
    pl.reserve(CycleState(), Pod.parse(qpod("t1-p1", "ns1", 50, prio=MID, node="node-a")), "node-a")
    assert (used(pl, snap, "ns1"), pl.infos(snap)["ns1"].pods) == (350, {"base", "t1-p1"})
    pl.reserve(CycleState(), Pod.parse(qpod("t1-p2", "ns2", 50, prio=MID, node="node-a")), "node-a")
    assert (used(pl, snap, "ns1"), pl.infos(snap)["ns1"].pods) == (350, {"base", "t1-p1"})


def test_unreserve() -> None:
    snap = cluster(
        [qpod("t1-p3", "ns1", 50, node="node-a"), qpod("t1-p4", "ns1", 250, node="node-a")],
        [quota("ns1", {"memory": 1000}, {"memory": 2000})],
        node_mem="1000",
    )
    pl, _ = framework(snap)
    steps = []
    for name, ns in (("t1-p1", "ns1"), ("t1-p2", "ns2"), ("t1-p3", "ns1")):
        pl.unreserve(CycleState(), Pod.parse(qpod(name, ns, 50, prio=MID, node="node-a")), "node-a")
        steps.append((used(pl, snap, "ns1"), sorted(pl.infos(snap)["ns1"].pods)))
    assert steps == [(300, ["t1-p3", "t1-p4"]), (300, ["t1-p3", "t1-p4"]), (250, ["t1-p4"])]


def test_usage_follows_the_cache_incrementally() -> None:
    snap = cluster([qpod("a", "ns1", 10, node="node-a")], [quota("ns1", {"memory": 100})], nodes=2)
    pl, _ = framework(snap)
    assert used(pl, snap, "ns1") == 10
    snap.add_pod(Pod.parse(qpod("b", "ns1", 20, node="node-b")))
    snap.add_pod(Pod.parse(qpod("c", "ns2", 40, node="node-b")))  # no quota in ns2
    assert used(pl, snap, "ns1") == 30
    snap.remove_pod("a")
    assert used(pl, snap, "ns1") == 20
    fresh = QuotaTracker(snap).infos  # a rebuild agrees with the incremental count
    assert fresh["ns1"].used == pl.infos(snap)["ns1"].used and fresh["ns1"].pods == {"b"}


def test_capacity_scheduling_takes_no_args() -> None:
    with pytest.raises(InputError) as e:
        CapacityScheduling({"minCandidateNodesPercentage": 10}, None)
    assert e.value.path == "CapacitySchedulingArgs.minCandidateNodesPercentage"
    assert CapacityScheduling.extension_points() == frozenset({"preFilter", "postFilter", "reserve"})


# ---- DryRunPreemption --------------------------------------------------------------------
DRY_RUN = [
    (
        "in-namespace preemption",
        [qpod("t1-p1", "ns1", 50, prio=MID, node="node-a"), qpod("t1-p2", "ns2", 50, prio=MID, node="node-a"),
         qpod("t1-p3", "ns2", 50, prio=MID, node="node-a")],
        [quota("ns1", {"memory": 50}, {"memory": 200}), quota("ns2", {"memory": 200}, {"memory": 200})],
        ["t1-p1"],
    ),
    (
        "cross-namespace preemption",
        [qpod("t1-p1", "ns1", 50, prio=MID, node="node-a"), qpod("t1-p2", "ns2", 50, prio=HIGH, node="node-a"),
         qpod("t1-p3", "ns2", 50, prio=MID, node="node-a")],
        [quota("ns1", {"memory": 150}, {"memory": 200}), quota("ns2", {"memory": 50}, {"memory": 200})],
        ["t1-p3"],
    ),
]


@pytest.mark.parametrize(("name", "pods", "quotas", "victims"), DRY_RUN, ids=[c[0] for c in DRY_RUN])
def test_dry_run_preemption(name: str, pods: list[dict], quotas: list[dict], victims: list[str]) -> None:
    snap = cluster(pods, quotas)
    pl, fw = framework(snap)
    preemptor = Pod.parse(qpod("t1-p", "ns1", 50, prio=HIGH))
    before = sorted(snap.pod_by_uid)
    cands, _, errors = pl.dry_run_preemption(preemptor, snap, snap.order, [], 0, snap.n)
    assert errors == []
    assert [(c.name, sorted(v.name for v in c.victims)) for c in cands] == [("node-a", victims)]
    assert sorted(snap.pod_by_uid) == before and used(pl, snap, "ns2") == 100  # the dry run left no trace


# ---- PostFilter --------------------------------------------------------------------------
POST_FILTER = [
    # ns1 is at its min: it preempts its own less important pod
    ("in-namespace preemption", [quota("ns1", {"memory": 50}, {"memory": 200}), quota("ns2", {"memory": 200}, {"memory": 200})], {"t1-p2"}),
    # ns1 is below its min while ns2 borrows: one of ns2's pods goes
    ("cross-namespace preemption", [quota("ns1", {"memory": 150}, {"memory": 200}), quota("ns2", {"memory": 50}, {"memory": 200})], {"t1-p3", "t1-p4"}),
    # no quotas: any less important pod may go, as with DefaultPreemption
    ("without elasticQuotas", [], {"t1-p2", "t1-p3", "t1-p4"}),
]


@pytest.mark.parametrize(("name", "quotas", "allowed"), POST_FILTER, ids=[c[0] for c in POST_FILTER])
def test_post_filter(name: str, quotas: list[dict], allowed: set[str]) -> None:
    pods = [qpod("t1-p2", "ns1", 50, prio=MID, node="node-a"), qpod("t1-p3", "ns2", 50, prio=MID, node="node-a"),
            qpod("t1-p4", "ns2", 50, prio=MID, node="node-a")]
    snap = cluster(pods, quotas)
    deleted: list[str] = []
    sink = SimpleNamespace(delete_pod=lambda p, reason: deleted.append(p.name), set_nominated_node=lambda p, n: None)
    pl, fw = framework(snap, cluster=sink)
    preemptor = Pod.parse(qpod("t1-p1", "ns1", 50, prio=HIGH))
    state = CycleState()
    fw.run_pre_filter(state, preemptor, snap)
    node, status = pl.post_filter(state, preemptor, snap, all_unschedulable(snap))
    assert (node, status.code, status.message) == ("node-a", Code.Success, "")
    assert len(deleted) == 1 and deleted[0] in allowed, deleted


def test_post_filter_reports_no_victims_without_the_preemption_prefix() -> None:
    snap = cluster([qpod("a", "ns1", 150, prio=MID, node="node-a")], [quota("ns1", {"memory": 100}, {"memory": 300})])
    pl, fw = framework(snap)
    preemptor = Pod.parse(qpod("p", "ns1", 50, prio=MID))  # same priority: nothing to evict
    node, st = pl.post_filter(CycleState(), preemptor, snap, all_unschedulable(snap))
    assert node == "" and st.code == Code.Unschedulable
    assert st.message == "0/1 nodes are available: 1 No victims found on node node-a for preemptor pod p."


# ---- PodEligibleToPreemptOthers ----------------------------------------------------------
ELIGIBLE = [
    ("Pod with PreemptNever preemption policy", qpod("t1-p1", "default", 0, prio=HIGH, never=True),
     [qpod("t1-p0", "ns1", 50, 10, prio=MID, node="node-a")], Code.UnschedulableAndUnresolvable,
     [quota("ns1", {"memory": 50}, {"memory": 150})], False),
    ("Pod with unschedulableAndUnresolvable nominated node", qpod("t1-p1", "default", 0, prio=HIGH, nominated="node-a"),
     [qpod("t1-p0", "ns1", 50, 10, prio=MID, node="node-a")], Code.UnschedulableAndUnresolvable,
     [quota("ns1", {"memory": 50}, {"memory": 150})], True),
    ("Pod with terminating pod in the same namespace", qpod("t1-p1", "ns1", 0, prio=HIGH, nominated="node-a"),
     [qpod("t1-p0", "ns1", 0, prio=MID, node="node-a", terminating=True)], None,
     [quota("ns1", {"memory": 50}, {"memory": 150})], False),
    ("Pod with terminating pod in another namespace", qpod("t1-p1", "ns1", 0, prio=HIGH, nominated="node-a"),
     [qpod("t1-p0", "ns2", 0, prio=MID, node="node-a", terminating=True), qpod("used", "ns2", 100, node="node-a")], None,
     [quota("ns1", {"memory": 50}, {"memory": 150}), quota("ns2", {"memory": 50}, {"memory": 150})], False),
    ("Pod without elasticQuotas and terminating pod exists in the same namespace", qpod("t1-p1", "ns1", 0, prio=HIGH, nominated="node-a"),
     [qpod("t1-p0", "ns2", 0, prio=MID, node="node-a", terminating=True)], None, [], False),
    ("Pod without ElasticQuotas and terminating pod exists in another namespace", qpod("t1-p1", "ns1", 0, prio=HIGH, nominated="node-a"),
     [qpod("t1-p0", "ns2", 0, prio=MID, node="node-a", terminating=True), qpod("used", "ns2", 100, node="node-a")], None,
     [quota("ns2", {"memory": 50}, {"memory": 150})], True),
]


@pytest.mark.parametrize(("name", "pod", "existing", "nominated_code", "quotas", "want"), ELIGIBLE, ids=[c[0] for c in ELIGIBLE])
def test_pod_eligible_to_preempt_others(
    name: str, pod: dict, existing: list[dict], nominated_code: Code | None, quotas: list[dict], want: bool
) -> None:
    snap = cluster(existing, quotas)
    pl, _ = framework(snap)
    ok, _ = pl.pod_eligible_to_preempt_others(Pod.parse(pod), snap, nominated_code)
    assert ok is want
