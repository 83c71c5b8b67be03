"""GpuPackingScore: share a used GPU > use free GPUs of a used node > open a fresh node.

For a GPU pod, with ``ff`` fully free GPUs on the node:
- every GPU free (``ff == GPUs``): ``max(33 - ff, ff)`` (smaller fresh nodes first);
- else take GPUs in ascending milli left with room for the pod until it has its count; when some
  taken GPU is fully free: ``max(50 - taken free GPUs, 33)``;
- else (only used GPUs): ``max(100 - sum(left * 100 / 1000) / 10, 50)`` (integer maths).
Pods asking for no GPU score 0. The formula is ``kubesched.plugins.gpushare.scores``'
(LearnedScore's features read it too).
"""

from __future__ import annotations

import numpy as np

from kubesched.gpu.model import GpuAsk
from kubesched.gpu.state import GpuState
from kubesched.plugins.gpushare import scores
from kubesched.plugins.gpushare.common import GpuPodScore

NAME = "GpuPackingScore"


class GpuPackingScore(GpuPodScore):
    name = NAME

    def gpu_score(self, st: GpuState, rows: np.ndarray, ask: GpuAsk) -> np.ndarray:
        return scores.packing(st, rows, ask)
