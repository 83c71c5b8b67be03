"""Every scheduler_perf workload builds, scales and runs to completion with the expected outcome."""

from __future__ import annotations

from collections import Counter

import pytest

from kubesched.bench import templates as T
from kubesched.bench.ops import CreatePods, SteadyPods
from kubesched.bench.runner import MEASURED, WorkloadRun, run_workload
from kubesched.bench.workloads import WORKLOADS, default_set, get, select

TINY = 0.01

ISSUE_DEFAULTS = {
    "SchedulingBasic/5000Nodes_10000Pods",
    "SchedulingBasic/5000Nodes_50000Pods",
    "SchedulingPodAntiAffinity/5000Nodes_2000Pods",
    "SchedulingPodMatchingAntiAffinity/5000Nodes_5000Pods",
    "SchedulingPodAffinity/5000Nodes_5000Pods",
    "SchedulingPreferredPodAffinity/5000Nodes_5000Pods",
    "SchedulingPreferredPodAntiAffinity/5000Nodes_5000Pods",
    "SchedulingNodeAffinity/5000Nodes_10000Pods",
    "MixedSchedulingBasePod/5000Nodes_5000Pods",
    "TopologySpreading/5000Nodes_5000Pods",
    "PreferredTopologySpreading/5000Nodes_5000Pods",
    "DefaultTopologySpreading/5000Nodes_50000Pods",
    "SchedulingWithNodeInclusionPolicy/5000Nodes",
    "SchedulingDaemonset/15000Nodes",
    "Unschedulable/5kNodes/100Init/10kPods",
    "PreemptionBasic/1000Nodes",
    "SchedulingRequiredPodAntiAffinityWithNSSelector/5000Nodes_2000Pods",
    "SchedulingPreferredAntiAffinityWithNSSelector/5000Nodes_2000Pods",
    "SchedulingRequiredPodAffinityWithNSSelector/5000Nodes_2000Pods",
    "SchedulingPreferredAffinityWithNSSelector/5000Nodes_5000Pods",
    # issue 23: volumes/ and dra/ (SteadyState* run for a fixed 10 s: not default)
    "SchedulingSecrets/5000Nodes_10000Pods",
    "SchedulingInTreePVs/5000Nodes_2000Pods",
    "SchedulingMigratedInTreePVs/5000Nodes_5000Pods",
    "SchedulingCSIPVs/5000Nodes_5000Pods",
    "SchedulingWithResourceClaimTemplate/5000pods_500nodes",
}


def tiny_run(name: str, **kw) -> tuple[WorkloadRun, object]:
    (w,) = get(name)
    run = WorkloadRun(w, w.resolve(TINY), seed=1, **kw)
    return run, run.run()


def test_default_set_is_the_issues_list():
    assert {w.full_name for w in default_set()} == ISSUE_DEFAULTS
    assert len({w.full_name for w in WORKLOADS}) == len(WORKLOADS)


def test_thresholds_and_targets():
    (basic,) = get("SchedulingBasic/5000Nodes_10000Pods")
    assert basic.threshold == 680 and basic.target == 6800
    assert get("SchedulingDaemonset")[0].threshold == 1100
    assert get("SchedulingPodAffinity")[0].target == 350
    assert get("PreemptionBasic")[0].threshold is None


def test_names_resolve_in_every_spelling():
    (w,) = get("SchedulingBasic/5000Nodes_10000Pods")
    assert get("schedulingbasic_5000nodes_10000pods") == [w]
    assert [x.name for x in get("SchedulingBasic")] == ["5000Nodes_10000Pods", "5000Nodes_50000Pods"]
    assert get("Memory")[0].name == "5000Nodes_150000Pods"  # no default workload: all of the case
    assert get("SchedulingBasic_50000Nodes_100000Pods")[0].params["initNodes"] == 50000
    assert select(["SchedulingBasic", "SchedulingBasic/5000Nodes_10000Pods"]) == get("SchedulingBasic")
    assert select(None) == default_set()
    with pytest.raises(KeyError):
        get("NoSuchWorkload")


