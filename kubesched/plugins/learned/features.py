"""What a learned policy sees of one scheduling decision: the pod and the top-K candidate nodes.

The candidates are the feasible nodes ranked by the base policy (its score, ties to the first in
node order, as the replay's scheduler breaks them): candidate 0 is the node the base policy would
pick. Every per-candidate feature is read from the snapshot and the GPU state, so the features the
environment trains on and the ones the ``LearnedScore`` plugin computes at scheduling time are the
same numbers from the same code. The feature names are stored with a model: a model made for
another feature set or another K is refused.

The set is lean on purpose (``nodeselect-v2``): a handful of gathers and one division per
decision, so that the plugin costs a fraction of the base policy. Features that are a linear
function of others (the gap to the best base score, the rank, what is left after placement) are
left out: the network's first layer forms them itself. ``nodeselect-v1``'s four GPU scorers
(BestFit, GpuPacking, GpuClustering, DotProduct) cost more than the rest of the decision and
moved nothing (docs/learning.md, Track 2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.resources import CPU, MEMORY
from kubesched.gpu.model import MAX_SPEC_CPU, MAX_SPEC_GPU, MILLI
from kubesched.gpu.state import GpuState
from kubesched.plugins.gpushare.common import cycle_ask

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.state.snapshot import Snapshot

FEATURE_SET = "nodeselect-v2"
DEFAULT_K = 16
MEMORY_SCALE = 1 << 40  # 1 TiB: openb nodes have at most ~0.75 TiB

#: the pod and the cluster (one vector per decision)
POD_FEATURES = ("cpu", "gpu_milli", "gpu_count", "gpu_total", "cluster_idle_gpu")
#: one vector per candidate (zeros, present = 0, for the slots beyond the feasible nodes); each
#: but ``present`` is a number of the node divided by its scale below
CANDIDATE_FEATURES = (
    "present",
    "base_score",  # the base policy's score / 100
    "gpus",  # GPUs / 8
    "free_gpus",  # whole free GPUs / 8
    "milli_left",  # GPU milli left on the node / MAX_SPEC_GPU
    "max_gpu_left",  # most milli left on one GPU / 1000
    "fit_gpus",  # GPUs with at least the pod's milli per GPU left / 8
    "cpu_left",  # CPU milli left / MAX_SPEC_CPU
    "memory_left",  # memory bytes left / 1 TiB
)
_SCALES = np.array([100.0, 8.0, 8.0, MAX_SPEC_GPU, MILLI, 8.0, MAX_SPEC_CPU, MEMORY_SCALE])
_F = len(CANDIDATE_FEATURES)


def feature_names() -> list[str]:
    return [f"pod.{n}" for n in POD_FEATURES] + [f"node.{n}" for n in CANDIDATE_FEATURES]


def obs_size(k: int) -> int:
    return len(POD_FEATURES) + k * _F


def rank(snap: Snapshot, rows: np.ndarray, scores: np.ndarray, k: int | None = None) -> np.ndarray:
    """Positions of ``rows`` ordered best first: highest score, ties to the first in node order;
    the first ``k`` only when given. Integer scores (the plugin's) become one key per row, unique
    (score, then node order reversed), so that a partition finds the top ``k`` before they are
    sorted; other scores are sorted in full."""
    s = np.asarray(scores)
    pos = snap.order_positions.take(rows)
    if (k is not None and k < len(s) and s.dtype.kind in "iu"
            and int(np.maximum.reduce(np.abs(s))) < 1 << 40):  # the key cannot overflow
        key = pos - s * len(snap.order_positions)  # ascending: highest score, then first in order
        part = key.argpartition(k - 1)[:k]  # the methods: numpy's functions add a Python call each
        return part.take(key.take(part).argsort())
    return np.lexsort((pos, -s))[:k]


class CandidateFeatures:
    """Builds observations of K candidates."""

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
        rows = np.asarray(rows)
        obs, order = self.observe_order(pod, snap, rows, base)
        return obs, self._slots < len(order), rows[order]

    def observe_order(
        self, pod: Pod, snap: Snapshot, rows: np.ndarray, base: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(observation, the candidates' positions in ``rows``, best first)."""
        order = rank(snap, rows, base, self.k)
        top = rows.take(order)
        n = len(top)
        ask = cycle_ask(None, pod, snap)  # the annotations' ask, else the DRA claims' (as the plugins read it)
        st = GpuState.of(snap)
        obs = np.zeros(obs_size(self.k), np.float32)
        milli, count = (ask.milli, ask.count) if ask else (0, 0)
        obs[: len(POD_FEATURES)] = (pod.non_zero_cpu / MAX_SPEC_CPU, milli / MILLI, count / 8,
                                    milli * count / MAX_SPEC_GPU, st.idle_sum / max(st.gpus_sum * MILLI, 1))
        if n:
            # one int64 row per feature (method ``take``: the cheapest gather of K rows), then one
            # float64 division rounded once into the float32 buffer
            left = snap.alloc.take(top, 0) - snap.requested.take(top, 0)  # CPU and memory: always columns
            free = st.free.take(top)
            if not milli:
                fit = st.count.take(top)
            elif milli >= MILLI:
                fit = free
            else:
                fit = np.add.reduce(st.left.take(top, 0) >= milli, 1)
            cols = np.array((np.asarray(base).take(order), st.count.take(top), free, st.total.take(top),
                             st.max_left.take(top), fit, left[:, snap.res_index[CPU]],
                             left[:, snap.res_index[MEMORY]]), np.float64)
            cand = obs[len(POD_FEATURES) :].reshape(self.k, _F)
            cand[:n, 0] = 1.0
            cand[:n, 1:] = cols.T / _SCALES
        return obs, order
