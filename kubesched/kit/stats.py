"""Statistics over seeds: mean ± sd, quartiles, the standard error of a difference of means, and the
paired tests (Student's paired t-test and the Wilcoxon signed-rank test, from scipy).

Every experiment reads its figures here, so "mean ± sd" means the same everywhere: the mean and
the sample standard deviation (``ddof=1``, as pandas' ``std``) of the finite values, unless a
scenario asks for another ``ddof``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np


def finite(values: Iterable[Any]) -> np.ndarray:
    """The values that are numbers and finite (None and NaN mean "no value for this seed")."""
    return np.asarray([v for v in values if v is not None and math.isfinite(v)], np.float64)


@dataclass(frozen=True)
class Stats:
    n: int
    mean: float
    sd: float  # sample sd (ddof=1); NaN with one value
    median: float
    q25: float
    q75: float
    low: float
    high: float


def stats_of(values: Iterable[Any]) -> Stats:
    """Statistics of the finite values; NaN everywhere (n 0) when there are none."""
    a = finite(values)
    if a.size == 0:
        nan = math.nan
        return Stats(0, nan, nan, nan, nan, nan, nan, nan)
    q25, med, q75 = np.percentile(a, [25, 50, 75])
    sd = float(a.std(ddof=1)) if a.size > 1 else math.nan
    return Stats(int(a.size), float(a.mean()), sd, float(med), float(q25), float(q75), float(a.min()), float(a.max()))


def mean_sd(values: Iterable[Any], ddof: int = 1) -> tuple[float | None, float | None]:
    """(mean, sd) of the finite values: None for the mean without any, None for the sd with no
    more than ``ddof`` of them."""
    a = finite(values)
    mean = float(a.mean()) if a.size else None
    sd = float(a.std(ddof=ddof)) if a.size > ddof else None
    return mean, sd


def se_difference(sd_a: float, n_a: int, sd_b: float, n_b: int) -> float:
    """The standard error of the difference of two independent means."""
    return math.sqrt(sd_a**2 / n_a + sd_b**2 / n_b)


@dataclass(frozen=True)
class Paired:
    """The paired comparison of two per-seed series ``x`` and ``y`` (``d = x - y``)."""

    n: int
    mean_difference: float
    sd_difference: float | None  # ddof 1; None with one pair
    lower: int  # pairs with x < y
    equal: int
    higher: int
    t_test_p: float | None  # paired t-test; None when every difference is the same
    wilcoxon_p: float | None  # two-sided, zero differences dropped; None when every difference is 0


def paired(x: Iterable[float], y: Iterable[float], decimals: int | None = None) -> Paired:
    """The paired tests of ``x`` against ``y``. ``decimals`` rounds the differences first, so
    that float noise between two equal runs does not count as a difference."""
    from scipy import stats

    d = np.asarray(list(x), np.float64) - np.asarray(list(y), np.float64)
    if decimals is not None:
        d = np.round(d, decimals)
    t = stats.ttest_1samp(d, 0.0) if d.size > 1 and np.any(d != d[0]) else None
    w = stats.wilcoxon(d, zero_method="wilcox", alternative="two-sided") if np.any(d != 0) else None
    lower, higher = int((d < 0).sum()), int((d > 0).sum())
    return Paired(
        n=int(d.size),
        mean_difference=float(d.mean()),
        sd_difference=float(d.std(ddof=1)) if d.size > 1 else None,
        lower=lower,
        equal=int(d.size) - lower - higher,
        higher=higher,
        t_test_p=None if t is None else float(t.pvalue),
        wilcoxon_p=None if w is None else float(w.pvalue),
    )
