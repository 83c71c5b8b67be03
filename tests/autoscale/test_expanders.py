"""Cluster Autoscaler's expander tests, ported under their upstream names
(kubernetes/autoscaler cluster-autoscaler/expander/waste/waste_test.go: TestLeastWaste;
expander/priority/priority_test.go: TestPriorityExpander*; expander/leastnodes/leastnodes_test.go:
TestLeastNodes), then the other expanders."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.api.objects import Node, Pod
from kubesched.autoscale.config import Prices
from kubesched.autoscale.expander import (
    Expander,
    Option,
    least_nodes,
    least_waste,
    most_pods,
    price,
    priority,
)
from kubesched.testing import make_node, make_pod

CPU_PER_POD = 500
MEMORY_PER_POD = 1000 * 1024 * 1024


def node_info(cpu_m: int, memory: int, pods: int) -> Node:
    return Node.parse(make_node("n", cpu=f"{cpu_m}m", memory=str(memory), pods=pods))


# ---- waste_test.go -----------------------------------------------------------------------------
def test_least_waste():
    pod = Pod.parse(make_pod("p", requests={"cpu": f"{CPU_PER_POD}m", "memory": str(MEMORY_PER_POD)}))
    balanced = Option("balanced", 1, [], node_info(16 * CPU_PER_POD, 16 * MEMORY_PER_POD, 100))
    # without any pods, one node info
    assert least_waste([balanced]) == [balanced]
    # one pod, one node info
    balanced.pods = [pod]
    assert least_waste([balanced]) == [balanced]
    # one pod, two node infos: one with lots of RAM, one with less
    highmem = Option("highmem", 1, [pod], node_info(16 * CPU_PER_POD, 32 * MEMORY_PER_POD, 100))
    assert least_waste([balanced, highmem]) == [balanced]
    # one pod, three node infos: lots of RAM, less RAM, less CPU
    lowcpu = Option("lowcpu", 1, [pod], node_info(8 * CPU_PER_POD, 16 * MEMORY_PER_POD, 100))
    assert least_waste([balanced, highmem, lowcpu]) == [lowcpu]


# ---- priority_test.go --------------------------------------------------------------------------
CONFIG = {5: [r".*t2\.micro.*"], 10: [r".*t2\.large.*", r".*t3\.large.*"], 50: [r".*m4\.4xlarge.*"]}
ONE_ENTRY_CONFIG = {10: [r".*t2\.large.*"]}
NOT_MATCHING_CONFIG = {5: [r".*t\.micro.*"], 10: [r".*t\.large.*"]}
WILDCARD_MATCH_CONFIG = {5: [r".*"], 10: [r".t2\.large.*"]}

EO_T2_MICRO = Option("my-asg.t2.micro", 1)
EO_T2_LARGE = Option("my-asg.t2.large", 1)
EO_T3_LARGE = Option("my-asg.t3.large", 1)
EO_M4_4XLARGE = Option("my-asg.m4.4xlarge", 1)


def test_priority_expander_correctly_filters_single_matching_option_out_of_one():
    assert priority([EO_T2_LARGE], CONFIG) == [EO_T2_LARGE]


def test_priority_expander_correctly_filters_single_matching_option_out_of_many():
    assert priority([EO_T2_LARGE, EO_M4_4XLARGE], CONFIG) == [EO_M4_4XLARGE]


def test_priority_expander_filters_to_higher_priority_match():
    assert priority([EO_T2_LARGE, EO_T2_MICRO], WILDCARD_MATCH_CONFIG) == [EO_T2_LARGE]


def test_priority_expander_correctly_filters_two_matching_options_out_of_many():
    assert priority([EO_T2_LARGE, EO_T3_LARGE, EO_T2_MICRO], CONFIG) == [EO_T2_LARGE, EO_T3_LARGE]


def test_priority_expander_correctly_falls_back_to_all_when_no_matches():
    assert priority([EO_T2_LARGE, EO_T3_LARGE], NOT_MATCHING_CONFIG) == [EO_T2_LARGE, EO_T3_LARGE]


def test_priority_expander_correctly_handles_config_update():
    # upstream re-reads its ConfigMap; here the configuration is a value: the same two answers
    assert priority([EO_T2_LARGE, EO_T3_LARGE, EO_M4_4XLARGE], ONE_ENTRY_CONFIG) == [EO_T2_LARGE]
    assert priority([EO_T2_LARGE, EO_T3_LARGE, EO_M4_4XLARGE], CONFIG) == [EO_M4_4XLARGE]


# ---- leastnodes_test.go ------------------------------------------------------------------------

LEAST_NODES = [
    ("no options", [], []),
    ("no valid options", [0], []),
    ("1 valid option", [2], [0]),
    ("2 valid options, not equal", [2, 1], [1]),
    ("3 valid options, 2 equal", [6, 2, 2], [1, 2]),
    ("3 valid options, all equal", [8, 8, 8], [0, 1, 2]),
    ("6 valid options, 1 invalid option, 3 equal", [23, 0, 5, 8, 5, 5, 22], [2, 4, 5]),
]


@pytest.mark.parametrize(("name", "counts", "expected"), LEAST_NODES, ids=[c[0] for c in LEAST_NODES])
def test_least_nodes(name, counts, expected):
    """TestLeastNodes, 7 of 7 cases: options EO<i> with the given node counts; the ones kept."""
    options = [Option(f"EO{i}", n) for i, n in enumerate(counts)]
    assert least_nodes(options) == [options[i] for i in expected]


def test_least_nodes_expander_picks_nothing_when_no_option_adds_a_node():
    assert Expander("least-nodes", np.random.default_rng(0)).best([Option("EO0", 0)]) is None


# ---- the others ----------------------------------------------------------------------------------
def test_most_pods_and_least_nodes():
    p = Pod.parse(make_pod("p", requests={"cpu": "1"}))
    a = Option("a", 3, [p, p, p])
    b = Option("b", 1, [p])
    c = Option("c", 2, [p, p, p])
    assert most_pods([a, b, c]) == [a, c]
    assert least_nodes([a, b, c]) == [b]


def test_price_prefers_the_cheaper_gpus_per_pod():
    """price.go's score for GPU node groups: (node price) / (pod price), unfitness 1000 for all."""
    gpu_pod = Pod.parse(
        {**make_pod("g", requests={"cpu": "1"}), "metadata": {"name": "g", "namespace": "default", "annotations": {"alibabacloud.com/gpu-count": "1", "alibabacloud.com/gpu-milli": "1000"}}}
    )
    big = Node.parse(make_node("big", cpu="96", memory="384Gi", extra={"alibabacloud.com/gpu-count": 8, "alibabacloud.com/gpu-milli": 8000}))
    small = Node.parse(make_node("small", cpu="8", memory="32Gi", extra={"alibabacloud.com/gpu-count": 1, "alibabacloud.com/gpu-milli": 1000}))
    prices = Prices(gpu=1.0)
    eight = Option("big", 1, [gpu_pod], big, node_price=8.0)
    one = Option("small", 1, [gpu_pod], small, node_price=1.0)
    assert price([eight, one], prices, 10) == [one]
    # eight pods fill the big node: the same price per pod; the first stays best (strict <)
    assert price([Option("big", 1, [gpu_pod] * 8, big, node_price=8.0), Option("small", 8, [gpu_pod] * 8, small, node_price=1.0)], prices, 10)[0].group == "big"


def test_random_fallback_breaks_ties_with_the_seeded_generator():
    p = Pod.parse(make_pod("p", requests={"cpu": "1"}))
    opts = [Option(n, 1, [p]) for n in "abcd"]
    picks = {Expander("random", np.random.default_rng(s)).best(opts).group for s in range(40)}
    assert picks == set("abcd")
    assert Expander("most-pods", np.random.default_rng(0)).best([]) is None
