"""GpuClusteringScore: put GPU pods with pods of the same kind (sharing, or k whole GPUs).

``base = 25 * (8000 - gpuLeft) / 8000`` (integer); + 75 when the node holds only pods of the
pod's kind, + 50 when it holds that kind among others, + 25 when it holds no GPU pod, + 0 when
it holds only other kinds. Pods asking for no GPU score 0 everywhere. The formula is
``kubesched.plugins.gpushare.scores``' (LearnedScore's features read it too).
"""

from __future__ import annotations

import numpy as np

from kubesched.gpu.model import GpuAsk
from kubesched.gpu.state import GpuState
from kubesched.plugins.gpushare import scores
from kubesched.plugins.gpushare.common import GpuPodScore

NAME = "GpuClusteringScore"


class GpuClusteringScore(GpuPodScore):
    name = NAME

    def gpu_score(self, st: GpuState, rows: np.ndarray, ask: GpuAsk) -> np.ndarray:
        return scores.clustering(st, rows, ask)
