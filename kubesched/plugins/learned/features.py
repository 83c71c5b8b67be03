"""What a learned policy sees of one scheduling decision: the pod and the top-K candidate nodes.

The candidates are the feasible nodes ranked by the base policy (its score, ties to the first in
node order, as the replay's scheduler breaks them): candidate 0 is the node the base policy would
pick. Every per-candidate feature is read from the snapshot and the GPU state, or is the score of
one of the existing GPU score plugins (called through their public ``score``), so the features the
environment trains on and the ones the ``LearnedScore`` plugin computes at scheduling time are the
same numbers from the same code. The feature names are stored with a model: a model made for
another feature set or another K is refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.resources import CPU, MEMORY
from kubesched.framework.cycle_state import CycleState
from kubesched.gpu.model import MAX_SPEC_CPU, MAX_SPEC_GPU, MILLI, pod_gpu_ask
from kubesched.gpu.state import GpuState
from kubesched.plugins.gpushare.bestfit import BestFitScore
from kubesched.plugins.gpushare.clustering import GpuClusteringScore
from kubesched.plugins.gpushare.dotproduct import DotProductScore
from kubesched.plugins.gpushare.packing import GpuPackingScore

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.state.snapshot import Snapshot

FEATURE_SET = "nodeselect-v1"
DEFAULT_K = 16
MEMORY_SCALE = 1 << 40  # 1 TiB: openb nodes have at most ~0.75 TiB

#: the pod and the cluster (one vector per decision)
POD_FEATURES = ("cpu", "gpu_milli", "gpu_count", "gpu_total", "cluster_idle_gpu")
#: one vector per candidate (zeros, present = 0, for the slots beyond the feasible nodes)
CANDIDATE_FEATURES = (
    "present",
    "base_score",
    "base_gap",  # best base score - this one
    "rank",
    "gpus",
    "free_gpus",
    "milli_left",
    "max_gpu_left",
    "milli_left_after",
    "cpu_left_after",
    "memory_left_after",
    "bestfit",
    "packing",
    "clustering",
    "dotprod",
)


def feature_names() -> list[str]:
    return [f"pod.{n}" for n in POD_FEATURES] + [f"node.{n}" for n in CANDIDATE_FEATURES]


def obs_size(k: int) -> int:
    return len(POD_FEATURES) + k * len(CANDIDATE_FEATURES)


def rank(snap: Snapshot, rows: np.ndarray, scores: np.ndarray, k: int | None = None) -> np.ndarray:
    """Positions of ``rows`` ordered best first: highest score, ties to the first in node order;
    the first ``k`` only when given. Integer scores (the plugin's) become one key per row, unique
    (score, then node order reversed), so that a partition finds the top ``k`` before they are
    sorted; other scores are sorted in full."""
    s = np.asarray(scores)
    pos = snap.order_positions[rows]
    if k is not None and k < len(s) and s.dtype.kind in "iu" and len(s) and int(np.maximum.reduce(np.abs(s))) < 1 << 40:
        key = pos - s * len(snap.order_positions)  # ascending: highest score, then first in order
        part = np.argpartition(key, k - 1)[:k]
        return part[np.argsort(key[part])]
    return np.lexsort((pos, -s))[:k]


def _left(snap: Snapshot, rows: np.ndarray, resource: str) -> np.ndarray:
    c = snap.res_index.get(resource)
    if c is None:
        return np.zeros(len(rows), np.int64)
    return snap.alloc[rows, c] - snap.requested[rows, c]


class CandidateFeatures:
    """Builds observations; holds the GPU score plugins whose scores are features."""

    def __init__(self, k: int = DEFAULT_K) -> None:
        if k < 1:
            raise ValueError("k must be at least 1")
        self.k = k
        self.scorers = (BestFitScore(), GpuPackingScore(), GpuClusteringScore(), DotProductScore())
        self._slots = np.arange(k)
        self._rank_feature = self._slots / k
        self._ones = np.ones(k)

    @property
    def size(self) -> int:
        return obs_size(self.k)

    def observe(
        self, pod: Pod, snap: Snapshot, rows: np.ndarray, base: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(observation, action mask, candidate rows) for ``pod`` over the feasible ``rows`` with
        base-policy scores ``base``. The candidate rows are the top K, best first."""
        # Few numpy calls on a few rows, where each call costs more than its arithmetic: the values
        # go into one float32 buffer (pod vector, then K x candidate features), each computed in
        # float64 and rounded once, as the float32 array of stacked columns it replaces.
        rows = np.asarray(rows)
        order = rank(snap, rows, base, self.k)
        top = rows[order]
        n = len(top)
        ask = pod_gpu_ask(pod)
        st = GpuState.of(snap)
        cpu = int(pod.non_zero_cpu)
        gtotal = ask.total_milli if ask else 0
        idle = st.idle_sum / max(st.gpus_sum * MILLI, 1)
        obs = np.zeros(self.size, np.float32)
        obs[: len(POD_FEATURES)] = (cpu / MAX_SPEC_CPU, (ask.milli if ask else 0) / MILLI,
                                    (ask.count if ask else 0) / 8, gtotal / MAX_SPEC_GPU, idle)
        if n:
            sc = np.asarray(base)[order].astype(np.float64)  # the K taken, then converted
            mem = int(pod.requests.get(MEMORY, 0))
            total = st.total_left(top)
            state = CycleState()
            cand = obs[len(POD_FEATURES) :].reshape(self.k, len(CANDIDATE_FEATURES))
            cand[:n] = np.array(  # a row per feature, transposed: one call, where column_stack makes 15
                [
                    self._ones[:n],
                    sc / 100.0,
                    (sc[0] - sc) / 100.0,
                    self._rank_feature[:n],
                    st.count[top] / 8,
                    st.free[top] / 8,
                    total / MAX_SPEC_GPU,
                    st.max_left[top] / MILLI,
                    (total - gtotal) / MAX_SPEC_GPU,
                    (_left(snap, top, CPU) - cpu) / MAX_SPEC_CPU,
                    (_left(snap, top, MEMORY) - mem) / MEMORY_SCALE,
                    *[s.score(state, pod, snap, top) / 100.0 for s in self.scorers],
                ]
            ).T
        return obs, self._slots < n, top
