"""The paper's protocol on a slice of the openb trace: invariants, determinism, binning, configs."""

import pickle

import numpy as np
import pytest
import yaml

from kubesched.api.resources import CPU, MEMORY
from kubesched.config import load_config
from kubesched.experiment.protocol import POLICIES, RunResult, gpu_capacity_milli, policy_config, prepare, run
from kubesched.gpu.metrics import cluster_gpu_metrics
from kubesched.gpu.model import GPU_INDEX, MILLI, node_gpu_count, parse_index, pod_gpu_ask
from kubesched.gpu.state import GpuState
from kubesched.plugins import in_tree_registry
from kubesched.trace.bundled import node_list, pod_list
from kubesched.trace.openb import read_nodes, read_pods


@pytest.fixture(scope="module")
def small():
    """120 GPU nodes (every 10th) and the first 900 pods of the default trace."""
    nodes = read_nodes(node_list("gpu"))[::10]
    pods = read_pods(pod_list("default")).pods[:900]
    return nodes, pods


def test_prepare_shuffles_tunes_and_orders_nodes(small):
    nodes, pods = small
    a, b, c = prepare(pods, nodes, 42), prepare(pods, nodes, 42), prepare(pods, nodes, 43)
    assert [p.name for p in a.pods] == [p.name for p in b.pods] != [p.name for p in c.pods]
    assert [n.name for n in a.nodes] == [n.name for n in b.nodes] != [n.name for n in c.nodes]
    assert sorted(n.name for n in a.nodes) == sorted(n.name for n in nodes)
    total = sum(x.total_milli for x in map(pod_gpu_ask, a.pods) if x)
    target = 1.3 * gpu_capacity_milli(nodes)
    assert total <= target and total > target - 8 * MILLI
    assert sorted(p.name for p in a.pods[: a.originals]) == sorted(p.name for p in pods) or total < sum(
        x.total_milli for x in map(pod_gpu_ask, pods) if x
    )
    assert len({p.uid for p in a.pods}) == len(a.pods)  # clones get their own names and uids
    down = prepare(pods, nodes, 42, tune=0.5)  # above the target: random pods are dropped
    assert sum(x.total_milli for x in map(pod_gpu_ask, down.pods) if x) <= 0.5 * gpu_capacity_milli(nodes)


@pytest.mark.parametrize("policy", list(POLICIES))
def test_run_invariants(small, policy):
    nodes, pods = small
    prep = prepare(pods, nodes[:60], 7)
    r = run(prep.nodes, prep.pods, policy, prep.seed, prep.typical)
    snap = r.snapshot
    st = GpuState.of(snap)
    # no GPU over-allocated, and the GPU state equals what the placed pods' gpu-index annotations say
    expect = np.zeros_like(st.left)
    for row, node in enumerate(snap.nodes):
        expect[row, : node_gpu_count(node)] = MILLI
        for pod in snap.pods_on[row].values():
            ask = pod_gpu_ask(pod)
            if ask is None:
                assert GPU_INDEX not in pod.annotations
                continue
            idx = parse_index(pod.annotations[GPU_INDEX])
            assert len(idx) == ask.count == len(set(idx)) and max(idx) < node_gpu_count(node)
            assert ask.allows(node.labels.get("alibabacloud.com/gpu-card-model", ""))
            for i in idx:
                expect[row, i] -= ask.milli
    assert (st.left == expect).all() and (st.left >= 0).all()
    cpu, mem = snap.res_index[CPU], snap.res_index[MEMORY]
    assert (snap.requested[:, cpu] <= snap.alloc[:, cpu]).all() and (
        snap.requested[:, mem] <= snap.alloc[:, mem]
    ).all()
    # per-event metrics: arrived counts every pod, allocation never goes down (no departures)
    assert (np.diff(r.arrived_milli) >= 0).all() and (np.diff(r.used_milli) >= 0).all()
    assert r.arrived_milli[-1] == sum(x.total_milli for x in map(pod_gpu_ask, prep.pods) if x)
    placed_gpu = sum(
        x.total_milli for x, ok in zip(map(pod_gpu_ask, prep.pods), r.placed, strict=True) if x and ok
    )
    assert r.used_milli[-1] == placed_gpu == r.capacity_milli - r.idle_milli[-1]
    assert r.placed.sum() == sum(len(p) for p in snap.pods_on) and r.failed > 0
    m = cluster_gpu_metrics(snap, prep.typical)  # from scratch equals the incremental tracker
    assert m.allocated_milli == r.used_milli[-1] and m.frag_milli == pytest.approx(r.frag_milli[-1])
    assert 0 <= m.frag_milli <= m.idle_milli


def test_runs_are_deterministic_and_fgd_beats_random(small):
    nodes, pods = small
    prep = prepare(pods, nodes, 11)
    a = run(prep.nodes, prep.pods, "FGD", 11, prep.typical)
    b = pickle.loads(pickle.dumps(run(prep.nodes, prep.pods, "FGD", 11, prep.typical, keep_snapshot=False)))
    assert b.snapshot is None and a.snapshot is not None
    assert a.nodes == b.nodes and (a.frag_milli == b.frag_milli).all()
    rnd = run(prep.nodes, prep.pods, "Random", 11, prep.typical)
    # Random strands far more GPU than FGD (13.7 vs 4.8 % on the full trace)
    assert a.unallocated_at(100) < rnd.unallocated_at(100)


def test_curve_bins_round_half_to_even_with_neighbour_fallback():
    arrived = np.array([500, 1500, 2500, 4000, 4100])  # of 100 GPUs = 100,000 milli: 0.5 1.5 2.5 4 4.1 %
    used = np.array([500, 1500, 2400, 3900, 3900])
    r = RunResult("x", 0, 100_000, arrived, used, 100_000 - used, used / 10, np.ones(5, bool), [None] * 5)
    c = r.curve(range(6))
    # 0.5 -> 0, 1.5 -> 2, 2.5 -> 2: levels 1 and 3 have no event and take bins 0..2 and 2..4
    assert c["unallocated"][0] == pytest.approx(99.5)
    assert c["unallocated"][2] == pytest.approx(100 - (1.5 + 2.4) / 2)
    assert c["unallocated"][1] == pytest.approx(100 - round((0.5 + 1.5 + 2.4) / 3, 2))
    assert c["unallocated"][4] == pytest.approx(100 - 3.9)
    assert c["unallocated"][3] == pytest.approx(100 - round((1.5 + 2.4 + 3.9 + 3.9) / 4, 2))  # bins 2..4
    assert c["unallocated"][5] == pytest.approx(100 - 3.9)
    assert np.isnan(r.curve([9])["unallocated"][0])  # nothing within 8..10


def test_policy_configs_parse_and_round_trip_through_yaml(tmp_path):
    from kubesched.gpu.frag import TypicalPods

    reg = in_tree_registry(entry_points=False)
    t = TypicalPods.from_specs([(1000, 500, 1, "", 0.6), (2000, 0, 0, "", 0.4)])
    for policy in POLICIES:
        path = tmp_path / f"{policy}.yaml"
        path.write_text(yaml.safe_dump(policy_config(policy, t)))
        cfg = load_config(str(path), reg.points_of)
        prof = cfg.profiles[0]
        assert [p.name for p in prof.plugins["score"]] == [POLICIES[policy][0]]
        assert prof.plugins["score"][0].weight == 1000
        assert "Open-Gpu-Share" in [p.name for p in prof.plugins["filter"]]
        assert "NodeResourcesFit" in [p.name for p in prof.plugins["filter"]]
    with pytest.raises(ValueError, match="typical pods"):
        policy_config("FGD")
