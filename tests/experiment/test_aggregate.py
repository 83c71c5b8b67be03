"""Aggregation maths on synthetic results with hand-computed answers: binning, seed statistics,
the within-spread rule and the ranking check."""

from __future__ import annotations

import math

import numpy as np
import pytest
from experiment_helpers import record

from kubesched.experiment import published
from kubesched.experiment.aggregate import aggregate, compare, compare_point, ranking
from kubesched.experiment.protocol import RunResult
from kubesched.kit.stats import Stats


def test_binning_rounds_half_to_even_and_falls_back() -> None:
    # capacity 1000 milli, so arrived % = milli / 10: 0.5, 1.5, 2.4, 5.0 round (half to even) to
    # levels 0, 2, 2, 5; allocated 0.5, 1, 2, 4 %.
    arrived = np.array([5, 15, 24, 50])
    used = np.array([5, 10, 20, 40])
    r = RunResult("p", 1, 1000, arrived, used, 1000 - used, np.zeros(4), np.ones(4, bool), ["n"] * 4)
    u = r.curve(range(8))["unallocated"]
    assert u[0] == pytest.approx(99.5)  # 0.5 -> level 0, not 1
    assert u[1] == pytest.approx(100 - 1.17)  # empty level: events at 0..2, mean 1.1667 rounded to 1.17
    assert u[2] == pytest.approx(98.5)  # 1.5 -> 2 and 2.4 -> 2
    assert u[3] == pytest.approx(98.5)  # empty: the level-2 events
    assert u[4] == u[5] == u[6] == pytest.approx(96.0)
    assert math.isnan(u[7])  # nothing within 6..8


def test_aggregate_over_seeds() -> None:
    recs = [record("default", "FGD", s, {100: v, 130: v - 1}) for s, v in ((1, 4.0), (2, 5.0), (3, 6.0))]
    recs.append(record("default", "BestFit", 1, {100: 7.0}))
    agg = aggregate(recs)
    st = agg[("default", "FGD", "unallocated", 100)]
    assert (st.n, st.mean, st.sd, st.median) == (3, 5.0, 1.0, 5.0)
    assert agg[("default", "FGD", "unallocated", 130)].mean == 4.0
    assert agg[("default", "FGD", "frag_ratio", 100)].mean == 10.0
    assert agg[("default", "FGD", "unallocated", 50)].n == 0  # NaN everywhere else
    assert agg[("default", "BestFit", "unallocated", 100)].n == 1


def _st(mean: float, sd: float, n: int) -> Stats:
    return Stats(n, mean, sd, mean, mean, mean, mean, mean)


def test_within_spread_rule() -> None:
    pub = published.Published(4.77, 0.11, low=4.62, high=4.94)
    # SE = sqrt(0.2^2/10 + 0.11^2/10) = 0.07218; 2 SE = 0.1444
    c = compare_point("default", "FGD", 100, _st(4.90, 0.2, 10), pub)
    assert c.se == pytest.approx(math.sqrt(0.004 + 0.00121))
    assert c.within_2se is True and c.in_range is True and c.within is True
    c = compare_point("default", "FGD", 100, _st(4.93, 0.2, 10), pub)  # diff 0.16 > 2 SE, but in range
    assert c.within_2se is False and c.in_range is True and c.within is True
    c = compare_point("default", "FGD", 100, _st(5.00, 0.2, 10), pub)
    assert c.within is False and c.diff == pytest.approx(0.23)
    # one seed: the published sd stands in for the measured one: SE = 0.11 * sqrt(1.1)
    c = compare_point("x", "FGD", 100, _st(5.1, math.nan, 1), published.Published(4.77, 0.11))
    assert c.se == pytest.approx(0.11 * math.sqrt(1.1)) and c.within is False and c.in_range is None
    # no sd, no range: no verdict
    assert compare_point("x", "FGD", 130, _st(1, 0, 3), published.Published(4.61)).within is None


def test_compare_picks_published_points() -> None:
    recs = [record("default", "FGD", s, {100: 4.7, 130: 4.6, 90: 10.0}) for s in (1, 2)]
    comps = compare(aggregate(recs))
    assert [(c.trace, c.level) for c in comps] == [("default", 100), ("default", 130)]
    assert comps[0].published.mean == 4.77 and comps[1].published.mean == 4.61


def test_ranking_exact_consistent_different() -> None:
    def comp(policy: str, measured: float) -> object:
        return compare_point("default", policy, 100, _st(measured, 0.1, 10), published.unallocated("default", policy, 100))

    same = ranking([comp("FGD", 4.8), comp("BestFit", 7.0), comp("Random", 13.0)])
    assert same.exact and same.consistent and same.measured == ["FGD", "BestFit", "Random"]
    # Packing 8.22±0.53 and Clustering 8.35±0.61: the paper cannot tell them apart
    swap = ranking([comp("GpuPacking", 8.6), comp("GpuClustering", 8.5), comp("FGD", 4.7)])
    assert not swap.exact and swap.consistent and swap.swaps == [("GpuClustering", "GpuPacking")]
    # BestFit 7.14±0.14 vs FGD 4.77±0.11: a real difference
    bad = ranking([comp("FGD", 7.5), comp("BestFit", 7.0)])
    assert not bad.exact and not bad.consistent
