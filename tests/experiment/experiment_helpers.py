"""Shared bits of the experiment tests: the openb data folder and synthetic run records."""

from __future__ import annotations

import math

from kubesched.experiment.runner import LEVELS, METRICS, RunRecord


def record(trace: str, policy: str, seed: int, unalloc: dict[int, float], frag: float = 1.0) -> RunRecord:
    """A run whose unallocated curve is ``unalloc`` at the given levels and NaN elsewhere."""
    curves = {m: [math.nan] * len(LEVELS) for m in METRICS}
    for lvl, v in unalloc.items():
        curves["unallocated"][lvl] = v
        curves["frag_amount"][lvl] = frag
        curves["frag_ratio"][lvl] = 10 * frag
    return RunRecord(trace, policy, seed, 10, 13, 1, 2, 8, 0.1, 0.2, curves)
