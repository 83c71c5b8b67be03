"""The four GPU scores' two forms in ``kubesched.plugins.gpushare.scores`` (numpy rows for many
nodes, plain Python for a few) give the same integers on random nodes, edge cases included (CPU or
GPU short, every GPU free, none free, negative ``gpuLeft`` terms), and the plugins take each form
by the number of rows."""

from __future__ import annotations

import numpy as np
import pytest
from gpu_testlib import gpu_node, gpu_pod

from kubesched.gpu.model import MAX_SPEC_CPU, MAX_SPEC_GPU, MILLI, GpuAsk
from kubesched.plugins.gpushare import scores
from kubesched.plugins.gpushare.bestfit import BestFitScore
from kubesched.plugins.gpushare.clustering import GpuClusteringScore
from kubesched.plugins.gpushare.dotproduct import DotProductScore
from kubesched.plugins.gpushare.packing import GpuPackingScore
from kubesched.state.snapshot import Snapshot
from kubesched.testing import build_snapshot, run_score

ASKS = [GpuAsk(1, 100), GpuAsk(1, 500), GpuAsk(1, 1000), GpuAsk(2, 1000), GpuAsk(4, 1000), GpuAsk(8, 1000)]


def _nodes(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per node: GPUs (0-8, padded to 8 columns with 0), milli left per GPU (often 0 or 1000),
    CPU left, and the affinity counts per tag (9 columns)."""
    count = rng.integers(0, 9, n)
    left = rng.choice([0, 50, 100, 250, 500, 700, 900, 1000, 1000, 1000], (n, 8))
    left[np.arange(8)[None, :] >= count[:, None]] = 0
    cpu = rng.integers(-2000, MAX_SPEC_CPU + 1, n)
    aff = rng.integers(0, 3, (n, 9)) * (rng.random((n, 9)) < 0.3)
    return left, count, cpu, aff


@pytest.mark.parametrize("seed", range(5))
def test_python_rows_equal_numpy_rows(seed: int) -> None:
    rng = np.random.default_rng(seed)
    left, count, cl, aff = _nodes(rng, 400)
    gl = np.concatenate([left.sum(axis=1)[:-2], [MAX_SPEC_GPU + 3000, -500]])  # beyond the scale both ways
    seen: set[int] = set()  # packing's values over the asks
    for ask in ASKS:
        c, g = float(rng.integers(0, 64_000)), float(ask.total_milli)
        for form_py, form_np in ((scores.bestfit_rows, scores.bestfit_array),
                                 (scores.dotprod_rows, scores.dotprod_array)):
            want = form_np(cl, gl, c, g)
            assert want.dtype == np.int64
            assert form_py(cl.tolist(), gl.tolist(), c, g) == want.tolist(), form_py.__name__
        want = scores.packing_array(left, count, ask.milli, ask.count)
        assert scores.packing_rows(left.tolist(), count.tolist(), ask.milli, ask.count) == want.tolist()
        seen.update(want.tolist())
        want = scores.clustering_array(aff, gl, ask)
        assert scores.clustering_rows(aff.tolist(), gl.tolist(), ask) == want.tolist()
    # every branch met: no fit, every GPU free, a free GPU taken, only used GPUs
    assert 0 in seen and 33 in seen and any(34 <= v <= 49 for v in seen) and any(v > 50 for v in seen)


def test_the_edge_cases_meet_each_branch() -> None:
    """Packing's branches on hand-built rows, a 300-milli ask: every GPU free (max(33 - ff, ff)),
    a free GPU taken (max(50 - 1, 33)), only used GPUs (100 - 30 // 10), no GPU with room."""
    left = np.array([[MILLI] * 4 + [0] * 4, [MILLI] * 8, [MILLI, 100] + [0] * 6, [300, 600] + [0] * 6,
                     [100, 200] + [0] * 6])
    count = np.array([4, 8, 2, 2, 2])
    got = scores.packing_rows(left.tolist(), count.tolist(), 300, 1)
    assert got == [29, 25, 49, 97, 0]
    assert got == scores.packing_array(left, count, 300, 1).tolist()


def _cluster(n: int) -> Snapshot:
    """n GPU nodes of 1-8 GPUs, with sharing and whole-GPU pods bound on some."""
    rng = np.random.default_rng(3)
    nodes, pods = [], []
    for i in range(n):
        gpus = int(rng.integers(1, 9))
        nodes.append(gpu_node(f"n{i}", gpus, cpu=str(int(rng.integers(8, 97)))))
        for j in range(int(rng.integers(0, 3))):
            milli = int(rng.choice([200, 500, 1000]))
            pods.append(gpu_pod(f"p{i}-{j}", milli, cpu=str(int(rng.integers(1, 9))), node=f"n{i}",
                                index=str(int(rng.integers(0, gpus)))))
    return build_snapshot(nodes, pods)


@pytest.mark.parametrize("pod", [gpu_pod("share", 300, cpu="4"), gpu_pod("two", 1000, 2, cpu="6"), gpu_pod("cpu")])
def test_the_plugins_take_either_form_alike(pod: dict) -> None:
    """Each plugin's raw scores of a few rows (plain Python) equal the same rows' scores among all
    300 (numpy), and vary across the rows."""
    snap = _cluster(300)
    few = [5, 17, 42, 99, 250, 299][: scores.FEW_ROWS]
    for plugin in (BestFitScore(), DotProductScore(), GpuClusteringScore(), GpuPackingScore()):
        everything, _ = run_score(plugin, pod, snap)
        some, _ = run_score(plugin, pod, snap, few)
        assert some == [everything[r] for r in few], plugin.name
        if pod["metadata"]["annotations"] or plugin.name in ("BestFitScore", "DotProductScore"):
            assert len(set(everything)) > 1, plugin.name
