"""GpuClusteringScore: put GPU pods with pods of the same kind (sharing, or k whole GPUs).

``base = 25 * (8000 - gpuLeft) / 8000`` (integer); + 75 when the node holds only pods of the
pod's kind, + 50 when it holds that kind among others, + 25 when it holds no GPU pod, + 0 when
it holds only other kinds. Pods asking for no GPU score 0 everywhere.
"""

from __future__ import annotations

import numpy as np

from kubesched.framework.interfaces import MAX_NODE_SCORE, go_div
from kubesched.gpu.model import MAX_SPEC_GPU, GpuAsk
from kubesched.gpu.state import SHARE_TAG, GpuState
from kubesched.plugins.gpushare.common import GpuPodScore

NAME = "GpuClusteringScore"


class GpuClusteringScore(GpuPodScore):
    name = NAME

    def gpu_score(self, st: GpuState, rows: np.ndarray, ask: GpuAsk) -> np.ndarray:
        tag = SHARE_TAG if ask.sharing else ask.count
        aff = st.affinity[rows]
        same = aff[:, tag] > 0 if tag < aff.shape[1] else np.zeros(len(rows), bool)
        kinds = (aff > 0).sum(axis=1)
        base = go_div((MAX_NODE_SCORE // 4) * (MAX_SPEC_GPU - st.total_left(rows)), MAX_SPEC_GPU)
        bonus = np.where(same, np.where(kinds == 1, 75, 50), np.where(kinds == 0, 25, 0))
        return (base + bonus).astype(np.int64)
