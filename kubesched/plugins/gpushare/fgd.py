"""FGDScore: Fragmentation Gradient Descent (Weng et al., USENIX ATC'23).

Score = ``int(100 * sigmoid((F_n(M) - F_n'(M)) / 1000))``: how much placing the pod reduces the
node's GPU fragmentation against the target workload M (``kubesched.gpu.frag``). Whole-GPU and
CPU-only pods are placed as the simulator's ``NodeResource.Sub`` does; a sharing pod is tried on
every GPU with room and the node gets the best of them (Open-Gpu-Share with
``gpuSelMethod: FGDScore`` then takes that GPU, the first on ties). Pods with no requests at all
score 100. The target workload comes from the args: ``typicalPods`` (explicit specs) or
``workloadFile`` (an openb pod CSV whose top specs covering ``popularityThreshold`` % of pods,
default 95, become M). ``deltaScale`` (default 1000) is the sigmoid's divisor: the quantisation
step of the score (one point is ~deltaScale/25 milli of delta near 0) and where it saturates.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.errors import InputError, join_path
from kubesched.framework.interfaces import MAX_NODE_SCORE, ScorePlugin
from kubesched.framework.plugin_args import args_body, shown
from kubesched.gpu.frag import (
    DELTA_SCALE,
    POPULARITY_THRESHOLD,
    FragModel,
    TypicalPods,
    sigmoid_score,
    typical_pods_of,
)
from kubesched.gpu.model import MILLI, GpuAsk
from kubesched.gpu.state import GpuState
from kubesched.plugins.gpushare.common import ReadsGpuAsk, cpu_left, cycle_ask, pod_cpu

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.state.snapshot import Snapshot

NAME = "FGDScore"
ROOT = NAME + "Args"
SCORE_CACHE_SIZE = 256  # pod asks whose per-node scores are kept
_SPEC_FIELDS = ("milliCpu", "milliGpu", "gpuCount", "gpuModel", "percentage")


def _int_field(item: Mapping[str, Any], key: str, path: str, default: int | None = None) -> int:
    v = item.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise InputError(f"invalid value {shown(v)}: must be a non-negative integer", path=join_path(path, key))
    return v


def parse_typical_pods(raw: Any, path: str) -> TypicalPods:
    """``typicalPods: [{milliCpu, milliGpu, gpuCount, gpuModel, percentage}]``."""
    if not isinstance(raw, list) or not raw:
        raise InputError("expected a non-empty list", path=path)
    specs = []
    for i, item in enumerate(raw):
        ip = join_path(path, i)
        if not isinstance(item, Mapping):
            raise InputError(f"expected an object, got {type(item).__name__}", path=ip)
        for key in item:
            if key not in _SPEC_FIELDS:
                raise InputError(
                    f'unknown field "{key}" (known: {", ".join(_SPEC_FIELDS)})', path=join_path(ip, str(key))
                )
        milli = _int_field(item, "milliGpu", ip, 0)
        count = _int_field(item, "gpuCount", ip, 1 if milli else 0)
        if milli > MILLI:
            raise InputError(f"invalid value {milli}: at most {MILLI}", path=join_path(ip, "milliGpu"))
        model = item.get("gpuModel", "")
        if not isinstance(model, str):
            raise InputError("expected a string", path=join_path(ip, "gpuModel"))
        p = item.get("percentage")
        if isinstance(p, bool) or not isinstance(p, int | float) or not 0 < p <= 1:
            raise InputError(
                f"invalid value {shown(p)}: must be a number in (0, 1]", path=join_path(ip, "percentage")
            )
        specs.append((_int_field(item, "milliCpu", ip), milli, count, model, float(p)))
    return TypicalPods.from_specs(specs)


def typical_from_args(body: Mapping[str, Any]) -> TypicalPods:
    has_list, has_file = "typicalPods" in body, "workloadFile" in body
    if has_list == has_file:
        raise InputError("exactly one of typicalPods or workloadFile is required", path=ROOT)
    if has_list:
        return parse_typical_pods(body["typicalPods"], join_path(ROOT, "typicalPods"))
    path = body["workloadFile"]
    if not isinstance(path, str) or not path:
        raise InputError("expected a file path", path=join_path(ROOT, "workloadFile"))
    threshold = body.get("popularityThreshold", POPULARITY_THRESHOLD)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 < threshold <= 100:
        raise InputError(
            f"invalid value {shown(threshold)}: must be in (0, 100]", path=join_path(ROOT, "popularityThreshold")
        )
    # lazily: only this arg needs the trace loader
    from kubesched.trace.bundled import pod_list
    from kubesched.trace.openb import read_pods

    return typical_pods_of(read_pods(pod_list(path, flag=join_path(ROOT, "workloadFile"))).pods, threshold)


Stats = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # count >= k, sum < k, total, F_n(m)


def _stats(fm: FragModel, left: np.ndarray, cpu: np.ndarray, model: np.ndarray) -> Stats:
    cnt, small, total = fm.stats(left)
    return cnt, small, total, fm.per_pod(cnt, small, total, cpu, model)


@cache
def _earlier(g: int) -> np.ndarray:
    """[j, i]: GPU i comes before GPU j, of ``g`` GPUs (read-only: shared by every call)."""
    out = np.tril(np.ones((g, g), bool), -1)
    out.flags.writeable = False
    return out


def _rows_since(log: list[int], pos: int) -> np.ndarray:
    """The distinct rows of ``log`` from ``pos`` on, ascending (``np.unique``'s answer: a pod
    changes a row or two, and sorting their set costs a sixth of ``np.unique`` on a tiny array)."""
    return np.asarray(sorted(set(log[pos:])), np.int64)


class _Base:
    """The current state's per-node stats, kept row by row (follows ``GpuState.row_log``)."""

    def __init__(self, state: GpuState, fm: FragModel, epoch: int) -> None:
        self.state, self.fm, self.epoch = state, fm, epoch
        self.log_pos, self.version = 0, -1
        self.total = np.zeros(0, np.int64)

    def set(self, rows: np.ndarray, st: GpuState, cpu: np.ndarray) -> None:
        self.cpu = cpu.copy()
        self.cnt, self.small, self.total, self.f0 = _stats(self.fm, st.left[rows], cpu, st.model[rows])

    def update(self, rows: np.ndarray, st: GpuState, cpu: np.ndarray) -> None:
        self.cpu[rows] = cpu
        self.cnt[rows], self.small[rows], self.total[rows], self.f0[rows] = _stats(
            self.fm, st.left[rows], cpu, st.model[rows]
        )


