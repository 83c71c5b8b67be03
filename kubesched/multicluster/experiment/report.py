"""The experiment's outputs: runs.csv, summary.json, plots, report.html (the simulator's page), and
for the first seed each mode's member clusters as the simulator writes them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from kubesched.kit.report import pm, write_json
from kubesched.kit.stats import mean_sd
from kubesched.multicluster.experiment.metrics import HEADLINE, get
from kubesched.sim.report import html_images, html_page, html_table, json_ready, write_csv

GUIDE = {"latency_ms.mean": (150.0, 78.0), "gpu_util_pct.edge": (52.0, 76.0), "gpu_util_arriving_pct.edge": (52.0, 76.0),
         "failure_pct": (8.0, 3.0)}


def runs_table(runs: list[dict[str, Any]]) -> dict[str, list[Any]]:
    cols: dict[str, list[Any]] = {"mode": [], "seed": []}
    for key, _ in HEADLINE:
        cols[key] = []
    for r in runs:
        cols["mode"].append(r["mode"])
        cols["seed"].append(r["seed"])
        for key, _ in HEADLINE:
            cols[key].append(get(r, key))
    return cols


def _pm(agg: dict[str, Any], mode: str, key: str) -> str:
    return pm(agg[mode][key]["mean"], agg[mode][key]["sd"])


def comparison_rows(agg: dict[str, Any], modes: list[str]) -> list[list[str]]:
    return [[label, *(_pm(agg, m, key) for m in modes)] for key, label in HEADLINE]


def guide_rows(agg: dict[str, Any]) -> list[list[str]]:
    rows = []
    for key, (before, after) in GUIDE.items():
        label = dict(HEADLINE)[key]
        rows.append([label, f"{before:g} → {after:g}", f"{_pm(agg, 'isolated', key)} → {_pm(agg, 'collaborative', key)}",
                     _pm(agg, "cloud-only", key)])
    return rows


def draw(runs: list[dict[str, Any]], series: dict[str, dict[str, tuple[list[float], list[float]]]], modes: list[str],
         out: Path) -> dict[str, Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written: dict[str, Path] = {}
    panels = (("latency_ms.mean", "mean user latency (ms)"), ("failure_pct", "failure rate (%)"),
              ("gpu_util_pct.edge", "edge GPU utilisation (%)"))
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
    for ax, (key, label) in zip(axes, panels, strict=True):
        vals = [[get(r, key) for r in runs if r["mode"] == m] for m in modes]
        stats = [mean_sd(v) for v in vals]
        means = [m or 0.0 for m, _ in stats]
        sds = [sd or 0.0 for _, sd in stats]
        ax.bar(modes, means, yerr=sds, capsize=4, color=["tab:gray", "tab:blue", "tab:green"][: len(modes)])
        ax.set_title(label)
        ax.tick_params(axis="x", rotation=15)
        ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    path = out / "comparison.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    written["Modes compared (mean ± sd over seeds)"] = path
    if series:
        fig, axes = plt.subplots(len(series), 1, figsize=(9, 2.6 * len(series)), sharex=True, squeeze=False)
        for ax, (mode, sites) in zip(axes[:, 0], series.items(), strict=True):
            for site, (x, y) in sites.items():
                ax.plot(np.asarray(x) / 3600.0, y, label=site)
            ax.set_title(f"{mode}: GPU allocated per cluster (first seed)")
            ax.set_ylabel("%")
            ax.grid(alpha=0.3)
        axes[0, 0].legend(fontsize=7, ncol=3)
        axes[-1, 0].set_xlabel("simulated time (hours)")
        fig.tight_layout()
        path = out / "clusters.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written["GPU allocation per cluster over time"] = path
    return written


def write(out: Path, doc: dict[str, Any], runs: list[dict[str, Any]], series: dict, modes: list[str], plots: bool) -> list[Path]:
    written = []
    write_csv(out / "runs.csv", runs_table(runs))
    write_json(out / "summary.json", json_ready(doc), indent=2, newline=True)
    written += [out / "runs.csv", out / "summary.json"]
    images = draw(runs, series, modes, out) if plots else {}
    written += list(images.values())
    agg = doc["aggregate"]
    body = [
        f"<p>Scenario: {doc['scenario']['description']}. Seeds: {', '.join(map(str, doc['seeds']))}.</p>",
        "<h2>Modes (mean ± sd over seeds)</h2>",
        html_table(comparison_rows(agg, modes), ["metric", *modes]),
        "<h2>Paired tests (by seed)</h2>",
        html_table(
            [[t["metric"], f"{t['a']} vs {t['b']}", t["better"], f"{t['mean_difference']:.3f}",
              "–" if t["t_test_p"] is None else f"{t['t_test_p']:.2g}", "–" if t["wilcoxon_p"] is None else f"{t['wilcoxon_p']:.2g}",
              "yes" if t["every_seed"] else "no"] for t in doc["tests"]],
            ["metric", "comparison", "goal", "mean difference", "paired t p", "Wilcoxon p", "holds on every seed"],
        ),
    ]
    if "cloud-only" in modes and "isolated" in modes and "collaborative" in modes:
        body += ["<h2>Against the guide's table</h2>",
                 html_table(guide_rows(agg), ["metric", "guide (traditional → collaborative)", "measured (isolated → collaborative)", "measured cloud-only"])]
    if images:
        body.append("<h2>Plots</h2>")
        body += html_images(images)
    body.append("<p>Files: runs.csv (one row per mode and seed), summary.json (every metric, the tests), "
                "members/MODE/CLUSTER/ (the first seed's clusters as <code>kubesched simulate</code> reports them).</p>")
    (out / "report.html").write_text(html_page("kubesched multicluster simulate: edge–cloud experiment", body))
    written.append(out / "report.html")
    return written
