"""Paired statistics, the goal's verdict, the offline bound and `kubesched learn eval`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import wilcoxon

from kubesched.api.resources import CPU, MEMORY
from kubesched.cli import main
from kubesched.experiment.protocol import RunResult, gpu_capacity_milli
from kubesched.gpu.model import node_gpu_count, pod_gpu_ask
from kubesched.learn.bound import (
    METHODS,
    Limits,
    bound_of,
    configuration_bound,
    counted_pods,
    offline_bound,
    reported_unallocated,
)
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


@pytest.mark.parametrize("method", METHODS)
def test_bound_is_below_what_fgd_reaches(method: str) -> None:
    inst = Instance("default", "gpu", max_nodes=40, max_pods=300)
    for seed in (0, 1):
        prep = inst.prepare(seed)
        b = bound_of(prep, 100.0, Limits(rounds=4), method=method)  # a bound wherever it stops
        pods = counted_pods(prep, 100.0)
        assert b.pods == len(pods) and 99.5 <= b.arrived_pct <= 100.5
        assert 0.0 <= b.min_unallocated_pct <= evaluate(inst, FGD_PARAMS, seed)[0]
        assert b.max_allocated_milli <= min(b.requested_milli, gpu_capacity_milli(prep.nodes))


def _last_in_bin(prep, level: int) -> tuple[int, int]:
    """(pods arrived by the last event whose arrived % rounds to ``level``, pods arrived by exactly
    ``level`` %), by a plain loop over the sequence."""
    cap = gpu_capacity_milli(prep.nodes)
    total, last, by_level = 0, 0, 0
    for i, p in enumerate(prep.pods):
        a = pod_gpu_ask(p)
        total += a.total_milli if a else 0
        if round(100 * total / cap) == level:
            last = i + 1
        if 100 * total <= level * cap:
            by_level = i + 1
    return last, by_level


@pytest.mark.parametrize("method", METHODS)
def test_bound_places_the_pods_the_metric_counts(method: str) -> None:
    """The metric averages every event whose arrived % rounds to 100 (up to 100.5 %): the bound
    places the pods arrived by the last of them, not only those arrived by 100.0 %."""
    prep = Instance("default", "gpu", max_nodes=12, max_pods=200).prepare(2)
    last, by_100 = _last_in_bin(prep, 100)
    assert last > by_100  # this seed has events in (100, 100.5]: the two definitions differ
    b = bound_of(prep, 100.0, method=method)
    assert b.pods == last
    assert 100.0 < b.arrived_pct <= 100.5


def test_bound_holds_for_the_metric_as_rounded() -> None:
    """The metric rounds each event's allocated % to 0.01: a run allocating the bound's milli at
    every event it averages reports exactly ``reported_unallocated``, never less."""
    cap = 100_000
    for best in (96_964.0, 96_965.0, 96_966.4, 97_000.0):
        floor = reported_unallocated(best, cap)
        ev = np.array([99_600, 100_000, 100_400])
        run = RunResult("x", 0, cap, ev, np.full(3, int(best)), cap - np.full(3, int(best)), np.zeros(3),
                        np.ones(3, bool), [None] * 3)
        assert run.unallocated_at(100) >= floor
    assert reported_unallocated(96_964.0, cap) == pytest.approx(3.04)


def _exact_packing(prep, level: float, time_limit: float):
    """An independent model of the same question: every pod with GPUs on at most one node, shares
    on single GPUs, whole pods on whole GPUs, CPU and memory per node (HiGHS, time-limited)."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import lil_matrix

    pods = [(p, a) for p in counted_pods(prep, level) if (a := pod_gpu_ask(p)) is not None]
    nodes = prep.nodes
    var: dict[tuple, int] = {}
    for i, (_, a) in enumerate(pods):
        for n, nd in enumerate(nodes):
            var[("x", i, n)] = len(var)
            if a.milli < 1000:
                var.update({("s", i, n, g): len(var) + g for g in range(node_gpu_count(nd))})
    for n, nd in enumerate(nodes):
        var.update({("u", n, g): len(var) + g for g in range(node_gpu_count(nd))})  # GPU g taken whole
    rows: list[tuple[dict[int, float], float]] = []
    for i in range(len(pods)):
        rows.append(({var["x", i, n]: 1 for n in range(len(nodes))}, 1))
    for n, nd in enumerate(nodes):
        gpus = range(node_gpu_count(nd))
        for res in (CPU, MEMORY):
            rows.append(({var["x", i, n]: p.requests.get(res, 0) for i, (p, _) in enumerate(pods)}, nd.allocatable[res]))
        whole = {var["x", i, n]: a.count for i, (_, a) in enumerate(pods) if a.milli == 1000}
        rows.append(({**whole, **{var["u", n, g]: -1 for g in gpus}}, 0))
        for i, (_, a) in enumerate(pods):
            if a.milli < 1000:  # a share is on one of the node's GPUs iff the pod is on the node
                rows.append(({**{var["s", i, n, g]: 1 for g in gpus}, var["x", i, n]: -1}, 0))
                rows.append(({**{var["s", i, n, g]: -1 for g in gpus}, var["x", i, n]: 1}, 0))
        for g in gpus:
            share = {var["s", i, n, g]: a.milli for i, (_, a) in enumerate(pods) if a.milli < 1000}
            rows.append(({**share, var["u", n, g]: 1000}, 1000))
    a_mat = lil_matrix((len(rows), len(var)))
    for r, (coef, _) in enumerate(rows):
        for c, v in coef.items():
            a_mat[r, c] = v
    gain = np.zeros(len(var))
    for i, (_, a) in enumerate(pods):
        for n in range(len(nodes)):
            gain[var["x", i, n]] = a.total_milli
    res = milp(-gain, constraints=LinearConstraint(a_mat.tocsr(), -np.inf, [r[1] for r in rows]),
               integrality=np.ones(len(var)), bounds=Bounds(0, 1), options={"time_limit": time_limit})
    return -res.fun, -res.mip_dual_bound, res.status == 0


