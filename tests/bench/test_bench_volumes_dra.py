"""scheduler_perf's volumes/ and dra/ workloads: built as upstream builds them, every pod placed."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from kubesched.api.storage import PVC
from kubesched.bench import resource_templates as R
from kubesched.bench.ops import CreateNodes
from kubesched.bench.runner import INIT, MEASURED, WorkloadRun
from kubesched.bench.workloads import get

TINY = 0.01


def tiny_run(name: str, scale: float = TINY, **kw) -> tuple[WorkloadRun, object]:
    (w,) = get(name)
    run = WorkloadRun(w, w.resolve(scale), seed=1, **kw)
    return run, run.run()


def test_upstream_counts_and_floors():
    (intree,) = get("SchedulingInTreePVs")
    assert dict(intree.params) == {"initNodes": 5000, "initPods": 1000, "measurePods": 2000} and intree.threshold == 290
    for case in ("SchedulingMigratedInTreePVs", "SchedulingCSIPVs"):
        (w,) = get(case)
        assert dict(w.params) == {"initNodes": 5000, "initPods": 5000, "measurePods": 5000} and w.threshold == 100
    (secrets,) = get("SchedulingSecrets")
    assert dict(secrets.params) == {"initNodes": 5000, "initPods": 1000, "measurePods": 10000} and secrets.threshold == 790
    (tmpl,) = get("SchedulingWithResourceClaimTemplate")
    assert tmpl.resolve(1.0) == {
        "nodesWithDRA": 500, "nodesWithoutDRA": 0, "initPods": 2500, "measurePods": 2500, "maxClaimsPerNode": 10
    }
    assert tmpl.threshold == 40
    steady = {w.name: w for w in get("SteadyStateClusterResourceClaimTemplate")}
    assert set(steady) == {"empty_500nodes", "half_500nodes", "full_500nodes"}
    assert {n: w.threshold for n, w in steady.items()} == {"empty_500nodes": 64, "half_500nodes": 70, "full_500nodes": 60}
    assert [steady[n].resolve(1.0)["initClaims"] for n in ("empty_500nodes", "half_500nodes", "full_500nodes")] == [0, 2500, 4990]
    assert all(w.resolve(1.0)["durationMs"] == 10000 for w in steady.values())


def test_scaling_keeps_the_devices_the_variant_is_about():
    steady = {w.name: w for w in get("SteadyStateClusterResourceClaimTemplate")}
    # upstream's own smaller variants: half_100nodes 500 claims, full_100nodes 990
    assert steady["half_500nodes"].resolve(1.0, nodes=100)["initClaims"] == 500
    assert steady["full_500nodes"].resolve(1.0, nodes=100)["initClaims"] == 990
    p = steady["full_500nodes"].resolve(0.1)
    assert p["nodesWithDRA"] * p["maxClaimsPerNode"] - p["initClaims"] == 10  # exactly one batch fits
    assert p["nodesWithoutDRA"] == 0 and p["durationMs"] == 10000  # a zero stays zero; time is not scaled
    (tmpl,) = get("SchedulingWithResourceClaimTemplate")
    for scale in (0.1, 0.013, 0.5):
        q = tmpl.resolve(scale)
        assert q["maxClaimsPerNode"] == 10 and q["initPods"] + q["measurePods"] <= q["nodesWithDRA"] * 10


def test_bound_volume_is_upstreams_pv_and_pvc():
    pv, pvc = R.bound_volume("pv-csi", "namespace-2", 7)
    assert pv["metadata"]["name"] == "namespace-2-vol-7"
    assert pv["spec"]["csi"] == {"driver": R.EBS_CSI_DRIVER, "volumeHandle": "namespace-2-vol-7"}
    assert pv["spec"]["claimRef"]["name"] == "pvc-7" and pv["spec"]["claimRef"]["namespace"] == "namespace-2"
    assert pv["status"] == {"phase": "Bound"} and pvc["status"] == {"phase": "Bound"}
    assert pvc["metadata"]["name"] == "pvc-7" and pvc["spec"]["volumeName"] == "namespace-2-vol-7"
    assert pvc["metadata"]["annotations"] == {"pv.kubernetes.io/bind-completed": "true"}
    aws, _ = R.bound_volume("pv-aws", "namespace-1", 3)
    # getCustomVolumeFactory names the EBS volume without the namespace
    assert aws["spec"]["awsElasticBlockStore"] == {"volumeID": "vol-3"}
    assert aws["spec"]["accessModes"] == ["ReadOnlyMany"] and aws["spec"]["capacity"] == {"storage": "1Gi"}


@pytest.mark.parametrize("case", ["SchedulingInTreePVs", "SchedulingMigratedInTreePVs", "SchedulingCSIPVs"])
def test_volume_workloads_place_every_pod_with_its_own_bound_claim(case):
    run, res = tiny_run(case)
    assert res.init_unschedulable == 0 and res.unschedulable == 0
    assert res.scheduled == res.measured_pods > 0
    storage = run.snapshot.storage
    assert len(storage.pvcs) == len(storage.pvs) == res.init_scheduled + res.scheduled
    for uid, node in run.placements.items():
        pod = run.snapshot.pod_by_uid[uid]
        assert pod.node_name == node
        (vol,) = pod.volumes
        assert vol.source == PVC and vol.name == "vol"
        claim = storage.pvc(pod.namespace, vol.claim_name)
        pv = storage.pvs[claim.volume_name]
        assert claim.fully_bound and pv.bound_to(claim)
    csi_nodes = storage.csi_nodes
    if case == "SchedulingInTreePVs":
        assert not csi_nodes  # makeBaseNode, no nodeAllocatableStrategy
        return
    assert set(csi_nodes) == {n.name for n in run.snapshot.nodes}
    for node in run.snapshot.nodes:
        assert node.allocatable[f"attachable-volumes-csi-{R.EBS_CSI_DRIVER}"] == 39
        (driver,) = csi_nodes[node.name].drivers.values()
        assert driver.name == R.EBS_CSI_DRIVER and driver.count == 39
        assert csi_nodes[node.name].migrated_plugins == (
            frozenset({R.AWS_EBS_PLUGIN}) if case == "SchedulingMigratedInTreePVs" else frozenset()
        )


def limited(count: int):
    (w,) = get("SchedulingCSIPVs")
    ops = tuple(
        replace(op, allocatable=replace(op.allocatable, csi_drivers={R.EBS_CSI_DRIVER: count}))
        if isinstance(op, CreateNodes)
        else op
        for op in w.ops
    )
    return replace(w, ops=ops)


def test_csi_attach_limit_is_what_the_nodes_say():
    """With a CSINode limit of 1 a node takes one of the workload's volumes: of four pods on three
    nodes one stays unschedulable (NodeVolumeLimits), where the upstream limit of 39 fits all."""
    params = {"initNodes": 3, "initPods": 1, "measurePods": 3}
    run = WorkloadRun(limited(1), params, seed=1)
    res = run.run()
    assert res.init_scheduled == 1 and res.scheduled == 2 and res.unschedulable == 1
    assert sorted(Counter(run.placements.values()).values()) == [1, 1, 1]
    assert all(d.count == 1 for c in run.snapshot.storage.csi_nodes.values() for d in c.drivers.values())
    roomy = WorkloadRun(limited(39), params, seed=1).run()
    assert roomy.scheduled == 3 and roomy.unschedulable == 0


def test_secret_volumes_schedule_like_pod_default():
    run, res = tiny_run("SchedulingSecrets")
    assert res.scheduled == res.measured_pods == 100
    pod = next(run.snapshot.pod_by_uid[u] for u in run.placements)
    assert [v.source for v in pod.volumes] == ["secret"]


def test_claim_template_pods_each_get_a_device_on_their_node():
    run, res = tiny_run("SchedulingWithResourceClaimTemplate", scale=0.02)
    assert res.nodes == 10 and res.init_scheduled == 50 and res.scheduled == 50
    dra = run.snapshot.dra
    assert len(dra.slices) == 10 and all(len(s.devices) == 10 for s in dra.slices.values())
    devices = Counter()
    for uid, node in run.placements.items():
        pod = run.snapshot.pod_by_uid[uid]
        name = pod.resource_claim_statuses["resource"]
        claim = dra.claim(pod.namespace, name)
        assert name.startswith(f"{pod.name}-resource-")
        (result,) = claim.allocation.results
        assert (result.driver, result.pool) == (R.DRA_TEST_DRIVER, node)  # a device of the pod's node
        assert claim.reserved_for_pod(uid)
        devices[result.device_id] += 1
    assert len(devices) == 100 and set(devices.values()) == {1}  # the cluster is full, no device twice


@pytest.mark.parametrize("variant", ["empty_500nodes", "half_500nodes", "full_500nodes"])
def test_steady_state_batches_come_and_go(variant):
    (w,) = get(f"SteadyStateClusterResourceClaimTemplate/{variant}")
    params = w.resolve(0.02)  # 10 nodes, 100 devices
    run = WorkloadRun(w, params, seed=1, steady_batches=4)
    res = run.run()
    assert res.measured_pods == res.scheduled == 40 and res.unschedulable == 0
    dra = run.snapshot.dra
    init = [c for c in dra.claims.values() if c.namespace == "init"]
    assert len(init) == params["initClaims"] == {"empty_500nodes": 0, "half_500nodes": 50, "full_500nodes": 90}[variant]
    assert all(c.allocation is not None and not c.reserved_for for c in init)
    # every batch was deleted with its claims: only the init claims hold devices
    assert not [c for c in dra.claims.values() if c.namespace == "test"]
    assert not any(run.group.get(u) == MEASURED for u in run.snapshot.pod_by_uid)
    assert len(dra.allocated_devices()) == params["initClaims"]
    assert not any(g == INIT for g in run.group.values())


def test_steady_state_runs_for_its_duration_on_the_bench_clock():
    (w,) = get("SteadyStateClusterResourceClaimTemplate/empty_500nodes")
    params = {**w.resolve(0.02), "durationMs": 300}
    run = WorkloadRun(w, params, seed=1)
    res = run.run()
    assert res.scheduled >= 10 and res.scheduled % 10 + res.extra.get("steady_in_flight", 0) in (0, 10)
    assert res.unschedulable == 0
    assert 0.3 <= res.wall_s < 5


def test_full_cluster_batch_that_cannot_fit_ends_the_phase():
    """A batch needing more devices than are free never completes: the phase ends, its unbound
    pods are unschedulable (upstream would wait out the duration)."""
    (w,) = get("SteadyStateClusterResourceClaimTemplate/full_500nodes")
    params = {**w.resolve(0.02), "initClaims": 95}  # 5 devices free for a batch of 10
    run = WorkloadRun(w, params, seed=1, steady_batches=3)
    res = run.run()
    assert res.scheduled == 5 and res.unschedulable == 5 and res.measured_pods == 10
