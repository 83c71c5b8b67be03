"""The autoscaler as a simulator component: scale-up after the provisioning delay, scale-down
after the unneeded time, max-node-provision-time, PDBs, group limits, Karpenter-like batching."""

from __future__ import annotations

import pytest

from kubesched.api.objects import Node, Pod, PodDisruptionBudget
from kubesched.app import build_registry
from kubesched.autoscale.config import GROUP_LABEL, AutoscalerConfig, Delay, NodeGroup, ScaleDown
from kubesched.autoscale.configfile import template_node
from kubesched.autoscale.predicate import node_named
from kubesched.autoscale.sim import simulate_elastic
from kubesched.config.load import default_config
from kubesched.sim.workload import Workload
from kubesched.testing import make_pod

REG = build_registry()
CONFIG = default_config(REG.points_of)
SMALL = template_node("small", {"cpu": "4", "memory": "16Gi"})
BIG = template_node("big", {"cpu": "16", "memory": "64Gi"})


def pods(n: int, cpu: str = "3", *, at: float = 0.0, duration: float | None = 600.0, labels=None, prefix="p"):
    out = [Pod.parse(make_pod(f"{prefix}{i}", requests={"cpu": cpu, "memory": "1Gi"}, labels=labels)) for i in range(n)]
    return out, [at] * n, [duration] * n


def cfg(**kw) -> AutoscalerConfig:
    base = dict(
        node_groups=[NodeGroup("small", SMALL, 0, 10), NodeGroup("big", BIG, 0, 10)],
        provisioning_delay=Delay("constant", 60.0, 0.0),
    )
    base.update(kw)
    return AutoscalerConfig(**base).validate()


def base_nodes(group: NodeGroup, n: int) -> list[Node]:
    return [node_named(group.template, f"{group.name}-base-{i}", {GROUP_LABEL: group.name}) for i in range(n)]


def run(wl: Workload, c: AutoscalerConfig | None, end: float = 3600.0, seed: int = 0):
    return simulate_elastic(CONFIG, wl, c, end_time=end, seed=seed, registry=REG)


def test_scale_up_binds_pods_after_the_provisioning_delay():
    ps, arr, dur = pods(4, at=5.0)
    res = run(Workload([], ps, arr, dur), cfg(expander="least-nodes"), end=1000.0)
    s = res.summary
    assert s["bound"] == 4 and s["failed"] == 0
    # pods fail at 5 s, the scan at 10 s asks for nodes, they register 60 s later
    assert s["pending_s"]["p50"] == pytest.approx(65.0)
    assert s["scale_ups"] == 1
    assert s["nodes_added"] == 1  # least-nodes: one big node holds all four 3-CPU pods
    # node-hours count provisioning: the node is paid for from 10 s until scaled down or the end
    assert s["node_hours"] > (1000.0 - 10.0 - 600 - 600) / 3600


def test_least_waste_picks_the_snug_group():
    ps, arr, dur = pods(1, at=0.0)
    res = run(Workload([], ps, arr, dur), cfg(), end=400.0)
    assert res.summary["nodes_added"] == 1
    assert res.summary["gpu_hours"] == 0.0
    # 3 of 4 CPUs on a small node waste less than 3 of 16 on a big one
    assert res.summary["cost"] == 0.0  # no GPUs: the default prices charge GPUs only
    assert res.series["nodes"][-1] == 1


def test_scale_down_after_unneeded_time_and_delay_after_add():
    ps, arr, dur = pods(2, at=0.0, duration=300.0)
    c = cfg(expander="least-nodes")
    res = run(Workload([], ps, arr, dur), c, end=3000.0)
    s = res.summary
    assert s["scale_downs"] == 1 and s["evictions"] == 0
    # added at 10 s (scale-up), pods done at ~370 s; unneeded from the first scan after that,
    # removable 600 s later and no earlier than 600 s after the scale-up
    series = dict(zip(res.series["t"], res.series["nodes"], strict=True))
    assert series[900.0] == 1
    assert series[1080.0] == 0


def test_scale_down_respects_group_min():
    grp = NodeGroup("small", SMALL, 2, 5)
    c = cfg(node_groups=[grp])
    res = run(Workload(base_nodes(grp, 3), [], [], []), c, end=3000.0)
    assert res.summary["scale_downs"] == 1
    assert res.series["nodes"][-1] == 2


def test_busy_node_is_drained_when_its_pods_fit_elsewhere():
    grp = NodeGroup("big", BIG, 0, 5)
    # two nodes, one 2-CPU pod each (12 % used): one node can take the other's pod
    nodes = base_nodes(grp, 2)
    ps = [Pod.parse(make_pod(f"p{i}", requests={"cpu": "2", "memory": "1Gi"}, node=nodes[i].name)) for i in range(2)]
    c = cfg(node_groups=[grp])
    res = run(Workload(nodes, ps, [0.0, 0.0], [None, None]), c, end=2000.0)
    s = res.summary
    assert s["scale_downs"] == 1 and s["evictions"] == 1
    assert s["bound"] == 2 and s["lost_gpu_seconds"] == 0.0
    assert res.series["nodes"][-1] == 1


