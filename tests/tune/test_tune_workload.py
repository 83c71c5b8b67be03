"""Per-seed workloads: fixed, regenerated (synthetic) or replayed in the FGD protocol (--inflate)."""

from __future__ import annotations

import json
from pathlib import Path

from kubesched.cli import main
from kubesched.config import default_config
from kubesched.gpu.model import node_gpu_count, pod_gpu_ask
from kubesched.plugins import in_tree_registry
from kubesched.sim.runner import simulate
from kubesched.sim.synthetic import generate, load_spec
from kubesched.tune.workload import WorkloadSource, sample_nodes

SYNTH = ["pods.count=60", "nodes.0.count=6", "nodes.0.gpus=4"]


def _spec() -> dict:
    return load_spec(None, SYNTH)[0]


def test_inflate_gives_each_seed_its_own_sequence_at_the_asked_load() -> None:
    src = WorkloadSource(spec=_spec(), inflate=1.2)
    a, b = src.for_seed(1), src.for_seed(2)
    assert src.for_seed(1) is a  # built once per seed
    assert [p.name for p in a.pods] != [p.name for p in b.pods]
    assert a.arrival == [float(i) for i in range(len(a.pods))] and set(a.duration) == {None}
    cap = sum(node_gpu_count(n) for n in a.nodes) * 1000
    asked = sum(x.total_milli for p in a.pods if (x := pod_gpu_ask(p)))
    assert 1.0 * cap < asked <= 1.2 * cap  # cloned up to 1.2x the GPU capacity


def test_synthetic_is_regenerated_per_seed_and_node_sample_is_fixed() -> None:
    spec = _spec()
    src = WorkloadSource(spec=spec, node_sample=4, sample_seed=5)
    one, two = src.for_seed(1), src.for_seed(2)
    assert [p.requests for p in one.pods] != [p.requests for p in two.pods]
    assert len(one.nodes) == 4 and [n.name for n in one.nodes] == [n.name for n in two.nodes]
    wl = generate(spec, 1)
    assert [n.name for n in sample_nodes(wl, 4, 5).nodes] == [n.name for n in one.nodes]
    assert sample_nodes(wl, 99, 5) is wl


def test_cli_inflate_runs_in_arrival_mode_with_first_tie_break(tmp_path: Path) -> None:
    out = tmp_path / "out"
    synth = [a for s in SYNTH for a in ("--synth", s)]
    rc = main(
        [
            "tune",
            "--synthetic",
            *synth,
            "--inflate",
            "1.2",
            "--metric",
            "gpu.unallocated_pct",
            "--weights",
            "NodeResourcesFit,NodeResourcesBalancedAllocation",
            "--trials",
            "3",
            "--sim-seeds",
            "1,2",
            "--out-dir",
            str(out),
            "--no-progress",
            "--no-plot",
        ]
    )
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["simulation"]["mode"] == "arrival" and summary["simulation"]["tie_break"] == "first"
    assert summary["trials"] == 4 and not (out / "tradeoff.png").exists()
    # the baseline is the plain mean of the simulator's figure over the seeds
    src = WorkloadSource(spec=_spec(), inflate=1.2)
    cfg = default_config(in_tree_registry().points_of)
    direct = [
        simulate(cfg, src.for_seed(s), mode="arrival", seed=s, tie_break="first").summary["gpu"][
            "unallocated_pct"
        ]
        for s in (1, 2)
    ]
    assert summary["baseline"]["values"] == [sum(direct) / 2]
