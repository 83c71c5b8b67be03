"""BestFitScore: the node left with the least CPU and GPU once the pod is on it.

``raw = int(100 (1 - [(cpuLeft - cpu)/128000 * 0.5 + (gpuLeft - gpu)/8000 * 0.5]))``, then
NormalizeScore scales min..max over the feasible nodes to 0..100 (all 0 when they are equal).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kubesched.framework.interfaces import MAX_NODE_SCORE, ScorePlugin
from kubesched.gpu.state import GpuState
from kubesched.plugins.gpushare import scores
from kubesched.plugins.gpushare.common import ReadsGpuAsk, cpu_left, cycle_ask, pod_cpu

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.state.snapshot import Snapshot

NAME = "BestFitScore"


def min_max_normalize(scores: np.ndarray) -> np.ndarray:
    """The simulator's NormalizeScore: (s - lowest) * 100 / (highest - lowest), integer."""
    if scores.size == 0:
        return scores
    # the ufuncs' own reductions: ndarray.min and max go through Python wrappers (every cycle)
    lo, hi = int(np.minimum.reduce(scores)), int(np.maximum.reduce(scores))
    if hi == lo:
        return np.zeros_like(scores)
    return (scores - lo) * MAX_NODE_SCORE // (hi - lo)


class BestFitScore(ReadsGpuAsk, ScorePlugin):
    name = NAME

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        ask = cycle_ask(state, pod, snap)
        cl, gl = cpu_left(snap, rows), GpuState.of(snap).total_left(rows)
        c, g = float(pod_cpu(pod)), float(ask.total_milli if ask else 0)
        if scores.few(rows):
            return np.array(scores.bestfit_rows(cl.tolist(), gl.tolist(), c, g), np.int64)
        return scores.bestfit_array(cl, gl, c, g)

    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray | None:
        return min_max_normalize(scores)
