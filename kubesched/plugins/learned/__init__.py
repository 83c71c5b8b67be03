"""LearnedScore: a node-selection policy trained with ``kubesched learn``, run in numpy.

The policy chooses among the top-K feasible nodes as ranked by the profile's FGDScore (highest
score, ties to the first in node order), from the features of ``kubesched.plugins.learned.features``; the
chosen node scores 100 and every other node 0. Enable it with a weight well above FGDScore's
(``kubesched.learn.policies.learned_config`` writes: LearnedScore 1000, FGDScore 1), so that the
learned choice decides and FGDScore, which Open-Gpu-Share's ``gpuSelMethod: FGDScore`` reads to
pick the GPU, does not. Args: ``model`` (the ``.npz`` from ``kubesched learn export``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.errors import InputError, join_path
from kubesched.framework.interfaces import MAX_NODE_SCORE, ScorePlugin
from kubesched.framework.plugin_args import args_body
from kubesched.plugins.learned.features import CandidateFeatures
from kubesched.plugins.learned.model import load_model

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.state.snapshot import Snapshot

NAME = "LearnedScore"
ROOT = NAME + "Args"
BASE_PLUGINS = {"FGD": "FGDScore"}


class LearnedScore(ScorePlugin):
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        body = args_body(NAME, args, ("model",))
        path = body.get("model")
        if not isinstance(path, str) or not path:
            raise InputError("expected the path of a .npz model", path=join_path(ROOT, "model"))
        try:
            self.model = load_model(path)
        except InputError as e:  # the loader names the config file: keep the model's file and field
            where = ": ".join(x for x in (e.source, e.path) if x)
            raise InputError(f"{where}: {e.reason}", path=join_path(ROOT, "model")) from None
        if self.model.base not in BASE_PLUGINS:
            raise InputError(f"unknown base policy {self.model.base!r}", source=path, path="base")
        self.features = CandidateFeatures(self.model.k)
        self.decisions = 0
        self.seconds = 0.0  # in score(): features + inference

    def _base(self) -> ScorePlugin:
        fw = self.handle.framework if self.handle is not None else None
        base = fw.plugins.get(BASE_PLUGINS[self.model.base]) if fw is not None else None
        if base is None:
            raise RuntimeError(f"LearnedScore needs {BASE_PLUGINS[self.model.base]} in the same profile")
        return base

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        t0 = time.perf_counter()
        rows = np.asarray(rows)
        obs, order = self.features.observe_order(pod, snap, rows, self._base_scores(state, pod, snap, rows))
        out = np.zeros(len(rows), np.int64)
        out[order[self.model.act_first(obs, len(order))]] = MAX_NODE_SCORE
        self.decisions += 1
        self.seconds += time.perf_counter() - t0
        return out

    def _base_scores(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        """The base plugin's raw scores of ``rows``: the equivalence cache's when it holds them
        this cycle (the framework scores the base plugin from them too), else its Score."""
        base = self._base()
        known = state.known_raw.get(base.name)
        return known[rows] if known is not None else base.score(state, pod, snap, rows)
