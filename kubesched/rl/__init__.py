"""The Gymnasium environment ``kubesched/NodeSelect-v0`` (needs the ``rl`` extra: gymnasium).

    import gymnasium as gym
    import kubesched.rl  # registers the environment
    env = gym.make("kubesched/NodeSelect-v0", trace="default", seeds=[0, 1, 2], k=16)

See docs/learning.md.
"""

from __future__ import annotations

from kubesched.learn.env import ENV_ID, NodeSelectEnv

__all__ = ["ENV_ID", "NodeSelectEnv"]


def _register() -> None:
    import gymnasium as gym

    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point="kubesched.learn.env:NodeSelectEnv")


_register()