@pytest.mark.parametrize("nodes, pods, seed", [(5, 120, 1), (8, 200, 0)])
def test_configuration_bound_against_an_exact_model(nodes: int, pods: int, seed: int) -> None:
    """No packing the exact per-GPU model finds beats the bound; its proven optimum (when HiGHS
    proves one) lies between the packing found and the bound."""
    inst = Instance("default", "gpu", max_nodes=nodes, max_pods=pods)
    b = configuration_bound(inst.prepare(seed), 100.0)
    found, dual, proved = _exact_packing(inst.prepare(seed), 100.0, time_limit=5)
    assert b.converged
    assert found <= b.max_allocated_milli + 1e-6 * b.max_allocated_milli
    assert b.fgd_milli <= b.placement_milli <= b.max_allocated_milli + 1e-6
    assert b.max_allocated_milli <= b.requested_milli
    if proved:
        assert b.placement_milli <= dual * (1 + 1e-4)


@pytest.mark.parametrize("nodes, pods, seed", [(5, 120, 1), (12, 200, 2)])
def test_small_instances_are_packed_exactly(nodes: int, pods: int, seed: int) -> None:
    """The packing on a small instance is the best there is: the exact per-node model closes the
    gap the configurations' integer program left (5 nodes, seed 1: it placed 26,100 milli where the
    independent per-pod model above finds 27,830), and the bound meets it (proven optimal)."""
    from kubesched.learn.bound import Limits

    prep = Instance("default", "gpu", max_nodes=nodes, max_pods=pods).prepare(seed)
    b = configuration_bound(prep, 100.0)
    found, _, _ = _exact_packing(Instance("default", "gpu", max_nodes=nodes, max_pods=pods).prepare(seed), 100.0,
                                 time_limit=5)
    assert b.exact_variables is not None and b.optimal and not b.time_limited
    assert b.placement_milli >= round(found)  # at least what the independent model finds in 5 s
    assert b.placement_milli == pytest.approx(b.max_allocated_milli, rel=1e-4)
    assert b.max_unallocated_pct == b.min_unallocated_pct
    # deterministic: the node limit, not the clock, bounds the exact model's work
    again = configuration_bound(Instance("default", "gpu", max_nodes=nodes, max_pods=pods).prepare(seed), 100.0,
                                Limits())
    assert again.placement_milli == b.placement_milli and again.max_allocated_milli == b.max_allocated_milli


def test_large_instances_skip_the_exact_model() -> None:
    """Above ``MAX_VARIABLES`` the configuration packing stands alone (the full cluster would need
    millions of variables)."""
    from kubesched.learn import exact

    shapes = exact.Shapes(*(np.ones(2, np.int64) for _ in range(5)), admits=np.ones((2, 2000), bool))
    nodes = exact.Nodes(*(np.ones(2000, np.int64) for _ in range(4)), kind=[0] * 2000)
    assert exact.variables(shapes, nodes, np.ones((40, 2))) > exact.MAX_VARIABLES


def test_configuration_bound_binds_where_the_aggregate_does_not() -> None:
    """On 5 nodes the pods the metric counts at 100 % cannot fill the GPUs: the configuration bound
    says so, the per-type sums (within 10 milli of the 28,000 there are) do not."""
    prep = Instance("default", "gpu", max_nodes=5, max_pods=120).prepare(1)
    conf = configuration_bound(prep, 100.0)
    agg = offline_bound(prep, 100.0)
    assert conf.max_allocated_milli < agg.max_allocated_milli - 100
    assert agg.max_allocated_milli >= min(agg.requested_milli, agg.capacity_milli) - 10
    assert conf.min_unallocated_pct > agg.min_unallocated_pct


