"""The objective: simulate a config document on every simulator seed and average the metrics.

Trials run in the kit's worker processes when ``--jobs`` > 1 (the simulator is CPU-bound Python:
threads would share one core). Workers are forked after the workloads are built, so they inherit
them instead of unpickling thousands of pods per trial.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from kubesched.kit.pool import Pool
from kubesched.tune.metrics import METRICS, metric_value
from kubesched.tune.space import SearchSpace
from kubesched.tune.workload import WorkloadSource


@dataclass
class Evaluation:
    """Every metric averaged over the seeds (None when some seed had no value) and per seed."""

    values: dict[str, float | None]
    per_seed: dict[int, dict[str, float | None]] = field(default_factory=dict)
    seconds: float = 0.0

    def objective(self, metrics: Sequence[str]) -> list[float] | None:
        vals = [self.values[m] for m in metrics]
        return None if any(v is None for v in vals) else [float(v) for v in vals]  # type: ignore[arg-type]


@dataclass
class Evaluator:
    space: SearchSpace
    source: WorkloadSource
    mode: str = "time"
    tie_break: str = "random"
    max_wait: float | None = None

    def evaluate(self, doc: dict[str, Any], seeds: Sequence[int], label: str = "trial") -> Evaluation:
        from kubesched.sim.runner import simulate

        t0 = time.perf_counter()
        config = self.space.load(doc, label)
        per_seed: dict[int, dict[str, float | None]] = {}
        for seed in seeds:
            res = simulate(
                config,
                self.source.for_seed(seed),
                mode=self.mode,
                seed=seed,
                registry=self.space.registry,
                max_wait=self.max_wait,
                tie_break=self.tie_break,
                record_events=False,
            )
            per_seed[seed] = {m: metric_value(res.summary, m) for m in METRICS}
        values: dict[str, float | None] = {}
        for m in METRICS:
            vals = [s[m] for s in per_seed.values()]
            values[m] = None if any(v is None for v in vals) else sum(vals) / len(vals)  # type: ignore[arg-type]
        return Evaluation(values, per_seed, time.perf_counter() - t0)


_WORKER: tuple[Evaluator, tuple[int, ...]] | None = None  # set before forking workers


def _run_in_worker(doc: dict[str, Any], label: str) -> Evaluation:
    assert _WORKER is not None
    ev, seeds = _WORKER
    return ev.evaluate(doc, seeds, label)


@contextmanager
def trial_runner(evaluator: Evaluator, seeds: Sequence[int], jobs: int) -> Iterator[Any]:
    """``run(docs, labels) -> [Evaluation]`` in input order, on ``jobs`` processes (1: in-process)."""
    global _WORKER
    for s in seeds:  # build every seed's workload before workers fork
        evaluator.source.for_seed(s)
    _WORKER = (evaluator, tuple(seeds))
    try:
        with Pool(jobs, start="fork") as pool:
            yield lambda docs, labels: pool.map(_run_in_worker, zip(docs, labels, strict=True), star=True)
    finally:
        _WORKER = None
