"""``kubesched experiment elastic``: the openb elastic scenario over modes x profiles x seeds,
written as CSV/JSON, time series, and an HTML report with the cost/pending-time Pareto front."""

from __future__ import annotations

import argparse
import base64
import html
import io
import math
import sys
import time
from typing import TYPE_CHECKING, Any

from kubesched.autoscale.config import Delay
from kubesched.autoscale.scenario import PROFILES, Scenario, all_modes
from kubesched.errors import InputError
from kubesched.kit.pool import Pool, workers_from
from kubesched.kit.progress import Steps
from kubesched.kit.report import print_document, print_table, write_json
from kubesched.kit.stats import mean_sd

if TYPE_CHECKING:
    from rich.console import Console

METRICS = (
    "pods",
    "bound",
    "failed",
    "failed_pct",
    "pending_p50_s",
    "pending_p95_s",
    "pending_p99_s",
    "pending_over_60s_pct",
    "node_hours",
    "gpu_hours",
    "allocated_gpu_hours",
    "allocation_efficiency",
    "peak_nodes",
    "scale_ups",
    "nodes_added",
    "scale_downs",
    "failed_nodes",
    "evictions",
    "lost_gpu_seconds",
    "cost",
    "cpu_s",
    "wall_s",
)
#: with spot capacity (NodePools that launch spot nodes): cost split by capacity type, interruptions
SPOT_METRICS = ("cost_spot", "cost_on_demand", "spot_interruptions")


def parse_delay(text: str) -> Delay:
    lo, sep, hi = text.partition(":")
    try:
        a = float(lo)
        b = float(hi) if sep else a
    except ValueError:
        raise InputError(f'invalid value "{text}": expected MIN:MAX or a number of seconds', source="--delay") from None
    if not (math.isfinite(a) and math.isfinite(b)) or a < 0 or b < 0:
        raise InputError(f'invalid value "{text}": delays must be 0 or more seconds', source="--delay")
    if a > b:
        raise InputError(f"min ({a:g}) is greater than max ({b:g})", source="--delay")
    return Delay("uniform", a, b) if sep else Delay("constant", a, 0.0)


def parse_list(text: str, known: list[str], flag: str) -> list[str]:
    items = known if text == "all" else [x.strip() for x in text.split(",") if x.strip()]
    for x in items:
        if x not in known:
            raise InputError(f'unknown value "{x}" (known: {", ".join(known)})', source=flag)
    if not items:
        raise InputError("empty list", source=flag)
    return items


# ---- one run per process -------------------------------------------------------------------
_SCENARIO: Scenario | None = None
_REGISTRY: Any = None


def _init(kwargs: dict[str, Any]) -> None:
    global _SCENARIO, _REGISTRY
    from kubesched.app import build_registry

    _REGISTRY = build_registry()
    _SCENARIO = build_scenario(**kwargs)


def build_scenario(trace: str, nodes: str, k: float, base: int, delay: Delay, headroom: float, limit: int | None, autoscaler: str | None) -> Scenario:
    from kubesched.autoscale.configfile import load_file
    from kubesched.autoscale.shapes import shapes_of
    from kubesched.sim.openb import load_openb

    wl = load_openb(trace, nodes)
    if limit:
        wl = wl.head(limit)
    cfg = None
    if autoscaler:
        cfg = load_file(autoscaler, {n: t for n, (t, _) in shapes_of(wl.nodes).items()}, groups_required=False)
    return Scenario(wl, k=k, base=base, peak_headroom=headroom, delay=delay, autoscaler=cfg)


def _one(job: tuple[str, str, int]) -> tuple[dict[str, Any], dict[str, list[float]]]:
    assert _SCENARIO is not None
    mode, profile, seed = job
    res = _SCENARIO.run(mode, profile, seed, _REGISTRY)
    return res.summary, res.series


def flat(s: dict[str, Any], spot: bool = False) -> dict[str, Any]:
    row = {k: s[k] for k in ("mode", "profile", "seed")}
    for m in METRICS + (SPOT_METRICS if spot else ()):
        if m.startswith("pending_"):
            key = m.removeprefix("pending_").removesuffix("_s")
            row[m] = s["pending_s"][key if key != "over_60s_pct" else "over_60s_pct"]
        elif m in ("cpu_s", "wall_s"):
            row[m] = s["run"][m]
        else:
            row[m] = s[m]
    return row


