"""Available replicas: the vectorised count equals placing replicas one by one with the member's
scheduler; inter-pod constraints use the sequential path; the general estimator's arithmetic."""

from __future__ import annotations

import random

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.load import ClusterObjects
from kubesched.multicluster.api import Binding, Cluster, Placement, ResourceSummary
from kubesched.multicluster.estimate import Estimators, GeneralEstimator
from kubesched.multicluster.member import MemberCluster
from kubesched.multicluster.simulated import SimulatedEstimator, needs_sequential


def _node(name: str, cpu: str, mem: str, labels=None, taints=None, gpus: int = 0) -> Node:  # noqa: ANN001
    alloc = {"cpu": cpu, "memory": mem, "pods": "20"}
    if gpus:
        alloc["alibabacloud.com/gpu-count"] = str(gpus)
    return Node.parse({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
                       "spec": {"taints": taints or []}, "status": {"allocatable": alloc}})


def _pod(name: str, cpu: str, mem: str, node: str = "", **spec) -> Pod:  # noqa: ANN003
    ann = spec.pop("annotations", {})
    labels = spec.pop("labels", {"app": name})
    return Pod.parse({"metadata": {"name": name, "namespace": "default", "labels": labels, "annotations": ann},
                      "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": mem}}}], **spec}})


def _member(nodes: list[Node], pods: list[Pod]) -> MemberCluster:
    return MemberCluster(Cluster("m"), ClusterObjects(nodes=nodes, pods=pods))


def _sequential_truth(member: MemberCluster, pod: Pod) -> int:
    est = SimulatedEstimator({"m": member}, cap=10_000)
    return est.sequential(member, pod)


@pytest.mark.parametrize("seed", range(6))
def test_vectorised_count_equals_placing_replicas_one_by_one(seed):
    rng = random.Random(seed)
    nodes, pods = [], []
    for i in range(12):
        labels = {"disk": rng.choice(["ssd", "hdd"])}
        taints = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}] if rng.random() < 0.2 else []
        nodes.append(_node(f"n{i}", str(rng.choice([4, 8, 16])), f"{rng.choice([8, 16, 32])}Gi", labels, taints))
        for j in range(rng.randrange(3)):
            pods.append(_pod(f"p{i}-{j}", f"{rng.choice([500, 1500, 2500])}m", "2Gi", node=f"n{i}"))
    if rng.random() < 0.5:
        nodes[0] = Node.parse({**nodes[0].raw, "spec": {"unschedulable": True}})
    member = _member(nodes, pods)
    tol = [{"key": "dedicated", "operator": "Exists"}] if seed % 2 else []
    sel = {"disk": "ssd"} if seed % 3 == 0 else {}
    template = _pod("web", f"{rng.choice([700, 1000, 3000])}m", f"{rng.choice([1, 3])}Gi", tolerations=tol, nodeSelector=sel)
    est = SimulatedEstimator({"m": member})
    assert not needs_sequential(template)
    assert est.estimate(member, template) == _sequential_truth(member, template)


def test_estimating_leaves_the_member_unchanged():
    member = _member([_node("a", "4", "8Gi"), _node("b", "4", "8Gi")], [])
    snap = member.snapshot
    before = (snap.generation, snap.requested.copy().tolist(), member.scheduler.next_start_node_index)
    pod = _pod("x", "1", "1Gi", affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}]}})
    assert SimulatedEstimator({"m": member}).estimate(member, pod) == 2  # one per node: the real filter says so
    assert snap.requested.tolist() == before[1] and member.scheduler.next_start_node_index == before[2]




def test_general_estimator_divides_the_summary():
    c = Cluster("c", resource_summary=ResourceSummary({"cpu": 10_000, "memory": 64 << 30, "pods": 110},
                                                      {"cpu": 1_000, "pods": 1}, {"cpu": 3_000, "pods": 20}))
    b = Binding("apps/v1", "Deployment", "d", "w", "", 5, _pod("w", "2", "4Gi"), Placement(), requirements=True)
    assert GeneralEstimator.for_cluster(c, b) == 3  # (10 - 3 - 1) cpu // 2
    c.resource_summary = None
    assert GeneralEstimator.for_cluster(c, b) == 0
    merged = Estimators([GeneralEstimator()]).available([c], b)
    assert merged == ({"general": [0]}, [0])


def test_gpu_asks_count_per_card_as_the_gpu_filter_places_them(tmp_path):
    from kubesched.app import build_config
    from kubesched.plugins import in_tree_registry

    cfg = tmp_path / "gpu.yaml"
    cfg.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
                   "- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n      enabled: [{name: Open-Gpu-Share}]\n")
    reg = in_tree_registry()
    nodes = [_node("g0", "64", "256Gi", gpus=2), _node("g1", "64", "256Gi", gpus=4), _node("c0", "64", "256Gi")]
    busy = _pod("busy", "1", "1Gi", node="g1", annotations={"alibabacloud.com/gpu-milli": "700", "alibabacloud.com/gpu-count": "1"})
    member = MemberCluster(Cluster("m"), ClusterObjects(nodes=nodes, pods=[busy]), build_config(str(cfg), reg), reg)
    est = SimulatedEstimator({"m": member}, cap=10_000)
    share = _pod("s", "1", "1Gi", annotations={"alibabacloud.com/gpu-milli": "400", "alibabacloud.com/gpu-count": "1"})
    whole = _pod("w", "1", "1Gi", annotations={"alibabacloud.com/gpu-milli": "1000", "alibabacloud.com/gpu-count": "2"})
    # shares of 400: 2 per free card (g0: 2 cards, g1: 3 free cards) and none on the card with 300 left
    assert est.estimate(member, share) == 10 == est.sequential(member, share)
    # two whole cards: g0 once, g1 once (3 free cards)
    assert est.estimate(member, whole) == 2 == est.sequential(member, whole)


def test_existing_anti_affinity_pods_are_seen_after_the_cache_was_filled():
    member = _member([_node("a", "8", "16Gi"), _node("b", "8", "16Gi")], [])
    est = SimulatedEstimator({"m": member})
    web = _pod("web", "1", "1Gi", labels={"app": "web"})
    assert est.estimate(member, web) == 16
    guard = _pod("guard", "100m", "100Mi", node="a", labels={"app": "guard"}, affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}})
    member.snapshot.add_pod(guard)
    # node a now refuses web replicas (the guard's anti-affinity), whatever was cached before
    assert est.estimate(member, web) == 8 == _sequential_truth(member, web)
