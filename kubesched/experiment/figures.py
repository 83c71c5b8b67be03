"""The paper's figures from the measured runs, with the published values overlaid (matplotlib, Agg).

- ``curve_<trace>.png``: unallocated GPU % vs arrived workload % (x 75..130, like Fig 9a): median
  over seeds with the 25-75 % band per policy; published means as markers of the same colour.
- ``bars_<family>.png``: unallocated GPU % at 100 % arrived (Figs 11-14): measured mean ± sd beside
  the published mean ± sd (hatched), one panel per trace.
- ``frag_default.png``: fragmentation amount and ratio vs arrived (Fig 7), published markers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from kubesched.experiment import published
from kubesched.experiment.grid import FAMILIES
from kubesched.kit.stats import Stats

COLORS = {
    "Random": "#7f7f7f",
    "DotProd": "#1f77b4",
    "GpuClustering": "#9467bd",
    "GpuPacking": "#2ca02c",
    "BestFit": "#ff7f0e",
    "FGD": "#d62728",
}
Agg = dict[tuple[str, str, str, int], Stats]
_MISSING = Stats(0, *([float("nan")] * 7))


def _get(agg: Agg, trace: str, policy: str, metric: str, level: int) -> Stats:
    """A policy without runs on a trace (partial grids) plots as gaps, not as an error."""
    return agg.get((trace, policy, metric, level), _MISSING)


def _plt():  # noqa: ANN202 - pyplot, imported lazily with the Agg backend (no display needed)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _series(agg: Agg, trace: str, policy: str, metric: str, levels: Sequence[int]) -> dict[str, np.ndarray]:
    sts = [_get(agg, trace, policy, metric, lvl) for lvl in levels]
    return {k: np.asarray([getattr(s, k) for s in sts], np.float64) for k in ("median", "q25", "q75", "mean", "sd")}


def _save(fig, path: Path, rect: tuple[float, float, float, float] = (0, 0, 1, 1)) -> Path:  # noqa: ANN001
    fig.tight_layout(rect=rect)
    fig.savefig(path, dpi=110)
    _plt().close(fig)
    return path


def _seeds(agg: Agg, trace: str, policies: Sequence[str]) -> str:
    ns = sorted({_get(agg, trace, p, "unallocated", 100).n for p in policies} - {0})
    return "/".join(str(n) for n in ns)


def curve_figure(agg: Agg, trace: str, policies: Sequence[str], out: Path, x: tuple[int, int] = (75, 130)) -> Path:
    plt = _plt()
    levels = list(range(x[0], x[1] + 1))
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    xs = np.asarray(levels, np.float64)
    ax.plot(xs, np.clip(100 - xs, 0, None), color="black", lw=0.8, ls=":", label="Ideal (100 − arrived)")
    for pol in policies:
        s = _series(agg, trace, pol, "unallocated", levels)
        c = COLORS.get(pol)
        ax.plot(xs, s["median"], color=c, lw=1.6, label=f"{pol} (median)")
        ax.fill_between(xs, s["q25"], s["q75"], color=c, alpha=0.2, lw=0)
        pts = published.curve_points(trace, pol) if pol in published.POLICIES else {}
        pts = {k: v for k, v in pts.items() if x[0] <= k <= x[1]}
        if pts:
            ax.plot(list(pts), list(pts.values()), ls="none", marker="D", ms=5, mfc="white", mec=c, mew=1.4)
    ax.plot([], [], ls="none", marker="D", mfc="white", mec="black", label="published mean (paper)")
    ax.set_xlim(*x)
    ax.set_ylim(0, None)
    ax.set_xlabel("arrived workload (% of GPU capacity)")
    ax.set_ylabel("unallocated GPU (%)")
    ax.set_title(f"openb {trace}: unallocated GPU, {_seeds(agg, trace, policies)} seeds (band: 25–75 %)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    return _save(fig, out / f"curve_{trace}.png")


def bars_figure(agg: Agg, family: str, traces: Sequence[str], policies: Sequence[str], out: Path) -> Path:
    """One panel per trace of the family: measured mean ± sd (solid) beside published (hatched)."""
    plt = _plt()
    fig, axes = plt.subplots(1, len(traces), figsize=(3.6 * len(traces) + 0.6, 4.2), squeeze=False, sharey=True)
    xs = np.arange(len(policies))
    w = 0.38
    for ax, trace in zip(axes[0], traces, strict=True):
        m = [_get(agg, trace, p, "unallocated", 100) for p in policies]
        pub = [published.BARS_100.get(trace, {}).get(p) for p in policies]
        cols = [COLORS.get(p, "#333333") for p in policies]
        ax.bar(xs - w / 2, [s.mean for s in m], w, yerr=[0 if s.n < 2 else s.sd for s in m], color=cols, capsize=2)
        pm = [np.nan if v is None else v[0] for v in pub]
        ps = [0 if v is None else v[1] for v in pub]
        ax.bar(xs + w / 2, pm, w, yerr=ps, color=cols, alpha=0.35, hatch="//", edgecolor="black", lw=0.4, capsize=2)
        for i, s in enumerate(m):
            if s.n == 0:
                continue
            top = s.mean + (s.sd if s.n > 1 else 0)
            ax.text(xs[i] - w / 2, top, f"{s.mean:.1f}", ha="center", va="bottom", fontsize=6.5)
        ax.set_xticks(xs, [p.replace("Gpu", "") for p in policies], rotation=40, fontsize=8)
        ax.set_title(f"{trace} (n={_seeds(agg, trace, policies)})", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("unallocated GPU at 100 % arrived (%)")
    handles = [
        plt.Rectangle((0, 0), 1, 1, color="#888888"),
        plt.Rectangle((0, 0), 1, 1, color="#888888", alpha=0.35, hatch="//", ec="black", lw=0.4),
    ]
    fig.legend(handles, ["measured mean ± sd", "published mean ± sd"], loc="lower center", ncol=2, fontsize=8)
    fig.suptitle(f"{family}: measured vs published (FGD paper)", fontsize=11)
    return _save(fig, out / f"bars_{family}.png", rect=(0, 0.05, 1, 1))


def frag_figure(agg: Agg, trace: str, policies: Sequence[str], out: Path) -> Path:
    """Fig 7: fragmentation amount (% of capacity) and ratio (% of idle GPU) vs arrived 0..120."""
    plt = _plt()
    levels = list(range(0, 121))
    xs = np.asarray(levels, np.float64)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    tables = {"frag_amount": published.FRAG_AMOUNT_DEFAULT, "frag_ratio": published.FRAG_RATIO_DEFAULT}
    labels = {"frag_amount": "fragmentation amount (% of GPUs)", "frag_ratio": "fragmentation ratio (% of idle GPU)"}
    for ax, metric in zip(axes, ("frag_amount", "frag_ratio"), strict=True):
        for pol in policies:
            s = _series(agg, trace, pol, metric, levels)
            c = COLORS.get(pol)
            ax.plot(xs, s["median"], color=c, lw=1.5, label=pol)
            ax.fill_between(xs, s["q25"], s["q75"], color=c, alpha=0.2, lw=0)
            pts = tables[metric].get(pol, {}) if trace == "default" else {}
            if pts:
                ax.plot(list(pts), list(pts.values()), ls="none", marker="D", ms=5, mfc="white", mec=c, mew=1.4)
        ax.set_xlabel("arrived workload (% of GPU capacity)")
        ax.set_ylabel(labels[metric])
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"openb {trace}: fragmentation (median, 25–75 % band; ◇ published mean)", fontsize=11)
    return _save(fig, out / f"frag_{trace}.png")


def draw_all(agg: Agg, traces: Sequence[str], policies: Sequence[str], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = [curve_figure(agg, t, policies, out) for t in traces]
    for fam, members in FAMILIES.items():
        ran = [t for t in members if t in traces]
        if ran:
            written.append(bars_figure(agg, fam, ran, policies, out))
    if "default" in traces:
        written.append(frag_figure(agg, "default", policies, out))
    return written
