"""Reinforcement learning on ``kubesched/NodeSelect-v0``: behaviour cloning of the base policy, then
MaskablePPO (sb3-contrib), exported to a numpy ``.npz`` (``kubesched.plugins.learned.model``).

The policy is residual: candidate 0 is the base policy's choice, and behaviour cloning first
trains the network to pick it (cross-entropy on the base policy's own decisions), so PPO starts
at the base policy and only moves away from it where the return improves. Everything is seeded
(the env's reset seeds, torch, the PPO sampler); ``torch.set_num_threads(1)`` keeps runs
reproducible and fair on a shared machine. Needs the ``rl`` extra.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubesched.plugins.learned.model import PolicyModel

NET_ARCH = (64, 64)


@dataclass
class TrainConfig:
    trace: str = "default"
    nodes: str = "gpu"
    seeds: Sequence[int] = (0, 1, 2, 3)
    k: int = 16
    max_nodes: int | None = None
    max_pods: int | None = None
    bc_episodes: int = 1
    bc_epochs: int = 20
    ppo_steps: int = 30_000
    n_steps: int = 2048
    batch_size: int = 256
    learning_rate: float = 1e-4
    ent_coef: float = 0.0
    clip_range: float = 0.1
    shaping: float = 0.0
    bc_smoothing: float = 0.0
    frag_shaping: float = 0.0
    seed: int = 0


@dataclass
class TrainResult:
    model: PolicyModel
    bc_accuracy: float  # share of the base policy's decisions the cloned net picks candidate 0 on
    bc_samples: int
    ppo_steps: int
    cpu_seconds: float
    wall_seconds: float
    log: list[dict[str, Any]] = field(default_factory=list)
    checkpoint: Any = None  # the MaskablePPO model (save() writes the stable-baselines3 zip)


def make_env(cfg: TrainConfig) -> Any:
    from kubesched.learn.env import NodeSelectEnv

    return NodeSelectEnv(cfg.trace, cfg.nodes, cfg.seeds, cfg.k, max_nodes=cfg.max_nodes, max_pods=cfg.max_pods,
                         shaping=cfg.shaping, frag_shaping=cfg.frag_shaping)


def base_rollouts(env: Any, episodes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the base policy's own decisions (action 0 throughout)."""
    obs_l, mask_l = [], []
    for e in range(episodes):
        obs, _ = env.reset(seed=seed + e)
        done = False
        while not done:
            m = env.action_masks()
            if m.sum() > 1:
                obs_l.append(obs)
                mask_l.append(m)
            obs, _, done, _, _ = env.step(0)
    return np.asarray(obs_l, np.float32), np.asarray(mask_l, bool)


def behaviour_clone(policy: Any, obs: np.ndarray, masks: np.ndarray, epochs: int, seed: int, lr: float = 1e-3,
                    smoothing: float = 0.0) -> float:
    """Train the actor to pick candidate 0 on the base policy's decisions; the accuracy after.
    ``smoothing`` e: the target gives candidate 0 1 - e and spreads e evenly over every feasible
    candidate, so that the clone is sure of the base policy's choice only up to a bounded margin
    (log((1 - e + e/n) / (e/n)) for n candidates) and PPO's sampling still tries the others."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    o, m = torch.as_tensor(obs), torch.as_tensor(masks)
    target = m.float() * (smoothing / m.sum(dim=1, keepdim=True).clamp(min=1))
    target[:, 0] += 1.0 - smoothing
    params = [*policy.mlp_extractor.policy_net.parameters(), *policy.action_net.parameters()]
    opt = torch.optim.Adam(params, lr=lr)
    for _ in range(epochs):
        for idx in torch.randperm(len(o), generator=gen).split(256):
            logits = actor_logits(policy, o[idx]).masked_fill(~m[idx], -1e8)
            loss = -(target[idx] * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        pick = actor_logits(policy, o).masked_fill(~m, -1e8).argmax(dim=1)
    return float((pick == 0).float().mean()) if len(o) else 1.0


def actor_logits(policy: Any, obs: Any) -> Any:
    feats = policy.extract_features(obs, policy.pi_features_extractor)
    return policy.action_net(policy.mlp_extractor.forward_actor(feats))


def export(policy: Any, k: int, meta: dict[str, Any]) -> PolicyModel:
    """The actor's linear layers (tanh between them) as a numpy model."""
    import torch

    layers = [m for m in policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)]
    acts = [m for m in policy.mlp_extractor.policy_net if not isinstance(m, torch.nn.Linear)]
    if not all(isinstance(a, torch.nn.Tanh) for a in acts):
        raise ValueError("only tanh activations are exported")
    layers.append(policy.action_net)
    ws = [lay.weight.detach().cpu().numpy().T.copy() for lay in layers]
    bs = [lay.bias.detach().cpu().numpy().copy() for lay in layers]
    return PolicyModel(k, ws, bs, "FGD", meta=meta)


