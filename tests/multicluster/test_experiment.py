"""The edge-cloud experiment: the driven simulator equals `kubesched simulate`, each mode keeps its
rules, the CLI writes its report; small slices of the openb trace keep this quick."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from kubesched.cli import main
from kubesched.multicluster.experiment.metrics import run_metrics
from kubesched.multicluster.experiment.run import prepare, run
from kubesched.multicluster.experiment.scenario import Scenario
from kubesched.multicluster.network import azure_table_path


@pytest.fixture(scope="module")
def prep():
    from dataclasses import replace

    from kubesched.multicluster.experiment.scenario import DEFAULT_SITES

    small = tuple(replace(s, share=0.015 if s.tier == "edge" else 0.05) for s in DEFAULT_SITES)
    return prepare(Scenario(sites=small, time_scale=2000), limit=400)


def test_a_driven_engine_replays_exactly_what_simulate_replays():
    from kubesched.app import build_config
    from kubesched.plugins import in_tree_registry
    from kubesched.sim import simulate
    from kubesched.sim.engine import Engine, SimOptions
    from kubesched.sim.openb import load_openb
    from kubesched.sim.runner import result_of
    from kubesched.sim.workload import Workload

    wl = load_openb("default", "gpu").head(150)
    wl = Workload(wl.nodes[:12], wl.pods, [a / 2000 for a in wl.arrival], wl.duration, source="slice")
    reg = in_tree_registry()
    cfg = build_config(None, reg)
    ref = simulate(cfg, wl, seed=3, registry=reg, record_events=False)
    eng = Engine(cfg, wl, reg, SimOptions(seed=3, record_events=False))
    end = max(a + d for a, d in zip(wl.arrival, wl.duration, strict=True) if d is not None)
    eng.open(min(wl.arrival), max(end, max(wl.arrival)))
    for i in np.argsort(np.asarray(wl.arrival), kind="stable"):
        eng.run_until(wl.arrival[i])
        eng.submit(int(i))
    eng.close(math.inf)
    got = result_of(eng)
    assert got.pods["node"] == ref.pods["node"]
    assert got.pods["bind_time"] == ref.pods["bind_time"]
    for res in ("cpu", "memory", "gpu"):
        assert got.summary["allocation_pct"][res]["mean"] == pytest.approx(ref.summary["allocation_pct"][res]["mean"])


def test_each_mode_keeps_its_rules(prep):
    sc = prep.scenario
    sites = list(sc.sites)
    outs = {m: run(prep, m, seed=1) for m in ("isolated", "cloud-only", "collaborative")}
    # the same users everywhere: the seed draws the homes
    assert all(np.array_equal(outs["isolated"].home, o.home) for o in outs.values())
    iso = outs["isolated"]
    assert all(iso.site[i] in (-1, iso.home[i]) for i in range(len(prep.pods)))
    # cloud-only: exactly the pods whose class budget the cloud exceeds fail for the budget
    cloud = sc.cloud[0]
    from kubesched.multicluster.network import LatencyTable

    table = LatencyTable.read(azure_table_path())
    over = []
    for i in range(len(prep.pods)):
        c = sc.qos_classes.get(prep.qos[i])
        rtt = sc.access_rtt_ms + table.between(sites[iso.home[i]].region, cloud.region)
        over.append(c is not None and c.budget_ms is not None and rtt > c.budget_ms)
    assert [r == "budget" for r in outs["cloud-only"].reason] == over
    assert any(over)
    # collaborative: never outside the budget, mostly at home, and no worse than isolated here
    m = {k: run_metrics(prep, o) for k, o in outs.items()}
    assert m["collaborative"]["budget_violations"] == 0 and m["cloud-only"]["budget_violations"] == 0
    assert m["collaborative"]["failure_pct"] <= m["isolated"]["failure_pct"]
    assert m["collaborative"]["latency_ms"]["mean"] < m["cloud-only"]["latency_ms"]["mean"]
    placed = m["collaborative"]["placed_at"]
    assert placed["home_edge"] > placed["other_edge"] + placed["cloud"]


def test_simulate_cli_writes_the_report(tmp_path, capsys):
    from kubesched.multicluster.experiment.report import draw

    out = tmp_path / "exp"
    scenario = tmp_path / "small.yaml"
    scenario.write_text(
        "kind: EdgeCloudScenario\ntimeScale: 2000\nsites:\n"
        "- {name: edge-a, region: Japan East, tier: edge, share: 0.01, users: 2}\n"
        "- {name: edge-b, region: Korea Central, tier: edge, share: 0.01, users: 1}\n"
        "- {name: cloud, region: West US 2, tier: cloud, share: 0.04}\n"
    )
    rc = main(["multicluster", "simulate", "--scenario", str(scenario), "--limit", "100", "--seeds", "0-1", "--out-dir", str(out),
               "--no-plots", "-o", "json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["seeds"] == [0, 1] and set(doc["aggregate"]) == {"isolated", "cloud-only", "collaborative"}
    assert [s["name"] for s in doc["scenario"]["sites"]] == ["edge-a", "edge-b", "cloud"]
    assert {t["metric"] for t in doc["tests"]} >= {"failure_pct", "gpu_util_pct.edge", "latency_ms.mean"}
    for f in ("runs.csv", "summary.json", "report.html"):
        assert (out / f).is_file()
    html = (out / "report.html").read_text()
    assert "Against the guide" in html and "Paired tests" in html
    assert len((out / "runs.csv").read_text().strip().splitlines()) == 1 + 6
    runs = json.loads((out / "summary.json").read_text())["runs"]
    images = draw(runs, {"collaborative": {"edge-a": ([0.0, 3600.0], [1.0, 2.0])}}, ["isolated", "cloud-only", "collaborative"], out)
    assert [p.name for p in images.values()] == ["comparison.png", "clusters.png"]
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in images.values())


def test_bad_scenario_file(tmp_path, capsys):
    f = tmp_path / "s.yaml"
    f.write_text("kind: EdgeCloudScenario\nsites:\n- {name: a, region: Japan East, tier: fog}\n")
    rc = main(["multicluster", "simulate", "--scenario", str(f), "--out-dir", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and err == f'kubesched: error: {f}: sites[0].tier: must be "edge" or "cloud"\n'


@pytest.mark.parametrize(
    "text,message",
    [
        # the fuzz campaign of issue 22: each was a traceback, or a line without the file
        ("splitSeed: .inf", "splitSeed: expected an integer"),
        ("splitSeed: 1.5", "splitSeed: expected an integer"),
        ("accessRttMs: .inf", "accessRttMs: must be a number at least 0"),
        ("classes: {LS: {timeoutSeconds: .nan}}", "classes.LS.timeoutSeconds: must be a number at least 0"),
        ("trace: no-such-trace", 'trace: "no-such-trace": no such file, and not a shipped openb pod list'),
        ("nodes: " + "n" * 300, "nodes: "),
    ],
)
def test_bad_scenario_fields_name_the_file(tmp_path, capsys, text, message):
    f = tmp_path / "s.yaml"
    f.write_text(f"kind: EdgeCloudScenario\n{text}\n")
    rc = main(["multicluster", "simulate", "--scenario", str(f), "--limit", "10", "--seeds", "0", "--out-dir", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith(f"kubesched: error: {f}: {message}") and err.count("\n") == 1


def test_a_scenario_that_is_no_mapping_names_the_file(tmp_path, capsys):
    f = tmp_path / "s.yaml"
    f.write_text("just a string\n")
    rc = main(["multicluster", "simulate", "--scenario", str(f), "--out-dir", str(tmp_path / "o")])
    assert rc == 2 and capsys.readouterr().err == f"kubesched: error: {f}: document: expected an object, got str\n"


def test_a_scenario_without_classes_runs(tmp_path, capsys):
    # every pod then falls to the default class (none): the run's end used max() of no timeouts
    f = tmp_path / "s.yaml"
    f.write_text("kind: EdgeCloudScenario\ntimeScale: 2000\nclasses: {}\n")
    rc = main(["multicluster", "simulate", "--scenario", str(f), "--limit", "20", "--seeds", "0", "--modes", "collaborative",
               "--out-dir", str(tmp_path / "o"), "--no-plots", "-o", "json"])
    assert rc == 0 and json.loads(capsys.readouterr().out)["seeds"] == [0]


SMALL_SCENARIO = (
    "kind: EdgeCloudScenario\ntimeScale: 2000\nsites:\n"
    "- {name: edge-a, region: Japan East, tier: edge, share: 0.01, users: 2}\n"
    "- {name: edge-b, region: Korea Central, tier: edge, share: 0.01, users: 1}\n"
    "- {name: cloud, region: West US 2, tier: cloud, share: 0.04}\n"
)

# a fresh interpreter where scipy cannot be imported, as after `pip install kubesched`; any run
# that starts fails the test (the check must come before the first)
WITHOUT_SCIPY = """
import sys
sys.modules["scipy"] = sys.modules["scipy.stats"] = None
import kubesched.multicluster.experiment.run as r
def no_run(*a, **k):
    raise SystemExit("a run started before the dependency check")
