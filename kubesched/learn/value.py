"""``kubesched learn value``: fit ValueScore's value function by policy iteration on training seeds.

A round runs the current policy (ValueScore with the current function over FGD; the first
round's function is zero, so its policy is FGD's) on every training seed, exploring: with
probability ``epsilon`` a decision takes one of FGD's near-ties at random. Every decision records
the cluster's features after the chosen placement (``clusterstate``) and, once the run is over,
its Monte-Carlo return: the GPU milli that failed to place after that decision, as the metric
counts it (the mean over the events it averages at 100 % arrived, in % of the cluster's GPUs).
A ridge regression (numpy, on standardised features, each episode's means taken out) of the
returns of every round so far on the features is the next function. Each round's function then runs, greedily, on the
validation seeds; the one with the lowest mean unallocated % there is kept. Held-out seeds are
refused by the command, never read here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kubesched.experiment.protocol import (
    RunResult,
    arrived_milli,
    binned,
    build_scheduler,
    gpu_capacity_milli,
    percent_of,
    policy_config,
)
from kubesched.gpu.model import pod_gpu_ask
from kubesched.kit.pool import Pool
from kubesched.learn.cost import schedule_all
from kubesched.learn.data import Instance
from kubesched.learn.metric import LEVEL, metric_pods, unallocated
from kubesched.learn.policies import value_config
from kubesched.learn.search import evaluate_many
from kubesched.plugins.lookahead.clusterstate import FEATURES
from kubesched.plugins.lookahead.valuefile import ValueFunction, zero_function

RIDGE = 0.01  # on standardised features, per sample


@dataclass
class Episode:
    seed: int
    features: np.ndarray  # (decisions, features) after each decision's placement
    returns: np.ndarray  # (decisions,) GPU % failed after it, as the metric counts it
    metric: float  # the run's unallocated GPU % at 100 % arrived
    changed: int  # decisions that took another node than FGD
    cpu_seconds: float


def returns_of(arrived: np.ndarray, failed: np.ndarray, at: np.ndarray, capacity: int) -> np.ndarray:
    """Per decision (pod index ``at``): the mean, over the events the metric averages, of the GPU
    milli that failed after the decision and by that event, in % of ``capacity``."""
    events = np.flatnonzero(binned(percent_of(arrived, capacity), LEVEL))
    cum = np.cumsum(failed)
    later = np.maximum(cum[events][None, :] - cum[at][:, None], 0)
    return 100.0 * later.mean(axis=1) / capacity


def episode(inst: Instance, value: str, seed: int, args: dict[str, Any]) -> Episode:
    """One run of ValueScore (``value``, ``args``) on ``seed`` to the metric's last event, with
    its decisions' features and returns."""
    c0 = time.process_time()
    prep = inst.prepare(seed)
    pods = prep.pods[: metric_pods(prep, LEVEL, f"trace {inst.trace}")]
    sched = build_scheduler(prep.nodes, "value", seed, prep.typical, config=value_config(value, prep.typical, args))
    plugin = next(fw.plugins["ValueScore"] for fw in sched.frameworks.values())
    plugin.log = []
    placed = schedule_all(sched, pods)
    asks = np.array([a.total_milli if (a := pod_gpu_ask(p)) else 0 for p in pods], np.int64)
    arrived, cap = arrived_milli(pods), gpu_capacity_milli(prep.nodes)
    failed = np.where(placed, 0, asks)
    index = {p.name: i for i, p in enumerate(pods)}
    at = np.array([index[name] for name, _ in plugin.log], np.int64)
    x = np.array([f for _, f in plugin.log]).reshape(len(at), len(FEATURES))
    zeros = np.zeros(len(pods))
    run = RunResult("value", seed, cap, arrived, arrived - np.cumsum(failed), zeros, zeros, placed, [None] * len(pods))
    return Episode(seed, x, returns_of(arrived, failed, at, cap), unallocated(run), plugin.changed,
                   time.process_time() - c0)


