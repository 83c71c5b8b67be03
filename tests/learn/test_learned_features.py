"""LearnedScore's observations, built with few numpy calls (one float32 buffer, a partial
ranking), are the very numbers of the straightforward computation: every observation of a run is
compared, all of its numbers, with ``_reference_observe`` (the computation as it was: stacked
columns, a full sort), and a run with a model whose choices depend on every feature places every
pod where the reference places it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kubesched.api.resources import CPU, MEMORY
from kubesched.experiment.protocol import build_scheduler
from kubesched.framework.cycle_state import CycleState
from kubesched.gpu.model import MAX_SPEC_CPU, MAX_SPEC_GPU, MILLI, pod_gpu_ask
from kubesched.gpu.state import GpuState
from kubesched.learn.data import Instance
from kubesched.learn.episode import Episode
from kubesched.learn.policies import learned_config
from kubesched.plugins.gpushare.bestfit import BestFitScore
from kubesched.plugins.gpushare.clustering import GpuClusteringScore
from kubesched.plugins.gpushare.dotproduct import DotProductScore
from kubesched.plugins.gpushare.packing import GpuPackingScore
from kubesched.plugins.learned.features import (
    CANDIDATE_FEATURES,
    MEMORY_SCALE,
    CandidateFeatures,
    obs_size,
    rank,
)
from kubesched.plugins.learned.model import PolicyModel

K = 16
FULL = Instance("default")


def _reference_observe(k: int, pod, snap, rows, base):
    """The observation as first written (kept as the spec)."""
    order = np.lexsort((snap.order_positions[rows], -np.asarray(base)))[:k]
    # the plugins over every feasible row (numpy beyond scores.FEW_ROWS of them), then the K taken
    top, sc = np.asarray(rows)[order], np.asarray(base, np.float64)[order]
    n = len(top)
    ask = pod_gpu_ask(pod)
    st = GpuState.of(snap)
    cpu = int(pod.non_zero_cpu)
    mem = int(pod.requests.get(MEMORY, 0))
    gtotal = ask.total_milli if ask else 0
    idle = st.idle_sum / max(st.gpus_sum * MILLI, 1)
    podv = np.array([cpu / MAX_SPEC_CPU, (ask.milli if ask else 0) / MILLI, (ask.count if ask else 0) / 8,
                     gtotal / MAX_SPEC_GPU, idle], np.float32)
    cand = np.zeros((k, len(CANDIDATE_FEATURES)), np.float32)

    def left(resource):
        c = snap.res_index.get(resource)
        return np.zeros(n, np.int64) if c is None else snap.alloc[top, c] - snap.requested[top, c]

    if n:
        state = CycleState()
        plugins = (BestFitScore(), GpuPackingScore(), GpuClusteringScore(), DotProductScore())
        extra = [s.score(state, pod, snap, np.asarray(rows))[order] / 100.0 for s in plugins]
        total = st.total_left(top)
        cand[:n] = np.column_stack([
            np.ones(n), sc / 100.0, (sc[0] - sc) / 100.0, np.arange(n) / k, st.count[top] / 8, st.free[top] / 8,
            total / MAX_SPEC_GPU, st.max_left[top] / MILLI, (total - gtotal) / MAX_SPEC_GPU,
            (left(CPU) - cpu) / MAX_SPEC_CPU, (left(MEMORY) - mem) / MEMORY_SCALE, *extra,
        ])
    mask = np.zeros(k, bool)
    mask[:n] = True
    return np.concatenate([podv, cand.ravel()]), mask, top


class Checked(CandidateFeatures):
    """Compares every observation with the reference's, bit for bit."""

    def __init__(self, k: int) -> None:
        super().__init__(k)
        self.compared = 0

    def observe(self, pod, snap, rows, base):
        got = super().observe(pod, snap, rows, base)
        want = _reference_observe(self.k, pod, snap, rows, base)
        assert got[0].shape == (obs_size(self.k),)
        assert got[0].tobytes() == want[0].tobytes(), f"observation {self.compared} differs"
        assert np.array_equal(got[1], want[1]) and np.array_equal(got[2], want[2])
        self.compared += 1
        return got