class FGDScore(ReadsGpuAsk, ScorePlugin):
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        body = args_body(NAME, args, ("typicalPods", "workloadFile", "popularityThreshold", "deltaScale"))
        if "popularityThreshold" in body and "workloadFile" not in body:
            raise InputError("only valid with workloadFile", path=join_path(ROOT, "popularityThreshold"))
        scale = body.pop("deltaScale", DELTA_SCALE)
        if isinstance(scale, bool) or not isinstance(scale, int | float) or not 0 < scale < float("inf"):
            raise InputError(f"invalid value {shown(scale)}: must be a positive number", path=join_path(ROOT, "deltaScale"))
        self.delta_scale = float(scale)
        self.typical = typical_from_args(body)
        self._model: FragModel | None = None
        self._cache: _Base | None = None
        self._scores: OrderedDict[tuple[int, GpuAsk | None], tuple[_Base, int, np.ndarray]] = OrderedDict()

    def frag_model(self, st: GpuState) -> FragModel:
        if self._model is None or len(self._model.models) != len(st.models):
            self._model = FragModel(self.typical, st.models)
        return self._model

    def _base(self, snap: Snapshot, st: GpuState) -> _Base:
        """Per-node stats and F_n(m) of the current state, refreshed only on rows that changed."""
        fm = self.frag_model(st)
        b = self._cache
        if (
            b is None
            or b.state is not st
            or b.fm is not fm
            or b.epoch != st.epoch
            or len(st.row_log) < b.log_pos
            or len(b.total) != snap.n
        ):
            rows = np.arange(snap.n)
            b = self._cache = _Base(st, fm, st.epoch)
            b.set(rows, st, cpu_left(snap, rows))
        elif b.version != st.version:
            rows = _rows_since(st.row_log, b.log_pos)
            if rows.size:
                b.update(rows, st, cpu_left(snap, rows))
        b.log_pos, b.version = len(st.row_log), st.version
        return b

    def _share_scores(
        self,
        st: GpuState,
        rows: np.ndarray,
        before_cpu: np.ndarray,
        cpu: int,
        ask: GpuAsk,
        base: Stats | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(pair row index into ``rows``, GPU index, score) for every GPU a sharing pod fits on;
        GPUs with the same milli left as a lower-index GPU of the node are left out (same score)."""
        fm = self.frag_model(st)
        left = st.left[rows]
        g = left.shape[1]
        earlier = _earlier(g)
        dup = ((left[:, :, None] == left[:, None, :]) & earlier[None]).any(axis=2)
        pr, pj = ((left >= ask.milli) & ~dup).nonzero()
        model = st.model[rows]
        cnt, small, total, f0 = base if base is not None else _stats(fm, left, before_cpu, model)
        old = left[pr, pj]
        c2, s2, t2 = fm.moved(cnt[pr], small[pr], total[pr], old, old - ask.milli, 1)
        f1 = fm.per_pod(c2, s2, t2, before_cpu[pr] - cpu, model[pr])
        return pr, pj, sigmoid_score((f0[pr] - f1) @ fm.p, self.delta_scale)

    def node_scores(
        self,
        st: GpuState,
        rows: np.ndarray,
        before_cpu: np.ndarray,
        pod: Pod,
        ask: GpuAsk | None,
        base: Stats | None = None,
    ) -> np.ndarray:
        cpu = pod_cpu(pod)
        if ask is not None and ask.sharing:
            out = np.zeros(len(rows), np.int64)
            pr, _, s = self._share_scores(st, rows, before_cpu, cpu, ask, base)
            if pr.size:
                first = np.concatenate(([True], pr[1:] != pr[:-1])).nonzero()[0]
                out[pr[first]] = np.maximum.reduceat(s, first)
            return out
        fm = self.frag_model(st)
        model = st.model[rows]
        cnt, small, total, f0 = base if base is not None else _stats(fm, st.left[rows], before_cpu, model)
        if ask is None:
            f1 = fm.per_pod(cnt, small, total, before_cpu - cpu, model)
        else:  # whole GPUs: ``count`` fully free GPUs go to 0
            n = len(rows)
            c2, s2, t2 = fm.moved(cnt, small, total, np.full(n, MILLI), np.full(n, 0), ask.count)
            f1 = fm.per_pod(c2, s2, t2, before_cpu - cpu, model)
        return sigmoid_score((f0 - f1) @ fm.p, self.delta_scale)

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        if not pod.requests:
            return np.full(len(rows), MAX_NODE_SCORE, np.int64)
        ask = cycle_ask(state, pod, snap)
        st = GpuState.of(snap)
        b = self._base(snap, st)
        # A node's score depends on its own state and the pod's (cpu, GPU ask) only: keep every
        # node's score per ask and recompute just the nodes that changed since it was last asked.
        key = (pod_cpu(pod), ask)
        hit = self._scores.get(key)
        if hit is None or hit[0] is not b:
            every = np.arange(snap.n)
            scores = self.node_scores(st, every, b.cpu, pod, ask, (b.cnt, b.small, b.total, b.f0))
        else:
            scores = hit[2]
            changed = _rows_since(st.row_log, hit[1])
            if changed.size:
                base = (b.cnt[changed], b.small[changed], b.total[changed], b.f0[changed])
                scores[changed] = self.node_scores(st, changed, b.cpu[changed], pod, ask, base)
            self._scores.move_to_end(key)
        self._scores[key] = (b, len(st.row_log), scores)
        if len(self._scores) > SCORE_CACHE_SIZE:
            self._scores.popitem(last=False)
        return scores[rows]

    def pick_gpu(self, st: GpuState, row: int, before_cpu: int, pod: Pod, ask: GpuAsk) -> int | None:
        """The GPU of ``row`` where a sharing pod leaves the least fragmentation (first on ties)."""
        rows = np.asarray([row])
        _, pj, s = self._share_scores(st, rows, np.asarray([before_cpu]), pod_cpu(pod), ask)
        if s.size == 0:
            return None
        return int(pj[int(s.argmax())])
