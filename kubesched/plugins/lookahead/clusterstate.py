"""Features of the whole cluster for ValueScore's value function, kept node by node.

Every feature is a function of sums over nodes of per-node quantities (FGD's fragmentation per
class of typical pod, how many typical pods of each class still fit, nodes by free whole GPUs,
partly used GPUs by milli left, allocated milli), so the cluster after one more placement is the
current sums less the candidate node's row plus its row after the placement: a decision computes
the rows of its few candidates only. The logarithm of the capacity per class makes the value
depend on the whole cluster, not on the one node: a placement that takes room from a scarce class
costs more than one that takes the same room from a plentiful class.

Classes of typical pods (by their GPU ask, the same on every trace, so that a value function
fitted on one trace reads another's typical pods): sharing below 500 milli, sharing from 500,
one whole GPU, two, four or more. A class's quantities weigh its typical pods by popularity.
The allocated share and its powers are the same for every candidate of a decision: they are
there so that the fit explains the run's progress with them, not with the features that differ.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kubesched.gpu.frag import FragModel
from kubesched.gpu.model import MILLI
from kubesched.plugins.gpushare.common import cpu_left

if TYPE_CHECKING:
    from kubesched.gpu.state import GpuState
    from kubesched.state.snapshot import Snapshot

CLASSES = ("share<500", "share>=500", "gpu1", "gpu2", "gpu4+")
FREE_BINS = (1, 2, 4, 8)  # nodes with [1, 2), [2, 4), [4, 8), 8 or more free whole GPUs
PART_BINS = (250, 500, 750)  # partly used GPUs (0 < left < 1000): (0, 250), [250, 500), [500, 750), [750, 1000)
FEATURES: tuple[str, ...] = (
    "allocated",
    "allocated^2",
    "allocated^3",
    "frag",
    *(f"logcap:{c}" for c in CLASSES),
    *(f"frag:{c}" for c in CLASSES),
    *(f"free>={b}" for b in FREE_BINS),
    *(f"part<{b}" for b in (*PART_BINS, MILLI)),
)
_NC = len(CLASSES)
# the columns of a node's row: capacity per class, fragmentation per class, F_n(M), free bins,
# part bins, allocated milli
_CAP, _FRAG, _TOTAL = slice(0, _NC), slice(_NC, 2 * _NC), 2 * _NC
_FREE = slice(_TOTAL + 1, _TOTAL + 1 + len(FREE_BINS))
_PART = slice(_FREE.stop, _FREE.stop + len(PART_BINS) + 1)
_ALLOC = _PART.stop
WIDTH = _ALLOC + 1


def pod_class(milli: int, count: int) -> int:
    """The class of a typical pod's GPU ask (-1: no GPU)."""
    if milli <= 0 or count <= 0:
        return -1
    if milli < MILLI:
        return 0 if milli < 500 else 1
    return 2 if count == 1 else 3 if count == 2 else 4


