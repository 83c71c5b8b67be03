"""Paired evaluation: learned policies against FGD and BestFit on the same seeds and traces.

Every policy runs the FGD protocol on every (trace, seed): the same shuffled, inflated workload
and node order per seed, so the per-seed differences are paired. For each candidate policy and
trace: mean +- sd (ddof 1) of unallocated GPU % at 100 % arrived, the paired difference to FGD,
wins / ties / losses out of the seeds, and the two-sided Wilcoxon signed-rank p (scipy; zero
differences dropped, p = 1 when every difference is zero), and each policy's CPU seconds per run
and per pod. Optionally the offline bound per seed, and the share of FGD's gap to it each closes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kubesched.kit import stats
from kubesched.kit.pool import Pool
from kubesched.kit.report import markdown_table, pm, write_json, write_rows
from kubesched.learn import cost
from kubesched.learn.data import Instance
from kubesched.learn.search import LEVEL, evaluate_many

BASELINES = ("FGD", "BestFit")
GOAL_WINS, GOAL_P, GOAL_TOLERANCE = 8, 0.05, 0.3  # the bar: wins of 10, p, worst variant


@dataclass
class Candidate:
    name: str
    make: Any  # TypicalPods -> KubeSchedulerConfiguration dict
    training: dict = field(default_factory=dict)  # how it was trained (CPU seconds, seeds, ...)
    per_trace: dict[str, Any] = field(default_factory=dict)  # trace -> its own ``make`` (a plan per trace)

    def config(self, trace: str, typical: Any) -> dict:
        return self.per_trace.get(trace, self.make)(typical)


def paired(cand: np.ndarray, ref: np.ndarray) -> dict[str, Any]:
    """The paired comparison of two per-seed arrays (lower is better); differences are rounded to
    6 decimals, so float noise is a tie, and p is 1 when every difference is zero."""
    pt = stats.paired(cand, ref, decimals=6)
    return {
        "diff_mean": pt.mean_difference,
        "diff_sd": pt.sd_difference or 0.0,
        "wins": pt.lower,
        "ties": pt.equal,
        "losses": pt.higher,
        "wilcoxon_p": 1.0 if pt.wilcoxon_p is None else pt.wilcoxon_p,
    }


def summary_stats(v: np.ndarray) -> dict[str, Any]:
    mean, sd = stats.mean_sd(v)
    return {"values": [float(x) for x in v], "mean": mean, "sd": sd or 0.0}


def run_eval(
    traces: Sequence[Instance],
    seeds: Sequence[int],
    candidates: Sequence[Candidate],
    pool: Pool | None,
    *,
    bound_time_limit: float | None = None,
    progress: Any = None,
) -> dict[str, Any]:
    """``progress(line)`` as each run (trace, policy, seed) finishes: ``runs_of`` counts them."""
    from kubesched.experiment.protocol import policy_config

    out: dict[str, Any] = {"level": LEVEL, "seeds": list(seeds), "traces": {}, "candidates": {}}
    for c in candidates:
        out["candidates"][c.name] = c.training
    for inst in traces:
        res = trace_result(inst, seeds, candidates, pool, progress)
        if bound_time_limit is not None:
            res["bound"] = bound_result(inst, seeds, pool, bound_time_limit)
            add_gap_closed(res)
        out["traces"][inst.trace] = res
    out["goal"] = goal(out)
    first = traces[0]
    typical = first.prepare(seeds[0]).typical
    decisions = {c.name: cost.decision_cost(first, seeds[0], c.name, c.config(first.trace, typical),
                                            policy_config("FGD", typical)) for c in candidates}
    out["decision_cost"] = {k: v for k, v in decisions.items() if v is not None}
    model = next((c.training.get("model_path") for c in candidates if c.training.get("model_path")), None)
    if model:
        out["latency"] = plugin_latency(traces[0], model, seeds[0])
    return out


def trace_result(inst: Instance, seeds: Sequence[int], candidates: Sequence[Candidate], pool: Pool | None,
                 progress: Any) -> dict[str, Any]:
    """FGD, BestFit and every candidate on every seed of one trace: values, CPU, paired figures."""
    from kubesched.experiment.protocol import policy_config

    typical = inst.prepare(seeds[0]).typical
    names = [*BASELINES, *(c.name for c in candidates)]
    configs = [policy_config("FGD", typical), policy_config("BestFit"), *(c.config(inst.trace, typical) for c in candidates)]
    vals, cpu = evaluate_many(
        inst, configs, seeds, pool,
        (lambda k, seed: progress(f"{inst.trace} {names[k]} seed {seed}")) if progress else None,
    )
    pods = cost.run_pods(inst, seeds)
    res: dict[str, Any] = {"instance": inst.__dict__, "cpu_seconds": float(cpu.sum()), "pods": pods,
                           "policies": {}, "paired": {}}
    for name, row, row_cpu in zip(names, vals, cpu, strict=True):
        res["policies"][name] = {**summary_stats(row), **cost.run_costs(row_cpu, pods)}
    fgd, bestfit = vals[0], vals[1]
    for name, row in zip(names[2:], vals[2:], strict=True):
        res["paired"][name] = {"vs_FGD": paired(row, fgd), "vs_BestFit": paired(row, bestfit)}
    return res


def bound_result(inst: Instance, seeds: Sequence[int], pool: Pool | None, time_limit: float) -> dict[str, Any]:
    """The configuration bound of every seed: the default deterministic limits, ``time_limit``
    seconds per seed as the safety net."""
    from kubesched.learn.bound import Limits, seed_bound

    jobs = [(inst, seed, LEVEL, Limits(seconds=time_limit), "configurations") for seed in seeds]
    bounds = pool.map(seed_bound, jobs, star=True) if pool else [seed_bound(*j) for j in jobs]
    return {
        "per_seed": bounds,
        "min_unallocated_mean": float(np.mean([b["min_unallocated_pct"] for b in bounds])),
        "packing_unallocated_mean": float(np.mean([b["max_unallocated_pct"] for b in bounds])),
        "all_optimal": all(b["optimal"] for b in bounds),
        "time_limited": any(b.get("time_limited") for b in bounds),
    }


def runs_of(traces: Sequence[Instance], seeds: Sequence[int], candidates: Sequence[Candidate]) -> int:
    """The runs ``run_eval`` makes: every trace and seed under FGD, BestFit and each candidate."""
    return len(traces) * len(seeds) * (len(BASELINES) + len(candidates))


def plugin_latency(inst: Instance, model: str, seed: int, pods: int = 3000) -> dict[str, Any]:
    """LearnedScore's cost on the first ``pods`` pods of one run: decisions per second of the whole
    scheduling cycle and the plugin's own time per decision (features + inference), next to the
    same pods under FGD alone."""
    import time

    from kubesched.experiment.protocol import build_scheduler, policy_config
    from kubesched.heap import frozen_heap
    from kubesched.learn.policies import learned_config

    out: dict[str, Any] = {"seed": seed}
    for name in ("FGD", "learned"):
        prep = inst.prepare(seed)
        run_pods = prep.pods[:pods]
        out["pods"] = len(run_pods)
        config = policy_config("FGD", prep.typical) if name == "FGD" else learned_config(model, prep.typical)
        sched = build_scheduler(prep.nodes, name, seed, prep.typical, config=config)
        with frozen_heap():  # as the protocol's loop runs
            t0 = time.perf_counter()
            cost.schedule_all(sched, run_pods)
            wall = time.perf_counter() - t0
        out[f"{name}_pods_per_s"] = len(run_pods) / wall
        if name == "learned":
            plugin = next(fw.plugins["LearnedScore"] for fw in sched.frameworks.values())
            out["decisions"] = plugin.decisions
            out["plugin_ms_per_decision"] = 1000 * plugin.seconds / max(plugin.decisions, 1)
    return out


def add_gap_closed(res: dict[str, Any]) -> None:
    """With the bound: FGD's gap to it (FGD's mean less the bound's) and, per candidate, the share
    of that gap its mean closes (% ; negative when it is worse than FGD)."""
    gap = res["policies"]["FGD"]["mean"] - res["bound"]["min_unallocated_mean"]
    res["bound"]["fgd_gap"] = gap
    for pr in res["paired"].values():
        pr["gap_closed_pct"] = -100 * pr["vs_FGD"]["diff_mean"] / gap if gap > 0 else None


def goal(result: dict[str, Any]) -> dict[str, Any]:
    """The issue's bar per candidate: on ``default``, mean below FGD's, p < 0.05 and at least 8
    wins of 10; on every trace variant (at least one evaluated), no more than 0.3 points worse
    than FGD; with the bound, the share of FGD's gap each trace closes."""
    out = {}
    traces = result["traces"]
    variants = [t for t in traces if t != "default"]
    for name in result["candidates"]:
        d = traces.get("default", {}).get("paired", {}).get(name, {}).get("vs_FGD")
        worst = max((t["paired"][name]["vs_FGD"]["diff_mean"] for t in traces.values()), default=math.nan)
        worst_variant = max((traces[t]["paired"][name]["vs_FGD"]["diff_mean"] for t in variants), default=math.nan)
        met_default = bool(d and d["diff_mean"] < 0 and d["wilcoxon_p"] < GOAL_P and d["wins"] >= GOAL_WINS)
        within = bool(variants) and bool(worst_variant <= GOAL_TOLERANCE)
        out[name] = {
            "default_better": met_default,
            "worst_trace_diff": worst,
            "variants": variants,
            "worst_variant_diff": worst_variant,
            "variants_within_tolerance": within,
            "met": met_default and within,
            "verdict": verdict(d),
            "per_trace": {t: trace_verdict(r["paired"][name]) for t, r in traces.items()},
        }
    return out


