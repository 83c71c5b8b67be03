"""Studies on the packing case, where the better weights are known (see tune_helpers)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from tune_helpers import pack_evaluator, settings, write_pack_case

from kubesched.app import build_registry
from kubesched.cli import main
from kubesched.config import load_config
from kubesched.sim.runner import simulate
from kubesched.sim.workload import from_manifests
from kubesched.tune.study import run_study


def _trace(outcome) -> list[tuple]:  # noqa: ANN001
    return [
        (r.number, r.state, tuple(sorted(r.assignment.weights.items())), r.values) for r in outcome.records
    ]


def test_cli_study_beats_the_baseline_and_best_config_reproduces_it(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    cluster, base = write_pack_case(tmp_path)
    out = tmp_path / "out"
    rc = main(
        [
            "tune",
            "-f",
            str(cluster),
            "--config",
            str(base),
            "--mode",
            "arrival",
            "--metric",
            "pods.failed",
            "--trials",
            "10",
            "--sim-seeds",
            "1",
            "--eval-seeds",
            "4,5",
            "--out-dir",
            str(out),
            "--no-progress",
        ]
    )
    assert rc == 0
    printed = capsys.readouterr().out
    assert "pods.failed" in printed and "BestFitScore" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["baseline"]["values"] == [2.0]  # spreading strands both big pods
    assert summary["best"]["values"] == [0.0]
    assert summary["held_out"]["best"]["values"]["pods.failed"] == 0.0
    assert sorted(summary["held_out"]["best"]["per_seed"]) == ["4", "5"]
    # best-config.yaml is a ready-to-use config: it loads cleanly and runs the best weights
    reg = build_registry([])
    cfg = load_config(str(out / "best-config.yaml"), reg.points_of)
    assert cfg.warnings == []
    assert cfg.profiles[0].score_weights() == summary["best"]["weights"]
    again = simulate(cfg, from_manifests([str(cluster)]), mode="arrival", seed=1, registry=reg)
    assert again.summary["pods"]["failed"] == 0
    with (out / "trials.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 11 and rows[0]["baseline"] == "True" and rows[0]["weight.NodeResourcesFit"] == "5"
    assert list(rows[0])[:4] == ["number", "state", "baseline", "pods.failed"]
    assert (out / "tradeoff.png").stat().st_size > 10_000


def test_seeded_studies_repeat(tmp_path: Path) -> None:
    ev = pack_evaluator(tmp_path)
    a = run_study(ev, settings(seed=7))
    b = run_study(ev, settings(seed=7))
    c = run_study(ev, settings(seed=8))
    assert _trace(a) == _trace(b)
    assert _trace(a) != _trace(c)
    assert a.best.values == [0.0] and a.baseline.values == [2.0]
    assert a.records[0].baseline and a.records[0].number == 0  # the base config is trial 0


def test_parallel_jobs_repeat_too(tmp_path: Path) -> None:
    ev = pack_evaluator(tmp_path)
    a = run_study(ev, settings(seed=2, trials=4, jobs=2))
    b = run_study(ev, settings(seed=2, trials=4, jobs=2))
    assert _trace(a) == _trace(b) and len(a.records) == 5


def test_baseline_outside_the_space_is_reported_not_a_trial(tmp_path: Path) -> None:
    ev = pack_evaluator(tmp_path, weight_range="10-100")  # base weights 5 and 1 are outside
    out = run_study(ev, settings(trials=3))
    assert out.baseline.number == -1 and out.baseline.values == [2.0]
    assert [r.number for r in out.records] == [0, 1, 2]
    for r in out.records:
        assert all(10 <= w <= 100 for w in r.assignment.weights.values())


def test_timeout_stops_starting_trials(tmp_path: Path) -> None:
    out = run_study(pack_evaluator(tmp_path), settings(trials=50, timeout=1e-9))
    assert [r.baseline for r in out.records] == [True]


def test_two_metrics_give_a_pareto_front(tmp_path: Path) -> None:
    cluster, base = write_pack_case(tmp_path)
    out = tmp_path / "out"
    rc = main(
        [
            "tune",
            "-f",
            str(cluster),
            "--config",
            str(base),
            "--mode",
            "arrival",
            "--weight-range",
            "0-100",
            "--metric",
            "pods.failed,allocation_pct.cpu.mean",
            "--trials",
            "8",
            "--out-dir",
            str(out),
            "--no-progress",
        ]
    )
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text())
    front = [tuple(p["values"]) for p in summary["pareto"]]
    every = [
        tuple(float(r[m]) for m in ("pods.failed", "allocation_pct.cpu.mean"))
        for r in csv.DictReader((out / "trials.csv").open())
        if r["state"] == "COMPLETE"
    ]
    for f, cpu in front:  # nothing strictly dominates a front point (fewer failures, more CPU allocated)
        assert not any(g <= f and c >= cpu and (g, c) != (f, cpu) for g, c in every)
    assert tuple(summary["best"]["values"]) in front
    assert len(list((out / "pareto").glob("*.yaml"))) == len(front)
    assert (out / "tradeoff.png").exists()
