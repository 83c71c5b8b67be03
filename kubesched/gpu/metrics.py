"""Cluster-wide GPU metrics from a Snapshot: what the FGD paper logs after every pod.

``cluster_gpu_metrics(snap, typical) -> GpuMetrics`` computes from scratch (all nodes);
``GpuMetricsTracker(snap, typical).update() -> GpuMetrics`` gives the same numbers after every
change at the cost of the rows that changed (use it per event). ``typical`` may be None: the
fragmentation fields are then 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kubesched.api.resources import CPU
from kubesched.gpu.frag import FragModel, TypicalPods
from kubesched.gpu.model import MILLI
from kubesched.gpu.state import GpuState
from kubesched.state.snapshot import Snapshot


@dataclass(frozen=True, slots=True)
class GpuMetrics:
    capacity_milli: int  # 1000 x GPUs of all nodes
    allocated_milli: int  # capacity - idle
    idle_milli: int  # sum of milli left
    frag_milli: float  # sum over nodes of F_n(M) (fragmented idle milli against the typical pods)
    gpus: int
    used_gpus: int  # GPUs with any allocation

    @property
    def frag_ratio(self) -> float:
        """Fragmented share of idle GPU (0..1)."""
        return self.frag_milli / self.idle_milli if self.idle_milli else 0.0

    def percent(self, milli: float) -> float:
        """Milli-GPU as % of the cluster's GPUs."""
        return 100.0 * milli / self.capacity_milli if self.capacity_milli else 0.0


def _cpu_left(snap: Snapshot, rows: np.ndarray | slice) -> np.ndarray:
    c = snap.res_index[CPU]
    return snap.alloc[rows, c] - snap.requested[rows, c]


def _metrics(st: GpuState, frag: float) -> GpuMetrics:
    gpus, idle = st.gpus_sum, st.idle_sum
    return GpuMetrics(gpus * MILLI, gpus * MILLI - idle, idle, float(frag), gpus, gpus - st.free_sum)


def cluster_gpu_metrics(snap: Snapshot, typical: TypicalPods | None = None) -> GpuMetrics:
    """Allocated, idle and fragmented milli-GPU of every node of ``snap``."""
    st = GpuState.of(snap)
    frag = 0.0
    if typical is not None and snap.n:
        fm = FragModel(typical, st.models)
        frag = float(fm.amount(st.left, _cpu_left(snap, slice(None)), st.model).sum())
    return _metrics(st, frag)


RESUM_EVERY = 1024


class GpuMetricsTracker:
    """Incremental ``cluster_gpu_metrics``: per-node F_n(M) kept, changed rows recomputed."""

    def __init__(self, snap: Snapshot, typical: TypicalPods | None = None) -> None:
        self.snap = snap
        self.typical = typical
        self._frag = np.zeros(0)
        self._fm: FragModel | None = None
        self._epoch = -1
        self._log_pos = 0
        self._version = -1
        self._last: GpuMetrics | None = None
        # The sum of ``_frag``, kept by differences (a pass over every node per pod cost more than
        # the rows that changed) and summed afresh every RESUM_EVERY updates against rounding drift.
        self._frag_sum = 0.0
        self._updates = 0

    def update(self) -> GpuMetrics:
        snap = self.snap
        st = GpuState.of(snap)
        if self._last is not None and st.version == self._version:
            return self._last
        if self.typical is not None:
            if self._fm is None or len(self._fm.models) != len(st.models):
                self._fm = FragModel(self.typical, st.models)
                self._epoch = -1
            log = st.row_log
            if (
                st.epoch != self._epoch
                or len(log) < self._log_pos
                or len(self._frag) != snap.n
                or self._updates >= RESUM_EVERY
            ):
                self._frag = self._fm.amount(st.left, _cpu_left(snap, slice(None)), st.model)
                self._frag_sum, self._updates = float(self._frag.sum()), 0
            else:
                c = snap.res_index[CPU]
                alloc, req, fm, frag = snap.alloc, snap.requested, self._fm, self._frag
                for row in set(log[self._log_pos :]):  # a row or two per pod
                    cpu = int(alloc[row, c] - req[row, c])
                    new = fm.node_amount(st.left[row].tolist(), cpu, int(st.model[row]))
                    self._frag_sum += new - float(frag[row])
                    frag[row] = new
                self._updates += 1
            self._epoch, self._log_pos = st.epoch, len(st.row_log)
        self._version = st.version
        self._last = _metrics(st, self._frag_sum if self.typical is not None else 0.0)
        return self._last
