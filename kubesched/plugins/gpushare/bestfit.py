"""BestFitScore: the node left with the least CPU and GPU once the pod is on it.

``raw = int(100 (1 - [(cpuLeft - cpu)/128000 * 0.5 + (gpuLeft - gpu)/8000 * 0.5]))``, then
NormalizeScore scales min..max over the feasible nodes to 0..100 (all 0 when they are equal).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kubesched.framework.interfaces import MAX_NODE_SCORE
from kubesched.plugins.gpushare import scores
from kubesched.plugins.gpushare.common import CpuGpuLeftScore

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState

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


class BestFitScore(CpuGpuLeftScore):
    name = NAME
    few_rows = staticmethod(scores.bestfit_rows)
    many_rows = staticmethod(scores.bestfit_array)

    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray | None:
        return min_max_normalize(scores)
