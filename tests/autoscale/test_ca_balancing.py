"""Balancing similar node groups (``balanceSimilarNodeGroups``: CA's
``--balance-similar-node-groups``), ported from kubernetes/autoscaler:

* processors/nodegroupset/compare_nodegroups_test.go: TestIdenticalNodesSimilar,
  TestNodesSimilarVariousRequirements, TestNodesSimilarVariousRequirementsAndPods,
  TestNodesSimilarVariousMemoryRequirements, TestNodesSimilarVariousLargeMemoryRequirementsM5XLarge,
  TestNodesSimilarVariousLargeMemoryRequirementsM516XLarge, TestNodesSimilarVariousLabels (7 of 7).
* processors/nodegroupset/label_nodegroups_test.go: TestNodeLabelComparison (8 of 8 rows).
* processors/nodegroupset/balancing_processor_test.go: TestFindSimilarNodeGroups,
  TestFindSimilarNodeGroupsCustomLabels, TestFindSimilarNodeGroupsCustomComparator,
  TestBalanceSingleGroup, TestBalanceUnderMaxSize, TestBalanceHittingMaxSize (6 of 6).
* core/scaleup/orchestrator/orchestrator_test.go: TestScaleUpTwoGroups (its synchronous case; the
  parallel one differs only in how CA calls the cloud provider), TestScaleUpBalanceGroups (1 of 2
  cases: the other swaps in a mock expander), TestComputeSimilarNodeGroups (6 of 6; upstream's
  fixed set of similar groups is made here of identical templates, the others of a different one).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kubesched.api.objects import Node
from kubesched.autoscale.config import AutoscalerConfig
from kubesched.autoscale.configfile import load
from kubesched.autoscale.estimator import PodGroup
from kubesched.autoscale.nodegroupset import (
    BASIC_IGNORED_LABELS,
    balance_scale_up,
    find_similar,
    generic_comparator,
    is_similar,
    label_comparator,
)
from kubesched.errors import InputError
from tests.autoscale.scaleup_cases import MIB, group, loop, node, pod, scale_up

GENERIC = generic_comparator([], 0.015, 0.05, 0.05)


def build(name: str, cpu_m: int, mem: int, *, capacity: dict | None = None, allocatable: dict | None = None, labels: dict | None = None) -> Node:
    """BuildTestNode, then capacity / allocatable entries changed and labels added."""
    d = node(name, cpu_m, mem)
    d["status"]["capacity"].update(capacity or {})
    d["status"]["allocatable"].update(allocatable or {})
    d["metadata"]["labels"].update(labels or {})
    return Node.parse(d)


def similar(n1: Node, n2: Node, req1: dict | None = None, req2: dict | None = None) -> bool:
    return is_similar(n1, n2, requested1=req1, requested2=req2)


# ---- compare_nodegroups_test.go -----------------------------------------------------------------
def test_identical_nodes_similar():
    assert similar(build("node1", 1000, 2000), build("node2", 1000, 2000))


def test_nodes_similar_various_requirements():
    n1 = build("node1", 1000, 2000)
    assert not similar(n1, build("node2", 1000, 2000, capacity={"cpu": "1001m"}))  # different CPU capacity
    assert similar(n1, build("node3", 1000, 2000, allocatable={"cpu": "999m"}))  # slightly different allocatable
    assert not similar(n1, build("node4", 1000, 2000, allocatable={"cpu": "500m"}))  # significantly different
    gpu = {"nvidia.com/gpu": "1"}
    assert not similar(n1, build("node5", 1000, 2000, capacity=gpu, allocatable=gpu))  # one with a GPU


def test_nodes_similar_various_requirements_and_pods():
    n1, p1 = build("node1", 1000, 2000), {"cpu": 500, "memory": 1000}
    # different allocatable, but same free
    assert not similar(n1, build("node2", 1000, 2000, allocatable={"cpu": "500m", "memory": "1000"}), p1, {})
    assert similar(n1, build("node3", 1000, 2000), p1, {"cpu": 500, "memory": 1000})  # same requests
    # similar allocatable, similar pods
    assert similar(n1, build("node4", 1000, 2000, allocatable={"cpu": "999m"}), p1, {"cpu": 501, "memory": 1001})


def test_nodes_similar_various_memory_requirements():
    n1 = build("node1", 1000, 1000)
    assert similar(n1, build("node2", 1000, 1000, capacity={"memory": str(int(1000 - 1000 * 0.015) + 1)}))
    assert not similar(n1, build("node3", 1000, 1000, capacity={"memory": str(int(1000 - 1000 * 0.015) - 1)}))


@pytest.mark.parametrize(
    ("q1", "q2", "q3"),
    [
        ("16116152Ki", "15944120Ki", "16438475Ki"),  # m5.xlarge: another zone's node; q1 * 1.02
        ("259970052Ki", "257217528Ki", "265169453Ki"),  # m5.16xlarge
    ],
    ids=["M5XLarge", "M516XLarge"],
)
def test_nodes_similar_various_large_memory_requirements(q1, q2, q3):
    ki = {q: int(q[:-2]) * 1024 for q in (q1, q2, q3)}
    n1 = build("node1", 1000, ki[q1])
    assert similar(n1, build("node2", 1000, ki[q2]))
    assert not similar(n1, build("node3", 1000, ki[q3]))


def test_nodes_similar_various_labels():
    compare = generic_comparator(["example.com/ready"], 0.015, 0.05, 0.05)
    l1 = {"test-label": "test-value", "character": "winnie the pooh"}
    l2 = {"test-label": "test-value"}

    def check(want: bool) -> None:
        assert compare(build("node1", 1000, 2000, labels=l1), build("node2", 1000, 2000, labels=l2)) is want

    check(False)  # missing character label
    l2["character"] = "winnie the pooh"
    check(True)
    l1["kubernetes.io/hostname"], l2["kubernetes.io/hostname"] = "node1", "node2"
    check(True)  # different hostnames do not matter
    l1["failure-domain.beta.kubernetes.io/zone"], l2["failure-domain.beta.kubernetes.io/zone"] = "mars-olympus-mons1-b", "us-houston1-a"
    check(True)  # nor zones
    l1["beta.kubernetes.io/fluentd-ds-ready"], l2["beta.kubernetes.io/fluentd-ds-ready"] = "true", "false"
    check(True)
    del l2["beta.kubernetes.io/fluentd-ds-ready"]
    check(True)
    l1["example.com/ready"], l2["example.com/ready"] = "true", "false"
    check(True)  # nor the custom ignored label


# ---- label_nodegroups_test.go -------------------------------------------------------------------
IT, ARCH = "node.kubernetes.io/instance-type", "kubernetes.io/arch"


@pytest.mark.parametrize(
    ("labels1", "labels2", "want"),
    [
        ({IT: "m5.4xlarge", ARCH: "amd64"}, {IT: "m5.4xlarge", ARCH: "amd64"}, True),  # both labels match
        ({IT: "m5.4xlarge", ARCH: "amd64"}, {IT: "m5.4xlarge", ARCH: "i386"}, False),  # one does not
        ({IT: "m5.4xlarge", ARCH: "amd64", "unspecified-label": "eu-west1"}, {IT: "m5.4xlarge", ARCH: "amd64", "unspecified-label": "eu-west2"}, True),
        ({}, {}, False),  # no labels are set
        ({IT: "m5.4xlarge", ARCH: "amd64"}, {ARCH: "amd64"}, False),  # unset on the second group
        ({ARCH: "amd64"}, {IT: "m5.4xlarge", ARCH: "amd64"}, False),  # unset on the first group
        ({IT: "", ARCH: ""}, {IT: "", ARCH: ""}, True),  # explicitly empty
        ({IT: "", ARCH: "amd64"}, {IT: "", ARCH: "amd64"}, True),
    ],
)
def test_node_label_comparison(labels1, labels2, want):
    compare = label_comparator([IT, ARCH])
    n1, n2 = build("node1", 1000, 2000), build("node2", 1000, 2000)
    n1.labels.clear()
    n1.labels.update(labels1)
    n2.labels.clear()
    n2.labels.update(labels2)
    assert compare(n1, n2) is want


# ---- balancing_processor_test.go ----------------------------------------------------------------
def basic_similar_node_groups_test(templates: dict[str, Node], compare: Callable[[Node, Node], bool]) -> None:
    assert find_similar("ng1", templates, compare) == ["ng2"]
    assert find_similar("ng2", templates, compare) == ["ng1"]
    assert find_similar("ng3", templates, compare) == []


def basic_templates() -> dict[str, Node]:
    return {"ng1": build("n1", 1000, 1000), "ng2": build("n2", 1000, 1000), "ng3": build("n3", 2000, 2000)}


def test_find_similar_node_groups():
    basic_similar_node_groups_test(basic_templates(), GENERIC)


def test_find_similar_node_groups_custom_labels():
    t = basic_templates()
    t["ng1"].labels["example.com/ready"] = "true"
    t["ng2"].labels["example.com/ready"] = "false"
    assert find_similar("ng1", t, GENERIC) == []  # the label differs ...
    basic_similar_node_groups_test(t, generic_comparator(["example.com/ready"], 0.015, 0.05, 0.05))  # ... unless ignored


def test_find_similar_node_groups_custom_comparator():
    def compare(n1: Node, n2: Node) -> bool:
        return {n1.name, n2.name} == {"n1", "n2"}

    basic_similar_node_groups_test(basic_templates(), compare)


def sizes(infos: list) -> dict[str, int]:
    return {i.group: i.new for i in infos}


def test_balance_single_group():
    assert sizes(balance_scale_up([("ng1", 1, 10)], 1)) == {"ng1": 2}
    assert sizes(balance_scale_up([("ng1", 1, 10)], 4)) == {"ng1": 5}


def test_balance_under_max_size():
    groups = [("ng1", 1, 10), ("ng2", 3, 10), ("ng3", 5, 10), ("ng4", 5, 10)]
    assert sizes(balance_scale_up(groups, 1)) == {"ng1": 2}
    assert sizes(balance_scale_up(groups, 2)) == {"ng1": 3}
    assert sizes(balance_scale_up(groups, 4)) == {"ng1": 4, "ng2": 4}  # different sizes, divisible
    got = sizes(balance_scale_up(groups, 5))  # non-divisible: 4 and 5, either way round
    assert set(got) == {"ng1", "ng2"} and sorted(got.values()) == [4, 5]
    assert sizes(balance_scale_up(groups, 10)) == dict.fromkeys(["ng1", "ng2", "ng3", "ng4"], 6)


def test_balance_hitting_max_size():
    g = {"ng1": ("ng1", 1, 1), "ng2": ("ng2", 1, 3), "ng3": ("ng3", 3, 10), "ng4": ("ng4", 5, 7), "ng5": ("ng5", 6, 3)}

    def run(names: str, n: int) -> dict[str, int]:
        return sizes(balance_scale_up([g[x] for x in names.split()], n))

    assert run("ng1", 1) == {}  # just one maxed-out group
    assert run("ng1 ng2", 1) == {"ng2": 2}  # the smallest group is maxed out
    assert run("ng1 ng2", 5) == {"ng2": 3}  # too many nodes: capped to the room
    assert run("ng2 ng3", 4) == {"ng2": 3, "ng3": 5}  # the first group maxes out before the next
    assert run("ng2 ng3 ng4", 9) == {"ng2": 3, "ng3": 8, "ng4": 7}  # the last maxes out first
    assert run("ng2 ng3 ng4", 900) == {"ng2": 3, "ng3": 10, "ng4": 7}  # all the room, capped
    assert run("ng2 ng5", 1) == {"ng2": 2}  # a group over its max is left out


# ---- orchestrator_test.go -----------------------------------------------------------------------
def test_scale_up_two_groups():
    cfg = AutoscalerConfig(
        node_groups=[group("ng1", 1500, 1000 * MIB, 1, 10), group("ng2", 1500, 1000 * MIB, 1, 10)], balance_similar_node_groups=True
    )
    nodes = [node("ng1-n1", 1500, 1000 * MIB, "ng1"), node("ng2-n1", 1500, 1000 * MIB, "ng2")]
    pods = [pod("p1", 1400, on="ng1-n1"), pod("p2", 1400, on="ng2-n1"), pod("p3", 1400), pod("p4", 1400)]
    for seed in range(4):  # whichever group the expander picks
        assert scale_up(cfg, nodes, pods, seed) == {"ng1": 1, "ng2": 1}
    cfg.balance_similar_node_groups = False
    assert sorted(scale_up(cfg, nodes, pods).values()) == [2]  # unbalanced: one group takes both


def test_scale_up_two_groups_within_the_cores_limit():
    """capScaleUpsByQuota: 2 cores left allow one of the two 2-core nodes."""
    cfg = AutoscalerConfig(
        node_groups=[group("ng1", 1500, 1000 * MIB, 1, 10), group("ng2", 1500, 1000 * MIB, 1, 10)], balance_similar_node_groups=True
    )
    cfg.resource_limits.max["cpu"] = 6
    nodes = [node("ng1-n1", 1500, 1000 * MIB, "ng1"), node("ng2-n1", 1500, 1000 * MIB, "ng2")]
    pods = [pod("p1", 1400, on="ng1-n1"), pod("p2", 1400, on="ng2-n1"), pod("p3", 1400), pod("p4", 1400)]
    assert sum(scale_up(cfg, nodes, pods).values()) == 1


def test_scale_up_balance_groups():
    spec = {"ng1": (1, 1, 1), "ng2": (1, 2, 1), "ng3": (1, 5, 1), "ng4": (1, 5, 3)}  # min, max, size
    cfg = AutoscalerConfig(node_groups=[group(g, 100, 1000, lo, hi) for g, (lo, hi, _) in spec.items()], balance_similar_node_groups=True)
    nodes, pods = [], []
    for g, (_, _, size) in spec.items():
        for i in range(size):
            nodes.append(node(f"{g}-node-{i}", 100, 1000, g))
            pods.append(pod(f"{g}-pod-{i}", 80, on=f"{g}-node-{i}"))
    pods += [pod(f"test-pod-{i}", 80) for i in range(2)]
    for seed in range(4):
        assert scale_up(cfg, nodes, pods, seed) == {"ng2": 1, "ng3": 1}  # ng2 and ng3 reach 2


PG1, PG2, PG3 = (PodGroup([]) for _ in range(3))


@pytest.mark.parametrize(
    ("balancing", "schedulable", "want"),
    [
        (True, {}, []),  # some similar node groups, but no schedulable pods
        (False, dict.fromkeys(["ng1", "ng2", "ng3", "pg1", "pg2"], [PG1]), []),  # balancing disabled
        (True, dict.fromkeys(["ng1", "ng2", "ng3", "pg1", "pg2"], [PG1]), ["ng2", "ng3"]),  # same pods
        (True, {"ng1": [PG1], "ng2": [PG1, PG2], "ng3": [PG1, PG2, PG3], "pg1": [PG1, PG2], "pg2": [PG1, PG2, PG3]}, ["ng2", "ng3"]),
        (True, {"ng1": [PG1, PG2], "ng2": [PG1], "pg1": [PG1]}, []),  # the similar ones fit other / no pods
    ],
)
def test_compute_similar_node_groups(balancing, schedulable, want):
    groups = [group(g, 100, 1000) for g in ("ng1", "ng2", "ng3")] + [group(g, 200, 1000) for g in ("pg1", "pg2")]
    ca, _ = loop(AutoscalerConfig(node_groups=groups, balance_similar_node_groups=balancing))
    assert ca.similar_groups("ng1", schedulable) == want


def test_compute_similar_node_groups_no_similar_node_groups():
    groups = [group("ng1", 100, 1000)] + [group(g, 200, 1000) for g in ("pg1", "pg2")]
    ca, _ = loop(AutoscalerConfig(node_groups=groups, balance_similar_node_groups=True))
    assert ca.similar_groups("ng1", dict.fromkeys(["ng1", "pg1", "pg2"], [PG1])) == []


def test_balancing_read_from_the_file():
    doc = {
        "balanceSimilarNodeGroups": True,
        "balancingIgnoreLabels": ["example.com/pool"],
        "balancingLabels": [IT],
        "memoryDifferenceRatio": 0.02,
        "nodeGroups": [{"name": "g", "template": {"cpu": "8", "memory": "8Gi"}}],
    }
    cfg = load(doc, "a.yaml")
    assert cfg.balance_similar_node_groups and cfg.balancing.ignore_labels == ["example.com/pool"]
    assert cfg.balancing.labels == [IT] and cfg.balancing.memory_difference_ratio == 0.02
    assert "kubernetes.io/hostname" in BASIC_IGNORED_LABELS


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"balanceSimilarNodeGroups": "yes"}, 'a.yaml: balanceSimilarNodeGroups: invalid value "yes": expected true or false'),
        ({"maxFreeDifferenceRatio": 2}, "a.yaml: maxFreeDifferenceRatio: must be between 0 and 1, got 2"),
        ({"balancingIgnoreLabels": "a"}, "a.yaml: balancingIgnoreLabels: expected a list of non-empty strings"),
    ],
)
def test_bad_balancing_options_name_the_field(doc, message):
    with pytest.raises(InputError) as e:
        load({**doc, "nodeGroups": [{"name": "g", "template": {"cpu": "8", "memory": "8Gi"}}]}, "a.yaml")
    assert str(e.value).startswith(message), str(e.value)
