"""The metrics a study can optimise: numeric leaves of the simulator's ``summary.json``.

Names are dotted paths into ``SimResult.summary`` (``gpu.unallocated_pct``,
``queueing_delay_s.p90``). Run-time figures (``run.*``) are left out: they measure the machine,
not the placement, and would make studies unrepeatable.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kubesched.errors import InputError

_STATS3 = ("final", "peak", "mean")
_FRAG = ("final", "mean", "max")

#: metric -> the direction that is better, used when --direction is not given.
METRICS: dict[str, str] = {
    **{f"pods.{k}": "maximize" for k in ("scheduled", "completed", "running_at_end")},
    **{f"pods.{k}": "minimize" for k in ("failed", "pending_at_end", "withdrawn", "preempted", "evicted")},
    **{f"allocation_pct.{r}.{s}": "maximize" for r in ("cpu", "memory", "gpu") for s in _STATS3},
    "gpu.unallocated_pct": "minimize",
    "gpu.allocated_milli": "maximize",
    **{f"gpu.{m}.{s}": "minimize" for m in ("frag_milli", "frag_pct", "frag_ratio_pct") for s in _FRAG},
    "gpu.gpus_in_use_pct": "minimize",
    **{f"queueing_delay_s.{s}": "minimize" for s in ("p50", "p90", "p99", "mean", "max")},
    **{f"utilization_pct.{r}.{s}": "maximize" for r in ("cpu", "memory") for s in ("mean", "peak")},
    "arrived_workload_pct": "maximize",
}

DIRECTIONS = ("minimize", "maximize")


def metric_value(summary: Mapping[str, Any], name: str) -> float | None:
    """The metric's value in a summary; None when the simulator left it null (e.g. no GPU pods)."""
    cur: Any = summary
    for part in name.split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            return None
        cur = cur[part]
    if cur is None or isinstance(cur, bool) or not isinstance(cur, int | float):
        return None
    v = float(cur)
    return v if math.isfinite(v) else None


def parse_metrics(text: str, directions: str | None) -> tuple[list[str], list[str]]:
    """``--metric a,b`` and ``--direction minimize,maximize`` (default: each metric's natural one)."""
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise InputError("--metric: give a metric name (one of: " + ", ".join(METRICS) + ")")
    for m in names:
        if m not in METRICS:
            raise InputError(f'--metric: unknown metric "{m}" (one of: {", ".join(METRICS)})')
    if len(set(names)) != len(names):
        raise InputError("--metric: a metric is named twice")
    if directions is None:
        return names, [METRICS[m] for m in names]
    dirs = [d.strip() for d in directions.split(",")]
    if len(dirs) == 1 and len(names) > 1:
        dirs = dirs * len(names)
    if len(dirs) != len(names):
        raise InputError(f"--direction: {len(dirs)} direction(s) for {len(names)} metric(s)")
    for d in dirs:
        if d not in DIRECTIONS:
            raise InputError(f'--direction: unknown direction "{d}" (minimize or maximize)')
    return names, dirs


#: metrics read from the cluster as the run leaves it: in time mode every pod with a duration has
#: finished by then, so they measure a cluster emptied of those pods
FINAL_STATE = frozenset(
    {"gpu.unallocated_pct", "gpu.allocated_milli", "gpu.gpus_in_use_pct", "pods.running_at_end"}
    | {f"allocation_pct.{r}.final" for r in ("cpu", "memory", "gpu")}
    | {f"gpu.{m}.final" for m in ("frag_milli", "frag_pct", "frag_ratio_pct")}
)


def constant_objective_warnings(metrics: list[str], trial_values: list[list[float]], mode: str) -> list[str]:
    """A warning per metric that had the same value in every completed trial (at least two): the
    weights tried did not move it, so the study had nothing to optimise."""
    out = []
    if len(trial_values) < 2:
        return out
    for k, m in enumerate(metrics):
        vals = {v[k] for v in trial_values}
        if len(vals) != 1:
            continue
        msg = (
            f'metric {m} was {next(iter(vals)):.6g} in all {len(trial_values)} trials: the weights tried do not '
            "change it, so the study could not optimise it"
        )
        if mode == "time" and m in FINAL_STATE:
            msg += (
                " (it is read at the end of the run, and in time mode every pod with a duration has finished "
                "by then; use --mode arrival or --inflate, or a mean such as allocation_pct.gpu.mean)"
            )
        out.append(msg)
    return out
