"""Paired statistics, the goal's verdict, the offline bound and `kubesched learn eval`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import wilcoxon

from kubesched.cli import main
from kubesched.experiment.protocol import gpu_capacity_milli
from kubesched.learn.bound import arrived_by, offline_bound
from kubesched.learn.data import Instance
from kubesched.learn.evaluate import goal, paired
from kubesched.learn.search import FGD_PARAMS, evaluate


def test_paired_counts_and_wilcoxon() -> None:
    fgd = np.array([4.7, 4.6, 4.8, 4.9, 4.5, 4.7, 4.6, 4.8, 4.7, 4.6])
    cand = fgd - np.array([0.1, 0.2, 0.05, 0.1, 0.0, 0.3, 0.1, -0.1, 0.2, 0.1])
    p = paired(cand, fgd)
    assert (p["wins"], p["ties"], p["losses"]) == (8, 1, 1)
    assert p["wilcoxon_p"] == pytest.approx(wilcoxon(np.round(cand - fgd, 6), zero_method="wilcox").pvalue)
    assert p["diff_mean"] == pytest.approx(-0.105)
    assert paired(fgd, fgd)["wilcoxon_p"] == 1.0


def _result(default_d: dict, other_diff: float) -> dict:
    return {
        "candidates": {"x": {}},
        "traces": {
            "default": {"paired": {"x": {"vs_FGD": default_d}}},
            "gpushare40": {"paired": {"x": {"vs_FGD": {"diff_mean": other_diff}}}},
        },
    }


def test_goal_needs_every_part() -> None:
    good = {"diff_mean": -0.1, "wilcoxon_p": 0.01, "wins": 9}
    assert goal(_result(good, 0.2))["x"]["met"]
    assert not goal(_result(good, 0.31))["x"]["met"]  # a variant worse by more than 0.3
    assert not goal(_result({**good, "wins": 7}, 0.0))["x"]["met"]
    g = goal(_result({**good, "wilcoxon_p": 0.2}, 0.0))["x"]
    assert not g["met"] and g["verdict"].startswith("parity")


def test_bound_is_below_what_fgd_reaches() -> None:
    inst = Instance("default", "gpu", max_nodes=40, max_pods=300)
    for seed in (0, 1):
        prep = inst.prepare(seed)
        b = offline_bound(prep, 100.0, time_limit=20)
        pods = arrived_by(prep, 100.0)
        assert b.pods == len(pods) and b.requested_milli <= gpu_capacity_milli(prep.nodes)
        assert 0.0 <= b.min_unallocated_pct <= evaluate(inst, FGD_PARAMS, seed)[0]
        assert b.max_allocated_milli <= b.requested_milli


def test_eval_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    search = tmp_path / "search.json"
    search.write_text(json.dumps({"chosen": {"params": {"weights": {"FGD": 3, "BestFit": 1}, "delta_scale": 500.0,
                                                          "tie_break": "order"}}, "cpu_seconds": 12.0}))
    out = tmp_path / "e"
    rc = main(["learn", "eval", "--max-nodes", "40", "--max-pods", "300", "--seeds", "100-101", "--workers", "1",
               "--search", str(search), "-d", str(out)])
    assert rc == 0
    assert {p.name for p in out.iterdir()} == {"result.json", "runs.csv", "summary.md", "eval.png"}
    res = json.loads((out / "result.json").read_text())
    pol = res["traces"]["default"]["policies"]
    assert set(pol) == {"FGD", "BestFit", "search"} and len(pol["FGD"]["values"]) == 2
    assert res["candidates"]["search"]["cpu_seconds"] == 12.0
    assert "search" in res["goal"] and "| FGD |" in capsys.readouterr().out


@pytest.mark.parametrize(
    "flags, msg",
    [
        (["--search", "missing.json"], "kubesched: error: missing.json: no such file"),
        (["--traces", "nope"], "kubesched: error: --traces: \"nope\": no such file"),
        (["--seeds", "5-1"], "kubesched: error: --seeds: empty range"),
        (["--bound", "0"], "kubesched: error: --bound: must be positive"),
    ],
)
def test_eval_bad_input(flags: list[str], msg: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["learn", "eval", *flags, "-d", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(msg) and err.count("\n") == 1, err
    assert not (tmp_path / "o").exists()


def test_eval_refuses_a_corrupt_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "m.npz"
    bad.write_bytes(b"not a zip")
    assert main(["learn", "eval", "--model", str(bad), "-d", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == f"kubesched: error: {bad}: not a readable .npz model (ValueError)\n"
