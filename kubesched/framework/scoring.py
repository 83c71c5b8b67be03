"""What the Score points produce (``Scores``), what the equivalence cache already knows of them
(``KnownScores``), which plugins normalize, and NormalizeScore's range check. ``Framework.run_score`` is the loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubesched.framework.failures import PluginFailure
from kubesched.framework.interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE, ScorePlugin
from kubesched.framework.status import Status, go_quote


@dataclass
class Scores:
    rows: np.ndarray
    total: np.ndarray
    # plugin -> (raw, normalized, weight); absent when the plugin was skipped, and empty when the
    # equivalence cache supplied the raw scores (nobody reads them from the scheduling cycle)
    per_plugin: dict[str, tuple[np.ndarray, np.ndarray, int]] = field(default_factory=dict)
    in_order: bool = False  # rows ascend in node order (then the first highest total is the first in order)


@dataclass
class KnownScores:
    """What the equivalence cache knows of a window's scores before ``Framework.run_score`` runs:
    the raw scores of the plugins that sign the pod, per row of the snapshot, and the PreScore
    plugins still to run (those that do not sign it)."""

    pre_score: list[Any]  # PreScore plugins to run over the window (the others ran, or skip)
    skip: frozenset[str]  # score plugins that skip whatever ``pre_score`` says
    scorers: list[tuple[Any, int]]  # (plugin, weight) that may score, in profile order
    raw: dict[str, np.ndarray]  # plugin -> raw score per row (valid where it passes the filters)
    static: np.ndarray | None  # weighted sum of the known raw scores needing no normalisation
    # normalising plugins whose known raw score is 0 on every row: NormalizeScore reads the scores
    # alone, so their normalised scores are those of a zero vector (the same for every window size)
    zero: set[str]
    fresh: bool  # plugins that do not sign the pod take part (``pre_score`` runs, ``skip`` grows)


def normalizes(pl: object) -> bool:
    """Whether ``pl`` has a NormalizeScore of its own (upstream: ScoreExtensions); only those are
    called at NormalizeScore."""
    return type(pl).normalize is not ScorePlugin.normalize


_UMAX = np.maximum.reduce
_U64 = np.dtype(np.uint64)  # a dtype, not the type: ``view`` would convert it on every call


def check_score_range(pl: Any, norm: np.ndarray) -> None:
    """NormalizeScore must leave every score within [MIN_NODE_SCORE, MAX_NODE_SCORE]: an Error
    naming the plugin, with upstream's text and the first offending node's score, otherwise."""
    # one reduction: a negative int64 reads as a huge uint64 (the ufunc's own reduce: ``max()``
    # goes through a Python wrapper, and this runs for every scoring plugin every cycle)
    if not norm.size or _UMAX(norm.view(_U64)) <= MAX_NODE_SCORE:
        return
    bad = int(norm[(norm > MAX_NODE_SCORE) | (norm < MIN_NODE_SCORE)][0])
    raise PluginFailure(
        Status.error(
            f"applying score defaultWeights on Score plugins: plugin {go_quote(pl.name)} returns "
            f"an invalid score {bad}, it should in the range of "
            f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
            pl.name,
        )
    )
