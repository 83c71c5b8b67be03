"""`kubesched learn eval`: the goal's verdict over every trace in one run, the share of FGD's gap
to the bound each candidate closes, and what each policy costs (CPU per run, per pod, per
decision)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched.cli import main
from kubesched.learn.data import Instance
from kubesched.learn.evaluate import add_gap_closed, goal, goal_line
from kubesched.learn.metric import metric_pods


def _pair(diff: float, wins: int, p: float) -> dict:
    return {"vs_FGD": {"diff_mean": diff, "wins": wins, "ties": 10 - wins, "losses": 0, "wilcoxon_p": p}}


def _result(**traces: dict) -> dict:
    return {"candidates": {"x": {}}, "traces": {t: {"paired": {"x": pr}} for t, pr in traces.items()}}


def test_goal_covers_default_and_every_variant() -> None:
    res = _result(default=_pair(-0.044, 9, 0.004), gpushare40=_pair(-0.041, 10, 0.002), multigpu50=_pair(0.25, 4, 0.9))
    g = goal(res)["x"]
    assert g["met"] and g["variants"] == ["gpushare40", "multigpu50"]
    assert g["worst_variant_diff"] == 0.25 and set(g["per_trace"]) == {"default", "gpushare40", "multigpu50"}
    line = goal_line("x", g)
    assert line.startswith("**x**: goal met: on default better than FGD; variants never worse")
    assert "gpushare40 -0.041 (10/0/0, p = 0.002)" in line and "multigpu50 +0.250" in line
    res["traces"]["multigpu50"]["paired"]["x"]["vs_FGD"]["diff_mean"] = 0.31  # worse by more than 0.3
    g = goal(res)["x"]
    assert not g["met"] and g["default_better"] and "sometimes worse than FGD by more than 0.3" in goal_line("x", g)


def test_goal_needs_a_variant() -> None:
    """default alone cannot show the goal met: its second half is about the variants."""
    g = goal(_result(default=_pair(-0.1, 10, 0.002)))["x"]
    assert g["default_better"] and not g["met"] and g["variants"] == []
    assert "no trace variant evaluated" in goal_line("x", g)
    g = goal(_result(gpushare40=_pair(-0.1, 10, 0.002)))["x"]
    assert not g["met"] and goal_line("x", g).startswith("**x**: goal not met: default not evaluated; variants never")


def test_gap_closed_is_the_share_of_fgds_gap_to_the_bound() -> None:
    res = {"policies": {"FGD": {"mean": 4.726}}, "bound": {"min_unallocated_mean": 3.023},
           "paired": {"x": _pair(-0.044, 9, 0.004), "y": _pair(0.1, 0, 0.002)}}
    add_gap_closed(res)
    assert res["bound"]["fgd_gap"] == pytest.approx(1.703)
    assert res["paired"]["x"]["gap_closed_pct"] == pytest.approx(100 * 0.044 / 1.703)  # 2.6 %
    assert res["paired"]["y"]["gap_closed_pct"] == pytest.approx(-100 * 0.1 / 1.703)  # worse: negative
    res = {"policies": {"FGD": {"mean": 3.0}}, "bound": {"min_unallocated_mean": 3.0}, "paired": {"x": _pair(0.0, 0, 1.0)}}
    add_gap_closed(res)
    assert res["paired"]["x"]["gap_closed_pct"] is None  # FGD already at the bound: no gap to close


TRACES = ("default", "multigpu50")
FLAGS = ["--max-nodes", "20", "--max-pods", "400", "--seeds", "0-1", "--workers", "1", "--no-plots", "--no-progress"]


def test_one_eval_gives_the_goal_over_every_trace_and_the_costs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rollout = tmp_path / "rollout.json"  # cheap rollouts that act early enough to decide on a small instance
    rollout.write_text(json.dumps({"fromAllocatedPct": 60, "horizon": 20, "futures": 1}))
    out = tmp_path / "e"
    rc = main(["learn", "eval", "--traces", ",".join(TRACES), *FLAGS, "--rollout", str(rollout), "--bound", "30",
               "-d", str(out)])
    assert rc == 0
    res = json.loads((out / "result.json").read_text())
    g = res["goal"]["rollout"]
    assert set(g["per_trace"]) == set(TRACES) and g["variants"] == ["multigpu50"]
    for trace in TRACES:
        tr = res["traces"][trace]
        gap = tr["policies"]["FGD"]["mean"] - tr["bound"]["min_unallocated_mean"]
        closed = tr["paired"]["rollout"]["gap_closed_pct"]
        assert g["per_trace"][trace]["gap_closed_pct"] == closed
        assert closed == pytest.approx(-100 * tr["paired"]["rollout"]["vs_FGD"]["diff_mean"] / gap)
        pods = [metric_pods(Instance(trace, "gpu", 20, 400).prepare(s)) for s in (0, 1)]
        assert tr["pods"] == pods
        for st in tr["policies"].values():  # every policy's CPU per run and per pod
            assert len(st["cpu_seconds"]) == 2 and all(c > 0 for c in st["cpu_seconds"])
            assert st["cpu_ms_per_pod"] == pytest.approx(1000 * sum(st["cpu_seconds"]) / sum(pods), rel=1e-3)
    dec = res["decision_cost"]["rollout"]  # the rollouts' own counters, on the first trace's first seed
    assert (dec["trace"], dec["seed"], dec["plugin"]) == ("default", 0, "RolloutScore")
    assert dec["pods"] == res["traces"]["default"]["pods"][0]
    assert 0 < dec["decisions"] <= dec["pods"] and 0 <= dec["changed"] <= dec["decisions"]
    assert dec["extra_cpu_ms_per_decision"] == pytest.approx(
        1000 * (dec["cpu_seconds"] - dec["FGD_cpu_seconds"]) / dec["decisions"])
    text = capsys.readouterr().out
    assert text == (out / "summary.md").read_text()
    assert f"**rollout**: goal {'met' if g['met'] else 'not met'}: on default" in text
    assert "Per trace vs FGD: default " in text and "; multigpu50 " in text and "of FGD's gap to the bound closed" in text
    assert "| CPU s per run | CPU ms per pod |" in text
    assert f"rollout: RolloutScore decided {dec['decisions']} of {dec['pods']} pods on default seed 0" in text
