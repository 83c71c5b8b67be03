"""The time-mode episode is the simulator's time-mode replay, stopped at each decision."""

from __future__ import annotations

import threading

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from kubesched.config import parse_config
from kubesched.learn.data import Instance
from kubesched.learn.replay import ReplayEpisode, prepare_replay
from kubesched.plugins import in_tree_registry
from kubesched.plugins.learned.features import CandidateFeatures
from kubesched.rl import ENV_ID, NodeSelectEnv
from kubesched.sim.runner import simulate

#: 30 nodes, the first 400 pods of the trace arriving 300x faster: pods queue for GPUs
TIME = {"mode": "time", "max_nodes": 30, "max_pods": 400, "speedup": 300.0}
INST = Instance("default", "gpu", max_nodes=30, max_pods=400)


def _simulated(seed: int):
    rp = prepare_replay(INST, seed, 300.0)
    reg = in_tree_registry(entry_points=False)
    cfg = parse_config(rp.config, "FGD", reg.points_of)
    return simulate(cfg, rp.workload, mode="time", seed=seed, registry=reg, tie_break="first")


def _play(seed: int, policy) -> tuple[ReplayEpisode, float]:
    ep = ReplayEpisode(prepare_replay(INST, seed, 300.0), CandidateFeatures(4))
    cost = ep.advance()
    while not ep.done:
        ep.act(policy(ep))
        cost += ep.advance()
    return ep, cost


def test_time_mode_passes_the_checkers() -> None:
    env = gym.make(ENV_ID, seeds=[0, 1], **TIME)
    check_env(env.unwrapped)
    env.close()
    sb3_check_env(NodeSelectEnv(seeds=[0, 1], k=4, **TIME), warn=True)  # not closed: see below


def test_base_actions_reproduce_simulate_time_mode() -> None:
    """Action 0 throughout is `kubesched simulate --mode time` with FGD: every pod on the same
    node at the same virtual time; the cost is the GPU-weighted queueing delay of its pods table."""
    seed = 2
    ep, cost = _play(seed, lambda ep: 0)
    ref = _simulated(seed)
    assert ep.decisions > 100
    assert [ep.engine.pods[i].key for i in range(len(ep.engine.pods))] == ref.pods["pod"]
    assert ep.engine.node_of == ref.pods["node"]
    assert np.array_equal(np.asarray(ep.engine.bind_time), np.asarray(ref.pods["bind_time"]))
    delay = np.asarray(ref.pods["queue_delay"])
    gpu_hours = float((np.asarray(ref.pods["gpu_milli"]) / 1000 * delay).sum()) / 3600
    assert gpu_hours > 1  # the instance queues: the reward has something to say
    assert cost == pytest.approx(gpu_hours)
    assert ep.summary()["unplaced_pods"] == ref.summary["pods"]["failed"] == 0


def test_env_return_is_minus_pending_gpu_hours() -> None:
    env = NodeSelectEnv(seeds=[0, 1], k=4, **TIME)
    _, info = env.reset(seed=0, options={"run_seed": 1})
    total, done = 0.0, False
    while not done:
        _, r, done, trunc, info = env.step(0)
        assert r <= 0 and not trunc
        total += r
    assert total == pytest.approx(-info["pending_gpu_hours"])
    assert info["pending_gpu_hours"] > 0 and info["decisions"] > 100
    assert 0 < info["gpu_allocation_mean_pct"] < 100


def test_other_candidate_is_bound_and_changes_the_replay() -> None:
    ep = ReplayEpisode(prepare_replay(INST, 0, 300.0), CandidateFeatures(4))
    ep.advance()
    d = ep.pending
    assert d is not None and d.mask[1]
    target = ep.snap.nodes[int(d.rows[1])].name
    assert ep.act(1)
    ep.advance()
    assert ep.engine.node_of[ep.engine.index[d.pod.uid]] == target
    ep.close()
    # the last candidate everywhere: a different replay, the same pods
    last, _ = _play(0, lambda ep: int(ep.pending.mask.sum()) - 1)
    base, _ = _play(0, lambda ep: 0)
    assert last.engine.node_of != base.engine.node_of
    assert sorted(last.engine.state) == sorted(base.engine.state)


def test_reset_and_close_drop_the_replay_without_threads() -> None:
    """The replay is stepped through the engine's decision points in the caller's thread."""
    threads = threading.active_count()
    env = NodeSelectEnv(seeds=[0], k=4, **TIME)
    env.reset(seed=0)
    env.step(0)
    first = env.episode
    assert isinstance(first, ReplayEpisode) and first.pending is not None
    assert threading.active_count() == threads
    a, _ = env.reset(seed=0)
    assert first.done and first.pending is None  # the old replay was dropped
    b, _ = env.reset(seed=0)
    assert np.array_equal(a, b)  # reproducible
    env.close()
    assert env.episode.done and env.episode.advance() == 0.0 and env.episode.pending is None


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="mode must be one of protocol, time"):
        NodeSelectEnv(mode="replay")
    with pytest.raises(ValueError, match="speedup"):
        NodeSelectEnv(mode="time", speedup=0)
