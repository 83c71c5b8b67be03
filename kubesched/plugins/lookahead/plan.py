"""PlanScore: steer placements towards the node configurations an offline packing plan wants.

The plan (``kubesched learn plan``; ``kubesched.learn.plan``) says, per node type, which multisets
of pod shapes (*configurations*) the configuration LP of the expected pod-shape mix fills the
GPUs best with, and on how many nodes. A node's current pods are a multiset of shapes; the
configurations it can still become are those of its type that contain it. Placing the pod keeps
some of them (those with room for one more of its shape): the score is the share of the plan's
node count it keeps, ``100 * kept / before``. A node already off the plan (no configuration
contains it), or of a type the plan does not know, loses nothing and scores 100: filling it spares
the nodes still on the plan. Weighted above FGDScore (e.g. 101 to 1: lexicographic), FGD decides
among the nodes that keep the most; weighted low, it breaks FGD's near-ties. Args: ``plan`` (the
JSON file).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.errors import InputError, join_path
from kubesched.framework.interfaces import MAX_NODE_SCORE, ScorePlugin
from kubesched.framework.plugin_args import args_body
from kubesched.gpu.model import pod_gpu_ask
from kubesched.plugins.lookahead.planfile import PlanTable, load_plan, node_type_key

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.state.snapshot import Snapshot

NAME = "PlanScore"
ROOT = NAME + "Args"


def shape_key(pod: Pod) -> tuple[int, int, int, str]:
    """The pod's shape as the plan writes it (CPU as FGD's typical pods count it)."""
    ask = pod_gpu_ask(pod)
    if ask is None:
        return (int(pod.non_zero_cpu), 0, 0, "")
    return (int(pod.non_zero_cpu), ask.milli, ask.count, ask.spec)


class PlanState:
    """Each node's pods as shape counts and the plan's configurations it can still become,
    following the snapshot's changed rows."""

    def __init__(self, plan: PlanTable) -> None:
        self.plan = plan
        self.structure = -1
        self.pos = 0
        self.snap: Snapshot | None = None

    def shape(self, pod: Pod) -> int:
        return self.plan.shape_of.get(shape_key(pod), self.plan.shapes)  # the last column: unknown

    def _rebuild(self, snap: Snapshot) -> None:
        p = self.plan
        self.types = np.array([p.type_of.get(node_type_key(n), -1) for n in snap.nodes], np.int64)
        self.counts = np.zeros((snap.n, p.shapes + 1), np.int32)
        self.compat = np.zeros((snap.n, len(p.weight)), bool)
        self._sync(snap, np.arange(snap.n))

    def _sync(self, snap: Snapshot, rows: np.ndarray) -> None:
        for r in rows.tolist():
            c = np.zeros(self.plan.shapes + 1, np.int32)
            for pod in snap.pods_on[r].values():
                c[self.shape(pod)] += 1
            self.counts[r] = c
        p = self.plan
        self.compat[rows] = (self.types[rows, None] == p.ctype[None, :]) & (
            self.counts[rows, None, :] <= p.configs[None, :, :]
        ).all(axis=2)

    def follow(self, snap: Snapshot) -> None:
        if snap is not self.snap or snap.structure != self.structure or len(snap.changed_rows) < self.pos:
            self.snap, self.structure = snap, snap.structure
            self._rebuild(snap)
        elif len(snap.changed_rows) > self.pos:
            self._sync(snap, np.unique(np.asarray(snap.changed_rows[self.pos :], np.int64)))
        self.pos = len(snap.changed_rows)

    def kept(self, shape: int, rows: np.ndarray) -> np.ndarray:
        """Per row: the share of the plan's node count its possible configurations keep when one
        pod of ``shape`` is added (1 where the row is off the plan)."""
        p = self.plan
        now = self.compat[rows]
        after = now & (self.counts[rows, shape][:, None] < p.configs[None, :, shape])
        before = now @ p.weight
        return np.where(before > 0, (after @ p.weight) / np.where(before > 0, before, 1.0), 1.0)


class PlanScore(ScorePlugin):
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        body = args_body(NAME, args, ("plan",))
        path = body.get("plan")
        if not isinstance(path, str) or not path:
            raise InputError("expected the path of a plan (kubesched learn plan)", path=join_path(ROOT, "plan"))
        try:
            self.state = PlanState(load_plan(path))
        except InputError as e:
            where = ": ".join(x for x in (e.source, e.path) if x)
            raise InputError(f"{where}: {e.reason}", path=join_path(ROOT, "plan")) from None

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        self.state.follow(snap)
        kept = self.state.kept(self.state.shape(pod), rows)
        return np.rint(MAX_NODE_SCORE * kept).astype(np.int64)
