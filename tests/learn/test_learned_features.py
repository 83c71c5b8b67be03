"""LearnedScore's observations, built with few numpy calls (one float32 buffer, a partial
ranking, the gathers of K rows), are the very numbers of the straightforward computation: every
observation of a run is compared, all of its numbers, with ``_reference_observe`` (each feature's
definition, stacked columns, a full sort), and a run with a model whose choices depend on every
feature places every pod where the reference places it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kubesched.api.resources import CPU, MEMORY
from kubesched.experiment.protocol import build_scheduler, prepare, run
from kubesched.experiment.runner import subset
from kubesched.framework.cycle_state import CycleState
from kubesched.gpu.model import MAX_SPEC_CPU, MAX_SPEC_GPU, MILLI
from kubesched.gpu.state import GpuState
from kubesched.learn.data import Instance
from kubesched.learn.episode import Episode
from kubesched.learn.policies import learned_config
from kubesched.plugins.gpushare.common import cycle_ask
from kubesched.plugins.learned import LearnedScore
from kubesched.plugins.learned.features import (
    CANDIDATE_FEATURES,
    MEMORY_SCALE,
    CandidateFeatures,
    obs_size,
    rank,
)
from kubesched.plugins.learned.model import PolicyModel
from kubesched.trace.bundled import node_list, pod_list
from kubesched.trace.openb import read_nodes, read_pods

K = 16
FULL = Instance("default")


def _reference_observe(k: int, pod, snap, rows, base):
    """The observation computed straightforwardly (kept as the spec): a full sort, stacked
    columns, each feature's definition."""
    order = np.lexsort((snap.order_positions[rows], -np.asarray(base)))[:k]
    top, sc = np.asarray(rows)[order], np.asarray(base, np.float64)[order]
    n = len(top)
    ask = cycle_ask(None, pod, snap)  # the annotations' ask, else the DRA claims'
    st = GpuState.of(snap)
    milli, count = (ask.milli, ask.count) if ask else (0, 0)
    idle = st.idle_sum / max(st.gpus_sum * MILLI, 1)
    podv = np.array([pod.non_zero_cpu / MAX_SPEC_CPU, milli / MILLI, count / 8, milli * count / MAX_SPEC_GPU, idle],
                    np.float32)
    cand = np.zeros((k, len(CANDIDATE_FEATURES)), np.float32)

    def left(resource):
        c = snap.res_index.get(resource)
        return np.zeros(n, np.int64) if c is None else snap.alloc[top, c] - snap.requested[top, c]

    if n:
        # GPUs with at least the pod's milli per GPU left (every GPU for a pod asking none)
        fit = [sum(1 for g in range(st.count[r]) if st.left[r, g] >= milli) for r in top]
        cand[:n] = np.column_stack([
            np.ones(n), sc / 100.0, st.count[top] / 8, st.free[top] / 8, st.total_left(top) / MAX_SPEC_GPU,
            st.max_left[top] / MILLI, np.array(fit) / 8, left(CPU) / MAX_SPEC_CPU, left(MEMORY) / MEMORY_SCALE,
        ])
    return np.concatenate([podv, cand.ravel()]), order


class Checked(CandidateFeatures):
    """Compares every observation with the reference's, bit for bit (the plugin and the
    environment both come through ``observe_order``)."""

    def __init__(self, k: int) -> None:
        super().__init__(k)
        self.compared = 0

    def observe_order(self, pod, snap, rows, base):
        got = super().observe_order(pod, snap, rows, base)
        want = _reference_observe(self.k, pod, snap, rows, base)
        assert got[0].shape == (obs_size(self.k),)
        assert got[0].tobytes() == want[0].tobytes(), f"observation {self.compared} differs"
        assert np.array_equal(got[1], want[1])
        self.compared += 1
        return got


class Reference(CandidateFeatures):
    def observe_order(self, pod, snap, rows, base):
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
    out = _schedule(sched, prep.pods[:pods])
    assert plugin.decisions > 0
    return out


def _schedule(sched, pods) -> list[str | None]:
    """Each pod's node (None: dropped unplaced), one at a time as the protocol does."""
    out = []
    for pod in pods:
        sched.add_pending(pod)
        res = sched.schedule_one()
        out.append(None if res is None else res.node)
        if res is None or res.node is None:
            sched.delete_pod(pod)
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
    """Candidate 0 only (FGD's choice): the first candidate alone is offered."""

    def observe_order(self, pod, snap, rows, base):
        obs, order = super().observe_order(pod, snap, rows, base)
        return obs, order[:1]


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



def test_base_scores_from_the_equivalence_cache_are_fgdscores(tmp_path: Path, monkeypatch) -> None:
    """LearnedScore reads FGDScore's raw scores from the cycle's ``known_raw`` (the equivalence
    cache's) instead of scoring again: on every decision they are the numbers FGDScore's own
    Score returns for the same rows; with the cache off (FGDScore scores in the cycle) the
    placements are the same."""
    model = _model(tmp_path / "m.npz")
    prep = FULL.prepare(11)
    used = {True: 0, False: 0}
    kept = LearnedScore._base_scores

    def checked(self, state, pod, snap, rows):
        got = kept(self, state, pod, snap, rows)
        known = state.known_raw.get("FGDScore") is not None
        if known:
            want = self.handle.framework.plugins["FGDScore"].score(CycleState(), pod, snap, rows)
            assert np.array_equal(got, want)
        used[known] += 1
        return got

    monkeypatch.setattr(LearnedScore, "_base_scores", checked)
    placed = {}
    for cache in (True, False):
        sched = build_scheduler(prep.nodes, "learned", 11, prep.typical, config=learned_config(model, prep.typical))
        sched.use_equivalence_cache = cache
        placed[cache] = _schedule(sched, prep.pods[:300])
    assert placed[True] == placed[False]
    assert used[True] > 250 and used[False] > 250  # both paths decided most pods


def test_gpus_described_the_dra_way_are_seen_as_annotated_ones(tmp_path: Path) -> None:
    """The openb slice with its GPUs as ResourceSlices and each GPU pod's ask as a claim: the
    features read the claims' ask as the GPU plugins do, so a model whose choices depend on
    every feature places every pod where it does with the annotations."""
    nodes = subset(read_nodes(node_list("gpu")), 30)
    prep = prepare(read_pods(pod_list("default")).pods[:260], nodes, 43)
    model = _model(tmp_path / "m.npz")
    placed = {
        gpus: run(prep.nodes, prep.pods, "learned", 43, prep.typical, keep_snapshot=False, gpu_model=gpus,
                  config=learned_config(model, prep.typical, gpu_model=gpus))
        for gpus in ("annotations", "dra")
    }
    fgd = run(prep.nodes, prep.pods, "FGD", 43, prep.typical, keep_snapshot=False)
    assert placed["annotations"].placed.sum() > 100
    assert placed["dra"].nodes == placed["annotations"].nodes
    assert placed["annotations"].nodes != fgd.nodes  # the model's own choices, not FGD's
