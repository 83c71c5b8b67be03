"""The configurations of the policies the learning track compares (FGD, BestFit, learned)."""

from __future__ import annotations

from pathlib import Path

from kubesched.experiment.protocol import policy_config
from kubesched.gpu.frag import TypicalPods

LEARNED_WEIGHT = 1000  # LearnedScore decides; FGDScore (weight 1) stays for Open-Gpu-Share's GPU pick


def learned_config(model: str | Path, typical: TypicalPods) -> dict:
    """FGD's protocol configuration with LearnedScore deciding among FGDScore's top candidates."""
    doc = policy_config("FGD", typical)
    prof = doc["profiles"][0]
    prof["plugins"]["score"]["enabled"] = [
        {"name": "LearnedScore", "weight": LEARNED_WEIGHT},
        {"name": "FGDScore", "weight": 1},
    ]
    prof["pluginConfig"].append({"name": "LearnedScore", "args": {"model": str(model)}})
    return doc


PLAN_WEIGHT = 101  # PlanScore over FGDScore at 1: lexicographic (FGD's scores are 0..100)


def plan_config(plan: str | Path, typical: TypicalPods, weight: int = PLAN_WEIGHT, fgd_weight: int = 1) -> dict:
    """FGD's protocol configuration with PlanScore (``weight``) steering by a packing plan and
    FGDScore (``fgd_weight``; at 1 under 101 it breaks PlanScore's ties) picking the GPU for
    Open-Gpu-Share."""
    doc = policy_config("FGD", typical)
    prof = doc["profiles"][0]
    prof["plugins"]["score"]["enabled"] = [
        {"name": "PlanScore", "weight": weight},
        {"name": "FGDScore", "weight": fgd_weight},
    ]
    prof["pluginConfig"].append({"name": "PlanScore", "args": {"plan": str(plan)}})
    return doc


def rollout_config(typical: TypicalPods, args: dict | None = None) -> dict:
    """FGD's protocol configuration with RolloutScore (weight 101) choosing among FGD's near-ties
    late in the run, and FGDScore (weight 1) deciding everywhere else and picking the GPU."""
    doc = policy_config("FGD", typical)
    prof = doc["profiles"][0]
    prof["plugins"]["score"]["enabled"] = [
        {"name": "RolloutScore", "weight": PLAN_WEIGHT},
        {"name": "FGDScore", "weight": 1},
    ]
    prof["pluginConfig"].append({"name": "RolloutScore", "args": dict(args or {})})
    return doc
