"""The packing plan (``kubesched learn plan``) and PlanScore, which steers by it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kubesched.api.objects import Pod
from kubesched.errors import InputError
from kubesched.gpu.frag import TypicalPods
from kubesched.gpu.model import GPU_COUNT, GPU_MILLI, GPU_MODEL
from kubesched.learn.plan import solve_plan, write_plan
from kubesched.plugins import BUILTIN
from kubesched.plugins.lookahead.plan import PlanScore
from kubesched.plugins.lookahead.planfile import load_plan
from kubesched.testing import build_snapshot, make_node, make_pod, run_score

SHIPPED = Path(__file__).resolve().parents[2] / "kubesched" / "learn" / "shipped"


def node(name: str, gpus: int, cpu: str = "8") -> dict:
    return make_node(name, cpu=cpu, memory="64Gi", labels={GPU_MODEL: "G2"},
                     extra={GPU_COUNT: gpus, GPU_MILLI: 1000 * gpus})


def pod(name: str, milli: int, *, cpu: str = "1", node_name: str | None = None) -> dict:
    d = make_pod(name, requests={"cpu": cpu, "memory": "1Gi"}, node=node_name)
    d["metadata"]["annotations"] = {GPU_MILLI: str(milli), GPU_COUNT: "1"}
    return d


def test_plan_packs_complementary_shares_together():
    # 700- and 300-milli shares, equally common, on 1-GPU nodes: the only configuration that fills
    # a GPU holds one of each, so the LP plans every node that way
    shapes = TypicalPods.from_specs([(1000, 700, 1, "", 0.5), (1000, 300, 1, "", 0.5)])
    nodes = [_node(f"n{i}") for i in range(10)]
    plan = solve_plan(shapes, nodes, fill=1.0)
    assert plan.meta["planned_allocated_pct"] == pytest.approx(100.0, abs=1e-6)
    doc = plan.to_json()
    assert [c["pods"] for c in doc["configurations"]] == [{"0": 1, "1": 1}]
    assert doc["configurations"][0]["nodes"] == pytest.approx(10.0)


def _node(name: str):
    from kubesched.api.objects import Node

    return Node.parse(node(name, 1))


def _write(tmp_path: Path, doc: dict) -> str:
    p = tmp_path / "plan.json"
    p.write_text(json.dumps(doc))
    return str(p)


PLAN = {
    "format": "kubesched-plan",
    "version": 1,
    "shapes": [
        {"milliCpu": 1000, "milliGpu": 700, "gpuCount": 1, "gpuModel": ""},
        {"milliCpu": 1000, "milliGpu": 300, "gpuCount": 1, "gpuModel": ""},
        {"milliCpu": 1000, "milliGpu": 500, "gpuCount": 1, "gpuModel": ""},
    ],
    "nodeTypes": [{"milliCpu": 8000, "gpus": 1, "model": "G2", "nodes": 3}],
    "configurations": [
        {"type": 0, "nodes": 2, "pods": {"0": 1, "1": 1}},
        {"type": 0, "nodes": 1, "pods": {"2": 2}},
    ],
}


def test_plan_score_keeps_nodes_on_the_plan(tmp_path):
    snap = build_snapshot(
        [node("empty", 1), node("has700", 1), node("has500", 1), node("other", 1, cpu="4")],
        [pod("a", 700, node_name="has700"), pod("b", 500, node_name="has500")],
    )
    plugin = PlanScore({"plan": _write(tmp_path, PLAN)})
    # a 300 share: on the empty node it keeps the 700+300 plan (2 of 3 planned nodes); next to
    # the 700 it completes that plan (all kept); next to the 500 it leaves the plan (nothing
    # kept); a node of a type the plan does not know loses nothing
    raw, _ = run_score(plugin, pod("p", 300), snap)
    assert raw == [67, 100, 0, 100]
    raw, _ = run_score(plugin, pod("q", 500), snap)
    assert raw == [33, 0, 100, 100]
    # the plugin follows the snapshot: with a 300 placed there, the has700 node is full on its
    # plan and a second 300 takes it off; a node already off the plan has nothing to lose
    snap.add_pod(Pod.parse(pod("c", 300, node_name="has700")))
    snap.add_pod(Pod.parse(pod("d", 300, node_name="has500")))
    raw, _ = run_score(plugin, pod("p2", 300), snap)
    assert raw == [67, 0, 100, 100]


def test_plan_score_is_registered_and_shipped_plans_load():
    assert BUILTIN["PlanScore"] == "kubesched.plugins.lookahead.plan:PlanScore"
    files = sorted(SHIPPED.glob("plan-*.json"))
    assert files, "no shipped plan"
    for f in files:
        table = load_plan(f)
        assert table.configs.shape[0] == len(table.weight) > 0
        assert np.all(table.configs[:, -1] == 0)


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda d: d.update(format="x"), "format"),
        (lambda d: d["shapes"][1].update(milliGpu=-1), "shapes[1].milliGpu"),
        (lambda d: d["configurations"][0].update(type=5), "configurations[0].type"),
        (lambda d: d["configurations"][1].update(nodes=0), "configurations[1].nodes"),
        (lambda d: d["configurations"][0]["pods"].update({"9": 1}), "configurations[0].pods"),
    ],
)
def test_bad_plan_names_the_file_and_field(tmp_path, change, where):
    doc = json.loads(json.dumps(PLAN))
    change(doc)
    path = _write(tmp_path, doc)
    with pytest.raises(InputError) as e:
        PlanScore({"plan": path})
    assert path in str(e.value) and where in str(e.value)


def test_write_plan_round_trips(tmp_path):
    shapes = TypicalPods.from_specs([(1000, 700, 1, "", 0.5), (1000, 300, 1, "", 0.5)])
    plan = solve_plan(shapes, [_node(f"n{i}") for i in range(4)], fill=1.0)
    write_plan(tmp_path / "p.json", plan, trace="toy")
    table = load_plan(tmp_path / "p.json")
    assert table.meta["trace"] == "toy"
    assert table.configs[0, :2].tolist() == [1, 1]


@pytest.mark.parametrize(
    ("flags", "start"),
    [
        (["--plan", "nope.json"], "kubesched: error: nope.json: No such file or directory"),
        (["--traces", "default,gpushare40", "--plan", "default=PLAN"], "kubesched: error: --plan: no plan for trace gpushare40"),
        (["--plan", "PLAN", "--plan-weight", "0"], "kubesched: error: --plan-weight: must be in 1..10000"),
        (["--rollout", "ROLLOUT"], "kubesched: error: ROLLOUT: RolloutScoreArgs.topK: invalid value 0"),
    ],
)
def test_eval_refuses_bad_plans_and_rollouts(flags, start, tmp_path, capsys):
    from kubesched.cli import main

    plan = _write(tmp_path, PLAN)
    rollout = tmp_path / "rollout.json"
    rollout.write_text(json.dumps({"topK": 0}))
    flags = [f.replace("PLAN", plan).replace("ROLLOUT", str(rollout)) for f in flags]
    start = start.replace("ROLLOUT", str(rollout))
    assert main(["learn", "eval", "--seeds", "0", *flags, "-d", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(start), err
    assert err.count("\n") == 1
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("flags", "start"),
    [
        (["--rounds", "0"], "kubesched: error: --rounds: must be at least 1"),
        (["--time-limit", "0"], "kubesched: error: --time-limit: must be positive"),
        (["--trace", "nope"], "kubesched: error: --trace: \"nope\": no such file"),
    ],
)
def test_learn_plan_refuses_bad_input(flags, start, tmp_path, capsys):
    from kubesched.cli import main

    out = tmp_path / "plan.json"
    assert main(["learn", "plan", *flags, str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(start), err
    assert err.count("\n") == 1
    assert not out.exists()


def _small_trace(path: Path) -> Path:
    """An openb pod list of 6 shapes (shares, whole GPUs, a CPU-only pod), 60 pods."""
    head = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"
    shapes = [(4000, 1, 500), (8000, 1, 250), (6000, 1, 700), (16000, 2, 1000), (32000, 8, 1000), (2000, 0, 0)]
    rows = [f"p-{i:03d},{c},1024,{k},{m},,LS,Running,{i},{i + 100},{i}" for i, (c, k, m) in
            ((i, shapes[i % len(shapes)]) for i in range(60))]
    path.write_text("\n".join([head, *rows]) + "\n")
    return path


def test_learn_plan_writes_the_same_file_twice(tmp_path, capsys):
    """The work is limited by rounds and branch-and-bound nodes, never by the clock: two runs of
    the same command write byte-identical files, with the limits and ``time_limited`` in the meta
    and no time in them."""
    from kubesched.cli import main

    trace = _small_trace(tmp_path / "pods.csv")
    files = [tmp_path / "a.json", tmp_path / "b.json"]
    for f in files:
        assert main(["learn", "plan", "--trace", str(trace), "--rounds", "8", "--node-limit", "200", str(f)]) == 0
    assert files[0].read_bytes() == files[1].read_bytes()
    meta = json.loads(files[0].read_text())["meta"]
    assert meta["limits"] == {"rounds": 8, "node_limit": 200, "time_limit_s": 14400.0}
    assert meta["time_limited"] is False and not any("seconds" in k for k in meta)
    out = capsys.readouterr().out
    assert out.startswith("planned ") and "CPU " in out and "time limit" not in out


def test_plan_time_limit_is_a_safety_net_reported_in_the_meta():
    shapes = TypicalPods.from_specs([(1000, 700, 1, "", 0.4), (1000, 300, 1, "", 0.4), (1000, 500, 1, "", 0.2)])
    nodes = [_node(f"n{i}") for i in range(6)]
    full = solve_plan(shapes, nodes, fill=1.0)
    assert full.meta["time_limited"] is False and full.meta["converged"] and full.cpu_seconds > 0
    cut = solve_plan(shapes, nodes, fill=1.0, seconds=1e-9)  # the net stops the pricing before it starts
    assert cut.meta["time_limited"] is True and not cut.meta["converged"] and cut.meta["rounds"] == 1
    assert cut.meta["planned_allocated_pct"] <= full.meta["planned_allocated_pct"] + 1e-9
