"""Policy search without deep learning: a weighted combination of the existing GPU scorers.

A policy is a KubeSchedulerConfiguration: the protocol's filters and Open-Gpu-Share, and as score
plugins FGDScore, BestFitScore, DotProductScore, GpuPackingScore and GpuClusteringScore with
searched weights (each may be off), FGD's ``deltaScale`` (the quantisation step of its score) and a
tie-break rule: ``order`` (the first of the tied nodes in node order, as the replay's scheduler
breaks ties) or one of the scorers, added at weight 1 under the others multiplied by 101, so that
it decides only among nodes the weighted sum ties. Optuna's TPE sampler (seeded) proposes the
parameters; a trial's objective is the mean unallocated GPU % at 100 % arrived over the training
seeds. The best trials are then run on separate validation seeds, beside FGD itself, and the one
with the lowest validation mean is written out: possibly FGD's own configuration, when nothing
beat it there.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kubesched.experiment.protocol import GPU_FILTER, policy_config, run
from kubesched.gpu.frag import DELTA_SCALE, TypicalPods
from kubesched.kit.pool import Pool
from kubesched.kit.report import write_json, write_rows
from kubesched.learn.data import Instance
from kubesched.learn.metric import LEVEL, metric_pods, unallocated

#: policy name -> score plugin
SCORERS = {
    "FGD": "FGDScore",
    "BestFit": "BestFitScore",
    "DotProd": "DotProductScore",
    "GpuPacking": "GpuPackingScore",
    "GpuClustering": "GpuClusteringScore",
}
TIE_BREAKS = ("order", *SCORERS)
LEXICOGRAPHIC = 101  # weight multiplier under which a weight-1 scorer only breaks ties (scores <= 100)


@dataclass(frozen=True)
class Params:
    """One searched policy. ``weights``: scorer -> positive integer weight (absent = off)."""

    weights: tuple[tuple[str, int], ...]
    delta_scale: float = DELTA_SCALE
    tie_break: str = "order"

    @classmethod
    def of(cls, weights: dict[str, int], delta_scale: float = DELTA_SCALE, tie_break: str = "order") -> Params:
        w = tuple((k, int(v)) for k, v in weights.items() if v > 0)
        if not w:
            raise ValueError("at least one scorer needs a positive weight")
        unknown = [k for k, _ in w if k not in SCORERS] + ([tie_break] if tie_break not in TIE_BREAKS else [])
        if unknown:
            raise ValueError(f"unknown scorer(s) {', '.join(unknown)} (known: {', '.join(SCORERS)}, order)")
        return cls(w, float(delta_scale), tie_break)

    def describe(self) -> str:
        w = " + ".join(f"{v}*{k}" for k, v in self.weights)
        scale = f", deltaScale {self.delta_scale:g}" if dict(self.weights).get("FGD") else ""
        return f"{w}{scale}, ties: {self.tie_break}"

    def score_weights(self) -> dict[str, int]:
        """Score plugin -> weight as written in the configuration."""
        mult = 1 if self.tie_break == "order" else LEXICOGRAPHIC
        out = {SCORERS[k]: v * mult for k, v in self.weights}
        if self.tie_break != "order":
            tb = SCORERS[self.tie_break]
            out[tb] = out.get(tb, 0) + 1
        return out

    def config(self, typical: TypicalPods) -> dict:
        """The KubeSchedulerConfiguration of this policy (``typical``: FGD's target workload)."""
        doc = policy_config("FGD", typical)
        prof = doc["profiles"][0]
        weights = self.score_weights()
        prof["plugins"]["score"]["enabled"] = [{"name": n, "weight": w} for n, w in weights.items()]
        fgd = "FGDScore" in weights
        prof["pluginConfig"] = [{"name": GPU_FILTER, "args": {"gpuSelMethod": "FGDScore" if fgd else "best"}}]
        if fgd:
            args: dict[str, Any] = {"typicalPods": typical.to_args()}
            if self.delta_scale != DELTA_SCALE:
                args["deltaScale"] = self.delta_scale
            prof["pluginConfig"].append({"name": "FGDScore", "args": args})
        return doc


FGD_PARAMS = Params.of({"FGD": 1})
BESTFIT_PARAMS = Params.of({"BestFit": 1})


def evaluate(instance: Instance, params: Params | dict, seed: int) -> tuple[float, float]:
    """(unallocated GPU % at 100 % arrived, CPU seconds) of one run of ``params`` (a Params or a
    KubeSchedulerConfiguration dict) on ``instance`` with ``seed``."""
    c0 = time.process_time()
    prep = instance.prepare(seed)
    config = params.config(prep.typical) if isinstance(params, Params) else params
    # the run stops after the last event the metric averages (an undefined metric is refused)
    n = metric_pods(prep, LEVEL, f"trace {instance.trace}")
    res = run(prep.nodes, prep.pods[:n], "search", seed, prep.typical, keep_snapshot=False, config=config)
    return unallocated(res, LEVEL), time.process_time() - c0


def evaluate_many(
    instance: Instance,
    params: Sequence[Params | dict],
    seeds: Sequence[int],
    pool: Pool | None,
    on_run: Callable[[int, int], None] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(unallocated %, CPU seconds of the run), each len(params) x len(seeds), in ``pool`` when
    given; ``on_run(index in params, seed)`` as each run finishes."""
    jobs = [(instance, p, s) for p in params for s in seeds]
    index = {id(p): k for k, p in enumerate(params)}

    def finished(_done: int, _total: int, job: tuple, _result: Any) -> None:
        if on_run is not None:
            on_run(index[id(job[1])], job[2])

    if pool:
        out = pool.map(evaluate, jobs, finished, star=True)
    else:
        out = []
        for j in jobs:
            out.append(evaluate(*j))
            finished(0, 0, j, None)
    shape = (len(params), len(seeds))
    return np.array([o[0] for o in out]).reshape(shape), np.array([o[1] for o in out]).reshape(shape)


def worker_cpu(cpu: np.ndarray, pool: Pool | None) -> float:
    """The runs' CPU seconds that this process's own CPU time does not count (runs in workers)."""
    return float(cpu.sum()) if pool is not None and pool.workers > 1 else 0.0


def suggest(trial: Any) -> Params:
    """The search space, as Optuna trial suggestions."""
    weights = {}
    for name in SCORERS:
        x = trial.suggest_float(f"log10_w_{name}", -0.5, 3.0)
        weights[name] = 0 if x < 0 else max(1, round(10**x))
    if not any(weights.values()):
        weights["FGD"] = 1
    scale = trial.suggest_float("delta_scale", 100.0, 10000.0, log=True)
    tie = trial.suggest_categorical("tie_break", list(TIE_BREAKS))
    return Params.of(weights, scale, tie)


FGD_TRIAL = {**{f"log10_w_{n}": -0.5 for n in SCORERS}, "log10_w_FGD": 0.0, "delta_scale": DELTA_SCALE,
             "tie_break": "order"}


@dataclass
class SearchResult:
    instance: dict
    train_seeds: list[int]
    val_seeds: list[int]
    trials: list[dict] = field(default_factory=list)  # number, params, describe, train mean
    finalists: list[dict] = field(default_factory=list)  # describe, params, train, validation values
    chosen: dict = field(default_factory=dict)
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    sampler_seed: int = 0

    def to_json(self) -> dict:
        return asdict(self)


def params_json(p: Params) -> dict:
    return {"weights": dict(p.weights), "delta_scale": p.delta_scale, "tie_break": p.tie_break}


def params_from_json(d: Any) -> Params:
    if not isinstance(d, dict) or not isinstance(d.get("weights"), dict):
        raise TypeError("params.weights: expected a mapping")
    return Params.of(d["weights"], d["delta_scale"], d["tie_break"])


def search(
    instance: Instance,
    train_seeds: Sequence[int],
    val_seeds: Sequence[int],
    *,
    trials: int = 60,
    finalists: int = 5,
    sampler_seed: int = 0,
    pool: Pool | None = None,
    progress: Callable[[str], None] | None = None,
) -> SearchResult:
    """Run the study; the chosen policy is the finalist (or FGD) with the lowest validation mean."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    t0, c0 = time.perf_counter(), time.process_time()
    cpu = 0.0
    sampler = optuna.samplers.TPESampler(seed=sampler_seed, multivariate=True, n_startup_trials=min(10, trials))
    study = optuna.create_study(direction="minimize", sampler=sampler)
    study.enqueue_trial(FGD_TRIAL)
    out = SearchResult(asdict(instance), list(train_seeds), list(val_seeds), sampler_seed=sampler_seed)
    seen: dict[Params, float] = {}
    for i in range(trials):
        trial = study.ask()
        p = suggest(trial)
        if p in seen:  # the same integer weights: no need to run again
            value = seen[p]
        else:
            vals, c = evaluate_many(instance, [p], train_seeds, pool)
            cpu += worker_cpu(c, pool)
            value = seen[p] = float(vals.mean())
        study.tell(trial, value)
        out.trials.append({"number": i, "params": params_json(p), "describe": p.describe(), "train": value})
        if progress:
            best = min(seen.values())
            progress(f"trial {i}: {value:.3f} ({p.describe()}); best {best:.3f}")
    ranked = sorted(seen.items(), key=lambda kv: kv[1])
    picks = [p for p, _ in ranked if p != FGD_PARAMS][:finalists]
    cands = [FGD_PARAMS, *picks]
    vals, c = evaluate_many(instance, cands, val_seeds, pool)
    cpu += worker_cpu(c, pool)
    for p, row in zip(cands, vals, strict=True):
        out.finalists.append(
            {"describe": p.describe(), "params": params_json(p), "train": seen.get(p, math.nan),
             "validation": row.tolist(), "validation_mean": float(row.mean())}
        )
    best = min(range(len(cands)), key=lambda j: (vals[j].mean(), j))
    out.chosen = dict(out.finalists[best], is_fgd=cands[best] == FGD_PARAMS)
    out.cpu_seconds = cpu + (time.process_time() - c0)
    out.wall_seconds = time.perf_counter() - t0
    return out


def write(out_dir: Path, result: SearchResult, config: dict) -> None:
    import yaml

    out_dir.mkdir(parents=True, exist_ok=True)
    write_json(out_dir / "search.json", result.to_json(), indent=1, newline=True)
    (out_dir / "best-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    rows = ([t["number"], f"{t['train']:.4f}", t["describe"]] for t in result.trials)
    write_rows(out_dir / "trials.csv", ["number", "train_mean", "policy"], rows)
