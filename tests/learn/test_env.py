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

