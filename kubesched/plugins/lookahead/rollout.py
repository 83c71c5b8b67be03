"""RolloutScore: one step of policy improvement over FGD, by rollouts on sampled futures.

Late in a run (the cluster's GPUs at least ``fromAllocatedPct`` % allocated) and only where FGD
hesitates (its top ``topK`` nodes, those within ``margin`` points of its best score), each
candidate is tried: the pod placed there, then ``futures`` sampled futures of ``horizon`` pods,
each drawn from FGD's typical pods by their popularity (the shape distribution, never the real
future: the same futures for every candidate), placed one by one by FGD's own rule (the highest
FGD score, ties to the first in node order; a pod that fits nowhere is dropped). The candidate
whose futures place the most GPU milli on average is chosen when it beats FGD's own choice by
more than ``minGain`` milli; otherwise FGD's choice stands. The chosen node scores 100, every other
0; outside those decisions every node scores 0, so FGDScore (weight 1 under this plugin's 101)
decides exactly as FGD.

The rollouts run on a copy of the GPU state as arrays (GPUs' milli left, CPU left, card model per
node), not on the scheduler: per node and typical pod, FGD's score and GPU choice are kept in a
table, and a placement recomputes the one row it changed (memoised by the row's state), so a
step of a rollout costs an argmax over the nodes. Memory and pod counts are not simulated.
Args: ``fromAllocatedPct`` (default 90), ``topK`` (3), ``margin`` (2), ``horizon`` (300),
``futures`` (2), ``fragWeight`` (1), ``minGain`` (0), ``seed`` (0): the defaults are the settings
measured in docs/learning.md. The profile needs FGDScore: its typical pods are
the shape distribution, its score ranks the candidates, and Open-Gpu-Share picks the GPU with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.errors import InputError, join_path
from kubesched.framework.plugin_args import args_body, shown
from kubesched.gpu.frag import FragModel, sigmoid_score
from kubesched.gpu.model import MILLI
from kubesched.gpu.state import GpuState, exclusive_pick
from kubesched.plugins.gpushare.common import cpu_left, cycle_ask, pod_cpu
from kubesched.plugins.lookahead.neartie import NearTies

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.plugins.gpushare.fgd import FGDScore
    from kubesched.state.snapshot import Snapshot

NAME = "RolloutScore"
ROOT = NAME + "Args"
DEFAULTS: dict[str, float] = {"fromAllocatedPct": 90.0, "topK": 3, "margin": 2, "horizon": 300, "futures": 2,
                              "minGain": 0.0, "seed": 0, "fragWeight": 1.0}
INTEGER = ("topK", "margin", "horizon", "futures", "seed")
MEMO_SIZE = 200_000
NO_GPU = -1  # a pick for a pod that takes no GPU
UNFIT = -1  # a score where the pod does not fit


class RowTable:
    """FGD's score and GPU choice of every typical pod on one node state, memoised by that state
    (GPUs' milli left in index order, CPU left, model): the rows a rollout changes are looked up."""

    def __init__(self, fm: FragModel, delta_scale: float) -> None:
        self.fm, self.scale = fm, delta_scale
        t = fm.typical
        self.cpu, self.milli, self.count = t.cpu.tolist(), t.milli.tolist(), t.count.tolist()
        self.acc = fm.acc
        self.memo: dict[tuple[tuple[int, ...], int, int], tuple[np.ndarray, np.ndarray]] = {}

    def row(self, left: np.ndarray, cpu: int, model: int) -> tuple[np.ndarray, np.ndarray]:
        key = (tuple(left.tolist()), cpu, model)
        hit = self.memo.get(key)
        if hit is None:
            hit = self._compute(list(key[0]), cpu, model)
            if len(self.memo) > MEMO_SIZE:
                self.memo.clear()
            self.memo[key] = hit
        return hit

    def _compute(self, left: list[int], cpu: int, model: int) -> tuple[np.ndarray, np.ndarray]:
        amount = self.fm.node_amount
        f0 = amount(left, cpu, model)
        m = len(self.cpu)
        delta = np.zeros(m)
        fits = np.zeros(m, bool)
        pick = np.full(m, NO_GPU, np.int64)
        for s in range(m):
            c, milli, count = self.cpu[s], self.milli[s], self.count[s]
            if c > cpu or not self.acc[s, model]:
                continue
            if milli == 0:
                delta[s], fits[s] = f0 - amount(left, cpu - c, model), True
            elif milli < MILLI:
                best, seen = None, set()
                for j, v in enumerate(left):
                    if v >= milli and v not in seen:  # GPUs with equal milli left score the same
                        seen.add(v)
                        after = left.copy()
                        after[j] = v - milli
                        d = f0 - amount(after, cpu - c, model)
                        if best is None or d > best:
                            best, pick[s] = d, j
                if best is not None:
                    delta[s], fits[s] = best, True
            else:
                free = [j for j, v in enumerate(left) if v == MILLI]
                if len(free) >= count:
                    after = left.copy()
                    for j in free[:count]:
                        after[j] = 0
                    delta[s], fits[s] = f0 - amount(after, cpu - c, model), True
        score = np.where(fits, sigmoid_score(delta, self.scale), UNFIT)
        return score, pick


class RolloutScore(NearTies):
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        body = args_body(NAME, args, tuple(DEFAULTS))
        cfg = {**DEFAULTS, **body}
        for key, v in cfg.items():
            ok = not isinstance(v, bool) and isinstance(v, int if key in INTEGER else int | float) and v >= 0
            if not ok or (key in ("topK", "futures", "horizon") and v < 1):
                raise InputError(f"invalid value {shown(v)}: must be a {'positive integer' if key in INTEGER else 'number >= 0'}",
                                 path=join_path(ROOT, key))
        self.from_pct = float(cfg["fromAllocatedPct"])
        self.k, self.margin, self.horizon = int(cfg["topK"]), int(cfg["margin"]), int(cfg["horizon"])
        self.futures, self.min_gain, self.seed = int(cfg["futures"]), float(cfg["minGain"]), int(cfg["seed"])
        self.frag = float(cfg["fragWeight"])
        self.decisions = 0  # decisions where rollouts ran
        self.changed = 0  # ... and chose another node than FGD
        self.seconds = 0.0  # in those decisions
        self._table: RowTable | None = None
        self._fm: FragModel | None = None

    def _choose(self, state: CycleState, pod: Pod, snap: Snapshot, st: GpuState, fgd: FGDScore,
                cands: np.ndarray) -> int:
        """Index into ``cands`` of the candidate whose sampled futures place the most GPU milli."""
        fm = fgd.frag_model(st)
        if self._table is None or self._fm is not fm:
            self._fm, self._table = fm, RowTable(fm, fgd.delta_scale)
        table = self._table
        # node order: ties go to the first node in it, as the scheduler breaks them
        perm = np.argsort(snap.order_positions[: snap.n], kind="stable")
        left, cpu, model = st.left[perm].copy(), cpu_left(snap, perm).copy(), st.model[perm]
        rows = [table.row(left[i], int(cpu[i]), int(model[i])) for i in range(len(perm))]
        score0 = np.stack([r[0] for r in rows])  # (nodes, typical pods), UNFIT where a pod does not fit
        pick0 = np.stack([r[1] for r in rows])
        pos = np.empty(len(perm), np.int64)
        pos[perm] = np.arange(len(perm))
        t = fm.typical
        rng = np.random.default_rng([self.seed, self.decisions])
        futures = rng.choice(len(t.p), size=(self.futures, self.horizon), p=t.p / t.p.sum())
        gain = (t.milli * t.count).astype(np.float64)
        ask = cycle_ask(state, pod, snap)
        values = np.zeros(len(cands))
        for c, row in enumerate(cands.tolist()):
            i = int(pos[row])
            own = left[i].copy()
            if ask is not None and ask.total_milli:
                if ask.sharing:
                    j = fgd.pick_gpu(st, row, int(cpu[i]), pod, ask)
                    if j is None:
                        return 0
                    own[j] -= ask.milli
                else:
                    idx = exclusive_pick(own, ask.count)
                    if idx is None:
                        return 0
                    own[list(idx)] = 0
            for f in futures:
                values[c] += self._rollout(table, left, cpu, model, score0, pick0, i, own,
                                           int(cpu[i]) - pod_cpu(pod), f, gain, t, self.frag)
        best = int(np.argmax(values))
        return best if values[best] > values[0] + self.min_gain * len(futures) else 0

    @staticmethod
    def _rollout(table: RowTable, left: np.ndarray, cpu: np.ndarray, model: np.ndarray, score0: np.ndarray,
                 pick0: np.ndarray, i: int, own: np.ndarray, own_cpu: int, future: np.ndarray, gain: np.ndarray,
                 t: Any, frag: float) -> float:
        """GPU milli FGD places of ``future`` after the pod went to node ``i`` (leaving ``own``), less
        ``frag`` x the growth of the nodes' fragmentation against the typical pods (F_n(M), milli)
        over the rollout: what is left unusable counts against it."""
        changed: dict[int, tuple[np.ndarray, int]] = {i: (own, own_cpu)}
        score = score0.copy()
        pick = pick0.copy()
        score[i], pick[i] = table.row(own, own_cpu, int(model[i]))
        placed = 0.0
        for s in future.tolist():
            col = score[:, s]
            r = int(np.argmax(col))
            if col[r] == UNFIT:
                continue
            lr, cr = changed.get(r, (left[r], int(cpu[r])))
            lr = lr.copy()
            milli, count = int(t.milli[s]), int(t.count[s])
            if 0 < milli < MILLI:
                lr[int(pick[r, s])] -= milli
            elif milli:
                lr[list(exclusive_pick(lr, count) or ())] = 0
            cr -= int(t.cpu[s])
            changed[r] = (lr, cr)
            score[r], pick[r] = table.row(lr, cr, int(model[r]))
            placed += gain[s]
        if not frag:
            return placed
        amount = table.fm.node_amount
        grown = sum(amount(lr.tolist(), cr, int(model[r])) - amount(left[r].tolist(), int(cpu[r]), int(model[r]))
                    for r, (lr, cr) in changed.items())
        return placed - frag * grown
