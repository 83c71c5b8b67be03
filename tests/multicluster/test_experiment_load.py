"""The edge-cloud experiment's load settings: a window of the trace (the busiest, or from a given
day), arrival compression, their flags, and the utilisation measured while pods arrive."""

from __future__ import annotations

import json
import math

import pytest

from kubesched.cli import main
from kubesched.multicluster.experiment.window import DAY, busiest_start, window_indices


def test_the_busiest_window_is_the_heaviest_and_the_earliest_of_equals():
    arrival = [0.0, 1.0, 2.0, 10.0, 11.0, 30.0, 31.0]
    weight = [1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0]
    # windows of 3: [0,3) weighs 3, [10,13) 4, [30,33) 4: the first of the two heaviest
    assert busiest_start(arrival, weight, 3.0) == 10.0
    # the end is open: [1, 11) holds 1, 2 and 10 (weight 4), not 11
    assert window_indices(arrival, 1.0, 10.0) == [1, 2, 3]
    # unsorted input is the same input
    order = [6, 0, 4, 2, 5, 1, 3]
    assert busiest_start([arrival[i] for i in order], [weight[i] for i in order], 3.0) == 10.0
    # a longer window takes in more: [0, 12) weighs 7
    assert busiest_start(arrival, weight, 12.0) == 0.0
    assert busiest_start([], [], 5.0) == 0.0


def test_a_window_replays_its_pods_from_its_start():
    from kubesched.multicluster.experiment.run import prepare
    from kubesched.multicluster.experiment.scenario import Scenario
    from kubesched.sim.openb import load_openb

    wl = load_openb("default", "all")
    t0 = min(wl.arrival)
    start, days = 140.0, 0.25
    sc = Scenario(time_scale=500, window_days=days, window_start_days=start)
    prep = prepare(sc)
    want = [p.name for p, a in zip(wl.pods, wl.arrival, strict=True) if t0 + start * DAY <= a < t0 + (start + days) * DAY]
    assert sorted(p.name for p in prep.pods) == sorted(want) and len(want) > 20
    assert prep.window_start == pytest.approx(start * DAY)
    # arrivals from the window's start, compressed 500 times
    assert 0 <= min(prep.arrival) and max(prep.arrival) < days * DAY / 500
    by_name = dict(zip((p.name for p in wl.pods), wl.arrival, strict=True))
    p0 = prep.pods[0]
    assert prep.arrival[0] == pytest.approx((by_name[p0.name] - t0 - start * DAY) / 500)


def _simulate(tmp_path, *flags: str) -> list[str]:
    return ["multicluster", "simulate", *flags, "--seeds", "0", "--out-dir", str(tmp_path / "o")]


@pytest.mark.parametrize(
    "flags,message",
    [
        (["--window", "0"], "--window: must be a positive number of days, got 0"),
        (["--window", "nan"], "--window: must be a positive number of days, got nan"),
        (["--window-start", "3"], "--window-start: needs --window (the window's length)"),
        (["--window", "2", "--window-start", "-1"], "--window-start: must be a number of days, 0 or more, got -1"),
        (["--window", "1", "--window-start", "50"],
         "--window-start: no pod of the trace arrives in days 50 to 51 (it spans 149.3 days)"),
        (["-k", "inf"], "--time-scale: must be a positive number, got inf"),
        (["--time-scale", "0"], "--time-scale: must be a positive number, got 0"),
    ],
)
def test_bad_load_flags_are_one_line(tmp_path, capsys, flags, message):
    rc = main(_simulate(tmp_path, *flags))
    assert (rc, capsys.readouterr().err) == (2, f"kubesched: error: {message}\n")
    assert not (tmp_path / "o").exists()  # refused before anything ran


def test_a_scenario_files_window_is_checked_in_the_file(tmp_path, capsys):
    f = tmp_path / "s.yaml"
    f.write_text("kind: EdgeCloudScenario\nwindowDays: 1\nwindowStartDays: 50\n")
    assert main(_simulate(tmp_path, "--scenario", str(f))) == 2
    assert capsys.readouterr().err == (f"kubesched: error: {f}: windowStartDays: no pod of the trace arrives in days 50 "
                                       "to 51 (it spans 149.3 days)\n")
    f.write_text("kind: EdgeCloudScenario\nwindowStartDays: 5\n")
    assert main(_simulate(tmp_path, "--scenario", str(f))) == 2
    assert capsys.readouterr().err == (f"kubesched: error: {f}: windowStartDays: a window start needs a window length "
                                       "(windowDays, --window)\n")


def test_simulate_reports_its_window(tmp_path, capsys):
    rc = main(_simulate(tmp_path, "--window", "0.1", "-k", "2000", "--limit", "40", "--modes", "collaborative",
                        "--no-plots", "-o", "json"))
    doc = json.loads(capsys.readouterr().out)
    window = doc["scenario"]["window"]
    assert rc == 0 and window["busiest"] and window["days"] == 0.1 and window["pods"] > 40
    assert 0 < window["startDays"] < 149.4 and doc["scenario"]["timeScale"] == 2000
    assert f"the busiest window of 0.1 days from day {window['startDays']:.2f}" in doc["scenario"]["description"]
    assert doc["aggregate"]["collaborative"]["gpu_util_arriving_pct.edge"]["n"] == 1


def test_a_run_that_ends_at_its_last_arrival_measures_the_same_both_ways():
    """Without class timeouts the run ends at the last arrival: the utilisation while pods arrive
    is then the whole run's."""
    from dataclasses import replace

    from kubesched.multicluster.experiment.metrics import run_metrics
    from kubesched.multicluster.experiment.run import prepare, run
    from kubesched.multicluster.experiment.scenario import DEFAULT_SITES, Scenario

    small = tuple(replace(s, share=0.015 if s.tier == "edge" else 0.05) for s in DEFAULT_SITES)
    prep = prepare(Scenario(sites=small, time_scale=2000, qos_classes={}), limit=150)
    assert prep.end == max(prep.arrival)
    m = run_metrics(prep, run(prep, "isolated", 0))
    assert m["gpu_util_pct"]["edge"] > 1
    for res in ("gpu", "cpu"):
        for tier in ("edge", "overall"):
            assert m[f"{res}_util_arriving_pct"][tier] == pytest.approx(m[f"{res}_util_pct"][tier])
    # with the hour of timeouts after it, the drain no longer counts
    prep = prepare(Scenario(sites=small, time_scale=2000), limit=150)
    m = run_metrics(prep, run(prep, "isolated", 0))
    assert m["gpu_util_arriving_pct"]["edge"] != pytest.approx(m["gpu_util_pct"]["edge"])
    assert math.isfinite(m["gpu_util_arriving_pct"]["edge"])


def test_busy_names_the_measured_regime_and_the_flags_override_it(tmp_path, capsys):
    rc = main(_simulate(tmp_path, "--busy", "-k", "2000", "--limit", "20", "--modes", "isolated", "--no-plots", "-o", "json"))
    sc = json.loads(capsys.readouterr().out)["scenario"]
    assert rc == 0 and sc["timeScale"] == 2000 and sc["window"]["days"] == 14 and sc["window"]["busiest"]
    assert sc["window"]["startDays"] == pytest.approx(135.22, abs=0.01)  # the 14 busiest days: 135.2 to 149.2
    rc = main(_simulate(tmp_path, "--busy", "--limit", "20", "--modes", "isolated", "--no-plots", "-o", "json"))
    assert rc == 0 and json.loads(capsys.readouterr().out)["scenario"]["timeScale"] == 500
