"""The kit's statistics against values worked by hand, and against the two paired-test
implementations the edge–cloud experiment and the learning track had before the kit (the same
numbers, to the bit, on the same data)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sp

from kubesched.kit.stats import mean_sd, paired, se_difference, stats_of


def test_stats_known_values() -> None:
    s = stats_of([4.0, 1.0, 3.0, 2.0, math.nan, None])
    assert (s.n, s.mean, s.median, s.q25, s.q75, s.low, s.high) == (4, 2.5, 2.5, 1.75, 3.25, 1.0, 4.0)
    assert s.sd == pytest.approx(math.sqrt(5 / 3))  # ddof=1: sum of squares 5 over 3
    one = stats_of([7.0])
    assert one.n == 1 and one.mean == 7.0 and math.isnan(one.sd)
    assert stats_of([math.nan]).n == 0


def test_mean_sd() -> None:
    assert mean_sd([1.0, 2.0, 3.0, None, math.nan]) == (2.0, 1.0)
    assert mean_sd([1.0, 3.0], ddof=0) == (2.0, 1.0)  # the population sd
    assert mean_sd([5.0]) == (5.0, None)
    assert mean_sd([5.0], ddof=0) == (5.0, 0.0)
    assert mean_sd([]) == (None, None)


def test_se_difference() -> None:
    assert se_difference(3.0, 9, 4.0, 16) == pytest.approx(math.sqrt(2.0))  # 9/9 + 16/16


def test_paired_known_values() -> None:
    # d = 1..5: mean 3, sd sqrt(2.5), t = 3 / (sqrt(2.5) / sqrt(5)) = 4.243 on 4 degrees of freedom
    p = paired([2.0, 4.0, 6.0, 8.0, 10.0], [1.0, 2.0, 3.0, 4.0, 5.0])
    assert (p.n, p.mean_difference, p.lower, p.equal, p.higher) == (5, 3.0, 0, 0, 5)
    assert p.sd_difference == pytest.approx(math.sqrt(2.5))
    assert p.t_test_p == pytest.approx(0.0132356, rel=1e-5)
    assert p.wilcoxon_p == pytest.approx(2 / 32)  # exact: both all-positive and all-negative of 2^5 sign patterns
    q = paired([1.0, -2.0, 3.0, 4.0, 5.0, 6.0], [0.0] * 6)
    assert q.wilcoxon_p == pytest.approx(6 / 64)  # rank sums <= 2 of either sign: 3 patterns each


def test_paired_without_differences() -> None:
    same = paired([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    assert same.t_test_p is None and same.wilcoxon_p is None and same.equal == 3
    shifted = paired([2.0, 3.0, 4.0], [1.0, 2.0, 3.0])  # every difference 1: no variance for a t-test
    assert shifted.t_test_p is None and shifted.wilcoxon_p is not None
    noise = paired([0.1 + 0.2, 1.0], [0.3, 1.0], decimals=6)  # 0.30000000000000004 - 0.3 is a tie
    assert noise.equal == 2 and noise.wilcoxon_p is None
    assert paired([1.0], [2.0]).sd_difference is None


DATA = [
    (np.array([4.7, 4.6, 4.8, 4.9, 4.5, 4.7, 4.6, 4.8, 4.7, 4.6]),
     np.array([4.6, 4.4, 4.75, 4.8, 4.5, 4.4, 4.5, 4.9, 4.5, 4.5])),
    (np.array([12.5, 3.25, 7.0, 9.75, 1.5]), np.array([11.0, 3.5, 6.0, 9.75, 0.25])),
    (np.random.default_rng(3).normal(50, 10, 12), np.random.default_rng(4).normal(48, 10, 12)),
]


@pytest.mark.parametrize(("x", "y"), DATA)
def test_agrees_with_the_edge_cloud_experiments_former_tests(x: np.ndarray, y: np.ndarray) -> None:
    """multicluster/experiment/metrics.py before the kit: ttest_rel(x, y) and wilcoxon(x, y)."""
    p = paired(x, y)
    d = x - y
    assert p.mean_difference == float(d.mean())
    assert p.t_test_p == float(sp.ttest_rel(x, y).pvalue)
    assert p.wilcoxon_p == float(sp.wilcoxon(x, y).pvalue)


@pytest.mark.parametrize(("x", "y"), DATA)
def test_agrees_with_the_learning_tracks_former_test(x: np.ndarray, y: np.ndarray) -> None:
    """learn/evaluate.py before the kit: differences rounded to 6 places, wilcoxon of them."""
    p = paired(x, y, decimals=6)
    d = np.round(x - y, 6)
    assert (p.lower, p.equal, p.higher) == (int((d < 0).sum()), int((d == 0).sum()), int((d > 0).sum()))
    assert p.mean_difference == float(d.mean()) and p.sd_difference == float(d.std(ddof=1))
    assert p.wilcoxon_p == float(sp.wilcoxon(d, zero_method="wilcox", alternative="two-sided").pvalue)


def test_the_harnesses_report_the_kits_numbers() -> None:
    from kubesched.learn.evaluate import paired as learn_paired
    from kubesched.multicluster.experiment.metrics import paired_tests

    x, y = DATA[0]
    p = paired(x, y, decimals=6)
    lp = learn_paired(x, y)
    assert (lp["wins"], lp["ties"], lp["losses"], lp["wilcoxon_p"]) == (p.lower, p.equal, p.higher, p.wilcoxon_p)
    runs = [
        {"mode": m, "seed": s, "failure_pct": v, "gpu_util_pct": {"edge": v}, "cpu_util_pct": {"edge": v},
         "latency_ms": {"mean": v}}
        for m, vs in (("collaborative", x), ("isolated", y))
        for s, v in enumerate(vs)
    ]
    (test,) = [t for t in paired_tests(runs) if t["metric"] == "failure_pct"]
    q = paired(x, y)
    assert (test["t_test_p"], test["wilcoxon_p"], test["every_seed"]) == (q.t_test_p, q.wilcoxon_p, False)
