"""Sites that go offline mid-run and come back: pods lost with them (isolated, cloud-only) or
failed over (collaborative), the event flags and scenario fields."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from kubesched.cli import main
from kubesched.multicluster.experiment.outage import Outage, parse_flag
from kubesched.multicluster.experiment.run import prepare, run
from kubesched.multicluster.experiment.scenario import DEFAULT_SITES, Scenario
from kubesched.sim.states import EVICTED

JAPAN = "edge-japan-east"


@pytest.fixture(scope="module")
def prep():
    # small edges, busy enough that the Japanese one holds running pods when it goes
    small = tuple(replace(s, share=0.01 if s.tier == "edge" else 0.05) for s in DEFAULT_SITES)
    base = prepare(Scenario(sites=small, time_scale=2000), limit=300)
    last = max(base.arrival)
    outage = Outage(JAPAN, round(0.4 * last), round(0.7 * last))
    return replace(base, scenario=replace(base.scenario, outages=(outage,)))


def _bound_during(out, site: int, outage: Outage) -> list[int]:
    return [i for i in range(len(out.site)) if out.site[i] == site and outage.offline < out.bind_time[i] < outage.back]


def test_isolated_loses_the_pods_running_on_an_offline_site(prep):
    outage = prep.scenario.outages[0]
    k = [s.name for s in prep.scenario.sites].index(JAPAN)
    out = run(prep, "isolated", 0)
    eng = out.engines[JAPAN]
    lost = [i for i in range(len(prep.pods)) if eng.state[i] == EVICTED]
    assert lost  # some were running at the offline time
    assert all(out.reason[i] == "offline" and np.isnan(out.bind_time[i]) for i in lost)
    assert all(eng.end_time[i] == outage.offline for i in lost)
    # nothing is placed there while it is away, its users' pods wait for it and some run after
    assert _bound_during(out, k, outage) == []
    assert any(out.site[i] == k and out.bind_time[i] >= outage.back for i in range(len(prep.pods)))
    # the same run without the outage loses nothing
    calm = run(replace(prep, scenario=replace(prep.scenario, outages=())), "isolated", 0)
    assert "offline" not in calm.reason


def test_pods_waiting_for_an_offline_site_run_when_it_is_back(prep):
    from kubesched.multicluster.network import LatencyClass

    # every class waits an hour: the pods of Japan's users that arrive while it is away wait there
    patient = {q: LatencyClass(c.name, c.budget_ms, 3600.0) for q, c in prep.scenario.qos_classes.items()}
    p = replace(prep, scenario=replace(prep.scenario, qos_classes=patient))
    outage = p.scenario.outages[0]
    out = run(p, "isolated", 0)
    waited = [i for i in range(len(p.pods)) if out.home[i] == 0 and outage.offline <= p.arrival[i] < outage.back]
    assert waited and all(out.bind_time[i] >= outage.back for i in waited if not np.isnan(out.bind_time[i]))
    assert min(out.bind_time[i] for i in waited) == outage.back  # placed the moment the nodes return


def test_collaborative_fails_the_pods_over_and_avoids_the_site_while_it_is_away(prep):
    from kubesched.multicluster.experiment.metrics import run_metrics

    outage = prep.scenario.outages[0]
    k = [s.name for s in prep.scenario.sites].index(JAPAN)
    out = run(prep, "collaborative", 0)
    eng = out.engines[JAPAN]
    evicted = [i for i in range(len(prep.pods)) if eng.state[i] == EVICTED]
    assert evicted and out.failovers >= len(evicted)
    # every evicted pod was decided again: placed elsewhere, back home after the outage, or timed out
    for i in evicted:
        assert out.reason[i] != "offline"
        assert out.reason[i] == "timeout" or out.site[i] != k or out.bind_time[i] >= outage.back
    assert any(out.site[i] not in (-1, k) and out.bind_time[i] >= outage.offline for i in evicted)
    assert _bound_during(out, k, outage) == []
    m = run_metrics(prep, out)
    assert m["failed_offline_pct"] == 0 and m["run"]["failovers"] == out.failovers
    assert m["budget_violations"] == 0
    # the site takes pods again once it is back
    assert any(out.site[i] == k and out.bind_time[i] >= outage.back for i in range(len(prep.pods)))


def test_outage_flags_and_fields(tmp_path, capsys):
    assert parse_flag("edge-japan-east:1h:1h30m") == Outage(JAPAN, 3600.0, 5400.0)
    assert parse_flag("cloud:90") == Outage("cloud", 90.0, None)
    f = tmp_path / "s.yaml"
    f.write_text("kind: EdgeCloudScenario\ntimeScale: 2000\noutages:\n- {site: edge-japan-east, offline: 60, back: 2m}\n")
    rc = main(["multicluster", "simulate", "--scenario", str(f), "--limit", "40", "--seeds", "0", "--modes", "isolated",
               "--out-dir", str(tmp_path / "o"), "--no-plots", "-o", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["scenario"]["outages"] == [{"site": JAPAN, "offline": 60.0, "back": 120.0}]


@pytest.mark.parametrize(
    "flags,message",
    [
        (["--outage", "edge-japan-east"], '--outage: expected SITE:OFFLINE[:BACK] (e.g. edge-japan-east:1h:1h30m), got '
                                          '"edge-japan-east"'),
        (["--outage", "edge-mars:1h:2h"], '--outage: no site named "edge-mars" (sites: edge-japan-east, '
                                          'edge-korea-central, edge-east-asia, edge-southeast-asia, cloud-west-us-2)'),
        (["--outage", "edge-japan-east:2h:1h"], "--outage: edge-japan-east comes back (3600 s) before it goes offline "
                                                "(7200 s)"),
        (["--outage", "edge-japan-east:soon"], "--outage: expected seconds or a duration such as 90m or 1h30m, 0 or "
                                               "more, got 'soon'"),
        (["--outage", "edge-japan-east:1h:3h", "--outage", "edge-japan-east:2h:4h"],
         "--outage: two outages of edge-japan-east overlap (offline at 3600 s and 7200 s)"),
    ],
)
def test_bad_outage_flags_are_one_line(tmp_path, capsys, flags, message):
    rc = main(["multicluster", "simulate", *flags, "--seeds", "0", "--out-dir", str(tmp_path / "o")])
    assert (rc, capsys.readouterr().err) == (2, f"kubesched: error: {message}\n")


@pytest.mark.parametrize(
    "text,message",
    [
        ("outages: [{site: nowhere, offline: 1}]", 'outages[0]: no site named "nowhere"'),
        ("outages: [{site: edge-japan-east}]", "outages[0]: offline is required"),
        ("outages: [{site: edge-japan-east, offline: -1}]", "outages[0].offline: expected seconds"),
        ("outages: [{site: edge-japan-east, offline: 1, when: 2}]", "outages[0].when: unknown field"),
        ("outages: {site: edge-japan-east}", "outages: expected a list"),
    ],
)
def test_bad_outage_fields_name_the_file(tmp_path, capsys, text, message):
    f = tmp_path / "s.yaml"
    f.write_text(f"kind: EdgeCloudScenario\n{text}\n")
    rc = main(["multicluster", "simulate", "--scenario", str(f), "--seeds", "0", "--out-dir", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith(f"kubesched: error: {f}: {message}") and err.count("\n") == 1
