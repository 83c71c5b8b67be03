"""TargetLoadPacking (scheduler-plugins Trimaran): pack nodes up to a target CPU utilization.

Per node, with U the measured CPU utilization (percent of capacity), C the node's CPU capacity
(millicores), the pod's predicted CPU p and that of pods placed since the measurement m:

    P = 100 * (U/100 * C + p + m) / C                         (0 when C is 0)
    score = round((100 - T) * P / T + T)        if P <= T     (rises from T to 100 at P = T)
          = round(T * (100 - P) / (100 - T))    if T < P <= 100
          = 0                                   if P > 100

A container's predicted CPU is its limit, else round(request * defaultRequestsMultiplier), else
defaultRequests.cpu; the pod's overhead is added. A node without a CPU measurement scores 0 as
upstream. When no measurement is available at all (Prometheus down or stale, no source), U*C/100
is the node's summed CPU requests instead (docs/plugins/TargetLoadPacking.md).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.resources import CPU, parse_resource_list
from kubesched.framework.interfaces import MIN_NODE_SCORE, ScorePlugin
from kubesched.plugins.loadaware.args import parse_target_load_packing
from kubesched.plugins.loadaware.assigned import AssignedPods
from kubesched.plugins.loadaware.source import UtilizationReader
from kubesched.state.memo import NODES

if TYPE_CHECKING:
    from kubesched.api.objects import Node, Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.state.snapshot import Snapshot

NAME = "TargetLoadPacking"


def go_round(x: float) -> int:
    """Go's math.Round: half away from zero."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def _cpu(resources: Any) -> int | None:
    """The cpu entry of a raw ResourceList (already validated when the pod was parsed)."""
    if not resources:
        return None
    return parse_resource_list(resources, "").get(CPU)


def predict_pod_milli(pod: Pod, multiplier: float, default_milli: int) -> int:
    """PredictUtilisation summed over the containers, plus the pod's CPU overhead."""
    spec = pod.raw.get("spec") or {}
    total = 0
    for c in spec.get("containers") or []:
        res = c.get("resources") or {}
        limit = _cpu(res.get("limits"))
        if limit is not None:
            total += limit
            continue
        request = _cpu(res.get("requests"))
        total += go_round(request * multiplier) if request is not None else default_milli
    return total + (_cpu(spec.get("overhead")) or 0)


def node_cpu_capacity(node: Node) -> int:
    """status.capacity cpu in millicores (upstream reads capacity, not allocatable)."""
    status = node.raw.get("status") or {}
    cap = _cpu(status.get("capacity"))
    return cap if cap is not None else node.allocatable.get(CPU, 0)


def tlp_scores(predicted: np.ndarray, target: int) -> np.ndarray:
    """The piecewise score of predicted utilization percentages (float64 -> int64)."""
    t = float(target)
    below = (100.0 - t) * predicted / t + t
    with np.errstate(divide="ignore", invalid="ignore"):
        above = t * (100.0 - predicted) / (100.0 - t) if t < 100 else np.zeros_like(predicted)
    raw = np.where(predicted > t, np.where(predicted > 100.0, 0.0, above), below)
    return np.floor(raw + 0.5).astype(np.int64)  # Go's math.Round (values are >= 0)


class TargetLoadPacking(ScorePlugin):
    """Score only; not row-local (measurements change without the snapshot changing)."""

    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        self.cfg = parse_target_load_packing(self.args)
        self.reader = UtilizationReader(NAME, self.cfg.provider, handle)
        self.assigned = AssignedPods()

    def predict(self, pod: Pod) -> int:
        return predict_pod_milli(pod, self.cfg.multiplier, self.cfg.default_requests_milli)

    @staticmethod
    def _capacity(snap: Snapshot) -> np.ndarray:
        return snap.memo.get(
            (NAME, "capacity"),
            lambda: np.fromiter((node_cpu_capacity(n) for n in snap.nodes), np.float64, snap.n),
            on=NODES,
        )

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.intp)
        cap = self._capacity(snap)[rows]
        pod_milli = float(self.predict(pod))
        usage = self.reader.read()
        if usage is None:  # requests fallback: the node's summed CPU requests, all pods included
            col = snap.res_index.get(CPU)
            util_milli = (
                snap.requested[rows, col].astype(np.float64) if col is not None else np.zeros(len(rows))
            )
            missing = np.zeros(len(rows))
            measured = np.ones(len(rows), bool)
        else:
            cpu_avg = self.reader.columns(usage, snap)[0][rows]
            measured = ~np.isnan(cpu_avg)
            util_milli = np.where(measured, cpu_avg, 0.0) / 100.0 * cap
            missing = np.zeros(len(rows))
            prom = self.reader.prometheus
            if prom is not None:  # only a lagging source needs the correction (the simulator's is current)
                self.assigned.update(snap, prom.clock())
                missing = self.assigned.missing_milli(snap, prom.window_end, self.predict)[rows].astype(
                    np.float64
                )
        safe = np.where(cap != 0, cap, 1.0)
        predicted = np.where(cap != 0, 100.0 * (util_milli + pod_milli + missing) / safe, 0.0)
        scores = tlp_scores(predicted, self.cfg.target_utilization)
        return np.where(measured, scores, MIN_NODE_SCORE).astype(np.int64)