def test_bound_limits_are_deterministic() -> None:
    """The rounds and node limits stop the work, not the clock: with a wall-clock net far away, one
    round stops after one round, and two runs give the same figures (a time limit of a second would
    stop each at a different point under a different load)."""
    from dataclasses import astuple

    from kubesched.commands.learn import BOUND_LIMITS

    prep = Instance("default", "gpu", max_nodes=40, max_pods=300).prepare(0)
    runs = [configuration_bound(prep, 100.0, Limits(rounds=1, nodes=50, seconds=600)).to_json() for _ in range(2)]
    for r in runs:
        r.pop("seconds")
    assert runs[0] == runs[1]
    assert runs[0]["iterations"] == 1 and not runs[0]["converged"] and not runs[0]["time_limited"]
    assert astuple(Limits()) == BOUND_LIMITS  # the CLI's defaults are the library's


def test_eval_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    search = tmp_path / "search.json"
    search.write_text(json.dumps({"chosen": {"params": {"weights": {"FGD": 3, "BestFit": 1}, "delta_scale": 500.0,
                                                          "tie_break": "order"}}, "cpu_seconds": 12.0}))
    out = tmp_path / "e"
    rc = main(["learn", "eval", "--max-nodes", "40", "--max-pods", "300", "--seeds", "100-101", "--workers", "1",
               "--search", str(search), "--bound", "2", "-d", str(out)])
    assert rc == 0
    assert {p.name for p in out.iterdir()} == {"result.json", "runs.csv", "summary.md", "eval.png"}
    res = json.loads((out / "result.json").read_text())
    pol = res["traces"]["default"]["policies"]
    assert set(pol) == {"FGD", "BestFit", "search"} and len(pol["FGD"]["values"]) == 2
    assert res["candidates"]["search"]["cpu_seconds"] == 12.0
    bound = res["traces"]["default"]["bound"]
    assert len(bound["per_seed"]) == 2 and bound["per_seed"][0]["method"] == "configurations"
    assert bound["min_unallocated_mean"] <= bound["packing_unallocated_mean"] <= pol["FGD"]["mean"] + 0.5
    out_text = capsys.readouterr().out
    assert "search" in res["goal"] and "| FGD |" in out_text and "Offline bound (configuration LP)" in out_text


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


def _many_shares(path: Path) -> Path:
    """A pod list whose shares come in 300 sizes: too many GPU fillings to enumerate."""
    head = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"
    rows = [f"p-{i:04d},1000,1024,1,{10 + i},,LS,Running,{i},{i + 100},{i}" for i in range(300)]
    path.write_text("\n".join([head, *rows]) + "\n")
    return path


@pytest.mark.parametrize(
    "text, why",
    [
        ("[" * 100_000, "nested too deeply"),
        ('{"chosen": {"params": {"weights": ["FGD"], "delta_scale": 1, "tie_break": "order"}}}', "TypeError"),
        ('{"chosen": {"params": "FGD"}}', "TypeError"),
        ('{"chosen": {"params": {"weights": {"FGD": 1e400}, "delta_scale": 1, "tie_break": "order"}}}',
         "OverflowError"),
        ('{"chosen": {"params": {"weights": {"FGD": 1}, "delta_scale": 1, "tie_break": ["order"]}}}', "TypeError"),
    ],
    ids=["deep", "weights-list", "params-text", "weight-infinite", "tie-break-list"],
)
def test_eval_refuses_a_malformed_search_json(text: str, why: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "search.json"
    path.write_text(text)
    assert main(["learn", "eval", "--search", str(path), "-d", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kubesched: error: {path}: not a search.json of kubesched learn search ({why}")
    assert err.count("\n") == 1 and not (tmp_path / "o").exists()


def test_configuration_bound_refuses_a_trace_of_many_share_sizes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _many_shares(tmp_path / "shares.csv")
    msg = f"kubesched: error: trace {trace}: 300 distinct GPU share sizes (at most 100)"
    assert main(["learn", "bound", "--trace", str(trace), "--seeds", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(msg) and err.count("\n") == 1 and "--method aggregate" in err
    assert main(["learn", "eval", "--traces", str(trace), "--seeds", "0", "--bound", "1", "-d", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.startswith(msg)
    assert not (tmp_path / "o").exists()


def test_eval_refuses_a_corrupt_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "m.npz"
    bad.write_bytes(b"not a zip")
    assert main(["learn", "eval", "--model", str(bad), "-d", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == f"kubesched: error: {bad}: not a readable .npz model (BadZipFile: File is not a zip file)\n"
