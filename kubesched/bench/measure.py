"""What the benchmark measures: scheduler_perf's throughput statistic (pods scheduled per
1-second sample, its percentiles) and the process's memory (peak and current RSS)."""

from __future__ import annotations

import math
import resource
import sys
from collections.abc import Sequence
from dataclasses import dataclass

SAMPLE_INTERVAL = 1.0  # throughputSampleInterval
#: A run with fewer 1-second samples than this also reports pods/s over the whole phase as the
#: figure to read (the percentiles of two or three samples say little).
MIN_SAMPLES = 3


# ---- the statistic ---------------------------------------------------------------------------
@dataclass
class Throughput:
    """SchedulingThroughput (pods/s) as scheduler_perf reports it, plus the whole-phase rate."""

    average: float | None
    perc50: float | None
    perc90: float | None
    perc95: float | None
    perc99: float | None
    samples: list[float]
    overall: float | None  # measured pods / (last bind - phase start)

    @property
    def headline(self) -> float | None:
        """The figure compared with the threshold: Average, or the overall rate for a short run."""
        if len(self.samples) >= MIN_SAMPLES or self.overall is None:
            return self.average
        return self.overall


def percentile(sorted_samples: Sequence[float], p: int) -> float:
    """scheduler_perf's nearest-rank percentile: ``s[ceil(len*p/100) - 1]``."""
    n = len(sorted_samples)
    return sorted_samples[max(math.ceil(n * p / 100) - 1, 0)]


def sample_throughput(
    timestamps: Sequence[float], start: float, interval: float = SAMPLE_INTERVAL
) -> list[float]:
    """throughputCollector.run replayed on recorded bind times.

    A ticker fires every ``interval`` from ``start`` (when the measured op began). Ticks before
    the first scheduled pod are ignored; the first tick that sees one is skipped (an outlier:
    pod creation and sampling start independently). Each later tick records
    ``new pods / time since the last recorded tick``; a tick with no new pod records nothing
    but the next recorded value is repeated for it, so percentiles weigh every interval. The
    collector stops when the last measured pod is scheduled: the partial interval after the last
    tick is dropped.
    """
    if not timestamps:
        return []
    ts = sorted(timestamps)
    end = ts[-1]
    n_ticks = int((end - start) // interval)
    samples: list[float] = []
    started = False
    last_count = 0
    last_tick = start
    skipped = 0
    i = 0
    for k in range(1, n_ticks + 1):
        tick = start + k * interval
        while i < len(ts) and ts[i] <= tick:
            i += 1
        scheduled = i
        if scheduled == 0:
            continue
        if not started:
            started = True
            last_count, last_tick = scheduled, tick
            continue
        new = scheduled - last_count
        if new == 0:
            skipped += 1
            continue
        rate = new / (tick - last_tick)
        samples.extend([rate] * (skipped + 1))
        last_count, last_tick, skipped = scheduled, tick, 0
    return samples


def throughput(timestamps: Sequence[float], start: float, interval: float = SAMPLE_INTERVAL) -> Throughput:
    """Average and nearest-rank percentiles of the 1-second samples (None when there are none)."""
    samples = sample_throughput(timestamps, start, interval)
    overall = None
    if timestamps:
        span = max(timestamps) - start
        overall = len(timestamps) / span if span > 0 else None
    if not samples:
        return Throughput(None, None, None, None, None, [], overall)
    s = sorted(samples)
    return Throughput(
        sum(s) / len(s),
        percentile(s, 50),
        percentile(s, 90),
        percentile(s, 95),
        percentile(s, 99),
        samples,
        overall,
    )


# ---- memory ----------------------------------------------------------------------------------
def reset_peak_rss() -> None:
    """Start a fresh peak (Linux: clear_refs 5 resets VmHWM); elsewhere the process peak stays."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def peak_rss_mib() -> float:
    """Peak resident set size since the last reset, in MiB (getrusage's ru_maxrss)."""
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / (1024 * 1024) if sys.platform == "darwin" else r / 1024


def current_rss_mib() -> float | None:
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * resource.getpagesize() / (1024 * 1024)


