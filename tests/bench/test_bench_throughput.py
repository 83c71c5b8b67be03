"""SchedulingThroughput as scheduler_perf's throughputCollector computes it, on synthetic bind times."""

from __future__ import annotations

import pytest

from kubesched.bench.measure import percentile, sample_throughput, throughput
from kubesched.bench.runner import BenchClock


def test_steady_rate_skips_the_first_tick_and_drops_the_tail():
    ts = [i / 100 for i in range(1, 1051)]  # 100 pods/s for 10.5 s
    samples = sample_throughput(ts, 0.0)
    assert len(samples) == 9  # ticks 2..10; tick 1 is skipped, 10..10.5 is never sampled
    assert samples == pytest.approx([100.0] * 9)
    tp = throughput(ts, 0.0)
    assert tp.average == pytest.approx(100.0)
    assert tp.perc50 == tp.perc99 == pytest.approx(100.0)
    assert tp.overall == pytest.approx(1050 / 10.5)
    assert tp.headline == tp.average


def test_empty_interval_repeats_the_next_sample():
    # tick1: 1 pod (skipped), tick2: +1 -> 1/s, tick3: none, tick4: +1 over 2 s -> 0.5/s twice
    samples = sample_throughput([0.5, 1.5, 3.5, 5.5], 0.0)
    assert samples == pytest.approx([1.0, 0.5, 0.5])
    tp = throughput([0.5, 1.5, 3.5, 5.5], 0.0)
    assert tp.average == pytest.approx(2 / 3)
    assert tp.perc50 == pytest.approx(0.5)  # sorted [0.5, 0.5, 1.0][ceil(1.5) - 1]
    assert tp.perc90 == pytest.approx(1.0)


def test_ticks_before_the_first_pod_are_ignored():
    # nothing until 2.5 s: the first tick seeing a pod (3) is the skipped one
    samples = sample_throughput([2.5, 3.2, 3.4, 3.6, 4.1, 5.0], 0.0)
    assert samples == pytest.approx([3.0, 2.0])


def test_start_offset_and_unsorted_input():
    ts = [100.0 + i / 10 for i in range(1, 41)]  # 10 pods/s from t=100
    assert sample_throughput(list(reversed(ts)), 100.0) == pytest.approx([10.0, 10.0, 10.0])


def test_nearest_rank_percentiles():
    s = [float(i) for i in range(1, 101)]
    assert [percentile(s, p) for p in (50, 90, 95, 99)] == [50.0, 90.0, 95.0, 99.0]
    s10 = [float(i) for i in range(1, 11)]
    assert [percentile(s10, p) for p in (50, 90, 95, 99)] == [5.0, 9.0, 10.0, 10.0]
    assert percentile([7.0], 50) == 7.0


def test_short_run_reports_the_whole_phase_rate():
    tp = throughput([0.1, 0.2, 0.4], 0.0)
    assert tp.samples == [] and tp.average is None and tp.perc99 is None
    assert tp.overall == pytest.approx(3 / 0.4)
    assert tp.headline == tp.overall
    none = throughput([], 0.0)
    assert none.overall is None and none.headline is None


def test_bench_clock_skips_idle_waits():
    clock = BenchClock()
    t = clock()
    clock.advance(t + 5.0)
    assert clock() >= t + 5.0 and clock.skipped >= 5.0 - 1e-3
    before = clock.skipped
    clock.advance(0.0)  # never backwards
    assert clock.skipped == before