def test_scale_is_proportional():
    (w,) = get("SchedulingBasic/5000Nodes_10000Pods")
    assert w.resolve(0.1) == {"initNodes": 500, "initPods": 100, "measurePods": 1000}
    assert w.resolve(1.0) == dict(w.params)
    assert w.resolve(1.0, nodes=50000, pods=100000) == {
        "initNodes": 50000,
        "initPods": 10000,
        "measurePods": 100000,
    }
    (ns,) = get("SchedulingRequiredPodAntiAffinityWithNSSelector")
    p = ns.resolve(0.015)  # nodes round up, pods down: one anti-affinity pod per node still fits
    assert p["initPodsPerNamespace"] == 40
    assert p["initNamespaces"] * p["initPodsPerNamespace"] + p["measurePods"] <= p["initNodes"]
    (inc,) = get("SchedulingWithNodeInclusionPolicy")
    assert inc.resolve(1.0, nodes=500) == {"normalNodes": 400, "taintNodes": 100, "measurePods": 4000}
    (mem,) = get("Memory")
    assert mem.resolve(1.0, pods=1000)["boundPods"] == 1000
    with pytest.raises(ValueError):
        w.resolve(0)


@pytest.mark.parametrize("w", WORKLOADS, ids=lambda w: w.full_name)
def test_every_workload_runs_to_completion(w):
    params = w.resolve(TINY)
    run = WorkloadRun(w, params, seed=0, churn_every=7, steady_batches=2)
    res = run.run()
    measured = [op for op in w.ops if isinstance(op, CreatePods) and op.measured]
    expected = sum(w.count(op.count, params) for op in measured)
    expected += sum(2 * op.count for op in w.ops if isinstance(op, SteadyPods))
    assert res.measured_pods == expected
    if w.test_case != "PreemptionAsync":
        assert res.init_unschedulable == 0
    assert res.scheduled == expected and res.unschedulable == 0
    assert len(run.measured_times) == expected
    assert res.nodes == len(run.snapshot.nodes) > 0
    assert res.peak_rss_mib > 0 and res.wall_s >= 0
    # the measured phase did work in this process (Memory has none: it only binds)
    assert res.cpu_s > 0 if res.measured_pods else res.cpu_s == 0
    if expected:
        assert res.throughput.overall is not None and res.throughput.overall > 0
    # every bound pod is in the in-memory cluster on the node the snapshot holds it on
    for uid, node in run.placements.items():
        if uid in run.snapshot.pod_by_uid:
            assert run.cluster.bindings[uid] == node == run.snapshot.pod_by_uid[uid].node_name


def test_run_workload_reports_scale_seed_and_json_shape():
    (w,) = get("SchedulingBasic/5000Nodes_10000Pods")
    res = run_workload(w, scale=TINY, seed=3)
    d = res.to_dict()
    assert (d["scale"], d["seed"], d["nodes"], d["measured_pods"]) == (TINY, 3, 50, 100)
    assert d["threshold"] == 680 and d["target"] == 6800
    assert set(d["throughput"]) >= {
        "Average",
        "Perc50",
        "Perc90",
        "Perc95",
        "Perc99",
        "samples",
        "overall",
        "headline",
    }


def test_unschedulable_churn_pods_never_scheduled():
    run, res = tiny_run("Unschedulable", churn_every=5)
    assert res.churn_created >= 10  # one every 5 cycles, 100 measured pods
    assert res.churn_scheduled == 0
    assert res.scheduled == res.measured_pods == 100
    churn = [uid for uid, g in run.group.items() if g == "churn"]
    assert all(uid not in run.snapshot.pod_by_uid for uid in churn)
    assert all(
        run.cluster.pods[uid].requests["cpu"] == 9000 and run.cluster.pods[uid].priority == 10
        for uid in churn
    )
    assert res.preempted == 0  # preempting cannot make 9 CPUs fit on a 4-CPU node


