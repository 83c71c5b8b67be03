"""Seed statistics per (trace, policy, metric, level), and the comparison with the published numbers.

The "within the published spread" rule (protocol §8): the measured mean agrees when
``|measured - published| <= 2 * SE`` with ``SE = sqrt(sd_m^2/n_m + sd_p^2/n_p)`` (the standard error of
a difference of two means; with fewer than 2 measured seeds the published sd stands in for the
measured one), or when the measured mean lies inside the published 10-seed range (known for the
default trace at 100 %). Without a published sd only the difference is reported.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kubesched.experiment import published
from kubesched.experiment.runner import LEVELS, METRICS, RunRecord
from kubesched.kit.stats import Stats, se_difference, stats_of


def group(records: Iterable[RunRecord]) -> dict[tuple[str, str], list[RunRecord]]:
    """(trace, policy) -> records sorted by seed."""
    out: dict[tuple[str, str], list[RunRecord]] = {}
    for r in records:
        out.setdefault((r.trace, r.policy), []).append(r)
    return {k: sorted(v, key=lambda r: r.seed) for k, v in out.items()}


def aggregate(records: Iterable[RunRecord]) -> dict[tuple[str, str, str, int], Stats]:
    """(trace, policy, metric, level) -> Stats over seeds, for every level 0..130."""
    out: dict[tuple[str, str, str, int], Stats] = {}
    for (trace, policy), recs in group(records).items():
        for metric in METRICS:
            for lvl in LEVELS:
                out[(trace, policy, metric, lvl)] = stats_of(r.curves[metric][lvl] for r in recs)
    return out


@dataclass(frozen=True)
class Comparison:
    trace: str
    policy: str
    level: int
    measured: Stats
    published: published.Published
    diff: float  # measured mean - published mean
    se: float  # NaN when the published sd is unknown
    within_2se: bool | None  # None: no published sd
    in_range: bool | None  # None: no published range

    @property
    def within(self) -> bool | None:
        """Agreement by the §8 rule; None when neither an sd nor a range was published."""
        if self.within_2se is None and self.in_range is None:
            return None
        return bool(self.within_2se) or bool(self.in_range)


def compare_point(trace: str, policy: str, level: int, measured: Stats, pub: published.Published) -> Comparison:
    diff = measured.mean - pub.mean
    se, within_2se = math.nan, None
    if pub.sd is not None and measured.n > 0:
        sd_m = measured.sd if measured.n > 1 else pub.sd
        se = se_difference(sd_m, measured.n, pub.sd, pub.n)
        within_2se = abs(diff) <= 2 * se
    in_range = None
    if pub.low is not None and pub.high is not None:
        in_range = pub.low <= measured.mean <= pub.high
    return Comparison(trace, policy, level, measured, pub, diff, se, within_2se, in_range)


def compare(agg: dict[tuple[str, str, str, int], Stats], levels: Sequence[int] = (100, 130)) -> list[Comparison]:
    """Every measured unallocated-% point that has a published counterpart."""
    out = []
    for (trace, policy, metric, lvl), st in sorted(agg.items()):
        if metric != "unallocated" or lvl not in levels or st.n == 0:
            continue
        pub = published.unallocated(trace, policy, lvl) if policy in published.POLICIES else None
        if pub is not None:
            out.append(compare_point(trace, policy, lvl, st, pub))
    return out


@dataclass(frozen=True)
class Ranking:
    measured: list[str]  # best (least unallocated) first
    published: list[str]
    exact: bool
    #: every swapped pair is statistically indistinguishable in the paper (published gap <= 2 SE)
    consistent: bool
    swaps: list[tuple[str, str]]  # pairs ordered differently (measured order)


def ranking(comps: Sequence[Comparison]) -> Ranking:
    """Compare the policy order (by mean) of one trace at one level with the published order."""
    by_m = sorted(comps, key=lambda c: c.measured.mean)
    by_p = sorted(comps, key=lambda c: c.published.mean)
    pos = {c.policy: i for i, c in enumerate(by_p)}
    swaps: list[tuple[str, str]] = []
    consistent = True
    for i, a in enumerate(by_m):
        for b in by_m[i + 1 :]:
            if pos[a.policy] > pos[b.policy]:
                swaps.append((a.policy, b.policy))
                sa, sb = a.published.sd, b.published.sd
                if sa is None or sb is None:
                    consistent = False
                    continue
                gap = abs(a.published.mean - b.published.mean)
                if gap > 2 * se_difference(sa, a.published.n, sb, b.published.n):
                    consistent = False
    return Ranking([c.policy for c in by_m], [c.policy for c in by_p], not swaps, consistent, swaps)