def test_pdb_blocks_the_drain():
    grp = NodeGroup("big", BIG, 0, 5)
    nodes = base_nodes(grp, 2)
    ps = [Pod.parse(make_pod(f"p{i}", requests={"cpu": "2", "memory": "1Gi"}, node=nodes[i].name, labels={"app": "db"})) for i in range(2)]
    wl = Workload(nodes, ps, [0.0, 0.0], [None, None])
    pdb = PodDisruptionBudget.parse({"metadata": {"namespace": "default"}, "spec": {"selector": {"matchLabels": {"app": "db"}}}, "status": {"disruptionsAllowed": 0}})
    wl.objects.pdbs.append(pdb)
    res = run(wl, cfg(node_groups=[grp]), end=2000.0)
    assert res.summary["scale_downs"] == 0 and res.summary["evictions"] == 0


def test_max_node_provision_time_gives_up_and_backs_off():
    ps, arr, dur = pods(1, at=0.0, duration=None)
    c = cfg(provisioning_delay=Delay("constant", 2000.0, 0.0), max_node_provision_time=300.0, node_groups=[NodeGroup("small", SMALL, 0, 10)])
    res = run(Workload([], ps, arr, dur), c, end=1200.0)
    s = res.summary
    assert s["bound"] == 0 and s["failed"] == 1
    # asked at 10 s, given up at 310 s; the group backs off 5 minutes: asked again at 610 s,
    # given up at 910 s, backed off 10 minutes (past the end)
    assert s["scale_ups"] == 2 and s["failed_nodes"] == 2
    assert s["node_hours"] == pytest.approx(600 / 3600)  # paid while provisioning


def test_group_max_caps_scale_up():
    ps, arr, dur = pods(10, at=0.0, duration=None)
    c = cfg(node_groups=[NodeGroup("small", SMALL, 0, 3)], scale_down=ScaleDown(enabled=False))
    res = run(Workload([], ps, arr, dur), c, end=900.0)
    assert res.summary["peak_nodes"] == 3 and res.summary["bound"] == 3


def test_karpenter_batches_and_picks_the_cheapest_shape():
    big8 = template_node("gpu8", {"cpu": "64", "memory": "256Gi", "gpus": 8})
    gpu4 = template_node("gpu4", {"cpu": "32", "memory": "128Gi", "gpus": 4})
    gpu1 = template_node("gpu1", {"cpu": "8", "memory": "32Gi", "gpus": 1})
    ps = []
    for i in range(3):
        p = make_pod(f"g{i}", requests={"cpu": "2", "memory": "1Gi"})
        p["metadata"]["annotations"] = {"alibabacloud.com/gpu-count": "1", "alibabacloud.com/gpu-milli": "1000"}
        ps.append(Pod.parse(p))
    from kubesched.config.load import parse_config

    gpu_cfg = parse_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"enabled": [{"name": "Open-Gpu-Share"}]}}}]}, "t", REG.points_of)
    groups = [NodeGroup("gpu8", big8, 0, 5), NodeGroup("gpu4", gpu4, 0, 5), NodeGroup("gpu1", gpu1, 0, 5)]
    c = cfg(mode="karpenter", node_groups=groups)
    wl = Workload([], ps, [0.0, 0.5, 1.0], [None] * 3)
    res = simulate_elastic(gpu_cfg, wl, c, end_time=600.0, seed=0, registry=REG)
    s = res.summary
    assert s["bound"] == 3
    # one batch (pods 0.5 s apart, the batch closes 1 s after the last), packed onto one claim;
    # the cheapest shape that holds all three pods is the 4-GPU one
    assert s["scale_ups"] == 1 and s["nodes_added"] == 1
    assert s["gpu_hours"] == pytest.approx(4 * (600 - 2.0) / 3600, rel=0.01)


def test_karpenter_consolidates_empty_nodes():
    ps, arr, dur = pods(2, at=0.0, duration=100.0)
    c = cfg(mode="karpenter")
    res = run(Workload([], ps, arr, dur), c, end=1200.0)
    s = res.summary
    assert s["bound"] == 2 and s["scale_downs"] == s["nodes_added"] >= 1
    assert res.series["nodes"][-1] == 0


def test_static_cluster_metrics():
    grp = NodeGroup("big", BIG, 0, 5)
    ps, arr, dur = pods(20, at=0.0, duration=None)
    res = run(Workload(base_nodes(grp, 2), ps, arr, dur), None, end=3600.0)
    s = res.summary
    assert s["bound"] == 10 and s["failed"] == 10 and s["failed_pct"] == 50.0
    assert s["node_hours"] == pytest.approx(2.0)
    assert s["peak_nodes"] == 2 and s["scale_ups"] == 0