def trace_verdict(pr: dict[str, Any]) -> dict[str, Any]:
    """One trace's part of the goal: the paired figures against FGD and the gap closed."""
    d = pr["vs_FGD"]
    return {**{k: d.get(k) for k in ("diff_mean", "wins", "ties", "losses", "wilcoxon_p")},
            "gap_closed_pct": pr.get("gap_closed_pct")}


def goal_line(name: str, g: dict[str, Any]) -> str:
    """The goal's verdict for one candidate over every trace, in one line."""
    def part(t: str, v: dict[str, Any]) -> str:
        gap = "" if v["gap_closed_pct"] is None else f", {v['gap_closed_pct']:.1f} % of FGD's gap to the bound closed"
        return (f"{t} {v['diff_mean']:+.3f} ({v['wins']}/{v['ties']}/{v['losses']}, "
                f"p = {v['wilcoxon_p']:.2g}{gap})")
    default = ("default not evaluated" if "default" not in g["per_trace"] else
               "on default " + ("better than FGD" if g["default_better"] else f"not better than FGD: {g['verdict']}"))
    if not g["variants"]:
        variants = "no trace variant evaluated"
    else:
        variants = (f"variants {'never' if g['variants_within_tolerance'] else 'sometimes'} worse than FGD by more "
                    f"than {GOAL_TOLERANCE} (worst {g['worst_variant_diff']:+.3f})")
    traces = "; ".join(part(t, v) for t, v in g["per_trace"].items())
    return f"**{name}**: goal {'met' if g['met'] else 'not met'}: {default}; {variants}. Per trace vs FGD: {traces}"


