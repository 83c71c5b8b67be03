"""Dashboard series: a simulation's time series (bins.csv, events.csv, summary.json) and an
experiment's policy comparison over seeds (runs.csv, aggregate.csv), ready to plot."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np

from kubesched.errors import InputError
from kubesched.sim.plots import time_unit
from kubesched.ui.sources import EXPERIMENT, SIMULATION, Workspace, read_csv

BIN_NUMERIC = (
    "bin", "start", "end", "level", "attempted", "cpu_alloc_pct", "mem_alloc_pct", "gpu_alloc_pct",
    "unallocated_gpu_pct", "cpu_used_pct", "mem_used_pct", "pending", "running", "arrived_pct", "frag_milli",
    "frag_pct", "frag_ratio_pct", "arrivals", "scheduled", "completed", "delay_p50", "failed",
)


def simulation_dashboard(ws: Workspace) -> dict[str, Any]:
    if ws.kind != SIMULATION or ws.folder is None:
        raise InputError("open a simulation output folder for this dashboard", path="source")
    folder = ws.folder
    bins = read_csv(folder / "bins.csv", (), BIN_NUMERIC) if (folder / "bins.csv").is_file() else {}
    x_key = "level" if "level" in bins else "end"
    scale, unit = time_unit(SimpleNamespace(bins=bins))  # the unit simulate's plots use for this run
    out: dict[str, Any] = {
        "mode": ws.summary.get("mode"),
        "summary": ws.summary,
        "x": x_key,
        "bins": bins,
        "time_unit": {"seconds": scale, "name": unit},
        "busiest": {"step": ws.start_step, "note": ws.start_note},  # where the cluster view opens
    }
    if (folder / "events.csv").is_file():
        out["nodes_over_time"] = _nodes_over_time(ws)
        out["failures"] = _failures(ws)
    return out


def _nodes_over_time(ws: Workspace) -> dict[str, list[float]]:
    """Nodes present after each node event (and at the start and the end)."""
    assert ws.folder is not None
    ev = read_csv(ws.folder / "events.csv", ("time", "event"), ("seq", "time"))
    n = int(ws.summary.get("nodes", {}).get("initial", 0) or 0)
    times = [ev["time"][0] if ev["time"] else 0.0]
    counts = [n]
    for t, kind in zip(ev["time"], ev["event"], strict=True):
        if kind in ("node_add", "node_remove"):
            n += 1 if kind == "node_add" else -1
            times.append(t)
            counts.append(n)
    if ev["time"]:
        times.append(ev["time"][-1])
        counts.append(n)
    return {"time": times, "nodes": counts}


def _failures(ws: Workspace) -> dict[str, list[float]]:
    """Cumulative failed attempts (unschedulable or failed events) over time."""
    assert ws.folder is not None
    ev = read_csv(ws.folder / "events.csv", ("time", "event"), ("seq", "time"))
    times, counts = [], []
    k = 0
    for t, kind in zip(ev["time"], ev["event"], strict=True):
        if kind in ("unschedulable", "failed"):
            k += 1
            times.append(t)
            counts.append(k)
    return {"time": times, "failures": counts}


def _mean_sd(values: list[float]) -> dict[str, float | None]:
    v = np.asarray([x for x in values if x is not None and not (isinstance(x, float) and math.isnan(x))], float)
    if v.size == 0:
        return {"mean": None, "sd": None, "n": 0}
    return {"mean": round(float(v.mean()), 4), "sd": round(float(v.std(ddof=1)), 4) if v.size > 1 else 0.0, "n": int(v.size)}


def experiment_dashboard(ws: Workspace, baseline: str | None = None) -> dict[str, Any]:
    """Curves (mean ± sd per arrived level), bars at 100 % and 130 % (mean ± sd over seeds) and
    paired deltas against ``baseline`` (same trace and seed)."""
    if ws.kind != EXPERIMENT:
        raise InputError("open an experiment output folder for this dashboard", path="source")
    runs, agg = ws.summary["runs"], ws.summary["aggregate"]
    traces = list(dict.fromkeys(runs["trace"]))
    policies = list(dict.fromkeys(runs["policy"]))
    if baseline is None:
        baseline = "Random" if "Random" in policies else policies[0] if policies else None
    elif baseline not in policies:
        raise InputError(f"no policy {baseline!r} in this experiment ({', '.join(policies)})", path="baseline")
    curves: dict[str, dict[str, dict[str, list[Any]]]] = {}
    for tr, pol, metric, lvl, mean, sd in zip(
        agg["trace"], agg["policy"], agg["metric"], agg["arrived_pct"], agg["mean"], agg["sd"], strict=True
    ):
        c = curves.setdefault(metric, {}).setdefault(f"{tr}/{pol}", {"arrived_pct": [], "mean": [], "sd": []})
        c["arrived_pct"].append(lvl)
        c["mean"].append(mean)
        c["sd"].append(sd)
    per: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    metrics = [m for m in ("unallocated_100", "unallocated_130", "frag_amount_100", "frag_ratio_100", "failed") if m in runs]
    for i, (tr, pol, seed) in enumerate(zip(runs["trace"], runs["policy"], runs["seed"], strict=True)):
        per.setdefault((tr, pol), {})[seed] = {m: runs[m][i] for m in metrics}
    bars = []
    deltas = []
    for tr in traces:
        for pol in policies:
            seeds = per.get((tr, pol), {})
            bars.append({"trace": tr, "policy": pol, **{m: _mean_sd([s[m] for s in seeds.values()]) for m in metrics}})
            base = per.get((tr, baseline or ""), {})
            if pol == baseline or not base:
                continue
            common = sorted(set(seeds) & set(base))
            deltas.append(
                {
                    "trace": tr,
                    "policy": pol,
                    "baseline": baseline,
                    "seeds": common,
                    **{m: _mean_sd([seeds[s][m] - base[s][m] for s in common if seeds[s][m] is not None and base[s][m] is not None]) for m in metrics},
                }
            )
    return {
        "traces": traces,
        "policies": policies,
        "baseline": baseline,
        "metrics": metrics,
        "curves": curves,
        "bars": bars,
        "deltas": deltas,
        "runs": runs,
    }