r.run = no_run
from kubesched.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_simulate_without_scipy_refuses_before_any_run(tmp_path):
    import subprocess
    import sys

    f = tmp_path / "s.yaml"
    f.write_text(SMALL_SCENARIO)
    out = tmp_path / "o"
    argv = ["multicluster", "simulate", "--scenario", str(f), "--limit", "20", "--seeds", "0-1", "-d", str(out)]
    proc = subprocess.run([sys.executable, "-c", WITHOUT_SCIPY, *argv], capture_output=True, text=True)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == ("kubesched: error: multicluster simulate: needs scipy (the paired tests over seeds): "
                           "pip install 'kubesched[multicluster]'\n")
    assert not out.exists()
    # one seed has no paired test: it runs without scipy (and so reaches the stubbed run)
    proc = subprocess.run([sys.executable, "-c", WITHOUT_SCIPY, *argv[:-3], "0", "-d", str(out)], capture_output=True,
                          text=True)
    assert "a run started before the dependency check" in proc.stderr


def test_simulate_writes_each_run_as_it_finishes(tmp_path, capsys, monkeypatch):
    """A run that fails leaves the runs finished before it on disk, and a line per finished run."""
    import kubesched.multicluster.experiment.run as run_module

    real = run_module.run

    def fails_on_collaborative(prep, mode, seed, **kw):  # noqa: ANN001, ANN202
        if mode == "collaborative":
            raise RuntimeError("member lost")
        return real(prep, mode, seed, **kw)

    monkeypatch.setattr(run_module, "run", fails_on_collaborative)
    f = tmp_path / "s.yaml"
    f.write_text(SMALL_SCENARIO)
    out = tmp_path / "o"
    with pytest.raises(RuntimeError, match="member lost"):
        main(["multicluster", "simulate", "--scenario", str(f), "--limit", "60", "--seeds", "0", "--workers", "1",
              "--modes", "isolated,cloud-only,collaborative", "-d", str(out), "--no-plots", "--no-progress"])
    assert sorted(p.name for p in (out / "runs").iterdir()) == ["cloud-only-seed0.json", "isolated-seed0.json"]
    rec = json.loads((out / "runs" / "isolated-seed0.json").read_text())
    assert (rec["mode"], rec["seed"], rec["pods"]) == ("isolated", 0, 60)
    rows = (out / "runs.csv").read_text().strip().splitlines()
    assert [r.split(",")[:2] for r in rows] == [["mode", "seed"], ["isolated", "0"], ["cloud-only", "0"]]
    err = capsys.readouterr().err
    assert err.startswith("[1/3] isolated seed 0: failures ") and "\n[2/3] cloud-only seed 0: " in err


def test_simulate_draws_the_kits_bar_with_an_eta(tmp_path, capsys, monkeypatch):
    from rich.console import Console

    monkeypatch.setattr(Console, "is_terminal", property(lambda self: True))
    f = tmp_path / "s.yaml"
    f.write_text(SMALL_SCENARIO)
    rc = main(["multicluster", "simulate", "--scenario", str(f), "--limit", "20", "--seeds", "0", "--workers", "1",
               "--modes", "isolated,cloud-only", "-d", str(tmp_path / "o"), "--no-plots", "-o", "json"])
    err = capsys.readouterr().err
    assert rc == 0 and "edge–cloud runs" in err and "2/2" in err and "0:00:00" in err
    assert "[1/2]" not in err  # the bar, not the lines
