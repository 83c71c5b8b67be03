"""Per-node GPU occupancy that follows a Snapshot: a (nodes x max GPUs) matrix of milli left.

One ``GpuState`` per Snapshot (``GpuState.of(snap)``), shared by every GPU plugin and the metrics.
It lives in the snapshot's memo and follows it (``Memo.follow``): rows whose pods were added or
removed are synced again, and it rebuilds itself when the nodes (or namespaces) change.
A pod's GPUs are, in order of preference: those ``fixed`` for it by whoever moves the snapshot
(the UI, which replays a run, puts each pod back on the GPUs it had there), those it was given
earlier on the same node (kept across rebuilds), those in its ``alibabacloud.com/gpu-index``
annotation, else the default choice (lowest-index free GPUs for whole-GPU pods, best fit for
sharing pods). A bound pod whose GPUs do not fit any more (an over-committed node) is recorded
without GPUs.

GPUs described the DRA way (``kubesched.gpu.dra``) fill the same model: a node without the
``alibabacloud.com/gpu-count`` resource has the GPU devices its ResourceSlices give it, a pod
without GPU annotations asks what its ResourceClaims ask, and holds (after ``fixed``) the GPUs
its claims' allocations name. The state rebuilds when the slices change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kubesched.gpu.dra import DraGpus, dra_gpus
from kubesched.gpu.model import (
    GPU_INDEX,
    MILLI,
    GpuAsk,
    node_gpu_count,
    node_gpu_model,
    parse_index,
    pod_gpu_ask,
)
from kubesched.state.memo import NODES

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.state.snapshot import Snapshot

_KEY = "gpu/state"  # the state's key in the snapshot's memo
SHARE_TAG = 0  # affinity column of sharing pods; column k counts pods of k whole GPUs


@dataclass(frozen=True, slots=True)
class Alloc:
    indices: tuple[int, ...]
    milli: int
    tag: int


def exclusive_pick(left: np.ndarray, count: int) -> tuple[int, ...] | None:
    """Lowest-index fully free GPUs (open-gpu-share's AllocateExclusiveGpuId)."""
    free = [i for i, v in enumerate(left.tolist()) if v == MILLI]  # a node has a handful of GPUs
    return tuple(free[:count]) if len(free) >= count else None


def best_fit_pick(left: np.ndarray, milli: int, worst: bool = False) -> int | None:
    """The GPU with the least (or most) milli left that still fits; ties to the lowest index."""
    best, best_v = None, 0
    for i, v in enumerate(left.tolist()):
        if v >= milli and (best is None or (v > best_v if worst else v < best_v)):
            best, best_v = i, v
    return best


class GpuState:
    @classmethod
    def of(cls, snap: Snapshot, *, skip_uid: str | None = None) -> GpuState:
        """The snapshot's GPU state, caught up (``skip_uid``: a pod being reserved right now)."""
        st = snap.memo.current(_KEY)  # several reads per cycle: most find the state up to date
        if st is not None and st.dra_slices == snap.dra.slice_generation:
            return st

        def build(old: GpuState | None) -> GpuState:
            st = cls() if old is None else old  # a rebuild keeps the GPUs pods were given
            st._rebuild(snap, skip_uid)
            return st

        def update(st: GpuState, rows: list[int]) -> None:
            changed = set(rows)
            for row in changed:
                st._sync_row(snap, row, skip_uid)
            st._log(changed)
            st.version += 1

        st = snap.memo.follow(_KEY, build, update, on=NODES)
        if st.dra_slices != snap.dra.slice_generation:  # the DRA devices changed: as a node change
            st._rebuild(snap, skip_uid)
        return st

    def __init__(self) -> None:
        self.left = np.zeros((0, 1), np.int64)  # milli left per GPU; padding columns stay 0
        self.count = np.zeros(0, np.int64)  # GPUs per node
        self.model = np.zeros(0, np.int32)  # card model code per node, into ``models``
        self.models: list[str] = [""]
        self._model_code: dict[str, int] = {"": 0}
        self.affinity = np.zeros((0, 9), np.int64)  # GPU pods per tag (SHARE_TAG, 1-gpu, 2-gpu, ...)
        # Per-node summaries of ``left``, kept up to date row by row (filters and scores read them).
        self.total = np.zeros(0, np.int64)  # milli left over all GPUs
        self.free = np.zeros(0, np.int64)  # fully free GPUs
        self.max_left = np.zeros(0, np.int64)  # the most milli left on one GPU
        # Cluster sums of count, total and free, kept with them (the metrics read them per pod)
        self.gpus_sum = 0
        self.idle_sum = 0
        self.free_sum = 0
        self.allocs: list[dict[str, Alloc]] = []
        self.node_names: list[str] = []
        self._placed: dict[str, tuple[str, tuple[int, ...]]] = {}  # uid -> (node, GPUs), kept on rebuild
        # uid -> (node, GPUs) to give the pod whenever it is added there (no GPUs: none), if they fit;
        # written by the snapshot's owner, never by this class
        self.fixed: dict[str, tuple[str, tuple[int, ...]]] = {}
        self._no_gpu: set[str] = set()  # uids known to ask for no GPU (skip re-parsing)
        self.version = 0  # bumps on every change (caches key on it)
        # Rows whose GPUs or pods changed, in order, for caches that follow this state row by row;
        # ``epoch`` bumps (and the log restarts) when the whole state is rebuilt.
        self.row_log: list[int] = []
        self.epoch = 0
        self.dra: DraGpus | None = None  # the GPUs of the snapshot's ResourceSlices, if any
        self.dra_slices = 0  # the slice generation ``dra`` was read at

    # ---- following the snapshot -----------------------------------------------------
    def _rebuild(self, snap: Snapshot, skip_uid: str | None) -> None:
        self.epoch += 1
        self.row_log = []
        self.version += 1
        n = snap.n
        self.dra_slices = snap.dra.slice_generation
        gpus = self.dra = dra_gpus(snap.dra) if snap.dra.slices else None
        if gpus:
            counts = np.fromiter((node_gpu_count(nd) or gpus.count(nd.name) for nd in snap.nodes), np.int64, n)
            models = [node_gpu_model(nd) or gpus.model(nd.name) for nd in snap.nodes]
        else:
            counts = np.fromiter((node_gpu_count(nd) for nd in snap.nodes), np.int64, n)
            models = [node_gpu_model(nd) for nd in snap.nodes]
        width = max(1, int(counts.max()) if n else 1)
        self.count = counts
        self.left = np.where(np.arange(width)[None, :] < counts[:, None], MILLI, 0).astype(np.int64)
        self.model = np.fromiter((self.model_code(m) for m in models), np.int32, n)
        self.affinity = np.zeros((n, max(9, width + 1)), np.int64)
        self.allocs = [{} for _ in range(n)]
        self.node_names = [nd.name for nd in snap.nodes]
        self.total = self.left.sum(axis=1)
        self.free = (self.left == MILLI).sum(axis=1)
        self.max_left = self.left.max(axis=1) if n else np.zeros(0, np.int64)
        self.gpus_sum = int(counts.sum())
        self.idle_sum = int(self.total.sum())
        self.free_sum = int(self.free.sum())
        for row in range(n):
            for uid, pod in snap.pods_on[row].items():
                if uid != skip_uid:
                    self._add_bound(snap, row, pod)
        live = set(snap.pod_by_uid)
        self._placed = {u: v for u, v in self._placed.items() if u in live}

    def _sync_row(self, snap: Snapshot, row: int, skip_uid: str | None) -> None:
        pods = snap.pods_on[row]
        rec = self.allocs[row]
        for uid in rec.keys() - pods.keys():
            self.release(uid, row)
        # Set differences in C: a row holds dozens of pods, and one or two changed.
        new = pods.keys() - rec.keys() - self._no_gpu
        new.discard(skip_uid)
        if len(new) > 1:  # in the row's order: default GPU picks depend on it
            new = [uid for uid in pods if uid in new]
        for uid in new:
            self._add_bound(snap, row, pods[uid])

    def _add_bound(self, snap: Snapshot, row: int, pod: Pod) -> None:
        """Account a pod found on a row: its fixed GPUs, those its claims were allocated, its
        earlier ones, its gpu-index annotation, or a default."""
        try:
            ask = pod_gpu_ask(pod)
            if ask is None and pod.resource_claims and self.dra:
                ask = self.dra.ask(pod, snap.dra)
        except ValueError:
            ask = None  # a bad ask on a bound pod: it holds no GPU we can account
        if ask is None:
            if not pod.resource_claims:  # claims may be made or allocated later: ask again then
                self._no_gpu.add(pod.uid)
            return
        left = self.left[row]
        node = self.node_names[row]
        indices: tuple[int, ...] | None = None
        fixed = self.fixed.get(pod.uid)
        if fixed is not None and fixed[0] == node and (not fixed[1] or self._fits(row, fixed[1], ask)):
            indices = fixed[1]
        if indices is None and self.dra and pod.resource_claims:
            held = self.dra.held(pod, snap.dra, node)
            if held is not None and self._fits(row, held[0], ask):
                indices = held[0]
        prior = self._placed.get(pod.uid)
        if indices is None and prior is not None and prior[0] == node and self._fits(row, prior[1], ask):
            indices = prior[1]
        if indices is None and GPU_INDEX in pod.annotations:
            try:
                idx = parse_index(pod.annotations[GPU_INDEX])
            except ValueError:
                idx = ()
            if self._fits(row, idx, ask):
                indices = idx
        if indices is None:
            indices = self.default_pick(left[: self.count[row]], ask) or ()
        self.assign(row, pod.uid, ask, indices)

    def _fits(self, row: int, indices: tuple[int, ...], ask: GpuAsk) -> bool:
        if len(indices) != ask.count or len(set(indices)) != len(indices):
            return False
        c = int(self.count[row])
        return all(0 <= i < c and self.left[row, i] >= ask.milli for i in indices)

    # ---- choosing and recording GPUs ------------------------------------------------------
    @staticmethod
    def default_pick(left: np.ndarray, ask: GpuAsk) -> tuple[int, ...] | None:
        if ask.sharing:
            i = best_fit_pick(left, ask.milli)
            return None if i is None else (i,)
        return exclusive_pick(left, ask.count)

    def model_code(self, model: str) -> int:
        code = self._model_code.get(model)
        if code is None:
            code = self._model_code[model] = len(self.models)
            self.models.append(model)
        return code

    def model_mask(self, ask: GpuAsk) -> np.ndarray:
        """Per model code: may the pod use that card model."""
        if not ask.models:
            return np.ones(len(self.models), bool)
        return np.fromiter((m in ask.models and m != "" for m in self.models), bool, len(self.models))

    def assign(self, row: int, uid: str, ask: GpuAsk, indices: tuple[int, ...]) -> None:
        if uid in self.allocs[row]:
            self.release(uid, row)
        tag = SHARE_TAG if ask.sharing else ask.count
        if tag >= self.affinity.shape[1]:
            grow = np.zeros((self.affinity.shape[0], tag + 1 - self.affinity.shape[1]), np.int64)
            self.affinity = np.hstack([self.affinity, grow])
        if indices:
            self._move(row, indices, -ask.milli)
        self.affinity[row, tag] += 1
        self.allocs[row][uid] = Alloc(indices, ask.milli, tag)
        self._placed[uid] = (self.node_names[row], indices)
        self.version += 1

    def release(self, uid: str, row: int | None = None) -> Alloc | None:
        if row is None:
            prior = self._placed.get(uid)
            if prior is None or prior[0] not in self.node_names:
                return None
            row = self.node_names.index(prior[0])
        a = self.allocs[row].pop(uid, None)
        if a is None:
            return None
        if a.indices:
            self._move(row, a.indices, a.milli)
        self.affinity[row, a.tag] -= 1
        self._placed.pop(uid, None)
        self.version += 1
        return a

    def _log(self, rows: set[int] | tuple[int, ...]) -> None:
        if len(self.row_log) > 1_000_000:
            self.epoch += 1
            self.row_log = []
        self.row_log.extend(rows)

    def _move(self, row: int, indices: tuple[int, ...], delta: int) -> None:
        """Add ``delta`` milli to those GPUs of ``row`` and log the row (element by element: a
        handful of GPUs, where fancy indexing costs more than it saves)."""
        left = self.left[row]
        for i in indices:
            left[i] += delta
        self._summarise(row)
        self._log((row,))

    def _summarise(self, row: int) -> None:
        lst = self.left[row].tolist()
        total, free = sum(lst), lst.count(MILLI)
        self.idle_sum += total - int(self.total[row])
        self.free_sum += free - int(self.free[row])
        self.total[row] = total
        self.free[row] = free
        self.max_left[row] = max(lst)

    # ---- views ---------------------------------------------------------------------------
    def total_left(self, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        return self.total[rows]

    def indices_of(self, uid: str) -> tuple[int, ...] | None:
        prior = self._placed.get(uid)
        return None if prior is None else prior[1]
