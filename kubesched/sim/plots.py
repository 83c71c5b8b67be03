"""PNG plots of a run (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kubesched.sim.runner import SimResult


def _axis(result: SimResult) -> tuple[np.ndarray, str]:
    b = result.bins
    if result.mode == "arrival":
        return np.asarray(b["level"], float), "arrived workload (%)"
    end = np.asarray(b["end"], float)
    span = end[-1] - end[0] if end.size > 1 else 0.0
    scale, unit = (86400.0, "days") if span > 3 * 86400 else (3600.0, "hours") if span > 3 * 3600 else (1.0, "s")
    return end / scale, f"simulated time ({unit})"


def _col(result: SimResult, name: str) -> np.ndarray:
    return np.asarray([np.nan if v is None else v for v in result.bins[name]], float)


def draw_all(result: SimResult, out: Path) -> dict[str, Path]:
    """allocation.png, gpu.png (when the cluster has GPUs), queue.png, utilization.png."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x, xlabel = _axis(result)
    written: dict[str, Path] = {}

    def save(fig, name: str, title: str) -> None:  # noqa: ANN001
        fig.tight_layout()
        path = out / f"{name}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written[title] = path

    fig, ax = plt.subplots(figsize=(8, 4))
    for col, label in (("cpu_alloc_pct", "CPU"), ("mem_alloc_pct", "memory"), ("gpu_alloc_pct", "GPU")):
        y = _col(result, col)
        if col != "gpu_alloc_pct" or result.summary["gpu"]["capacity_milli"]:
            ax.plot(x, y, label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("allocated (% of capacity)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend()
    save(fig, "allocation", "Allocation ratio per resource")

    if result.summary["gpu"]["capacity_milli"]:
        fig, ax = plt.subplots(figsize=(8, 4))
        ax.plot(x, _col(result, "unallocated_gpu_pct"), label="unallocated GPU (% of capacity)")
        frag = _col(result, "frag_pct")
        if np.isfinite(frag).any():
            ax.plot(x, frag, label="fragmentation amount (% of capacity)")
            ax.plot(x, _col(result, "frag_ratio_pct"), label="fragmentation ratio (% of idle GPU)", linestyle="--")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("%")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend()
        save(fig, "gpu", "Unallocated GPU and fragmentation")

    fig, ax = plt.subplots(figsize=(8, 4))
    ax.plot(x, _col(result, "pending"), label="pending pods")
    ax.plot(x, _col(result, "running"), label="running pods")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("pods")
    ax.grid(alpha=0.3)
    if result.mode == "time":
        ax2 = ax.twinx()
        ax2.plot(x, _col(result, "delay_p50"), color="tab:red", alpha=0.6, label="queueing delay p50 (s)")
        ax2.set_ylabel("queueing delay p50 of pods placed in the bin (s)")
        ax2.set_ylim(bottom=0)
        ax2.legend(loc="upper right")
    else:
        ax.plot(x, _col(result, "failed"), label="failed pods (cumulative)")
    ax.legend(loc="upper left")
    save(fig, "queue", "Pending, running and failed pods")

    fig, ax = plt.subplots(figsize=(8, 4))
    ax.plot(x, _col(result, "cpu_used_pct"), label="CPU used")
    ax.plot(x, _col(result, "mem_used_pct"), label="memory used")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("used (% of capacity, usage model)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend()
    save(fig, "utilization", "Utilization over time")
    return written