def verdict(d: dict[str, Any] | None) -> str:
    if not d:
        return "default trace not evaluated"
    if d["wilcoxon_p"] >= GOAL_P:
        return f"parity with FGD (p = {d['wilcoxon_p']:.2f})"
    return "better than FGD" if d["diff_mean"] < 0 else "worse than FGD"


def write(out_dir: Path, result: dict[str, Any], plots: bool = True) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json(out_dir / "result.json", result, indent=1, newline=True)
    rows = (
        [trace, pol, seed, f"{v:.4f}"]
        for trace, res in result["traces"].items()
        for pol, st in res["policies"].items()
        for seed, v in zip(result["seeds"], st["values"], strict=True)
    )
    write_rows(out_dir / "runs.csv", ["trace", "policy", "seed", f"unallocated_at_{LEVEL}"], rows)
    (out_dir / "summary.md").write_text(summary_md(result))
    if plots:
        plot(out_dir / "eval.png", result)


def summary_md(result: dict[str, Any]) -> str:
    seeds = result["seeds"]
    lines = [f"Unallocated GPU % at {LEVEL} % arrived, seeds {seeds[0]}..{seeds[-1]} ({len(seeds)}), mean ± sd", ""]
    for trace, res in result["traces"].items():
        rows = []
        for pol, st in res["policies"].items():
            pr = res["paired"].get(pol, {}).get("vs_FGD")
            cmp = ("", "", "")
            if pr:
                cmp = (f"{pr['diff_mean']:+.3f}", f"{pr['wins']}/{pr['ties']}/{pr['losses']}", f"{pr['wilcoxon_p']:.3g}")
            cpu = (f"{st['cpu_seconds_mean']:.2f}", f"{st['cpu_ms_per_pod']:.3f}") if "cpu_seconds_mean" in st else ("", "")
            rows.append((pol, pm(st["mean"], st["sd"], 3), *cmp, *cpu))
        header = ("policy", "mean ± sd", "vs FGD: diff", "wins/ties/losses", "Wilcoxon p", "CPU s per run", "CPU ms per pod")
        lines += [f"### {trace}", "", *markdown_table(header, rows)]
        if "bound" in res:
            b = res["bound"]
            lines.append(f"\nOffline bound (configuration LP): at least {b['min_unallocated_mean']:.3f} % unallocated; "
                         f"a packing of the same pods leaves {b['packing_unallocated_mean']:.3f} % "
                         f"({'the two meet on every seed' if b['all_optimal'] else 'the best possible lies between'})")
        lines.append("")
    lines += cost_lines(result)
    if "latency" in result:
        la = result["latency"]
        lines.append(f"LearnedScore: {la['learned_pods_per_s']:.0f} pods/s (FGD alone {la['FGD_pods_per_s']:.0f}), "
                     f"{la['plugin_ms_per_decision']:.2f} ms per decision in the plugin\n")
    for name, g in result["goal"].items():
        cpu = result["candidates"].get(name, {}).get("cpu_seconds")
        train = f"; training {cpu / 3600:.2f} CPU-hours" if isinstance(cpu, int | float) else ""
        lines.append(goal_line(name, g) + train + "\n")
    return "\n".join(lines) + "\n"


