"""ValueScore: one-step lookahead with a value function of the whole cluster, among FGD's near-ties.

Late in a run (the cluster's GPUs at least ``fromAllocatedPct`` % allocated) and only where FGD
hesitates (its top ``topK`` nodes within ``margin`` points of its best score), each candidate is
tried: the pod placed there (its GPU chosen as Open-Gpu-Share chooses it with FGDScore), the
features of the whole cluster after it (``clusterstate``: computed from the candidate's node row
and the sums of every other node's, kept row by row), and the value function of the file
``value`` (``kubesched learn value``: a linear function fitted by policy iteration on training
seeds) says how much GPU milli the run will still fail to place from there. The candidate with
the least is chosen when it beats FGD's own choice by more than ``minGain`` (points of %);
otherwise FGD's choice stands. The chosen node scores 100, every other 0; outside those decisions
every node scores 0, so FGDScore (weight 1 under this plugin's 101) decides exactly as FGD.

``epsilon`` (default 0) and ``seed`` are for training: with probability ``epsilon`` a decision
takes a candidate at random instead (exploration). Args: ``value`` (the JSON file, required),
``fromAllocatedPct`` (85), ``topK`` (3), ``margin`` (2), ``minGain`` (0), ``epsilon`` (0),
``seed`` (0); the value file's ``policy`` (the settings it was fitted with) replaces those
defaults, and the args replace the file's. The profile needs FGDScore.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.errors import InputError, join_path
from kubesched.framework.plugin_args import args_body
from kubesched.gpu.state import GpuState, exclusive_pick
from kubesched.plugins.gpushare.common import cpu_left, cycle_ask, pod_cpu
from kubesched.plugins.lookahead.clusterstate import ClusterState, NodeRows
from kubesched.plugins.lookahead.neartie import NearTies
from kubesched.plugins.lookahead.valuefile import DEFAULTS, ValueFunction, check_settings, load_value

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.plugins.gpushare.fgd import FGDScore
    from kubesched.state.snapshot import Snapshot

NAME = "ValueScore"
ROOT = NAME + "Args"


class ValueScore(NearTies):
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        body = args_body(NAME, args, ("value", *DEFAULTS))
        path = body.pop("value", None)
        if not isinstance(path, str) or not path:
            raise InputError("expected the path of a value function (kubesched learn value)",
                             path=join_path(ROOT, "value"))
        try:
            self.function: ValueFunction = load_value(path)
        except InputError as e:
            where = ": ".join(x for x in (e.source, e.path) if x)
            raise InputError(f"{where}: {e.reason}", path=join_path(ROOT, "value")) from None
        cfg = {**DEFAULTS, **self.function.policy, **check_settings(body, ROOT)}
        self.from_pct, self.k, self.margin = float(cfg["fromAllocatedPct"]), int(cfg["topK"]), int(cfg["margin"])
        self.min_gain, self.epsilon = float(cfg["minGain"]), float(cfg["epsilon"])
        self.rng = np.random.default_rng(int(cfg["seed"]))
        self.decisions = 0  # decisions where the value function was asked
        self.changed = 0  # ... and chose another node than FGD
        self.seconds = 0.0  # in those decisions
        self.log: list[tuple[str, np.ndarray]] | None = None  # (pod, features after the choice), when set
        self._cluster: ClusterState | None = None

    def _choose(self, state: CycleState, pod: Pod, snap: Snapshot, st: GpuState, fgd: FGDScore,
                cands: np.ndarray) -> int | None:
        x = self.candidates(state, pod, snap, st, fgd, cands)
        if x is None:
            return None
        pick = self._pick(self.function(x))
        if self.log is not None:
            self.log.append((pod.name, x[pick]))
        return pick

    def _pick(self, v: np.ndarray) -> int:
        if self.epsilon and self.rng.random() < self.epsilon:
            return int(self.rng.integers(len(v)))
        best = int(np.argmin(v))
        return best if v[best] < v[0] - self.min_gain else 0

    def candidates(self, state: CycleState, pod: Pod, snap: Snapshot, st: GpuState, fgd: FGDScore,
                   cands: np.ndarray) -> np.ndarray | None:
        """(len(cands), features): the cluster's features with the pod on each candidate; None
        where a GPU cannot be chosen on one (FGD's choice then stands)."""
        cluster = self._cluster
        if cluster is None or cluster.node_rows.fm is not fgd.frag_model(st):
            cluster = self._cluster = ClusterState(NodeRows(fgd.frag_model(st)))
        cluster.follow(snap, st)
        left = st.left[cands].copy()
        cpu = cpu_left(snap, cands)
        ask = cycle_ask(state, pod, snap)
        if ask is not None and ask.total_milli:
            for c, row in enumerate(cands.tolist()):
                if ask.sharing:
                    j = fgd.pick_gpu(st, row, int(cpu[c]), pod, ask)
                    if j is None:
                        return None
                    left[c, j] -= ask.milli
                else:
                    idx = exclusive_pick(left[c], ask.count)
                    if idx is None:
                        return None
                    left[c, list(idx)] = 0
        return cluster.after(cands, left, cpu - pod_cpu(pod), st.model[cands], st.count[cands])
