"""``kubesched simulate`` with GPUs described the DRA way (``--gpu-model dra``): claims are made
as pods arrive and released when they end, so devices come back; a replay gives the annotation
model's placements, GPUs and metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched.cli import main
from kubesched.config.load import parse_config
from kubesched.experiment.protocol import policy_config
from kubesched.experiment.runner import subset
from kubesched.gpu.frag import typical_pods_of
from kubesched.plugins import in_tree_registry
from kubesched.sim.engine import Engine, SimOptions
from kubesched.sim.runner import result_of
from kubesched.sim.workload import Workload, with_dra_gpus
from kubesched.trace.bundled import node_list, pod_list
from kubesched.trace.openb import read_nodes, read_pods
from tests.sim.sim_helpers import gpu_cfg, node, pod


def openb_slice(n_nodes: int, n_pods: int, *, durations: bool) -> Workload:
    nodes = subset(read_nodes(node_list("gpu")), n_nodes)
    trace = read_pods(pod_list("default"))
    pods = trace.pods[:n_pods]
    arrival = [float(t) for t in trace.creation_time[:n_pods]]
    if durations:
        dur = [None if d is None else max(1.0, float(d) - float(c)) for c, d in zip(trace.creation_time[:n_pods], trace.deletion_time[:n_pods], strict=True)]
    else:
        dur = [None] * n_pods
    return Workload(nodes, pods, arrival, dur, source="openb slice")


def run(wl: Workload, policy: str, mode: str) -> Engine:
    reg = in_tree_registry()
    typical = wl.typical or typical_pods_of(wl.pods)  # the DRA workload keeps the annotations' typical pods
    doc = policy_config(policy, typical if policy == "FGD" else None)
    cfg = parse_config(doc, "policy", reg.points_of)
    eng = Engine(cfg, wl, reg, SimOptions(mode=mode, seed=3, tie_break="first", record_events=True))
    eng.run()
    return eng


def same_replay(a: Engine, b: Engine) -> None:
    ra, rb = result_of(a), result_of(b)
    for col in ("pod", "state", "node", "bind_time", "end_time", "gpu_milli", "gpu_index"):
        assert ra.pods[col] == rb.pods[col], col
    for col in ("gpu_alloc_pct", "cpu_alloc_pct"):
        assert ra.events[col] == rb.events[col], col
    ga, gb = dict(ra.summary["gpu"]), dict(rb.summary["gpu"])
    assert (ga.pop("resources"), gb.pop("resources")) == (["alibabacloud.com/gpu-count"], ["gpu.nvidia.com"])
    assert ga == gb


@pytest.mark.parametrize("policy", ["FGD", "BestFit"])
def test_arrival_mode_replays_the_same(policy: str) -> None:
    wl = openb_slice(25, 220, durations=False)
    ann, dra = run(wl, policy, "arrival"), run(with_dra_gpus(wl), policy, "arrival")
    same_replay(ann, dra)
    res = result_of(dra)
    assert res.pods["state"].count("failed") > 0 and any(res.pods["gpu_index"])
    assert res.summary["gpu"]["fragmentation_available"] and res.summary["gpu"]["frag_pct"]


def test_time_mode_releases_the_claims_of_pods_that_end() -> None:
    """Pods that complete give their GPUs back: later pods run on them, the same as with
    annotations; at the end only running pods hold claims."""
    wl = openb_slice(12, 260, durations=True)
    ann, dra = run(wl, "BestFit", "time"), run(with_dra_gpus(wl), "BestFit", "time")
    same_replay(ann, dra)
    res = result_of(dra)
    assert res.pods["state"].count("completed") > 20
    running = {p.uid for i, p in enumerate(dra.pods) if res.pods["state"][i] == "running" and dra.pods[i].resource_claims}
    holders = {r.uid for c in dra.snap.dra.claims.values() for r in c.reserved_for}
    assert holders == running
    assert all(c.allocation is not None for c in dra.snap.dra.claims.values())


def test_a_pod_waits_for_the_gpu_a_finished_pod_gives_back() -> None:
    a, b = pod("a", gpus=1), pod("b", gpus=1)
    wl = with_dra_gpus(Workload([node("n", gpus=1)], [a, b], [0.0, 1.0], [10.0, 5.0]))
    reg = in_tree_registry()
    cfg, reg = gpu_cfg()
    eng = Engine(cfg, wl, reg, SimOptions(mode="time", seed=1))
    eng.run()
    res = result_of(eng)
    assert res.pods["state"] == ["completed", "completed"]
    assert res.pods["bind_time"] == [0.0, 10.0]  # b got the GPU when a ended
    assert res.pods["gpu_index"] == ["0", "0"]
    assert eng.snap.dra.claims == {}  # both made from templates for their pods: deleted with them


def test_simulate_cli_gpu_model_dra(tmp_path: Path) -> None:
    out = tmp_path / "sim"
    argv = ["simulate", "--trace", "default", "--nodes", "gpu", "--limit", "60", "--mode", "arrival", "--gpu-model", "dra",
            "--no-plots", "--no-progress", "-o", "json", "--out-dir", str(out)]
    assert main(argv) == 0
    inputs = json.loads((out / "inputs.json").read_text())
    assert inputs["gpu_model"] == "dra"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["gpu"]["resources"] == ["gpu.nvidia.com"]
