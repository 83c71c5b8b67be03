"""GpuPackingScore: share a used GPU > use free GPUs of a used node > open a fresh node.

For a GPU pod, with ``ff`` fully free GPUs on the node:
- every GPU free (``ff == GPUs``): ``max(33 - ff, ff)`` (smaller fresh nodes first);
- else take GPUs in ascending milli left with room for the pod until it has its count; when some
  taken GPU is fully free: ``max(50 - taken free GPUs, 33)``;
- else (only used GPUs): ``max(100 - sum(left * 100 / 1000) / 10, 50)`` (integer maths).
Pods asking for no GPU score 0.
"""

from __future__ import annotations

import numpy as np

from kubesched.gpu.model import MILLI, GpuAsk
from kubesched.gpu.state import GpuState
from kubesched.plugins.gpushare.common import GpuPodScore

NAME = "GpuPackingScore"


def packing_score(left: np.ndarray, count: np.ndarray, milli: int, num: int) -> np.ndarray:
    """Per node row of ``left`` (padded with 0 beyond ``count`` GPUs); 0 where the pod cannot fit."""
    ff = (left == MILLI).sum(axis=1)
    srt = np.sort(left, axis=1)
    ok = srt >= milli
    taken = ok & (np.cumsum(ok, axis=1) <= num)
    fits = taken.sum(axis=1) == num
    free_used = (taken & (srt == MILLI)).sum(axis=1)
    ratio = np.where(taken, srt * 100 // MILLI, 0).sum(axis=1)
    case1 = np.maximum(100 - ratio // 10, 50)
    case2 = np.maximum(50 - free_used, 33)
    case3 = np.maximum(33 - ff, ff)
    out = np.where(ff == count, case3, np.where(free_used > 0, case2, case1))
    return np.where((ff == count) | fits, out, 0).astype(np.int64)


class GpuPackingScore(GpuPodScore):
    name = NAME

    def gpu_score(self, st: GpuState, rows: np.ndarray, ask: GpuAsk) -> np.ndarray:
        return packing_score(st.left[rows], st.count[rows], ask.milli, ask.count)
