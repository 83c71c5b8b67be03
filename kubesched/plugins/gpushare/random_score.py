"""RandomScore: PreScore picks one feasible node uniformly (seeded); it scores 100, the rest 0."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kubesched.framework.interfaces import MAX_NODE_SCORE, PreScorePlugin, ScorePlugin
from kubesched.framework.status import Status

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.state.snapshot import Snapshot

NAME = "RandomScore"
_KEY = "PreScore" + NAME


class RandomScore(PreScorePlugin, ScorePlugin):
    name = NAME

    def pre_score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> Status | None:
        rng = self.handle.rng if self.handle is not None else np.random.default_rng()
        state.write(_KEY, int(rows[int(rng.integers(len(rows)))]) if len(rows) else -1)
        return None

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        chosen = state.read(_KEY)
        if chosen is None:
            raise RuntimeError(f'reading "{_KEY}" from cycle state: not found')
        return np.where(np.asarray(rows) == chosen, MAX_NODE_SCORE, 0).astype(np.int64)
