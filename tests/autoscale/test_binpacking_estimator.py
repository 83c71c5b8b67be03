"""Cluster Autoscaler's estimator tests, ported under their upstream names
(kubernetes/autoscaler cluster-autoscaler/estimator/binpacking_estimator_test.go, TestBinpackingEstimate,
8 of 9 cases).

Upstream builds a snapshot with one existing node "oldnode" (100m CPU, 100 MiB, zone-jupiter), a
template node of the case's size in zone-mars (10 pods max), and pods in equivalence groups. The
fast-path variant is an implementation detail of upstream's estimator (same expectations as
the regular path) and is not ported separately.
"""

from __future__ import annotations

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.app import build_registry
from kubesched.autoscale.estimator import BinpackingEstimator, PodGroup
from kubesched.autoscale.predicate import PredicateChecker
from kubesched.config.load import default_config
from kubesched.scheduler import Scheduler
from kubesched.state.snapshot import Snapshot
from kubesched.testing import make_node, make_pod

MIB = 2**20


def node(cpu_m: int, mem_mib: int, pods: int, name: str, zone: str) -> Node:
    return Node.parse(
        make_node(name, cpu=f"{cpu_m}m", memory=str(mem_mib * MIB), pods=pods, labels={"topology.kubernetes.io/zone": zone})
    )


def pod(cpu_m: int, mem: int, *, host_port: int | None = None, skew: tuple[int, str, int] | None = None) -> Pod:
    """BuildTestPod("estimatee", cpu, mem, WithNamespace("universe"), WithLabels(app=estimatee)):
    upstream's memory argument is in bytes."""
    c: dict = {"name": "c", "image": "pause", "resources": {"requests": {"cpu": f"{cpu_m}m", "memory": str(mem)}}}
    if host_port is not None:
        c["ports"] = [{"containerPort": host_port, "hostPort": host_port}]
    spec: dict = {}
    if skew is not None:
        max_skew, key, min_domains = skew
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": max_skew,
                "topologyKey": key,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "estimatee"}},
                **({"minDomains": min_domains} if min_domains > 1 else {}),
            }
        ]
    return Pod.parse(make_pod("estimatee", namespace="universe", labels={"app": "estimatee"}, containers=[c], spec=spec))


def group(p: Pod, count: int) -> PodGroup:
    """makePodEquivalenceGroup: the same pod, ``count`` times (distinct uids for our snapshot)."""
    pods = []
    for i in range(count):
        q = p.copy()
        q.uid = f"{p.uid}-{id(p)}-{i}"
        pods.append(q)
    return PodGroup(pods)


@pytest.fixture(scope="module")
def checker() -> PredicateChecker:
    reg = build_registry()
    sched = Scheduler(default_config(reg.points_of), Snapshot(), None, reg, seed=0)
    return PredicateChecker(lambda p: sched.frameworks.get(p.scheduler_name))


def with_oldnode() -> Snapshot:
    base = Snapshot()
    base.set_namespace("universe", {})
    base.add_node(node(100, 100, 10, "oldnode", "zone-jupiter"))
    return base


HIGH = pod(500, 1000)

CASES = [
    # name, millicores, memory (MiB), maxNodes, groups, expect nodes, expect pods, processed
    ("simple resource-based binpacking", 350 * 3 - 50, 2 * 1000, 0, [group(pod(350, 1000 * MIB), 10)], 5, 10, None),
    ("pods-per-node bound binpacking", 10000, 20000, 0, [group(pod(10, 100 * MIB), 20)], 2, 20, None),
    ("hostport conflict forces pod-per-node", 1000, 5000, 0, [group(pod(200, 1000 * MIB, host_port=5555), 8)], 8, 8, None),
    ("limiter cuts binpacking", 1000, 5000, 5, [group(pod(500, 1000 * MIB), 20)], 5, 10, None),
    (
        "decreasing ordered pods are processed first",
        1000,
        5000,
        5,
        [group(pod(50, 1000 * MIB), 10), group(pod(500, 1000 * MIB), 10)],
        5,
        10,
        1,  # the pods processed are exactly the second (bigger) group's
    ),
    (
        "hostname topology spreading with maxSkew=2 forces 2 pods/node",
        1000,
        5000,
        0,
        [group(pod(200, 200 * MIB, skew=(2, "kubernetes.io/hostname", 1)), 8)],
        4,
        8,
        None,
    ),
    (
        "zonal topology spreading with maxSkew=2 only allows 2 pods to schedule",
        1000,
        5000,
        0,
        [group(pod(20, 100 * MIB, skew=(2, "topology.kubernetes.io/zone", 1)), 8)],
        1,
        2,
        None,
    ),
    (
        # a pod refused by the last node for its spread goes to an earlier node (the old one
        # included, which upstream counts as well): 3 nodes, not one per pod
        "hostname topology spreading with maxSkew=1 with a large scaleup handles scheduling pods retroactively",
        1000,
        5000,
        0,
        [group(pod(20, 100, skew=(1, "kubernetes.io/hostname", 3)), 12)],
        3,
        12,
        None,
    ),
]


@pytest.mark.parametrize(("name", "cpu", "mem", "max_nodes", "groups", "nodes", "pods", "processed"), CASES, ids=[c[0] for c in CASES])
def test_binpacking_estimate(checker, name, cpu, mem, max_nodes, groups, nodes, pods, processed):
    est = BinpackingEstimator(checker, with_oldnode)
    template = node(cpu, mem, 10, "template", "zone-mars")
    res = est.estimate(groups, template, max_nodes)
    assert res.nodes == nodes
    assert len(res.pods) == pods
    if processed is not None:
        assert res.pods == groups[processed].pods


def test_estimate_places_pods_on_the_new_nodes_only(checker):
    """The estimate's scratch snapshot holds the new nodes with the pods binpacked on them; the
    existing node is not used (CA binpacks onto new nodes)."""
    est = BinpackingEstimator(checker, with_oldnode)
    res = est.estimate([group(pod(350, 1000 * MIB), 4)], node(1000, 2000, 10, "template", "zone-mars"))
    assert res.nodes == 2 and len(res.new_nodes) == 2
    snap = res.snapshot
    assert not snap.pods_on[snap.row_of["oldnode"]]
    assert sorted(len(snap.pods_on[snap.row_of[n]]) for n in res.new_nodes) == [2, 2]
