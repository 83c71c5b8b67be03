"""The experiment's metrics, exactly as docs/multicluster.md defines them, and the paired tests.

Per run (one mode, one seed), over all pods of the trace:

- ``failure_pct``: pods never bound, in % of all pods; ``failed_timeout_pct``: not bound within
  their class's timeout (wherever they waited); ``failed_budget_pct``: no cluster of the mode within
  the class's latency budget; ``failed_offline_pct``: bound, then lost with a site that went offline
  (and not placed again).
- ``latency_ms``: for bound pods, the users' network round trip to the cluster
  (``accessRttMs + P95 RTT(home region, cluster region)``), ``mean`` and ``p95``;
  ``latency_queue_ms``: that plus the pod's queueing delay (bind time - arrival, in ms).
- ``gpu_util_pct`` / ``cpu_util_pct``: allocated GPU (CPU) of the tier's clusters over their
  capacity, time-weighted over the run (the simulator's ``allocation_pct.mean`` of each cluster,
  weighted by its capacity), for the edge tier, the cloud tier and overall;
  ``gpu_util_arriving_pct`` / ``cpu_util_arriving_pct``: the same from the start to the last
  arrival, without the hour of drain that ends every run.
- ``budget_violations``: bound pods whose round trip exceeds their class budget (0 by design for
  collaborative and cloud-only).
- ``placed_at``: bound pods at their home edge, at another edge, in the cloud.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from kubesched.kit.stats import mean_sd, paired
from kubesched.multicluster.api import Cluster
from kubesched.multicluster.experiment.run import Prepared, RunOutput


def _pct(a: float, b: float) -> float:
    return 100.0 * a / b if b else 0.0


def _stats(v: np.ndarray) -> dict[str, float | None]:
    return {"mean": float(v.mean()) if v.size else None, "p95": float(np.percentile(v, 95)) if v.size else None}


def _tiers(out: RunOutput, sites: list, res: str, mean: dict[str, float]) -> dict[str, float]:
    """Per-site mean allocations of ``res`` (%) as the edge tier's, the cloud tier's and the
    overall one: each site weighted by its capacity."""
    tiers: dict[str, list[tuple[float, float]]] = {"edge": [], "cloud": [], "overall": []}
    for s in sites:
        cap = getattr(out.engines[s.name].totals.capacity, res)
        tiers[s.tier].append((mean[s.name], cap))
        tiers["overall"].append((mean[s.name], cap))
    return {t: (sum(m * c for m, c in v) / sum(c for _, c in v)) if sum(c for _, c in v) else 0.0 for t, v in tiers.items()}


def run_metrics(prep: Prepared, out: RunOutput) -> dict[str, Any]:
    sc = prep.scenario
    sites = list(sc.sites)
    n = len(prep.pods)
    bound = np.isfinite(out.bind_time)
    reasons = np.asarray(out.reason)
    rtt = np.full(n, math.nan)
    budget = np.full(n, math.inf)
    clusters = [Cluster(s.name, region=s.region) for s in sites]
    for i in np.nonzero(bound)[0]:
        r = prep.network.user_rtt(sites[out.home[i]].region, clusters[out.site[i]])
        rtt[i] = math.nan if r is None else r
    for i in range(n):
        c = sc.qos_classes.get(prep.qos[i])
        if c is not None and c.budget_ms is not None:
            budget[i] = c.budget_ms
    arrival = np.asarray(prep.arrival)
    lat = rtt[bound]
    lat_q = (rtt + 1000.0 * (out.bind_time - arrival))[bound]
    summaries = {name: eng.rec.summary(eng) for name, eng in out.engines.items()}
    util: dict[str, dict[str, float]] = {}
    for res in ("gpu", "cpu"):
        util[f"{res}_util_pct"] = _tiers(out, sites, res, {s.name: summaries[s.name]["allocation_pct"][res]["mean"] for s in sites})
        if out.while_arriving:
            util[f"{res}_util_arriving_pct"] = _tiers(out, sites, res, {s.name: getattr(out.while_arriving[s.name], res)
                                                                        for s in sites})
    is_edge = np.asarray([s.tier == "edge" for s in sites])
    site_of = out.site[bound]
    home_of = out.home[bound]
    return {
        "mode": out.mode,
        "seed": out.seed,
        "pods": n,
        "bound": int(bound.sum()),
        "failure_pct": _pct(float((~bound).sum()), n),
        "failed_timeout_pct": _pct(float((reasons == "timeout").sum()), n),
        "failed_budget_pct": _pct(float((reasons == "budget").sum()), n),
        "failed_offline_pct": _pct(float((reasons == "offline").sum()), n),
        "latency_ms": _stats(lat),
        "latency_queue_ms": _stats(lat_q),
        **util,
        "budget_violations": int((rtt[bound] > budget[bound]).sum()),
        "placed_at": {
            "home_edge": int((site_of == home_of).sum()),
            "other_edge": int(((site_of != home_of) & is_edge[site_of]).sum()),
            "cloud": int((~is_edge[site_of]).sum()),
        },
        "run": {"wall_s": out.wall_s, "decisions": out.decisions, "decide_s": out.decide_s, "failovers": out.failovers},
    }


# ---- aggregation over seeds ----------------------------------------------------------------------
HEADLINE = (
    ("failure_pct", "failure rate (% of pods)"),
    ("failed_timeout_pct", "  not placed within the class timeout (%)"),
    ("failed_budget_pct", "  no cluster within the latency budget (%)"),
    ("failed_offline_pct", "  lost with an offline site (%)"),
    ("latency_ms.mean", "mean user latency, network RTT (ms)"),
    ("latency_ms.p95", "p95 user latency, network RTT (ms)"),
    ("latency_queue_ms.mean", "mean latency, RTT + queueing delay (ms)"),
    ("latency_queue_ms.p95", "p95 latency, RTT + queueing delay (ms)"),
    ("gpu_util_arriving_pct.edge", "edge GPU utilisation while pods arrive (%)"),
    ("gpu_util_pct.edge", "edge GPU utilisation, time-weighted (%)"),
    ("gpu_util_pct.cloud", "cloud GPU utilisation (%)"),
    ("gpu_util_pct.overall", "overall GPU utilisation (%)"),
    ("cpu_util_pct.edge", "edge CPU utilisation (%)"),
    ("cpu_util_pct.overall", "overall CPU utilisation (%)"),
    ("budget_violations", "pods placed outside their latency budget"),
)


def get(m: dict[str, Any], path: str) -> float:
    v: Any = m
    for part in path.split("."):
        v = v[part]
    return math.nan if v is None else float(v)


def _has(m: dict[str, Any], path: str) -> bool:
    v: Any = m
    for part in path.split("."):
        if not isinstance(v, dict) or part not in v:
            return False
        v = v[part]
    return True


def aggregate(runs: list[dict[str, Any]], modes: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mode in modes:
        rs = [r for r in runs if r["mode"] == mode]
        out[mode] = {}
        for key, _ in HEADLINE:
            mean, sd = mean_sd(get(r, key) for r in rs)
            out[mode][key] = {"mean": mean, "sd": sd, "n": len(rs)}
    return out


#: the goals' comparisons: (a, b, metric, which is better)
GOALS = (
    ("collaborative", "isolated", "failure_pct", "lower"),
    ("collaborative", "isolated", "gpu_util_pct.edge", "higher"),
    ("collaborative", "isolated", "gpu_util_arriving_pct.edge", "higher"),
    ("collaborative", "isolated", "cpu_util_pct.edge", "higher"),
    ("collaborative", "cloud-only", "latency_ms.mean", "lower"),
    ("collaborative", "cloud-only", "failure_pct", "lower"),
)


def tested(modes: list[str]) -> bool:
    """Whether some goal compares two of these modes (the paired tests then run, over seeds)."""
    return any(a in modes and b in modes for a, b, _, _ in GOALS)


def paired_tests(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The goals' comparisons, paired by seed: Student's paired t-test and Wilcoxon signed-rank."""

    def series(mode: str, key: str) -> dict[int, float]:
        # runs recorded before a metric existed (summary.json of an older version) lack it
        return {r["seed"]: get(r, key) for r in runs if r["mode"] == mode and _has(r, key)}

    out = []
    for a, b, key, better in GOALS:
        sa, sb = series(a, key), series(b, key)
        seeds = sorted(set(sa) & set(sb))
        if len(seeds) < 2:
            continue
        pt = paired([sa[s] for s in seeds], [sb[s] for s in seeds])
        out.append({
            "metric": key, "a": a, "b": b, "better": better, "seeds": len(seeds),
            "mean_difference": pt.mean_difference,
            "t_test_p": pt.t_test_p,
            "wilcoxon_p": pt.wilcoxon_p,
            "every_seed": (pt.lower if better == "lower" else pt.higher) == pt.n,
        })
    return out
