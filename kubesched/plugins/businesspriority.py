"""BusinessPriority: weigh a pod's business features against node state (docs/plugins/BusinessPriority.md).

Per node, with integers in [0, 100]: ``P`` the pod's business priority, ``F`` free resources
(LowestLoad's score), ``S`` the pod's latency sensitivity and ``T`` the node's latency-tier
score. Score = (wP * (P * F // 100) + wF * F + wL * (S * T // 100 + 100 - S)) // (wP + wF + wL),
weights in thousandths. A high-priority pod thus cares more about free resources, and a
latency-sensitive pod about a low latency tier. Bad pod annotations fall back to defaults.
Not row-local: it reads pod annotations, which the equivalence signature leaves out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.selectors import parse_int64
from kubesched.errors import InputError, join_path
from kubesched.framework.interfaces import MAX_NODE_SCORE, ScorePlugin
from kubesched.framework.plugin_args import args_body, shown
from kubesched.plugins.lowestload import free_score as _free_score
from kubesched.plugins.lowestload import parse_load_resources

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.state.snapshot import Snapshot

NAME = "BusinessPriority"
ROOT = f"{NAME}Args"
WEIGHT_KEYS = ("priority", "freeResources", "latency")
DEFAULT_WEIGHTS = {"priority": 0.4, "freeResources": 0.3, "latency": 0.3}
FIELDS = (
    "weights",
    "priorityAnnotation",
    "latencyBudgetAnnotation",
    "nodeLatencyTierLabel",
    "maxPriority",
    "relaxedLatencyBudgetMs",
    "maxLatencyTier",
    "resources",
)
MILLI = 1000


def _positive_int(body: Mapping[str, Any], key: str, default: int) -> int:
    """An integer arg >= 1 (it divides), with a path-aware error."""
    v = body.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise InputError(f"invalid value {shown(v)}: must be an integer >= 1", path=join_path(ROOT, key))
    return v


def _name(body: Mapping[str, Any], key: str, default: str) -> str:
    v = body.get(key, default)
    if not isinstance(v, str) or not v:
        raise InputError(f"invalid value {shown(v)}: must be a non-empty string", path=join_path(ROOT, key))
    return v


def parse_weights(raw: Any) -> dict[str, int]:
    """Weights as non-negative numbers summing to > 0, kept in thousandths for integer arithmetic."""
    path = join_path(ROOT, "weights")
    if raw is None:
        raw = DEFAULT_WEIGHTS
    if not isinstance(raw, Mapping):
        raise InputError(f"expected an object, got {type(raw).__name__}", path=path)
    out: dict[str, int] = {}
    for key in raw:
        if key not in WEIGHT_KEYS:
            raise InputError(
                f'unknown field "{key}" (known: {", ".join(WEIGHT_KEYS)})', path=join_path(path, str(key))
            )
    for key in WEIGHT_KEYS:
        v = raw.get(key, 0)
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
            raise InputError(f"invalid value {shown(v)}: must be a non-negative number", path=join_path(path, key))
        out[key] = round(v * MILLI)
    if sum(out.values()) <= 0:
        raise InputError("invalid value: the weights must sum to more than 0 (in steps of 0.001)", path=path)
    return out


class BusinessPriority(ScorePlugin):
    """Score only, no normalization; reads annotations and the cluster, so it does not sign pods."""

    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        body = args_body(NAME, self.args, FIELDS)
        self.weights = parse_weights(body.get("weights"))
        self.priority_annotation = _name(body, "priorityAnnotation", "kubesched.io/business-priority")
        self.latency_budget_annotation = _name(
            body, "latencyBudgetAnnotation", "kubesched.io/latency-budget-ms"
        )
        self.node_latency_tier_label = _name(body, "nodeLatencyTierLabel", "kubesched.io/latency-tier")
        self.max_priority = _positive_int(body, "maxPriority", 1000)
        self.relaxed_budget_ms = _positive_int(body, "relaxedLatencyBudgetMs", 1000)
        self.max_tier = _positive_int(body, "maxLatencyTier", 3)
        self.resources = parse_load_resources(body.get("resources"), join_path(ROOT, "resources"))

    # ---- pod features (never fatal) ----------------------------------------------------
    def business_priority(self, pod: Pod) -> int:
        """P: the annotation (an integer 0-100) when valid, else spec.priority * 100 // maxPriority."""
        text = pod.annotations.get(self.priority_annotation)
        if text is not None:
            v = parse_int64(text.strip())
            if v is not None and 0 <= v <= MAX_NODE_SCORE:
                return v
        return min(max(pod.priority, 0) * MAX_NODE_SCORE // self.max_priority, MAX_NODE_SCORE)

    def latency_sensitivity(self, pod: Pod) -> int:
        """S: 100 - budget * 100 // relaxedLatencyBudgetMs, in [0, 100]; 0 without a valid budget."""
        text = pod.annotations.get(self.latency_budget_annotation)
        v = parse_int64(text.strip()) if text is not None else None
        if v is None or v < 0:
            return 0
        return max(
            MAX_NODE_SCORE - min(v, self.relaxed_budget_ms) * MAX_NODE_SCORE // self.relaxed_budget_ms, 0
        )

    # ---- node state (vectorised) -------------------------------------------------------
    def tier_score(self, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        """T: 100 - tier * 100 // maxLatencyTier; a missing, non-integer or negative tier is the worst."""
        key = self.node_latency_tier_label
        codes = snap.labels.codes(key)[np.asarray(rows, np.intp)]
        ints, valid = snap.labels.int64_values(key)
        if len(ints) == 0:
            tier = np.full(len(codes), self.max_tier, np.int64)
        else:
            safe = np.where(codes >= 0, codes, 0)
            ok = (codes >= 0) & valid[safe] & (ints[safe] >= 0)
            tier = np.where(ok, np.minimum(ints[safe], self.max_tier), self.max_tier)
        return (MAX_NODE_SCORE - tier * MAX_NODE_SCORE // self.max_tier).astype(np.int64)

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        p = self.business_priority(pod)
        s = self.latency_sensitivity(pod)
        free = _free_score(snap, rows, pod, self.resources)
        latency = s * self.tier_score(snap, rows) // MAX_NODE_SCORE + (MAX_NODE_SCORE - s)
        w = self.weights
        total = (
            w["priority"] * (p * free // MAX_NODE_SCORE) + w["freeResources"] * free + w["latency"] * latency
        )
        return np.clip(total // sum(w.values()), 0, MAX_NODE_SCORE).astype(np.int64)
