"""The decisions the look-ahead plugins over FGD take: late in a run, among FGD's near-ties."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from kubesched.framework.interfaces import MAX_NODE_SCORE, ScorePlugin
from kubesched.gpu.model import MILLI
from kubesched.gpu.state import GpuState
from kubesched.plugins.learned.features import rank

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.plugins.gpushare.fgd import FGDScore
    from kubesched.state.snapshot import Snapshot


class NearTies(ScorePlugin):
    """A score plugin that, once ``from_pct`` % of the cluster's GPU milli is allocated, chooses
    among FGD's top ``k`` nodes within ``margin`` points of its best (``_choose``: an index into
    them, 0 being FGD's own choice; None: no decision). The chosen node scores 100, every other
    0; outside those decisions every node scores 0, so FGDScore at weight 1 under the plugin's
    101 decides exactly as FGD."""

    from_pct: float = 0.0
    k: int = 1
    margin: int = 0
    decisions = 0  # decisions taken
    changed = 0  # ... where another node than FGD's was chosen
    seconds = 0.0  # wall seconds in those decisions

    def _choose(self, state: CycleState, pod: Pod, snap: Snapshot, st: GpuState, fgd: FGDScore,
                cands: np.ndarray) -> int | None:
        raise NotImplementedError

    def _fgd(self) -> FGDScore:
        fw = self.handle.framework if self.handle is not None else None
        base = fw.plugins.get("FGDScore") if fw is not None else None
        if base is None:
            raise RuntimeError(f"{self.name} needs FGDScore in the same profile")
        return base

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        out = np.zeros(len(rows), np.int64)
        if len(rows) < 2 or not pod.requests:
            return out
        st = GpuState.of(snap)
        cap = st.gpus_sum * MILLI
        if cap == 0 or 100.0 * (cap - st.idle_sum) / cap < self.from_pct:
            return out
        fgd = self._fgd()
        base = fgd.score(state, pod, snap, rows)
        order = rank(snap, rows, base, self.k)
        near = order[base[order] >= base[order[0]] - self.margin]
        if len(near) < 2:
            return out
        t0 = time.perf_counter()
        pick = self._choose(state, pod, snap, st, fgd, rows[near])
        if pick is None:
            return out
        self.decisions += 1
        self.changed += pick != 0
        self.seconds += time.perf_counter() - t0
        out[near[pick]] = MAX_NODE_SCORE
        return out
