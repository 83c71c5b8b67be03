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

from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.resources import CPU, MEMORY
from kubesched.framework.cycle_state import CycleState
from kubesched.gpu.model import MAX_SPEC_CPU, MAX_SPEC_GPU, MILLI, pod_gpu_ask
from kubesched.gpu.state import GpuState
from kubesched.plugins.gpushare.bestfit import BestFitScore
from kubesched.plugins.gpushare.clustering import GpuClusteringScore
from kubesched.plugins.gpushare.common import cycle_ask
from kubesched.plugins.gpushare.dotproduct import DotProductScore
from kubesched.plugins.gpushare.packing import GpuPackingScore

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.state.snapshot import Snapshot

FEATURE_SET = "nodeselect-v1"
DEFAULT_K = 16
MEMORY_SCALE = 1 << 40  # 1 TiB: openb nodes have at most ~0.75 TiB
SHAPE_CACHE_SIZE = 256  # pod shapes whose node features are kept

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
_RANKED = 4  # the first four candidate features depend on the ranking; the rest on the node alone


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


class _NodeFeatures:
    """The node features of one pod shape (``CANDIDATE_FEATURES`` from ``gpus`` on), per node row,
    as far as computed: row ``r`` holds valid values while ``at[r]`` is the row's change stamp."""

    def __init__(self, n: int) -> None:
        self.values = np.zeros((n, len(CANDIDATE_FEATURES) - _RANKED), np.float64)
        self.at = np.full(n, -1, np.int64)


class CandidateFeatures:
    """Builds observations; holds the GPU score plugins whose scores are features.

    A candidate's features past the first four depend on the node's own row (its GPUs, CPU and
    memory left, GPU pods) and the pod's shape only, as the scorers' scores do (each reads the pod's
    milli-CPU and GPU ask alone): they are kept per shape and node and computed again only for the
    candidates whose row changed since, as GpuState.row_log tells (FGDScore's per-ask cache follows
    it the same way). Every value is still computed by the same expressions and scorer calls, on
    fewer rows."""

    def __init__(self, k: int = DEFAULT_K) -> None:
        if k < 1:
            raise ValueError("k must be at least 1")
        self.k = k
        self.scorers = (BestFitScore(), GpuPackingScore(), GpuClusteringScore(), DotProductScore())
        self._state: GpuState | None = None  # the state the stamps follow, its epoch, log position
        self._epoch = -1
        self._log_pos = 0
        self._stamp = np.zeros(0, np.int64)  # per row: the log length when it last changed
        self._shapes: OrderedDict[tuple, _NodeFeatures] = OrderedDict()
        self._slots = np.arange(k)
        self._rank_feature = self._slots / k

    @property
    def size(self) -> int:
        return obs_size(self.k)

    def _follow(self, snap: Snapshot, st: GpuState) -> None:
        """Stamp the rows that changed since the last call (or start over on another state)."""
        log = st.row_log
        if st is not self._state or st.epoch != self._epoch or len(log) < self._log_pos or len(self._stamp) != snap.n:
            self._state, self._epoch = st, st.epoch
            self._stamp = np.zeros(snap.n, np.int64)
            self._shapes.clear()
        elif len(log) > self._log_pos:
            self._stamp[list(set(log[self._log_pos :]))] = len(log)
        self._log_pos = len(log)

    def node_features(self, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        """The node features of ``pod`` on ``rows`` (one row each), kept or computed."""
        st = GpuState.of(snap)
        self._follow(snap, st)
        state = CycleState()
        ask = pod_gpu_ask(pod)
        cpu = int(pod.non_zero_cpu)
        mem = int(pod.requests.get(MEMORY, 0))
        gtotal = ask.total_milli if ask else 0
        key = (cpu, mem, gtotal, cycle_ask(state, pod, snap))  # the scorers' ask (claims too)
        feats = self._shapes.get(key)
        if feats is None:
            feats = self._shapes[key] = _NodeFeatures(snap.n)
            if len(self._shapes) > SHAPE_CACHE_SIZE:
                self._shapes.popitem(last=False)
        else:
            self._shapes.move_to_end(key)
        stamp = self._stamp[rows]
        stale = feats.at[rows] != stamp
        if stale.any():
            need = rows[stale]
            total = st.total_left(need)
            feats.values[need] = np.array(  # one row per column, transposed: faster than column_stack
                [
                    st.count[need] / 8,
                    st.free[need] / 8,
                    total / MAX_SPEC_GPU,
                    st.max_left[need] / MILLI,
                    (total - gtotal) / MAX_SPEC_GPU,
                    (_left(snap, need, CPU) - cpu) / MAX_SPEC_CPU,
                    (_left(snap, need, MEMORY) - mem) / MEMORY_SCALE,
                    *[s.score(state, pod, snap, need) / 100.0 for s in self.scorers],
                ]
            ).T
            feats.at[need] = stamp[stale]
        return feats.values[rows]

    def observe(
        self, pod: Pod, snap: Snapshot, rows: np.ndarray, base: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(observation, action mask, candidate rows) for ``pod`` over the feasible ``rows`` with
        base-policy scores ``base``. The candidate rows are the top K, best first."""
        # Written into one float32 buffer (pod vector, then K x candidate features), each value
        # computed in float64 and rounded once, as a float32 array built from the columns would be.
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
            sc = np.asarray(base, np.float64)[order]
            cand = obs[len(POD_FEATURES) :].reshape(self.k, len(CANDIDATE_FEATURES))
            cand[:n, 0] = 1.0
            cand[:n, 1] = sc / 100.0
            cand[:n, 2] = (sc[0] - sc) / 100.0
            cand[:n, 3] = self._rank_feature[:n]
            cand[:n, _RANKED:] = self.node_features(pod, snap, top)
        return obs, self._slots < n, top
