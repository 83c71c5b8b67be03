"""TaintToleration: keep pods off nodes whose taints they do not tolerate, and prefer fewer
untolerated PreferNoSchedule taints.

Nodes with identical taint lists share a taint-set id in the snapshot, so each check runs once
per distinct taint set among the candidate rows and is gathered back to rows with one index.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.taints import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, Taint, Toleration, tolerated
from kubesched.framework.interfaces import (
    FilterPlugin,
    NodeLocal,
    PreScorePlugin,
    ScorePlugin,
    default_normalize,
)
from kubesched.framework.status import Code, FilterResult, PluginError, Status

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.state.snapshot import Snapshot

NAME = "TaintToleration"
PRE_SCORE_STATE_KEY = "PreScore" + NAME
# v1.35+ (kubernetes/kubernetes#134740): taint keys and values are no longer shown to users.
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"
# Only these effects keep a pod off a node; PreferNoSchedule only lowers the score.
DO_NOT_SCHEDULE_EFFECTS = (NO_SCHEDULE, NO_EXECUTE)


def per_taint_set(snap: Snapshot, rows: np.ndarray, fn: Callable[[tuple[Taint, ...]], int]) -> np.ndarray:
    """``fn(taints)`` for every row, evaluated once per distinct taint set present in ``rows``."""
    ids = snap.taint_set_ids[rows]
    n_sets = len(snap.taint_sets)
    present = np.zeros(n_sets, bool)
    present[ids] = True
    table = np.zeros(n_sets, np.int64)
    for tid in np.flatnonzero(present).tolist():
        table[tid] = fn(snap.taint_sets[tid])
    return table[ids]


def has_untolerated_taint(taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...]) -> bool:
    """v1helper.FindMatchingUntoleratedTaint with DoNotScheduleTaintsFilterFunc."""
    return any(t.effect in DO_NOT_SCHEDULE_EFFECTS and not tolerated(t, tolerations) for t in taints)


def prefer_no_schedule_tolerations(tolerations: tuple[Toleration, ...]) -> tuple[Toleration, ...]:
    """getAllTolerationPreferNoSchedule: an empty effect tolerates every effect, so it counts too."""
    return tuple(t for t in tolerations if not t.effect or t.effect == PREFER_NO_SCHEDULE)


def count_intolerable_prefer_no_schedule(
    taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...]
) -> int:
    """countIntolerableTaintsPreferNoSchedule: the raw score of one node."""
    return sum(1 for t in taints if t.effect == PREFER_NO_SCHEDULE and not tolerated(t, tolerations))


class TaintToleration(FilterPlugin, PreScorePlugin, ScorePlugin, NodeLocal):
    """Filter on NoSchedule/NoExecute taints; score by untolerated PreferNoSchedule taints."""

    name = NAME
    events_to_register = frozenset({"NodeAdd", "NodeUpdate"})

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        """Unresolvable: evicting pods never removes a taint."""
        tolerations = pod.tolerations
        fail = per_taint_set(snap, rows, lambda taints: has_untolerated_taint(taints, tolerations)).astype(
            bool
        )
        return FilterResult.from_mask(fail, ERR_REASON_UNTOLERATED, Code.UnschedulableAndUnresolvable)

    def pre_score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> Status | None:
        """Keep only the tolerations that can tolerate a PreferNoSchedule taint."""
        state.write(PRE_SCORE_STATE_KEY, prefer_no_schedule_tolerations(pod.tolerations))
        return None

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        """Raw score: untolerated PreferNoSchedule taints (lower is better, reversed later)."""
        tolerations = state.read(PRE_SCORE_STATE_KEY)
        if tolerations is None:  # upstream errors too when PreScore did not run
            raise PluginError(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        return per_taint_set(
            snap, rows, lambda taints: count_intolerable_prefer_no_schedule(taints, tolerations)
        )

    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        """Reverse: the node with the most untolerated taints gets 0, nodes with none get 100."""
        return default_normalize(scores, reverse=True)
