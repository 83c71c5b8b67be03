"""ValueScore (a value function of the whole cluster among FGD's near-ties) and ``kubesched learn
value`` (its fit by policy iteration)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from kubesched.cli import main
from kubesched.errors import InputError
from kubesched.experiment.protocol import policy_config, run
from kubesched.gpu.frag import FragModel, TypicalPods
from kubesched.gpu.model import GPU_COUNT, GPU_INDEX, GPU_MILLI, GPU_MODEL
from kubesched.gpu.state import GpuState
from kubesched.learn.policies import value_config
from kubesched.learn.value import episode, fit, returns_of
from kubesched.plugins import BUILTIN
from kubesched.plugins.gpushare.common import cpu_left
from kubesched.plugins.lookahead.clusterstate import CLASSES, FEATURES, ClusterState, NodeRows, pod_class
from kubesched.plugins.lookahead.value import ValueScore
from kubesched.plugins.lookahead.valuefile import ValueFunction, load_value, zero_function
from kubesched.testing import as_pod, build_snapshot, make_node, make_pod

SHIPPED = Path(__file__).resolve().parents[2] / "kubesched" / "learn" / "shipped"
TYPICAL = TypicalPods.from_specs([
    (2000, 300, 1, "", 0.3), (4000, 500, 1, "", 0.2), (8000, 1000, 1, "", 0.2), (16000, 1000, 2, "", 0.1),
    (1000, 0, 0, "", 0.1), (6000, 700, 1, "T4", 0.05), (12000, 1000, 4, "", 0.05),
])  # fmt: skip


def _node(name: str, gpus: int, model: str = "G2", cpu: str = "32") -> dict:
    return make_node(name, cpu=cpu, memory="256Gi", labels={GPU_MODEL: model},
                     extra={GPU_COUNT: gpus, GPU_MILLI: 1000 * gpus})


def _pod(name: str, milli: int = 0, count: int = 1, *, cpu: int = 1000, node: str | None = None,
         index: str | None = None) -> dict:
    d = make_pod(name, requests={"cpu": f"{cpu}m", "memory": "1Gi"}, node=node)
    ann = {GPU_MILLI: str(milli), GPU_COUNT: str(count)} if milli else {}
    if index is not None:
        ann[GPU_INDEX] = index
    d["metadata"]["annotations"] = ann
    return d


def _snap():
    return build_snapshot(
        [_node("a", 4), _node("b", 2, "T4"), _node("c", 8, cpu="12"), _node("d", 1, cpu="3"), _node("e", 8)],
        [_pod("u1", 800, node="a", index="0"), _pod("u2", 500, node="a", index="3"),
         _pod("u3", 1000, 1, node="b", index="1", cpu=4000), _pod("u4", 1000, 4, node="c", index="0-3", cpu=9000),
         _pod("u5", 200, node="e", index="5", cpu=500)],
    )


def direct(left: np.ndarray, cpu: np.ndarray, model: np.ndarray, count: np.ndarray, fm: FragModel) -> np.ndarray:
    """The features by their definitions, node by node and GPU by GPU in plain Python."""
    t = fm.typical
    cls = [pod_class(int(m), int(c)) for m, c in zip(t.milli, t.count, strict=True)]
    cap_c, frag_c = np.zeros(len(CLASSES)), np.zeros(len(CLASSES))
    frag = alloc = 0.0
    free_bins, part_bins = np.zeros(4), np.zeros(4)
    for n in range(len(left)):
        gpus = [int(v) for v in left[n][: count[n]]]
        alloc += 1000 * int(count[n]) - sum(gpus)
        free = gpus.count(1000)
        for b, (lo, hi) in enumerate(((1, 2), (2, 4), (4, 8), (8, 99))):
            free_bins[b] += lo <= free < hi
        for v in gpus:
            if 0 < v < 1000:
                part_bins[min(v // 250, 3)] += 1
        for m in range(len(t.p)):
            milli, k, c = int(t.milli[m]), int(t.count[m]), int(t.cpu[m])
            fits = milli > 0 and fm.acc[m, model[n]] and cpu[n] >= c and sum(v >= milli for v in gpus) >= k
            f_nm = sum(v for v in gpus if v < milli) if fits else sum(gpus)
            frag += t.p[m] * f_nm
            if cls[m] < 0:
                continue
            share = t.p[m] / sum(t.p[j] for j in range(len(t.p)) if cls[j] == cls[m])
            frag_c[cls[m]] += share * f_nm
            slots = sum(v // milli for v in gpus) if milli < 1000 else free // k
            fit = min(slots, max(int(cpu[n]), 0) // max(c, 1)) if fm.acc[m, model[n]] else 0
            cap_c[cls[m]] += share * fit
    cap, total_gpus, nodes = 1000.0 * count.sum(), float(count.sum()), float((count > 0).sum())
    a = alloc / cap
    return np.array([a, a**2, a**3, frag / cap, *np.log1p(cap_c), *(frag_c / cap), *(free_bins / nodes),
                     *(part_bins / total_gpus)])


def _arrays(snap):
    st = GpuState.of(snap)
    rows = np.arange(snap.n)
    return st, st.left.copy(), cpu_left(snap, rows).copy(), st.model.copy(), st.count.copy()


def test_features_match_a_direct_computation():
    snap = _snap()
    st, left, cpu, model, count = _arrays(snap)
    fm = FragModel(TYPICAL, st.models)
    cs = ClusterState(NodeRows(fm))
    cs.follow(snap, st)
    assert len(cs.now()) == len(FEATURES)
    np.testing.assert_allclose(cs.now(), direct(left, cpu, model, count, fm), rtol=1e-12, atol=1e-12)
    # the pod on node a's GPU 1 (300 milli, 2 cores) or on two whole GPUs of e (16 cores): only those
    # rows change
    cands = np.array([0, 4])
    new_left = left[cands].copy()
    new_left[0, 1] -= 300
    new_left[1, [0, 1]] = 0
    got = cs.after(cands, new_left, cpu[cands] - np.array([2000, 16000]), model[cands], count[cands])
    for c, row in enumerate(cands):
        l2, c2 = left.copy(), cpu.copy()
        l2[row], c2[row] = new_left[c], cpu[row] - [2000, 16000][c]
        np.testing.assert_allclose(got[c], direct(l2, c2, model, count, fm), rtol=1e-12, atol=1e-12)


def test_cluster_state_follows_the_snapshot_row_by_row():
    snap = _snap()
    st = GpuState.of(snap)
    cs = ClusterState(NodeRows(FragModel(TYPICAL, st.models)))
    cs.follow(snap, st)
    before = cs.now().copy()
    snap.add_pod(as_pod(_pod("late", 1000, 2, node="e", index="0-1", cpu=3000)))
    st = GpuState.of(snap)
    cs.follow(snap, st)
    fresh = ClusterState(NodeRows(FragModel(TYPICAL, st.models)))
    fresh.follow(snap, st)
    np.testing.assert_allclose(cs.now(), fresh.now(), rtol=1e-12)
    assert not np.allclose(before, cs.now())


def test_returns_count_what_fails_after_each_decision_as_the_metric_does():
    # capacity 1000 milli: events 3 and 4 land at 100 % (99.5-100.5); pod 2 (100) and 4 (300) fail
    arrived = np.array([384, 538, 615, 996, 1000])
    failed = np.array([0, 0, 100, 0, 300])
    got = returns_of(arrived, failed, np.array([0, 2, 3]), 1000)
    # after pod 0: events 3, 4 see 100 and 400 failed -> mean 250; after pod 2: 0 and 300; after 3: 0, 300
    np.testing.assert_allclose(got, [25.0, 15.0, 15.0])


def test_fit_recovers_a_linear_function_and_zero_weight_for_constants():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(500, len(FEATURES)))
    x[:, 3] = 7.0
    w_true = rng.normal(size=len(FEATURES))
    w_true[3] = 0.0
    y = x @ w_true + 2.5
    w, b = fit(x, y, ridge=1e-9)
    np.testing.assert_allclose(w, w_true, atol=1e-5)
    assert w[3] == 0.0 and abs(b - (2.5 + 0.0)) < 1e-4


def _small():
    from kubesched.learn.data import Instance

    return Instance("default", "gpu", max_nodes=60, max_pods=400)


def test_zero_function_is_fgd_and_the_episode_metric_is_the_protocols(tmp_path):
    inst = _small()
    prep = inst.prepare(3)
    zero = tmp_path / "zero.json"
    zero_function().save(zero)
    fgd = run(prep.nodes, prep.pods, "FGD", 3, prep.typical, keep_snapshot=False,
              config=policy_config("FGD", prep.typical))
    val = run(prep.nodes, prep.pods, "v", 3, prep.typical, keep_snapshot=False,
              config=value_config(zero, prep.typical, {"fromAllocatedPct": 0}))
    assert val.nodes == fgd.nodes
    from kubesched.learn.search import evaluate

    ep = episode(inst, str(zero), 3, {"fromAllocatedPct": 0})
    assert ep.metric == evaluate(inst, policy_config("FGD", prep.typical), 3)[0]
    assert ep.changed == 0 and len(ep.returns) == len(ep.features) > 50


def test_a_fitted_function_decides_and_exploration_changes_choices(tmp_path):
    inst = _small()
    zero = tmp_path / "zero.json"
    zero_function().save(zero)
    explored = episode(inst, str(zero), 3, {"fromAllocatedPct": 0, "epsilon": 0.5, "seed": 1})
    assert explored.changed > 0
    w, b = fit(explored.features, explored.returns)
    fitted = tmp_path / "fitted.json"
    ValueFunction(w, b).save(fitted)
    greedy = episode(inst, str(fitted), 3, {"fromAllocatedPct": 0})
    assert greedy.changed > 0


def test_plugin_enabled_in_a_configuration_file_loads_and_runs(tmp_path, capsys):
    zero = tmp_path / "v.json"
    ValueFunction(-np.eye(len(FEATURES))[FEATURES.index("logcap:gpu2")], 0.0).save(zero)
    cfg = tmp_path / "value.yaml"
    cfg.write_text(yaml.safe_dump(value_config(zero, TYPICAL, {"fromAllocatedPct": 0, "margin": 100})))
    cluster = tmp_path / "cluster.yaml"
    objs = [_node("a", 4), _node("b", 4), _node("c", 8)] + [_pod(f"p{i}", 500, cpu=1000) for i in range(3)]
    cluster.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objs}))
    calls = []
    orig = ValueScore._pick
    ValueScore._pick = lambda self, v: calls.append(v) or orig(self, v)
    try:
        assert main(["schedule", "-f", str(cluster), "--config", str(cfg), "-o", "json"]) == 0
    finally:
        ValueScore._pick = orig
    placed = json.loads(capsys.readouterr().out)["placements"]
    assert len(calls) == 3 and all(len(v) >= 2 for v in calls)  # every pod decided by the value function
    assert len(placed) == 3 and all(p["node"] in ("a", "b", "c") for p in placed)


def test_registered_and_args_checked(tmp_path):
    assert BUILTIN["ValueScore"] == "kubesched.plugins.lookahead.value:ValueScore"
    zero = tmp_path / "v.json"
    zero_function({"topK": 4}).save(zero)
    p = ValueScore({"value": str(zero), "margin": 5})
    assert (p.k, p.margin, p.from_pct) == (4, 5, 85.0)
    for args, field in (({"value": str(zero), "topK": 0}, "topK"), ({"value": str(zero), "epsilon": 2}, "epsilon"),
                        ({"value": str(zero), "depth": 1}, "depth"), ({}, "value")):
        with pytest.raises(InputError) as e:
            ValueScore(args)
        assert f"ValueScoreArgs.{field}" in str(e.value)


def _doc() -> dict:
    return zero_function().to_json()


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda d: d.update(format="x"), "format"),
        (lambda d: d["features"].reverse(), "features"),
        (lambda d: d["weights"].pop(), "weights"),
        (lambda d: d["weights"].__setitem__(2, "x"), "weights[2]"),
        (lambda d: d.update(intercept=float("inf")), "intercept"),
        (lambda d: d.update(policy={"topK": -1}), "policy.topK"),
        (lambda d: d.update(meta=[1]), "meta"),
    ],
)
def test_bad_value_files_are_one_line_naming_file_and_field(tmp_path, capsys, change, where):
    doc = _doc()
    change(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError) as e:
        load_value(path)
    assert str(e.value).startswith(f"{path}: {where}: ")
    assert main(["learn", "eval", "--value", str(path), "--seeds", "0", "-d", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kubesched: error: {path}: {where}: ") and err.count("\n") == 1, err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("flags", "start"),
    [
        (["--seeds", "40-45"], "--seeds: seeds 42,43,44,45 are held out"),
        (["--val-seeds", "3-4"], "--val-seeds: validation seeds must differ"),
        (["--min-gains", "0.1,x"], "--min-gains: expected numbers >= 0, got 'x'"),
        (["--epsilon", "1.5"], "--epsilon: out of range: 1.5"),
        (["--rounds", "0"], "--rounds: must be at least 1"),
    ],
)
def test_learn_value_refuses_bad_input(flags, start, tmp_path, capsys):
    assert main(["learn", "value", *flags, "-d", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kubesched: error: {start}") and err.count("\n") == 1, err
    assert not (tmp_path / "o").exists()


def test_learn_value_is_deterministic_and_eval_runs_its_function(tmp_path, capsys):
    flags = ["--max-nodes", "60", "--max-pods", "400", "--seeds", "0-1", "--val-seeds", "100", "--rounds", "2",
             "--from-allocated-pct", "50", "--min-gains", "0.05", "--workers", "1"]
    for d in ("a", "b"):
        assert main(["learn", "value", *flags, "-d", str(tmp_path / d)]) == 0
    a, b = (json.loads((tmp_path / d / "value.json").read_text()) for d in ("a", "b"))
    assert a["weights"] == b["weights"] and a["intercept"] == b["intercept"]
    assert any(a["weights"]) and a["policy"]["fromAllocatedPct"] == 50
    fit_log = json.loads((tmp_path / "a" / "value-fit.json").read_text())
    assert [r["round"] for r in fit_log["rounds"]] == [1, 2] and fit_log["rounds"][0]["decisions"] > 0
    tried = fit_log["min_gain_validation"]
    assert [t["minGain"] for t in tried] == [0.0, 0.05]
    assert a["policy"]["minGain"] == min(tried, key=lambda t: t["validation_mean"])["minGain"]
    capsys.readouterr()
    out = tmp_path / "e"
    assert main(["learn", "eval", "--max-nodes", "60", "--max-pods", "400", "--seeds", "100", "--value",
                 str(tmp_path / "a" / "value.json"), "--workers", "1", "--no-plots", "-d", str(out)]) == 0
    res = json.loads((out / "result.json").read_text())
    chosen = next(t for t in tried if t["minGain"] == a["policy"]["minGain"])["validation"]
    assert res["traces"]["default"]["policies"]["value"]["values"] == chosen


def test_fit_with_episodes_takes_out_each_episodes_level():
    """Returns shifted by a per-episode amount that the features do not explain (one seed's
    arrivals harder than another's): the episode means are taken out, the weights stay exact."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(600, len(FEATURES)))
    w_true = rng.normal(size=len(FEATURES))
    groups = np.repeat(np.arange(6), 100)
    x[:, 0] += groups  # the feature correlates with the episode ...
    y = x @ w_true + 10.0 * groups**2  # ... and so does the unexplained level
    w, _ = fit(x, y, ridge=1e-9, groups=groups)
    np.testing.assert_allclose(w, w_true, atol=1e-5)
    w_pooled, _ = fit(x, y, ridge=1e-9)
    assert abs(w_pooled[0] - w_true[0]) > 1.0


def test_shipped_value_function_loads_into_learn_eval():
    from kubesched.learn.cli import _value_candidate

    path = SHIPPED / "value.json"
    fn = load_value(path)
    assert fn.meta["train_seeds"] == list(range(10)) and not set(fn.meta["val_seeds"]) & set(range(42, 52))
    plugin = ValueScore({"value": str(path)})  # the file's policy: the settings it was fitted and validated with
    assert (plugin.from_pct, plugin.k, plugin.margin, plugin.min_gain) == (85.0, 3, 2, fn.policy["minGain"])
    doc = _value_candidate(str(path)).config("default", TYPICAL)
    prof = doc["profiles"][0]
    assert prof["plugins"]["score"]["enabled"] == [{"name": "ValueScore", "weight": 101},
                                                   {"name": "FGDScore", "weight": 1}]
    assert {"name": "ValueScore", "args": {"value": str(path.resolve())}} in prof["pluginConfig"]