def fit(x: np.ndarray, y: np.ndarray, ridge: float = RIDGE, groups: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """(weights, intercept) of the ridge regression of ``y`` on ``x`` (features standardised,
    the penalty ``ridge`` per sample; constant features get weight 0), in ``x``'s units.
    ``groups`` (an episode number per sample): each episode's means are taken out of ``x`` and
    ``y`` first (fixed effects), so that the weights are learnt from what differs within a run,
    not from how hard one seed's arrivals were."""
    if groups is not None:
        _, inv = np.unique(groups, return_inverse=True)
        n_g = np.bincount(inv).astype(np.float64)
        x = x - (np.stack([np.bincount(inv, weights=col) for col in x.T], axis=1) / n_g[:, None])[inv] + x.mean(axis=0)
        y = y - (np.bincount(inv, weights=y) / n_g)[inv] + y.mean()
    mu = x.mean(axis=0)
    sd = x.std(axis=0)
    live = sd > 1e-12
    z = (x[:, live] - mu[live]) / sd[live]
    yc = y - y.mean()
    n = max(len(y), 1)
    w = np.linalg.solve(z.T @ z / n + ridge * np.eye(z.shape[1]), z.T @ yc / n)
    weights = np.zeros(x.shape[1])
    weights[live] = w / sd[live]
    return weights, float(y.mean() - weights @ mu)


@dataclass
class Training:
    inst: Instance
    seeds: Sequence[int]
    val_seeds: Sequence[int]
    rounds: int = 3
    epsilon: float = 0.2
    ridge: float = RIDGE
    policy: dict[str, float] | None = None  # ValueScore's decision settings
    seed: int = 0
    min_gains: Sequence[float] = ()  # more minGain settings of the chosen round, tried on the validation seeds


def collect(t: Training, value: Path, r: int, pool: Pool | None) -> list[Episode]:
    args = {"epsilon": t.epsilon, "seed": t.seed * 1000 + r}
    jobs = [(t.inst, str(value), s, {**args, "seed": args["seed"] * 100_000 + s}) for s in t.seeds]
    return pool.map(episode, jobs, star=True) if pool else [episode(*j) for j in jobs]


def policy_iteration(t: Training, out: Path, pool: Pool | None, progress: Callable[[str], None] | None = None) -> dict:
    """The rounds (``out``/value-R.json each), the validation-best written as ``out``/value.json;
    the record of it all (also in the best file's meta)."""
    say = progress or (lambda _line: None)
    c0 = time.process_time()
    typical = t.inst.prepare(t.seeds[0]).typical
    current = out / "value-0.json"
    zero_function(t.policy).save(current)
    fgd_val, cpu = evaluate_many(t.inst, [policy_config("FGD", typical)], t.val_seeds, pool)
    record: dict[str, Any] = {"trace": t.inst.trace, "train_seeds": list(t.seeds), "val_seeds": list(t.val_seeds),
                              "epsilon": t.epsilon, "ridge": t.ridge, "policy": t.policy or {},
                              "fgd_validation": fgd_val[0].tolist(), "rounds": []}
    xs: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    gs: list[np.ndarray] = []
    fitted: dict[int, tuple[np.ndarray, float]] = {}
    for r in range(1, t.rounds + 1):
        eps = collect(t, current, r, pool)
        cpu += sum(e.cpu_seconds for e in eps)
        xs += [e.features for e in eps]
        ys += [e.returns for e in eps]
        gs += [np.full(len(e.returns), len(gs) + i) for i, e in enumerate(eps)]
        weights, intercept = fitted[r] = fit(np.concatenate(xs), np.concatenate(ys), t.ridge, np.concatenate(gs))
        current = out / f"value-{r}.json"
        ValueFunction(weights, intercept, {"round": r}, dict(t.policy or {})).save(current)
        val, vcpu = evaluate_many(t.inst, [value_config(current.resolve(), typical)], t.val_seeds, pool)
        cpu += vcpu
        row = {"round": r, "collected_with": f"value-{r - 1}.json", "episodes": [e.metric for e in eps],
               "decisions": sum(len(e.returns) for e in eps), "changed": sum(e.changed for e in eps),
               "samples": sum(len(y) for y in ys), "validation": val[0].tolist(),
               "validation_mean": float(val[0].mean())}
        record["rounds"].append(row)
        say(f"round {r}: training episodes {np.mean(row['episodes']):.3f} ({row['decisions']} decisions), "
            f"validation {row['validation_mean']:.3f} (FGD {fgd_val[0].mean():.3f})")
    best = min(record["rounds"], key=lambda row: row["validation_mean"])
    record["chosen_round"] = best["round"]
    policy, gcpu = _min_gain(t, out / f"value-{best['round']}.json", best, record, pool)
    pool_cpu = cpu + gcpu if pool is not None and pool.workers > 1 else 0.0
    record["cpu_seconds"] = pool_cpu + time.process_time() - c0
    ValueFunction(*fitted[best["round"]], record, policy).save(out / "value.json")
    return record


def _min_gain(t: Training, chosen: Path, best: dict, record: dict, pool: Pool | None) -> tuple[dict, float]:
    """The chosen round's function with each of ``t.min_gains`` on the validation seeds; the
    decision settings with the best (``record["min_gain_validation"]``), and the pool's CPU."""
    policy = dict(t.policy or {})
    tried = [{"minGain": float(policy.get("minGain", 0.0)), "validation": best["validation"],
              "validation_mean": best["validation_mean"]}]
    typical = t.inst.prepare(t.seeds[0]).typical
    cpu = 0.0
    for g in t.min_gains:
        val, vcpu = evaluate_many(t.inst, [value_config(chosen.resolve(), typical, {"minGain": g})], t.val_seeds, pool)
        cpu += vcpu
        tried.append({"minGain": float(g), "validation": val[0].tolist(), "validation_mean": float(val[0].mean())})
    record["min_gain_validation"] = tried
    policy["minGain"] = min(tried, key=lambda row: row["validation_mean"])["minGain"]
    return policy, cpu
