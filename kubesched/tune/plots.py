"""The trade-off plot (matplotlib, Agg backend).

One metric: the metric per trial with the best so far and the base config, then one panel per
tuned weight or arg against the metric (what each knob does). Two metrics: every trial in the
metric plane with the Pareto front. More: one metric-per-trial panel per metric.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from kubesched.tune.space import SearchSpace
from kubesched.tune.study import StudyOutcome, TrialRecord


def _done(out: StudyOutcome) -> list[TrialRecord]:
    return [r for r in out.records if r.values is not None]


def _per_trial(ax, out: StudyOutcome, k: int) -> None:  # noqa: ANN001 - a matplotlib Axes
    metric, direction = out.settings.metrics[k], out.settings.directions[k]
    done = _done(out)
    x = np.asarray([r.number for r in done], float)
    y = np.asarray([r.values[k] for r in done], float)  # type: ignore[index]
    ax.scatter(x, y, s=14, color="tab:blue", label="trial")
    if y.size:
        run = np.minimum.accumulate(y) if direction == "minimize" else np.maximum.accumulate(y)
        ax.step(x, run, where="post", color="tab:green", label="best so far")
    assert out.baseline.values is not None
    ax.axhline(out.baseline.values[k], color="tab:red", linestyle="--", label="base config")
    if out.best.values is not None and out.best.number >= 0:
        ax.scatter(
            [out.best.number],
            [out.best.values[k]],
            marker="*",
            s=160,
            color="tab:orange",
            zorder=3,
            label="best",
        )
    ax.set_xlabel("trial")
    ax.set_ylabel(f"{metric} ({direction})")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)


def _knobs(space: SearchSpace) -> list[tuple[str, str, bool]]:
    """(column label, record key kind, categorical?) per tuned knob."""
    out = [(f"weight {w.plugin}", w.plugin, False) for w in space.weights]
    out += [(a.key, a.key, a.kind == "categorical") for a in space.args]
    return out


def _knob_panel(ax, out: StudyOutcome, space: SearchSpace, label: str, key: str, categorical: bool) -> None:  # noqa: ANN001
    done = _done(out)
    is_weight = label.startswith("weight ")
    vals = [r.assignment.weights[key] if is_weight else r.assignment.args.get(key) for r in done]
    y = np.asarray([r.values[0] for r in done], float)  # type: ignore[index]
    if categorical:
        cats = [str(c) for c in next(a for a in space.args if a.key == key).choices]
        x = np.asarray([cats.index(str(v)) if str(v) in cats else -1 for v in vals], float)
        ax.set_xticks(range(len(cats)), cats, fontsize=7, rotation=15)
    else:
        x = np.asarray([np.nan if v is None else float(v) for v in vals], float)
        if is_weight and space.range.log:  # symlog: weight 0 (off) stays on the axis
            ax.set_xscale("symlog", linthresh=1)
    ax.scatter(x, y, s=10, alpha=0.7)
    base = out.baseline.assignment.weights[key] if is_weight else out.baseline.assignment.args.get(key)
    if base is not None and not categorical:
        ax.axvline(float(base), color="tab:red", linestyle="--", linewidth=1)
    ax.set_title(label + (" (0 = off)" if is_weight and space.range.low == 0 else ""), fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)


def _pareto(ax, out: StudyOutcome) -> None:  # noqa: ANN001
    (m1, m2), (d1, d2) = out.settings.metrics, out.settings.directions
    done = _done(out)
    xy = np.asarray([r.values for r in done], float)
    ax.scatter(xy[:, 0], xy[:, 1], s=14, color="tab:blue", alpha=0.6, label="trial")
    front = np.asarray([r.values for r in out.pareto], float)
    order = np.argsort(front[:, 0])
    seen: dict[tuple[float, float], int] = {}
    for r in out.pareto:  # equal trials overlap: name the first of each point
        seen.setdefault((float(r.values[0]), float(r.values[1])), r.number)  # type: ignore[index]
    names = ", ".join(f"#{n}" if n >= 0 else "base" for n in seen.values())
    ax.plot(
        front[order, 0],
        front[order, 1],
        "-o",
        color="tab:green",
        markersize=5,
        label=f"Pareto front ({names})",
    )
    assert out.baseline.values is not None
    ax.scatter(*out.baseline.values, marker="X", s=120, color="tab:red", zorder=3, label="base config")
    assert out.best.values is not None
    ax.scatter(*out.best.values, marker="*", s=160, color="tab:orange", zorder=3, label="best-config.yaml")
    ax.set_xlabel(f"{m1} ({d1})")
    ax.set_ylabel(f"{m2} ({d2})")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)


def draw(out: StudyOutcome, space: SearchSpace, path: Path, subtitle: str = "") -> Path:
    """tradeoff.png, titled with what was tuned and, under it, ``subtitle`` (workload, profile, mode)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(out.settings.metrics)
    if n == 2:
        fig, ax = plt.subplots(figsize=(7, 5))
        _pareto(ax, out)
        title = "kubesched tune: trade-off between the two metrics"
    elif n > 2:
        fig, axes = plt.subplots(n, 1, figsize=(8, 3 * n), squeeze=False)
        for k in range(n):
            _per_trial(axes[k][0], out, k)
        title = "kubesched tune: each metric per trial"
    else:
        knobs = _knobs(space)
        cols = 4
        rows = math.ceil(len(knobs) / cols)
        fig = plt.figure(figsize=(12, 4 + 2.6 * rows))
        grid = fig.add_gridspec(1 + rows, cols, height_ratios=[1.6] + [1.0] * rows)
        _per_trial(fig.add_subplot(grid[0, :]), out, 0)
        for i, (label, key, cat) in enumerate(knobs):
            ax = fig.add_subplot(grid[1 + i // cols, i % cols])
            _knob_panel(ax, out, space, label, key, cat)
            if i % cols == 0:
                ax.set_ylabel(out.settings.metrics[0], fontsize=8)
        title = "kubesched tune: metric per trial, and per tuned knob"
    fig.suptitle(f"{title}\n{subtitle}" if subtitle else title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
