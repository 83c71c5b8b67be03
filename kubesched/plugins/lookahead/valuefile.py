"""Reading and writing a value function (``kubesched learn value``'s JSON) as data: every field
checked, one line naming the file and the field on anything wrong."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kubesched.errors import InputError, join_path
from kubesched.framework.plugin_args import shown
from kubesched.plugins.lookahead.clusterstate import FEATURES
from kubesched.plugins.lookahead.jsonfile import load_json

FORMAT, VERSION = "kubesched-value", 1
MAX_BYTES = 1024 * 1024
#: ValueScore's decision settings (its args but ``value``): a value file's ``policy`` sets them
#: for the settings it was fitted with, the plugin's args over that
DEFAULTS: dict[str, float] = {"fromAllocatedPct": 85.0, "topK": 3, "margin": 2, "minGain": 0.0, "epsilon": 0.0,
                              "seed": 0}
INTEGER = ("topK", "margin", "seed")


def check_settings(body: dict[str, Any], root: str) -> dict[str, float]:
    """``body``'s decision settings (any of DEFAULTS), checked; an InputError naming ``root``.field
    on an unknown or bad one."""
    for key, v in body.items():
        if key not in DEFAULTS:
            raise InputError(f"unknown field (one of {', '.join(DEFAULTS)})", path=join_path(root, key))
        ok = not isinstance(v, bool) and isinstance(v, int if key in INTEGER else int | float) and v >= 0
        if not ok or not math.isfinite(v) or (key == "topK" and v < 1) or (key == "epsilon" and v > 1):
            want = "positive integer" if key in INTEGER else "number in [0, 1]" if key == "epsilon" else "number >= 0"
            raise InputError(f"invalid value {shown(v)}: must be a {want}", path=join_path(root, key))
    return dict(body)


@dataclass(frozen=True)
class ValueFunction:
    """A linear value of the cluster's features (``clusterstate.FEATURES``): the GPU milli, in %
    of the cluster's, that the run will still fail to place (lower is better)."""

    weights: np.ndarray
    intercept: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)
    policy: dict[str, float] = field(default_factory=dict)  # the decision settings it was fitted for

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return x @ self.weights + self.intercept

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, "features": list(FEATURES),
                "weights": [float(w) for w in self.weights], "intercept": float(self.intercept),
                "policy": self.policy, "meta": self.meta}

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n")


def zero_function(policy: dict[str, float] | None = None) -> ValueFunction:
    """Every state worth the same: ValueScore then keeps FGD's choice (a policy iteration's start)."""
    return ValueFunction(np.zeros(len(FEATURES)), 0.0, {}, dict(policy or {}))


def _number(v: Any, path: str) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise InputError(f"expected a finite number, got {v!r}", path=path)
    return float(v)


def parse_value(doc: Any) -> ValueFunction:
    if not isinstance(doc, dict):
        raise InputError(f"expected an object, got {type(doc).__name__}", path="")
    if doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise InputError(f"not a value function (expected format {FORMAT!r}, version {VERSION})", path="format")
    names = doc.get("features")
    if names != list(FEATURES):
        raise InputError(f"expected the features {', '.join(FEATURES)} in this order", path="features")
    ws = doc.get("weights")
    if not isinstance(ws, list) or len(ws) != len(FEATURES):
        raise InputError(f"expected a list of {len(FEATURES)} numbers (one per feature)", path="weights")
    weights = np.array([_number(w, join_path("weights", i)) for i, w in enumerate(ws)])
    meta, policy = doc.get("meta", {}), doc.get("policy", {})
    for key, v in (("meta", meta), ("policy", policy)):
        if not isinstance(v, dict):
            raise InputError(f"expected an object, got {type(v).__name__}", path=key)
    return ValueFunction(weights, _number(doc.get("intercept", 0.0), "intercept"), meta,
                         check_settings(policy, "policy"))


def load_value(path: str | Path) -> ValueFunction:
    """The value function in ``path``; an InputError naming the file (and the field) on anything wrong."""
    return load_json(path, parse_value, MAX_BYTES)
