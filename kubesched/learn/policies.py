"""The configurations of the policies the learning track compares (FGD, BestFit, learned, and the
look-ahead policies over FGD: a packing plan, rollouts, a value function)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubesched.experiment.protocol import policy_config
from kubesched.gpu.frag import TypicalPods

LEARNED_WEIGHT = 1000  # LearnedScore decides; FGDScore (weight 1) stays for Open-Gpu-Share's GPU pick
OVER_FGD = 101  # a plugin over FGDScore at 1: lexicographic (FGD's scores are 0..100)


def over_fgd(typical: TypicalPods, plugin: str, args: dict[str, Any], weight: int, fgd_weight: int = 1,
             gpu_model: str = "annotations") -> dict:
    """FGD's protocol configuration (for ``gpu_model``'s GPUs) with ``plugin`` (``args``) scoring
    at ``weight`` beside FGDScore at ``fgd_weight``; FGDScore stays for Open-Gpu-Share's GPU pick."""
    doc = policy_config("FGD", typical, gpu_model=gpu_model)
    prof = doc["profiles"][0]
    prof["plugins"]["score"]["enabled"] = [
        {"name": plugin, "weight": weight},
        {"name": "FGDScore", "weight": fgd_weight},
    ]
    prof["pluginConfig"].append({"name": plugin, "args": args})
    return doc


def learned_config(model: str | Path, typical: TypicalPods, gpu_model: str = "annotations") -> dict:
    """FGD's protocol configuration with LearnedScore deciding among FGDScore's top candidates."""
    return over_fgd(typical, "LearnedScore", {"model": str(model)}, LEARNED_WEIGHT, gpu_model=gpu_model)


def plan_config(plan: str | Path, typical: TypicalPods, weight: int = OVER_FGD, fgd_weight: int = 1) -> dict:
    """PlanScore (``weight``) steering by a packing plan beside FGDScore (``fgd_weight``: at 1
    under 101 it breaks PlanScore's ties; at 101 over 1 PlanScore breaks FGD's)."""
    return over_fgd(typical, "PlanScore", {"plan": str(plan)}, weight, fgd_weight)


def rollout_config(typical: TypicalPods, args: dict | None = None) -> dict:
    """RolloutScore (101) choosing among FGD's near-ties late in the run; FGDScore (1) decides
    everywhere else."""
    return over_fgd(typical, "RolloutScore", dict(args or {}), OVER_FGD)


def value_config(value: str | Path, typical: TypicalPods, args: dict | None = None) -> dict:
    """ValueScore (101) choosing by a value function of the cluster among FGD's near-ties late in
    the run; FGDScore (1) decides everywhere else."""
    return over_fgd(typical, "ValueScore", {"value": str(value), **(args or {})}, OVER_FGD)