def train(cfg: TrainConfig, progress: Callable[[str], None] | None = None) -> TrainResult:
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    torch.manual_seed(cfg.seed)
    t0, c0 = time.perf_counter(), time.process_time()
    env = make_env(cfg)
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=cfg.n_steps,
        batch_size=cfg.batch_size,
        learning_rate=cfg.learning_rate,
        ent_coef=cfg.ent_coef,
        clip_range=cfg.clip_range,
        gamma=1.0,
        gae_lambda=0.95,
        policy_kwargs={"net_arch": {"pi": list(NET_ARCH), "vf": list(NET_ARCH)}},
        seed=cfg.seed,
        verbose=0,
        device="cpu",
    )
    obs, masks = base_rollouts(env, cfg.bc_episodes, cfg.seed)
    acc = behaviour_clone(model.policy, obs, masks, cfg.bc_epochs, cfg.seed, smoothing=cfg.bc_smoothing)
    if progress:
        progress(f"behaviour cloning: {len(obs)} decisions, candidate 0 picked on {acc:.1%}")
    log: list[dict[str, Any]] = []
    if cfg.ppo_steps > 0:
        from stable_baselines3.common.callbacks import BaseCallback

        class _Log(BaseCallback):
            def _on_step(self) -> bool:
                for info in self.locals.get("infos", []):
                    if "unallocated_at_100" in info:
                        rec = {"steps": self.num_timesteps, "run_seed": info["run_seed"],
                               "unallocated_at_100": info["unallocated_at_100"], "failed_gpus": info["failed_gpus"]}
                        log.append(rec)
                        if progress:
                            progress(f"episode at {rec['steps']} steps: seed {rec['run_seed']}, "
                                     f"unallocated {rec['unallocated_at_100']:.2f} %")
                return True

        model.learn(total_timesteps=cfg.ppo_steps, callback=_Log())
    cpu = time.process_time() - c0
    meta = {
        "trace": cfg.trace, "nodes": cfg.nodes, "seeds": list(cfg.seeds), "max_nodes": cfg.max_nodes,
        "max_pods": cfg.max_pods, "bc_episodes": cfg.bc_episodes, "bc_epochs": cfg.bc_epochs,
        "bc_accuracy": acc, "ppo_steps": cfg.ppo_steps, "learning_rate": cfg.learning_rate,
        "clip_range": cfg.clip_range, "ent_coef": cfg.ent_coef, "shaping": cfg.shaping, "bc_smoothing": cfg.bc_smoothing,
        "frag_shaping": cfg.frag_shaping, "seed": cfg.seed,
        "net_arch": list(NET_ARCH), "cpu_seconds": cpu,
    }
    pm = export(model.policy, cfg.k, meta)
    return TrainResult(pm, acc, len(obs), cfg.ppo_steps, cpu, time.perf_counter() - t0, log, model)
