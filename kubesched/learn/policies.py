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
