"""The Gymnasium environment passes Gymnasium's and stable-baselines3's checkers."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import kubesched.rl
from kubesched.rl import ENV_ID, NodeSelectEnv

SMALL = {"seeds": [0, 1], "max_nodes": 60, "max_pods": 400}


def test_registered_and_checked() -> None:
    env = gym.make(ENV_ID, **SMALL)
    check_env(env.unwrapped)
    sb3_check_env(kubesched.rl.NodeSelectEnv(**SMALL), warn=True)


def test_episode_return_is_minus_failed_gpus() -> None:
    env = NodeSelectEnv(**SMALL, k=4)
    obs, info = env.reset(seed=0, options={"run_seed": 1})
    assert info["run_seed"] == 1
    total, done = 0.0, False
    while not done:
        assert env.action_masks()[0]
        obs, r, done, trunc, info = env.step(0)
        assert r <= 0 and not trunc
        total += r
    assert total == pytest.approx(-info["failed_gpus"])
    assert info["failed_gpus"] > 0  # 1.3 x capacity arrives: some pods fail before 100.5 %
    assert 0 <= info["unallocated_at_100"] < 100


def test_reset_is_reproducible() -> None:
    env = NodeSelectEnv(**SMALL)
    a, _ = env.reset(seed=3)
    b, _ = env.reset(seed=3)
    assert np.array_equal(a, b)
    assert env.observation_space.contains(a)


def test_shaping_charges_the_base_score_gap() -> None:
    from kubesched.plugins.learned.features import CANDIDATE_FEATURES, POD_FEATURES

    env = NodeSelectEnv(**SMALL, k=4, shaping=1.0)
    env.reset(seed=0)
    best = len(POD_FEATURES) + CANDIDATE_FEATURES.index("base_score")  # candidate 0's
    second = best + len(CANDIDATE_FEATURES)  # candidate 1's
    for _ in range(500):
        obs = env._obs()
        gap = float(obs[best]) - float(obs[second])
        if env.action_masks()[1] and gap > 0:
            break
        env.step(0)
    else:
        pytest.fail("no decision with a worse second candidate")
    _, r, *_ = env.step(1)
    assert r <= -gap + 1e-6


def _returns(env: NodeSelectEnv, choose) -> tuple[float, list[float], float]:
    """(the episode's return, its rewards, FGD's fragmentation in GPUs at the first decision)."""
    env.reset(seed=0, options={"run_seed": 1})
    first = env.episode.frag_milli / 1000 if env.frag_shaping else 0.0
    rewards, done, step = [], False, 0
    while not done:
        mask = env.action_masks()
        _, r, done, _, _ = env.step(choose(step, mask))
        rewards.append(r)
        step += 1
    return sum(rewards), rewards, first


@pytest.mark.parametrize("choose", [lambda i, m: 0, lambda i, m: i % int(m.sum())], ids=["FGD", "spread"])
def test_fragmentation_shaping_rewards_every_decision_and_leaves_the_return(choose) -> None:
    """``frag_shaping``: a reward on the decisions long before any pod fails, and a return that
    differs from the exact one by a constant of the seed (the potential at the first decision),
    whatever the actions: which policies are best is unchanged."""
    exact, plain, _ = _returns(NodeSelectEnv(**SMALL, k=4), choose)
    shaped, rewards, first = _returns(NodeSelectEnv(**SMALL, k=4, frag_shaping=2.0), choose)
    assert len(rewards) == len(plain) > 100
    early = len(rewards) * 9 // 10
    assert not any(plain[1:early])  # the exact reward: nothing until pods fail near the end
    assert sum(1 for r in rewards[1:early] if r) > early // 4  # the shaped one: most decisions
    assert first > 0
    assert shaped - exact == pytest.approx(2.0 * first, abs=1e-6)


def test_fragmentation_shaping_needs_protocol_mode() -> None:
    with pytest.raises(ValueError, match="frag_shaping"):
        NodeSelectEnv(**SMALL, mode="time", frag_shaping=1.0)
