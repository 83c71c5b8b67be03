"""The decision loop reuses the protocol's scheduler: base actions give the protocol's run."""

from __future__ import annotations

import numpy as np

from kubesched.experiment.protocol import run
from kubesched.learn.data import Instance
from kubesched.learn.episode import Episode
from kubesched.plugins.learned.features import (
    CANDIDATE_FEATURES,
    POD_FEATURES,
    CandidateFeatures,
    feature_names,
    obs_size,
)


def _play(inst: Instance, seed: int, policy, k: int = 16) -> Episode:
    ep = Episode(inst.prepare(seed), CandidateFeatures(k), horizon=100.5)
    ep.advance()
    while not ep.done:
        ep.act(policy(ep))
        ep.advance()
    return ep


def test_base_actions_reproduce_the_protocol_run(small: Instance) -> None:
    for seed in (0, 7):
        prep = small.prepare(seed)
        ref = run(prep.nodes, prep.pods, "FGD", seed, prep.typical, keep_snapshot=False, until_percent=100.5)
        ep = _play(small, seed, lambda ep: 0)
        got = ep.result()
        assert ep.decisions > 100
        assert np.array_equal(got.placed, ref.placed)
        assert np.array_equal(got.used_milli, ref.used_milli)
        assert np.array_equal(got.arrived_milli, ref.arrived_milli)
        assert got.unallocated_at(100) == ref.unallocated_at(100)


def test_candidate_zero_is_the_schedulers_own_choice(small: Instance) -> None:
    """Candidate 0 is where the base scheduler's own host selection puts the pod."""
    ep = Episode(small.prepare(3), CandidateFeatures(4))
    ep.advance()
    d = ep.pending
    assert d is not None and d.mask.sum() >= 2
    assert d.pod.uid not in ep.snap.pod_by_uid  # proposed, not placed yet
    res = ep.sched.commit(d.attempt)  # no node given: the cycle's own selection
    assert res.node == ep.snap.pod_by_uid[d.pod.uid].node_name == ep.snap.nodes[int(d.rows[0])].name


def test_other_candidate_places_the_pod_there(small: Instance) -> None:
    ep = Episode(small.prepare(3), CandidateFeatures(4))
    ep.advance()
    d = ep.pending
    assert d is not None
    target = ep.snap.nodes[int(d.rows[1])].name
    assert ep.act(1)
    assert ep.snap.pod_by_uid[d.pod.uid].node_name == target
    assert ep.snap.pod_by_uid[d.pod.uid].annotations.get("alibabacloud.com/gpu-index") is not None or not d.pod.annotations


def test_invalid_action_means_the_base_choice(small: Instance) -> None:
    a = _play(small, 5, lambda ep: 0, k=4)

    def invalid(ep: Episode) -> int:
        return 99 if ep.decisions % 2 else int(ep.pending.mask.sum())  # beyond the feasible candidates

    b = _play(small, 5, invalid, k=4)
    assert np.array_equal(a.result().used_milli, b.result().used_milli)


def test_random_choices_change_the_outcome(small: Instance) -> None:
    rng = np.random.default_rng(0)
    base = _play(small, 2, lambda ep: 0).result()
    rand = _play(small, 2, lambda ep: int(rng.choice(np.flatnonzero(ep.pending.mask)))).result()
    assert not np.array_equal(base.used_milli, rand.used_milli)


def test_observation_layout(small: Instance) -> None:
    k = 8
    ep = Episode(small.prepare(1), CandidateFeatures(k))
    ep.advance()
    d = ep.pending
    assert d is not None
    assert d.obs.shape == (obs_size(k),) == (len(POD_FEATURES) + k * len(CANDIDATE_FEATURES),)
    cand = d.obs[len(POD_FEATURES) :].reshape(k, -1)
    n = int(d.mask.sum())
    assert (cand[:n, CANDIDATE_FEATURES.index("present")] == 1).all()
    assert (cand[n:] == 0).all()
    base = cand[:n, CANDIDATE_FEATURES.index("base_score")]
    assert (np.diff(base) <= 0).all()  # best first
    assert len(feature_names()) == len(POD_FEATURES) + len(CANDIDATE_FEATURES)
