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
from kubesched.gpu.model import MAX_SPEC_CPU, MAX_SPEC_GPU, MILLI, pod_gpu_ask
from kubesched.gpu.state import GpuState
from kubesched.plugins.gpushare import scores
from kubesched.plugins.gpushare.common import cycle_ask

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


class CandidateFeatures:
    """Builds observations; holds the GPU score plugins whose scores are features."""

    def __init__(self, k: int = DEFAULT_K) -> None:
        if k < 1:
            raise ValueError("k must be at least 1")
        self.k = k
        self._slots = np.arange(k)

    @property
    def size(self) -> int:
        return obs_size(self.k)

    def observe(
        self, pod: Pod, snap: Snapshot, rows: np.ndarray, base: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(observation, action mask, candidate rows) for ``pod`` over the feasible ``rows`` with
        base-policy scores ``base``. The candidate rows are the top K, best first."""
        # Few numpy calls on a few rows, where each call costs more than its arithmetic: the values
        # are Python floats (pod vector, then K x candidate features), each the float64 operation
        # the numpy columns did, rounded once into float32 as the array of stacked columns was.
        rows = np.asarray(rows)
        order = rank(snap, rows, base, self.k)
        top = rows[order]
        n = len(top)
        ask = pod_gpu_ask(pod)
        st = GpuState.of(snap)
        cpu = int(pod.non_zero_cpu)
        gtotal = ask.total_milli if ask else 0
        idle = st.idle_sum / max(st.gpus_sum * MILLI, 1)
        values = [cpu / MAX_SPEC_CPU, (ask.milli if ask else 0) / MILLI, (ask.count if ask else 0) / 8,
                  gtotal / MAX_SPEC_GPU, idle]
        if n:  # the base scores as Python numbers: ints, or the environment's floats
            values += self._candidates(pod, snap, st, top, np.asarray(base)[order].tolist(), gtotal)
        values += [0.0] * ((self.k - n) * len(CANDIDATE_FEATURES))
        obs = np.array(values, np.float32)
        return obs, self._slots < n, top

    def _candidates(self, pod: Pod, snap: Snapshot, st: GpuState, top: np.ndarray, sc: list[float] | list[int],
                    gtotal: int) -> list[float]:
        """The K x candidate features, row after row, in plain Python floats: for 16 rows each numpy
        call would cost more than its arithmetic. Each value is the float64 operation the numpy
        columns did (so the float32 buffer gets the same numbers)."""
        cpu, mem = int(pod.non_zero_cpu), int(pod.requests.get(MEMORY, 0))
        left = (snap.alloc[top] - snap.requested[top]).tolist()
        ci, mi = snap.res_index.get(CPU), snap.res_index.get(MEMORY)
        cl = [0] * len(top) if ci is None else [r[ci] for r in left]
        ml = [0] * len(top) if mi is None else [r[mi] for r in left]
        total, count = st.total[top].tolist(), st.count[top].tolist()
        ask = cycle_ask(None, pod, snap)  # the plugins' ask: the claims' when no annotation
        c, g = float(cpu), float(ask.total_milli if ask else 0)
        if ask is None:
            pk = cu = [0] * len(top)
        else:
            pk = scores.packing_rows(st.left[top].tolist(), count, ask.milli, ask.count)
            cu = scores.clustering_rows(st.affinity[top].tolist(), total, ask)
        out: list[float] = []
        s0, k = sc[0], self.k
        for i, (s, t, n, f, m, x, y, bf, p, cc, dp) in enumerate(zip(
                sc, total, count, st.free[top].tolist(), st.max_left[top].tolist(), cl, ml,
                scores.bestfit_rows(cl, total, c, g), pk, cu, scores.dotprod_rows(cl, total, c, g), strict=True)):
            out += (1.0, s / 100.0, (s0 - s) / 100.0, i / k, n / 8, f / 8, t / MAX_SPEC_GPU, m / MILLI,
                    (t - gtotal) / MAX_SPEC_GPU, (x - cpu) / MAX_SPEC_CPU, (y - mem) / MEMORY_SCALE,
                    bf / 100.0, p / 100.0, cc / 100.0, dp / 100.0)
        return out