def aggregate(rows: list[dict[str, Any]], delay: Delay) -> list[dict[str, Any]]:
    import numpy as np

    out = []
    keys = sorted({(r["mode"], r["profile"]) for r in rows}, key=lambda k: (all_modes().index(k[0]), k[1]))
    peak = [r for r in rows if r["mode"] == "static-peak"]
    peak_gpu_h = {p: float(np.mean([r["gpu_hours"] for r in peak if r["profile"] == p])) for p in {r["profile"] for r in peak}}
    any_peak = float(np.mean([r["gpu_hours"] for r in peak])) if peak else None
    metrics = METRICS + tuple(m for m in SPOT_METRICS if rows and m in rows[0])
    for mode, profile in keys:
        sel = [r for r in rows if r["mode"] == mode and r["profile"] == profile]
        agg: dict[str, Any] = {"mode": mode, "profile": profile, "seeds": len(sel)}
        for m in metrics:
            agg[m], agg[m + "_std"] = mean_sd((r[m] for r in sel), ddof=0)  # the population sd
        ref = peak_gpu_h.get(profile, any_peak)
        agg["gpu_hours_vs_static_peak"] = agg["gpu_hours"] / ref if ref else None
        worst_fail = max(r["failed_pct"] for r in sel)
        worst_p95 = max(r["pending_p95_s"] for r in sel)
        agg["goal"] = {
            "gpu_hours_at_most_half_of_static_peak": bool(ref and all(r["gpu_hours"] <= 0.5 * ref for r in sel)),
            "failed_at_most_1pct": worst_fail <= 1.0,
            "p95_pending_at_most_delay_plus_30s": worst_p95 <= delay.high + 30.0,
        }
        agg["meets_goal"] = all(agg["goal"].values())
        out.append(agg)
    return out