class NodeRows:
    """Per-node rows of the summed quantities for a FragModel's typical pods."""

    def __init__(self, fm: FragModel) -> None:
        self.fm = fm
        t = fm.typical
        cls = np.array([pod_class(int(m), int(c)) for m, c in zip(t.milli, t.count, strict=True)], np.int64)
        self.classes = np.zeros((len(cls), _NC))  # popularity of each typical pod within its class
        for c in range(_NC):
            mask = cls == c
            if mask.any():
                self.classes[mask, c] = t.p[mask] / t.p[mask].sum()
        self.gpu = cls >= 0
        self.share = self.gpu & (t.milli < MILLI)
        self.divisor = np.where(self.share, t.milli, MILLI)  # per GPU: milli of a share, or one whole GPU
        self.per = np.where(self.share, 1, np.maximum(t.count, 1))  # GPUs (slots) one pod takes
        self.cpu = np.maximum(t.cpu, 1)

    def rows(self, left: np.ndarray, cpu: np.ndarray, model: np.ndarray, count: np.ndarray) -> np.ndarray:
        """(nodes, WIDTH) float rows of nodes given their GPUs' milli left (padding columns 0), CPU
        left, card models and GPU counts."""
        fm = self.fm
        out = np.zeros((len(left), WIDTH))
        if len(left) == 0:
            return out
        cnt, small, total = fm.stats(left)
        f = fm.per_pod(cnt, small, total, cpu, model)
        out[:, _FRAG] = f @ self.classes
        out[:, _TOTAL] = f @ fm.p
        # how many of each typical pod still fit: GPU slots (shares per GPU, or whole free GPUs per
        # pod), CPU, the card model
        free = (left == MILLI).sum(axis=1)
        slots = np.where(self.share[None, :], (left[:, :, None] // self.divisor[None, None, :]).sum(axis=1),
                         free[:, None] // self.per[None, :])
        fit = np.minimum(slots, np.maximum(cpu, 0)[:, None] // self.cpu[None, :])
        out[:, _CAP] = (fit * (fm.acc[:, model].T & self.gpu[None, :])) @ self.classes
        fb = np.searchsorted(np.asarray(FREE_BINS), free, side="right") - 1  # -1: no free GPU
        out[:, _FREE] = fb[:, None] == np.arange(len(FREE_BINS))[None, :]
        part = (left > 0) & (left < MILLI)
        pb = np.searchsorted(np.asarray(PART_BINS), left, side="right")
        out[:, _PART] = (part[:, :, None] & (pb[:, :, None] == np.arange(len(PART_BINS) + 1))).sum(axis=1)
        out[:, _ALLOC] = count * MILLI - total
        return out


def features(sums: np.ndarray, capacity_milli: float, gpus: float, nodes: float) -> np.ndarray:
    """The value function's features (FEATURES, in order) of summed rows (``(..., WIDTH)``)."""
    cap = max(capacity_milli, 1.0)
    alloc = sums[..., _ALLOC, None] / cap
    return np.concatenate([
        alloc, alloc**2, alloc**3,  # the same for every candidate: they carry the run's progress
        sums[..., _TOTAL, None] / cap,
        np.log1p(np.maximum(sums[..., _CAP], 0.0)),
        sums[..., _FRAG] / cap,
        sums[..., _FREE] / max(nodes, 1.0),
        sums[..., _PART] / max(gpus, 1.0),
    ], axis=-1)


class ClusterState:
    """The summed rows of a snapshot, kept row by row as its pods change (``snap.changed_rows``)."""

    def __init__(self, node_rows: NodeRows) -> None:
        self.node_rows = node_rows
        self.snap: Snapshot | None = None
        self.structure, self.pos = -1, 0
        self.rows = np.zeros((0, WIDTH))
        self.sums = np.zeros(WIDTH)

    def follow(self, snap: Snapshot, st: GpuState) -> None:
        """Catch up with ``snap`` (``st``: its GPU state), recomputing only the rows whose pods
        changed since the last call."""
        if snap is not self.snap or snap.structure != self.structure or len(snap.changed_rows) < self.pos \
                or len(self.rows) != snap.n:
            self.snap, self.structure = snap, snap.structure
            every = np.arange(snap.n)
            self.rows = self.node_rows.rows(st.left, cpu_left(snap, every), st.model, st.count)
            self.capacity = float(st.count.sum() * MILLI)
            self.gpus, self.nodes = float(st.count.sum()), float((st.count > 0).sum())
        elif len(snap.changed_rows) > self.pos:
            ch = np.unique(np.asarray(snap.changed_rows[self.pos:], np.int64))
            self.rows[ch] = self.node_rows.rows(st.left[ch], cpu_left(snap, ch), st.model[ch], st.count[ch])
        else:
            return
        self.pos = len(snap.changed_rows)
        self.sums = self.rows.sum(axis=0)

    def after(self, rows: np.ndarray, left: np.ndarray, cpu: np.ndarray, model: np.ndarray,
              count: np.ndarray) -> np.ndarray:
        """(len(rows), features): the cluster's features were each of ``rows`` in the state given
        (its GPUs' milli left, CPU left) and every other node as it is."""
        new = self.node_rows.rows(left, cpu, model, count)
        sums = self.sums[None, :] - self.rows[rows] + new
        return features(sums, self.capacity, self.gpus, self.nodes)

    def now(self) -> np.ndarray:
        return features(self.sums, self.capacity, self.gpus, self.nodes)