def test_daemonset_pods_all_on_the_named_node():
    run, res = tiny_run("SchedulingDaemonset")
    assert res.nodes == 151 and res.scheduled == 300
    assert set(run.placements.values()) == {"scheduler-perf-node"}


def test_anti_affinity_pods_one_per_node():
    run, res = tiny_run("SchedulingPodAntiAffinity")
    assert res.init_scheduled == 10 and res.scheduled == 20
    per_node = Counter(run.placements.values())
    assert len(per_node) == 30 and max(per_node.values()) == 1


def test_required_anti_affinity_ns_selector_fills_every_node_once():
    run, res = tiny_run("SchedulingRequiredPodAntiAffinityWithNSSelector")
    assert res.nodes == 60 and res.init_scheduled == 40 and res.scheduled == 20
    assert sorted(Counter(run.placements.values()).values()) == [1] * 60


def test_matching_anti_affinity_pods_avoid_anti_affinity_nodes():
    run, res = tiny_run("SchedulingPodMatchingAntiAffinity")
    anti_nodes = {run.placements[u] for u, g in run.group.items() if g == "init"}
    measured_nodes = {run.placements[u] for u, g in run.group.items() if g == MEASURED}
    assert len(anti_nodes) == 10 and not anti_nodes & measured_nodes


def test_node_inclusion_policy_one_pod_per_untainted_node():
    run, res = tiny_run("SchedulingWithNodeInclusionPolicy")
    assert res.nodes == 50 and res.scheduled == 40
    nodes = set(run.placements.values())
    assert len(nodes) == 40
    assert not any(n.startswith("taint-node-") for n in nodes)


def test_node_affinity_pods_land_in_zone1():
    run, res = tiny_run("SchedulingNodeAffinity")
    zones = {run.snapshot.nodes[run.snapshot.row_of[n]].labels[T.ZONE_LABEL] for n in run.placements.values()}
    assert zones == {"zone1"}


def test_topology_spreading_keeps_skew():
    run, res = tiny_run("TopologySpreading")
    by_zone = Counter(
        run.snapshot.nodes[run.snapshot.row_of[run.placements[u]]].labels[T.ZONE_LABEL]
        for u, g in run.group.items()
        if g == MEASURED
    )
    assert sum(by_zone.values()) == 50 and max(by_zone.values()) - min(by_zone.values()) <= 5


def test_preemption_basic_preempts_three_per_pod():
    run, res = tiny_run("PreemptionBasic")
    assert res.nodes == 10 and res.init_scheduled == 40
    assert res.scheduled == 10 and res.preempted == 30
    assert (
        sorted(Counter(run.placements[u] for u, g in run.group.items() if g == MEASURED).values()) == [1] * 10
    )


def test_namespaces_as_upstream():
    run, _ = tiny_run("MixedSchedulingBasePod")
    measured_ns = {run.cluster.pods[u].namespace for u, g in run.group.items() if g == MEASURED}
    assert measured_ns == {"namespace-7"}  # createPods without a namespace: namespace-<opIndex>
    run, _ = tiny_run("SchedulingPreferredAffinityWithNSSelector")
    assert run.snapshot.namespaces["init-ns-0"] == {"team": "devops"}
    assert run.snapshot.namespaces["measure-ns-0"] == {"team": "devops"}


def test_default_topology_spreading_service_selector():
    run, res = tiny_run("DefaultTopologySpreading")
    ((kind, ns, name, sel),) = run.snapshot.workload_selectors
    assert (kind, ns) == ("Service", "service-ns") and name.startswith("service-")
    assert sel.matches({"app": "scheduler-perf"})
    assert res.scheduled == 500


def test_memory_workload_binds_without_scheduling():
    (w,) = get("Memory")
    run = WorkloadRun(w, w.resolve(1.0, nodes=20, pods=400))
    res = run.run()
    assert res.bound_pods == 400 and res.measured_pods == 0 and res.attempts == 0
    assert len(run.snapshot.pod_by_uid) == 400
    assert sorted(len(p) for p in run.snapshot.pods_on) == [20] * 20
    assert res.throughput.average is None and res.throughput.overall is None