def pareto(aggs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Configurations not beaten on both GPU-hours and p95 pending time (and failing <= 1 %)."""
    pts = [a for a in aggs if a["failed_pct"] is not None and a["failed_pct"] <= 1.0]
    front = []
    for a in pts:
        if not any(
            b is not a
            and b["gpu_hours"] <= a["gpu_hours"]
            and b["pending_p95_s"] <= a["pending_p95_s"]
            and (b["gpu_hours"] < a["gpu_hours"] or b["pending_p95_s"] < a["pending_p95_s"])
            for b in pts
        ):
            front.append({"mode": a["mode"], "profile": a["profile"], "gpu_hours": a["gpu_hours"], "pending_p95_s": a["pending_p95_s"]})
    return sorted(front, key=lambda f: f["gpu_hours"])


def run(args: argparse.Namespace) -> int:
    from kubesched.experiment.grid import parse_seeds
    from kubesched.sim.report import prepare_out_dir, write_csv

    delay = parse_delay(args.delay)
    modes = parse_list(args.modes, all_modes(), "--modes")
    profiles = parse_list(args.profiles, list(PROFILES), "--profiles")
    seeds = parse_seeds(args.seeds)
    if args.base_nodes < 0:
        raise InputError(f"must be 0 or more, got {args.base_nodes}", source="--base-nodes")
    workers = workers_from(args.workers)
    if not (math.isfinite(args.peak_headroom) and args.peak_headroom >= 0):
        raise InputError(f"must be 0 or more, got {args.peak_headroom}", source="--peak-headroom")
    kwargs = dict(
        trace=args.trace,
        nodes=args.nodes,
        k=args.compression,
        base=args.base_nodes,
        delay=delay,
        headroom=args.peak_headroom,
        limit=args.limit,
        autoscaler=args.autoscaler,
    )
    scenario = build_scenario(**kwargs)  # every input is checked before anything runs
    out = prepare_out_dir(args.out_dir, source="--out-dir")
    jobs = [(m, p, s) for m in modes for p in profiles for s in seeds]
    t0 = time.perf_counter()

    with Steps("elastic runs", len(jobs), not args.no_progress) as step, Pool(
        min(workers, len(jobs)), start="fork", initializer=_init, initargs=(kwargs,)
    ) as pool:
        results: list[tuple[dict[str, Any], dict[str, list[float]]]] = pool.map(
            _one, jobs, lambda _done, _total, job, _res: step(f"{job[0]} {job[1]} seed {job[2]}")
        )
    spot = any(s["cost_spot"] > 0 or s["spot_interruptions"] for s, _ in results)  # columns only then
    rows = [flat(s, spot) for s, _ in results]
    write_csv(out / "runs.csv", {k: [r[k] for r in rows] for k in rows[0]})
    series_dir = out / "series"
    series_dir.mkdir(exist_ok=True)
    first = seeds[0]
    for (s, series) in results:
        if s["seed"] == first:
            write_csv(series_dir / f"{s['mode']}-{s['profile']}-seed{first}.csv", series)
    aggs = aggregate(rows, delay)
    front = pareto(aggs)
    summary = {
        "scenario": {
            "trace": scenario.trace.source,
            "pods": len(scenario.trace.pods),
            "compression": scenario.k,
            "base_nodes": scenario.base,
            "base_shape": scenario.base_shape,
            "node_groups": {n: c for n, (_, c) in scenario.shapes.items()},
            "static_peak_nodes": scenario.peak_nodes(),
            "provisioning_delay": delay.describe(),
            "end_s": scenario.end,
            "seeds": seeds,
        },
        "aggregate": aggs,
        "pareto": front,
        "runs": rows,
        "wall_s": time.perf_counter() - t0,
    }
    write_json(out / "summary.json", summary, indent=2, newline=True, default=_plain)
    images = {} if args.no_plots else figures(results, aggs, front, first)
    (out / "report.html").write_text(render(summary, images))
    if args.output == "table":
        print_means(aggs)
    else:
        print_document(summary, args.output, default=_plain)
    print(f"wrote {out}/runs.csv, summary.json, series/, report.html", file=sys.stderr)
    return 0


def _plain(v: Any) -> Any:
    """numpy scalars as Python numbers (json's fallback)."""
    return v.item() if hasattr(v, "item") else str(v)


#: the printed table's columns: header, aggregate key, format (right-aligned but the first two)
COLUMNS = (
    ("mode", "mode", "{}"), ("profile", "profile", "{}"), ("GPU-h", "gpu_hours", "{:.0f}"),
    ("vs peak", "gpu_hours_vs_static_peak", "{:.2f}"), ("failed%", "failed_pct", "{:.2f}"),
    ("p95 s", "pending_p95_s", "{:.1f}"), ("p99 s", "pending_p99_s", "{:.1f}"),
    (">60s%", "pending_over_60s_pct", "{:.2f}"), ("eff", "allocation_efficiency", "{:.2f}"),
    ("peak", "peak_nodes", "{:.0f}"), ("evict", "evictions", "{:.0f}"), ("goal", "meets_goal", "{}"),
)


def _cell(value: Any, fmt: str) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "–" if value is None else fmt.format(value)


def print_means(aggs: list[dict[str, Any]], console: Console | None = None) -> None:
    """The means over seeds, a row per (mode, profile); a block per row when 80 columns are too few."""
    header = [h for h, _, _ in COLUMNS]
    rows = [[_cell(a[k], fmt) for _, k, fmt in COLUMNS] for a in aggs]
    print_table("kubesched experiment elastic — means over seeds", header, rows, right=header[2:], keys=2,
                console=console)


def figures(results: list, aggs: list[dict[str, Any]], front: list[dict[str, Any]], seed: int) -> dict[str, str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def png(fig: Any) -> str:
        buf = io.BytesIO()
        fig.tight_layout()
        fig.savefig(buf, format="png", dpi=90)
        plt.close(fig)
        return base64.b64encode(buf.getvalue()).decode()

    images: dict[str, str] = {}
    first = [(s, ser) for s, ser in results if s["seed"] == seed]
    for title, key in (("GPUs provisioned (incl. provisioning)", "gpu_provisioned"), ("pending pods", "pending"), ("nodes (registered)", "nodes")):
        fig, axes = plt.subplots(1, 2, figsize=(12, 4), sharey=True)
        for ax, prof in zip(axes, ("spread", "pack"), strict=True):
            for s, ser in first:
                if s["profile"] != prof:
                    continue
                ax.plot([t / 3600 for t in ser["t"]], ser[key], label=s["mode"], lw=0.9)
            if key == "gpu_provisioned":
                for s, ser in first:
                    if s["profile"] == prof and s["mode"] == "static-base":
                        ax.plot([t / 3600 for t in ser["t"]], ser["gpu_alloc"], "k:", label="GPUs allocated (static-base)", lw=0.8)
            ax.set_title(f"{title}: {prof} profile, seed {seed}")
            ax.set_xlabel("simulated time (hours)")
            if ax.lines:
                ax.legend(fontsize=7)
        images[title] = png(fig)
    images[NEEDED_FIGURE] = png(needed_figure(plt, first, seed))
    # utilisation: allocated / provisioned GPUs over time, autoscaled modes
    fig, ax = plt.subplots(figsize=(12, 4))
    for s, ser in first:
        if s["mode"].startswith(("ca-", "karpenter")):
            util = [a / p if p else 0 for a, p in zip(ser["gpu_alloc"], ser["gpu_provisioned"], strict=True)]
            ax.plot([t / 3600 for t in ser["t"]], util, label=f"{s['mode']} {s['profile']}", lw=0.7)
    ax.set_title(f"GPU utilisation (allocated / provisioned), seed {seed}")
    ax.set_xlabel("simulated time (hours)")
    if ax.lines:
        ax.legend(fontsize=6, ncol=2)
    images["utilisation"] = png(fig)
    fig, ax = plt.subplots(figsize=(8, 5))
    for a in aggs:
        ax.scatter(a["gpu_hours"], a["pending_p95_s"], marker="o" if a["profile"] == "spread" else "s")
        ax.annotate(f"{a['mode']}/{a['profile']}", (a["gpu_hours"], a["pending_p95_s"]), fontsize=7)
    if front:
        ax.plot([f["gpu_hours"] for f in front], [f["pending_p95_s"] for f in front], "r--", lw=1, label="Pareto front (failed <= 1 %)")
        ax.legend(fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("GPU-hours provisioned (mean over seeds)")
    ax.set_ylabel("p95 pending time (s)")
    ax.set_title("cost vs pending time")
    images["pareto"] = png(fig)
    return images


NEEDED_FIGURE = "GPUs provisioned vs needed over time, per mode"


def needed_figure(plt: Any, first: list, seed: int) -> Any:
    """One panel per mode: GPUs paid for (solid, a line per profile) against GPUs needed, those
    requested by running and pending pods (dotted), so over- and under-provisioning show."""
    modes = list(dict.fromkeys(s["mode"] for s, _ in first))
    start = busy_from(first)
    fig, axes = plt.subplots(len(modes), 1, figsize=(12, 2.2 * len(modes) + 0.6), sharex=True, squeeze=False)
    for ax, mode in zip(axes[:, 0], modes, strict=True):
        for s, ser in first:
            if s["mode"] != mode:
                continue
            hours = [t / 3600 for t in ser["t"]]
            line = ax.plot(hours, ser["gpu_provisioned"], lw=0.9, label=f"provisioned, {s['profile']}")[0]
            ax.plot(hours, ser["gpu_needed"], ":", color=line.get_color(), lw=0.9, label=f"needed, {s['profile']}")
        ax.set_title(f"{mode}: GPUs provisioned vs needed, seed {seed}", fontsize=9)
        ax.set_ylabel("GPUs")
        ax.legend(fontsize=6, ncol=2, loc="upper right")
    label = "simulated time (hours)"
    if start > 0:
        # a compressed trace can need almost nothing for most of its span: show where it does
        axes[-1, 0].set_xlim(start / 3600, max(ser["t"][-1] for _, ser in first if ser["t"]) / 3600)
        label += f"; before hour {start / 3600:.0f} every mode needs under {BUSY_SHARE:.0%} of the peak and is not shown"
    axes[-1, 0].set_xlabel(label)
    return fig


BUSY_SHARE = 0.05


def busy_from(first: list) -> float:
    """The time (s) one hour before any run first needs BUSY_SHARE of the largest need, or 0 when
    that is in the first tenth of the span (nothing worth cutting)."""
    peak = max((max(ser["gpu_needed"], default=0) for _, ser in first), default=0)
    if peak <= 0:
        return 0.0
    starts = [next(t for t, n in zip(ser["t"], ser["gpu_needed"], strict=True) if n >= BUSY_SHARE * peak)
              for _, ser in first if max(ser["gpu_needed"], default=0) >= BUSY_SHARE * peak]
    span = max(ser["t"][-1] for _, ser in first if ser["t"])
    start = min(starts) - 3600
    return start if start > span / 10 else 0.0


def render(summary: dict[str, Any], images: dict[str, str]) -> str:
    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"
        return html.escape(str(v))

    cols = ["mode", "profile", "seeds", "gpu_hours", "gpu_hours_vs_static_peak", "failed_pct", "pending_p50_s", "pending_p95_s", "pending_p99_s", "pending_over_60s_pct", "node_hours", "allocation_efficiency", "peak_nodes", "scale_ups", "scale_downs", "evictions", "lost_gpu_seconds", "cost", "cpu_s", "meets_goal"]
    cols[-2:-2] = [m for m in SPOT_METRICS if summary["aggregate"] and m in summary["aggregate"][0]]
    rows = "".join("<tr>" + "".join(f"<td>{cell(a.get(c))}</td>" for c in cols) + "</tr>" for a in summary["aggregate"])
    sc = "".join(f"<li>{html.escape(k)}: {cell(v)}</li>" for k, v in summary["scenario"].items() if k != "node_groups")
    imgs = "".join(f'<h2>{html.escape(t)}</h2><img alt="{html.escape(t)}" src="data:image/png;base64,{b}">' for t, b in images.items())
    front = "".join(f"<li>{html.escape(f['mode'])} / {html.escape(f['profile'])}: {f['gpu_hours']:.0f} GPU-h, p95 {f['pending_p95_s']:.1f} s</li>" for f in summary["pareto"])
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>kubesched elastic scenario</title>"
        "<style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse;font-size:12px}"
        "td,th{border:1px solid #ccc;padding:2px 5px;text-align:right}img{max-width:100%}</style></head><body>"
        f"<h1>Elastic scenario</h1><ul>{sc}</ul><h2>Means over seeds</h2><table><tr>"
        + "".join(f"<th>{c}</th>" for c in cols)
        + f"</tr>{rows}</table><h2>Pareto front (GPU-hours vs p95 pending, failed &le; 1 %)</h2><ul>{front}</ul>{imgs}</body></html>"
    )
