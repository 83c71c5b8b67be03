"""``NodeSelectEnv``: pick the node for each pod among the base policy's top-K feasible
candidates, in an FGD-protocol run (``mode="protocol"``, ``kubesched.learn.episode``) or a
time-mode replay of the trace (``mode="time"``, ``kubesched.learn.replay``).

Observation: a float32 vector, the pod's features then K candidate rows
(``kubesched.plugins.learned.features``). Action: a candidate index; ``action_masks()`` marks the feasible
ones, and an index outside them means candidate 0, the base policy's choice (so random agents and
``check_env`` are safe). Reward: in protocol mode minus the GPUs requested by pods that fail
before the next decision, in time mode minus the GPU-hours pods spend pending until the next
decision; then minus ``shaping`` x the chosen candidate's base-score gap to candidate 0 (FGD score
points / 100; 0 by default: the exact objective); then, with ``frag_shaping`` x (protocol mode),
the change of a potential, minus x times FGD's cluster fragmentation in GPUs, from one decision to
the next (0 after the last one): a reward on every decision, while the failures that make the
exact reward come only at the end, whose sum over an episode is a constant of the seed, so that
it changes which policies are best in no way (Ng, Harada and Russell, 1999). The cost incurred
before the first decision is charged to the first step. An episode is one protocol run up to ``horizon`` % arrived, or one
whole replay, on one of ``seeds`` (drawn with the reset seed, or ``options["run_seed"]``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from kubesched.errors import InputError
from kubesched.learn.data import Instance
from kubesched.learn.episode import Episode
from kubesched.learn.metric import LEVEL, metric_pods, unallocated
from kubesched.learn.replay import ReplayEpisode, prepare_replay
from kubesched.plugins.learned.features import CANDIDATE_FEATURES, DEFAULT_K, CandidateFeatures

ENV_ID = "kubesched/NodeSelect-v0"
MODES = ("protocol", "time")
OBS_BOUND = 16.0  # features are fractions of node / spec maxima; clipped to this for the Box


class NodeSelectEnv(gym.Env):
    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(
        self,
        trace: str = "default",
        nodes: str = "gpu",
        seeds: Sequence[int] = (0,),
        k: int = DEFAULT_K,
        *,
        mode: str = "protocol",
        horizon: float = 100.5,
        tune: float = 1.3,
        speedup: float = 1.0,
        max_nodes: int | None = None,
        max_pods: int | None = None,
        shaping: float = 0.0,
        frag_shaping: float = 0.0,
    ) -> None:
        if not seeds:
            raise ValueError("at least one run seed is needed")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        if not speedup > 0:
            raise ValueError("speedup must be greater than 0")
        if frag_shaping and mode != "protocol":
            raise ValueError("frag_shaping needs mode='protocol'")
        self.mode = mode
        self.speedup = speedup
        self.instance = Instance(trace, nodes, max_nodes, max_pods, tune)
        self.seeds = [int(s) for s in seeds]
        self.features = CandidateFeatures(k)
        self.k = k
        self.horizon = horizon
        self.shaping = shaping
        self.frag_shaping = frag_shaping
        self.observation_space = gym.spaces.Box(-OBS_BOUND, OBS_BOUND, (self.features.size,), np.float32)
        self.action_space = gym.spaces.Discrete(k)
        self.episode: Episode | ReplayEpisode | None = None
        self._carry = 0.0  # the cost incurred before the first decision, charged to the first step
        self._metric_pods: int | None = None  # pods through the last event the metric averages

    def _obs(self) -> np.ndarray:
        ep = self.episode
        if ep is None or ep.pending is None:
            return np.zeros(self.features.size, np.float32)
        return np.clip(ep.pending.obs, -OBS_BOUND, OBS_BOUND).astype(np.float32)

    def action_masks(self) -> np.ndarray:
        ep = self.episode
        if ep is None or ep.pending is None:
            mask = np.zeros(self.k, bool)
            mask[0] = True
            return mask
        return ep.pending.mask.copy()

    def _info(self) -> dict[str, Any]:
        ep = self.episode
        assert ep is not None
        info: dict[str, Any] = {"run_seed": ep.seed, "decisions": ep.decisions}
        if isinstance(ep, ReplayEpisode):
            info["pending_gpu_hours"] = ep.waited
            if ep.done:
                info.update(ep.summary())
            return info
        info["failed_gpus"] = ep.failed_milli / 1000
        # the metric only where it is defined and the episode ran every event it averages
        if ep.done and self._metric_pods is not None and len(ep.events) >= self._metric_pods:
            info["unallocated_at_100"] = unallocated(ep.result(), LEVEL)
        return info

    def _advance(self) -> float:
        """Run the episode to the next decision; the cost on the way (GPUs failed or GPU-hours
        pending)."""
        ep = self.episode
        assert ep is not None
        if isinstance(ep, ReplayEpisode):
            return ep.advance()
        return ep.advance() / 1000

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        run_seed = (options or {}).get("run_seed")
        if run_seed is None:
            run_seed = self.seeds[int(self.np_random.integers(len(self.seeds)))]
        self.close()
        if self.mode == "time":
            self.episode = ReplayEpisode(prepare_replay(self.instance, int(run_seed), self.speedup), self.features)
        else:
            prep = self.instance.prepare(int(run_seed))
            try:
                self._metric_pods = metric_pods(prep, LEVEL)
            except InputError:  # no event near 100 % arrived on this seed: no metric in info
                self._metric_pods = None
            self.episode = Episode(prep, self.features, horizon=self.horizon, frag=bool(self.frag_shaping))
        self._carry = self._advance()
        return self._obs(), self._info()

    def step(self, action):
        ep = self.episode
        if ep is None:
            raise RuntimeError("call reset() first")
        reward, self._carry = -self._carry, 0.0
        if ep.pending is not None:
            a = int(action)
            if not (0 <= a < self.k and ep.pending.mask[a]):
                a = 0
            if self.shaping:
                reward += self.shaping * self._shaping(a)
            before = self._potential()
            ep.act(a)
            reward -= self._advance()
            if self.frag_shaping:
                reward += (0.0 if ep.done else self._potential()) - before
        return self._obs(), float(reward), ep.done, False, self._info()

    def close(self) -> None:
        """Drops an unfinished time-mode replay."""
        if isinstance(self.episode, ReplayEpisode):
            self.episode.close()

    def _potential(self) -> float:
        """Minus ``frag_shaping`` x the cluster's fragmentation in GPUs (0 without it)."""
        if not self.frag_shaping or not isinstance(self.episode, Episode):
            return 0.0
        return -self.frag_shaping * self.episode.frag_milli / 1000

    def _shaping(self, a: int) -> float:
        """Minus the chosen candidate's base-score gap to candidate 0 (FGD score points / 100)."""
        assert self.episode is not None and self.episode.pending is not None
        obs = self.episode.pending.obs
        col = len(obs) - self.k * len(CANDIDATE_FEATURES) + CANDIDATE_FEATURES.index("base_score")
        step = len(CANDIDATE_FEATURES)
        return float(obs[col + a * step]) - float(obs[col])