class Reference(CandidateFeatures):
    def observe(self, pod, snap, rows, base):
        return _reference_observe(self.k, pod, snap, rows, base)


def _model(path: Path, k: int = K) -> Path:
    """A random 64-64 network: its choices depend on every feature (and rarely pick candidate 0,
    so the cluster drifts far from FGD's)."""
    rng = np.random.default_rng(7)
    widths = [obs_size(k), 64, 64, k]
    PolicyModel(k, [rng.normal(0, 0.3, (a, b)) for a, b in zip(widths[:-1], widths[1:], strict=True)],
                [rng.normal(0, 0.1, b) for b in widths[1:]]).save(path)
    return path


def _run(inst: Instance, model: Path, features: CandidateFeatures, pods: int, seed: int = 42) -> list[str | None]:
    prep = inst.prepare(seed)
    sched = build_scheduler(prep.nodes, "learned", seed, prep.typical, config=learned_config(model, prep.typical))
    plugin = next(fw.plugins["LearnedScore"] for fw in sched.frameworks.values())
    plugin.features = features
    out = []
    for pod in prep.pods[:pods]:
        sched.add_pending(pod)
        res = sched.schedule_one()
        out.append(None if res is None else res.node)
        if res is None or res.node is None:
            sched.delete_pod(pod)
    assert plugin.decisions > 0
    return out


def test_plugin_observations_equal_the_reference(tmp_path: Path) -> None:
    """300 decisions on the full default trace (1,213 nodes, ~1,000 feasible per pod)."""
    feats = Checked(K)
    placed = _run(FULL, _model(tmp_path / "m.npz"), feats, 300)
    assert feats.compared == 300
    assert sum(p is not None for p in placed) > 250


def test_placements_equal_the_reference(tmp_path: Path) -> None:
    """A random model's placements, with the kept features and with the reference's."""
    model = _model(tmp_path / "m.npz")
    fast = _run(FULL, model, CandidateFeatures(K), 400, seed=3)
    slow = _run(FULL, model, Reference(K), 400, seed=3)
    assert fast == slow
    fgd = _run(FULL, model, _FirstAlways(K), 400, seed=3)
    assert fast != fgd  # the model's choices are not FGD's: the placements test something


class _FirstAlways(Reference):
    """Candidate 0 only (FGD's choice): observations with every candidate but the first masked."""

    def observe(self, pod, snap, rows, base):
        obs, mask, top = super().observe(pod, snap, rows, base)
        mask[1:] = False
        return obs, mask, top


def test_environment_observations_equal_the_reference(small: Instance) -> None:
    """The training environment (float base scores, fewer feasible nodes than K on a small
    instance), choices spread over the candidates."""
    feats = Checked(K)
    ep = Episode(small.prepare(5), feats)
    ep.advance()
    steps = 0
    while not ep.done:
        ep.act(steps % max(1, int(ep.pending.mask.sum())))
        ep.advance()
        steps += 1
    assert feats.compared == steps > 200


@pytest.mark.parametrize("n", [1, 15, 16, 17, 40, 1200])
def test_partial_rank_equals_the_full_sort(n: int) -> None:
    """The top K by score then node order, from a partition of integer scores with many ties, and
    from floats: the full sort's first K."""
    rng = np.random.default_rng(n)

    class Snap:
        order_positions = rng.permutation(2000)

    for _ in range(50):
        rows = rng.choice(2000, n, replace=False)
        scores = rng.integers(-3, rng.integers(1, 101), n)
        full = np.lexsort((Snap.order_positions[rows], -scores))
        assert np.array_equal(rank(Snap, rows, scores, K), full[:K])
        assert np.array_equal(rank(Snap, rows, scores / 3, K), full[:K])
        assert np.array_equal(rank(Snap, rows, scores), full)
