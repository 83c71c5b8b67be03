"""The binpacking estimator's node budget per group (``cluster-autoscaler/estimator``'s
thresholds), ported from kubernetes/autoscaler:

* estimator/threshold_based_limiter_test.go: TestMinLimit (its 6 node-count cases; the 6 duration
  cases are left out, as the duration limit is: a time budget would make runs irreproducible).
* estimator/cluster_capacity_threshold_test.go: TestNewClusterCapacityThreshold (3 of 3).
* estimator/sng_capacity_threshold_test.go: TestSngCapacityThreshold (4 of 4).
"""

from __future__ import annotations

import pytest

from kubesched.autoscale.config import AutoscalerConfig
from kubesched.autoscale.estimator import cluster_capacity, estimation_limit, min_limit, sng_capacity
from tests.autoscale.scaleup_cases import group, node, pod, scale_up


@pytest.mark.parametrize(
    ("base", "target", "want"),
    [
        (-10, 10, -1),  # at least one negative
        (-10, 0, -1),  # negative and not set
        (-10, -10, -1),  # both negative
        (0, 0, 0),  # both not set
        (0, 10, 10),  # at least one not set
        (5, 10, 5),  # both set
    ],
)
def test_min_limit(base, target, want):
    assert min_limit(base, target) == want


@pytest.mark.parametrize(
    ("max_nodes", "current", "want"),
    [
        (10, 5, 5),  # computes available capacity
        (0, 10, 0),  # for not defined cluster max nodes returns 0
        (5, 10, 0),  # for negative total capacity returns 0
    ],
)
def test_new_cluster_capacity_threshold(max_nodes, current, want):
    assert cluster_capacity(max_nodes, current) == want


@pytest.mark.parametrize(
    ("similar", "current", "want"),
    [
        ([(10, 5), (100, 50), (5, 3)], (20, 10), 67),  # returns available capacity
        ([(10, 5), (10, 11), (0, 5)], (5, 10), 5),  # skips over-provisioned groups
        ([(10, 10), (100, 100)], (5, 5), -1),  # negative if the cluster has no capacity
        ([(10, 11), (100, 111), (0, 5)], (5, 10), -1),  # negative if all groups are over-provisioned
    ],
)
def test_sng_capacity_threshold(similar, current, want):
    assert sng_capacity([mx - n for mx, n in [current, *similar]]) == want


def test_the_thresholds_combine():
    assert estimation_limit(1000, 0, 7) == 7
    assert estimation_limit(1000, 3, 7) == 3
    assert estimation_limit(2, 3, 7) == 2
    assert estimation_limit(1000, 3, -1) == -1


def test_the_loop_uses_the_smallest():
    """maxNodesTotal leaves 2 of the group's 9: the option is capped in the estimate."""
    cfg = AutoscalerConfig(node_groups=[group("ng", 1000, 1000, 1, 10)], max_nodes_total=3)
    pending = [pod(f"p{i}", 1000, 1000) for i in range(5)]
    assert scale_up(cfg, [node("n1", 1000, 1000, "ng")], [pod("x", 1000, 1000, on="n1"), *pending]) == {"ng": 2}
