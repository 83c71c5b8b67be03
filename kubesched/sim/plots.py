"""PNG plots of a run (matplotlib, Agg backend: no display needed).

Every plot is titled with what it shows and, under it, the workload, the profile and its
configuration and the replay mode. One time unit is chosen per run (from its span) and used
for every time on every plot. Series with few points are drawn with markers, so a run whose
events all happen at one instant (a static cluster dump in time mode) shows its one point.
Legends sit under the axes, where they hide no line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from kubesched.sim.report import describe
from kubesched.sim.runner import SimResult

#: series with at most this many points are drawn with markers
MARKER_MAX_POINTS = 30


def time_unit(result: SimResult) -> tuple[float, str]:
    """(seconds per unit, unit name) for the run's span: days, hours, minutes or seconds."""
    end = np.asarray(result.bins.get("end", []), float)
    start = np.asarray(result.bins.get("start", []), float)
    span = float(end[-1] - start[0]) if end.size else 0.0
    for scale, unit in ((86400.0, "days"), (3600.0, "hours"), (60.0, "minutes")):
        if span > 3 * scale:
            return scale, unit
    return 1.0, "s"


def _col(result: SimResult, name: str) -> np.ndarray:
    return np.asarray([np.nan if v is None else v for v in result.bins[name]], float)


def _x_axis(result: SimResult) -> tuple[np.ndarray, str, float, str]:
    """The figures' x values, the axis label, and the time scale and unit (arrival mode: the
    arrived workload, unscaled)."""
    if result.mode == "arrival":
        return _col(result, "level"), "arrived workload (% of capacity)", 1.0, ""
    scale, unit = time_unit(result)
    # a bin is drawn at its end; a run with one bin happened at one instant: draw it there
    x = _col(result, "start" if len(result.bins["end"]) == 1 else "end") / scale
    return x, f"simulated time ({unit})", scale, unit


def _save(plt: Any, fig: Any, path: Path, *axes: Any) -> Path:
    """The figure with one legend for all its axes, written to ``path`` and closed."""
    handles, labels = [], []
    for a in axes:
        h, lab = a.get_legend_handles_labels()
        handles += h
        labels += lab
    # as many columns as fit the figure's width (three long labels on one row ran off both sides)
    renderer = fig.canvas.get_renderer()
    for ncols in range(min(len(labels), 3), 0, -1):
        legend = fig.legend(handles, labels, loc="outside lower center", ncols=ncols, fontsize=9)
        if ncols == 1 or legend.get_window_extent(renderer).width <= fig.bbox.width:
            break
        legend.remove()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def draw_all(result: SimResult, out: Path) -> dict[str, Path]:
    """allocation.png, gpu.png (when the cluster has GPUs), queue.png, utilization.png."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = result.summary
    x, xlabel, scale, unit = _x_axis(result)
    style: dict[str, Any] = {"marker": "o", "markersize": 4} if len(x) <= MARKER_MAX_POINTS else {}
    written: dict[str, Path] = {}

    def figure(title: str):  # noqa: ANN202 - (Figure, Axes)
        fig, ax = plt.subplots(figsize=(8, 4.8), layout="constrained")
        fig.suptitle(title, fontweight="bold")
        note = ""
        if len(x) == 1:
            at = f"t = {x[0]:g} {unit}" if result.mode == "time" else f"{x[0]:g} % arrived"
            note = f"\none sample ({at}): every event of this run happened at one instant"
        ax.set_title(describe(s) + note, fontsize=9, color="0.35")
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
        return fig, ax

    def save(fig, name: str, title: str, *axes) -> None:  # noqa: ANN001
        written[title] = _save(plt, fig, out / f"{name}.png", *axes)

    gpus = s["gpu"]["capacity_milli"]
    gpu_label = f"GPU ({', '.join(s['gpu'].get('resources') or [])})" if gpus else "GPU"
    fig, ax = figure("Allocated share of each resource")
    for col, label in (("cpu_alloc_pct", "CPU"), ("mem_alloc_pct", "memory"), ("gpu_alloc_pct", gpu_label)):
        if col != "gpu_alloc_pct" or gpus:
            ax.plot(x, _col(result, col), label=label, **style)
    ax.set_ylabel("allocated (% of capacity)")
    ax.set_ylim(bottom=0)
    save(fig, "allocation", "Allocation ratio per resource", ax)

    if gpus:
        fig, ax = figure("Unallocated GPU and fragmentation")
        ax.plot(x, _col(result, "unallocated_gpu_pct"), label="unallocated GPU (% of capacity)", **style)
        frag = _col(result, "frag_pct")
        if np.isfinite(frag).any():
            ax.plot(x, frag, label="fragmentation amount (% of capacity)", **style)
            ax.plot(x, _col(result, "frag_ratio_pct"), label="fragmentation ratio (% of idle GPU)", linestyle="--", **style)
        ax.set_ylabel("% of GPU capacity")
        ax.set_ylim(bottom=0)
        save(fig, "gpu", "Unallocated GPU and fragmentation", ax)

    fig, ax = figure("Pending and running pods" + (", queueing delay" if result.mode == "time" else ", failed pods"))
    ax.plot(x, _col(result, "pending"), label="pending pods", **style)
    ax.plot(x, _col(result, "running"), label="running pods", **style)
    ax.set_ylabel("pods")
    ax.set_ylim(bottom=0)
    axes = [ax]
    if result.mode == "time":
        ax2 = ax.twinx()
        ax2.plot(x, _col(result, "delay_p50") / scale, color="tab:red", alpha=0.7, label=f"queueing delay p50 ({unit})", **style)
        ax2.set_ylabel(f"queueing delay p50 of pods placed in the bin ({unit})")
        ax2.set_ylim(bottom=0)
        axes.append(ax2)
    else:
        ax.plot(x, _col(result, "failed"), label="failed pods (cumulative)", **style)
    save(fig, "queue", "Pending, running and failed pods", *axes)

    fig, ax = figure("Used share of CPU and memory (usage model)")
    ax.plot(x, _col(result, "cpu_used_pct"), label="CPU used", **style)
    ax.plot(x, _col(result, "mem_used_pct"), label="memory used", **style)
    ax.set_ylabel("used (% of capacity)")
    ax.set_ylim(bottom=0)
    save(fig, "utilization", "Utilization over time", ax)
    return written
