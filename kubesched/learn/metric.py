"""The learning track's metric: unallocated GPU % at 100 % arrived, as the FGD paper reports it.

The paper's analysis scripts (``RunResult.curve``) average, after every pod, the allocated GPU %
of the events whose arrived % rounds to the level (99.5-100.5 % for 100), or, when none does,
those that round to within +-1 of it. Which events those are depends on the arrival sequence
alone (a dropped pod still arrives), so it is known before any policy runs: the runs stop after
the last of them, the offline bound places the pods arrived by it, and an instance where no event
falls in the window (a small one whose pods jump over it) is refused with one line rather than
giving NaN.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from kubesched.errors import InputError
from kubesched.experiment.protocol import (
    Prepared,
    RunResult,
    arrived_milli,
    binned,
    gpu_capacity_milli,
    percent_of,
)
from kubesched.learn.data import Instance

LEVEL = 100  # the arrived % the track reads (the paper's headline point)


def metric_pods(prep: Prepared, level: float = LEVEL, source: str = "trace") -> int:
    """How many pods of the sequence arrive by the last event the metric averages at ``level``;
    an InputError naming the seed when no event falls within ``level`` +-1."""
    pct = percent_of(arrived_milli(prep.pods), gpu_capacity_milli(prep.nodes))
    sel = np.flatnonzero(binned(pct, level))
    if sel.size == 0:
        below = pct[pct < level]
        before = f"{below[-1]:.2f}" if below.size else "0"
        after = pct[pct >= level]
        jump = f"from {before} % to {after[0]:.2f} %" if after.size else f"only up to {before} %"
        raise InputError(
            f"seed {prep.seed}: no pod's arrival lands between {level - 1.5:g} % and {level + 1.5:g} % arrived "
            f"(arrived goes {jump}), so unallocated GPU % at {level:g} % is undefined there: use more nodes "
            "(--max-nodes) or other seeds",
            source=source,
        )
    return int(sel[-1]) + 1


def check_defined(inst: Instance, seeds: Iterable[int], level: float = LEVEL) -> None:
    """Refuse, before anything runs, seeds of ``inst`` on which the metric is undefined."""
    for seed in seeds:
        metric_pods(inst.prepare(seed), level, f"trace {inst.trace}")


def unallocated(res: RunResult, level: int = LEVEL) -> float:
    """The metric of a run; an InputError when it is undefined (see ``metric_pods``), never NaN."""
    v = res.unallocated_at(level)
    if not np.isfinite(v):
        raise InputError(f"seed {res.seed}: no pod's arrival lands between {level - 1.5:g} % and {level + 1.5:g} % "
                         f"arrived, so unallocated GPU % at {level:g} % is undefined", source=res.policy)
    return v