def cost_lines(result: dict[str, Any]) -> list[str]:
    """Per candidate that counts its decisions, the CPU of one decision (on one seed)."""
    return [cost.decision_line(name, dec) for name, dec in result.get("decision_cost", {}).items()] + [""]


def plot(path: Path, result: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    traces = list(result["traces"])
    fig, axes = plt.subplots(1, len(traces), figsize=(4.5 * len(traces), 3.6), squeeze=False)
    seeds = result["seeds"]
    for ax, trace in zip(axes[0], traces, strict=True):
        res = result["traces"][trace]
        for i, (pol, st) in enumerate(res["policies"].items()):
            # FGD wide and under the others: a candidate equal to it shows as a line on top of it
            ax.plot(seeds, st["values"], marker="o", ms=3 if i else 7, lw=1 if i else 4, alpha=1 if i else 0.45,
                    ls="-" if i < 2 else "--", label=f"{pol} {st['mean']:.2f}")
        if "bound" in res:
            ax.plot(seeds, [b["min_unallocated_pct"] for b in res["bound"]["per_seed"]], ls=":", c="k",
                    label="offline bound")
            ax.plot(seeds, [b["max_unallocated_pct"] for b in res["bound"]["per_seed"]], ls="none", marker="x",
                    c="k", label="best packing found")
        ax.set_title(trace)
        ax.set_xlabel("seed")
        ax.set_ylabel(f"unallocated GPU % at {LEVEL} % arrived")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
