"""What a study writes: the best config, every trial, the trade-off plot, a summary, a table."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from kubesched.kit.report import print_table, write_json, write_rows
from kubesched.tune.metrics import METRICS
from kubesched.tune.space import SearchSpace
from kubesched.tune.study import StudyOutcome, TrialRecord

if TYPE_CHECKING:
    from rich.console import Console


def config_yaml(doc: dict[str, Any], header: list[str]) -> str:
    """The document as ``kubesched config view`` prints it, under a comment header."""
    lines = "".join(f"# {h}\n" for h in header)
    return lines + yaml.safe_dump(doc, sort_keys=False)


def _fmt(v: float | None) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return f"{v:.4g}" if abs(v) < 1e5 else f"{v:.0f}"


def _label(rec: TrialRecord) -> str:
    return (
        "base config"
        if rec.number < 0
        else f"trial {rec.number}" + (" (base config)" if rec.baseline else "")
    )


def _study(out: StudyOutcome) -> str:
    """How many configurations the study tried: ``--trials`` (the records less the base config,
    which Optuna also holds as a trial) and the base config."""
    n = sum(1 for r in out.records if not r.baseline)
    return f"{n} trial{'' if n == 1 else 's'} and the base config"


def _header(out: StudyOutcome, rec: TrialRecord) -> list[str]:
    s = out.settings
    vals = ", ".join(
        f"{m} {_fmt(v)} (base config {_fmt(b)})"
        for m, v, b in zip(s.metrics, rec.values or [], out.baseline.values or [], strict=False)
    )
    return [
        f"kubesched tune: {_label(rec)}, of {_study(out)}; {vals}",
        f"simulator seeds {','.join(map(str, s.sim_seeds))}; metric(s) {','.join(s.metrics)} ({','.join(s.directions)})",
    ]


def write_outputs(
    out: StudyOutcome,
    space: SearchSpace,
    folder: Path,
    *,
    plot: bool = True,
    simulation: dict[str, Any] | None = None,
    warnings: list[str] | None = None,
) -> dict[str, Path]:
    """best-config.yaml, trials.csv, summary.json (with ``simulation``: how trials were run, and
    ``warnings``), tradeoff.png, and pareto/ for several metrics."""
    written: dict[str, Path] = {}
    best_doc = space.document(out.best.assignment)
    p = folder / "best-config.yaml"
    p.write_text(config_yaml(best_doc, _header(out, out.best)))
    written["best config"] = p
    if len(out.settings.metrics) > 1:
        pdir = folder / "pareto"
        pdir.mkdir(exist_ok=True)
        for old in pdir.glob("trial-*.yaml"):
            old.unlink()
        for rec in out.pareto:
            name = "base-config.yaml" if rec.number < 0 else f"trial-{rec.number}.yaml"
            (pdir / name).write_text(config_yaml(space.document(rec.assignment), _header(out, rec)))
        written["Pareto configs"] = pdir
    written["trials"] = write_trials_csv(out, space, folder / "trials.csv")
    written["summary"] = write_summary(out, space, folder / "summary.json", simulation or {}, warnings or [])
    if plot:
        from kubesched.tune.plots import draw

        written["plot"] = draw(out, space, folder / "tradeoff.png", _subtitle(space, simulation or {}))
    return written


def _row_values(rec: TrialRecord, space: SearchSpace) -> dict[str, Any]:
    row: dict[str, Any] = {"number": rec.number, "state": rec.state, "baseline": rec.baseline}
    for w in space.weights:
        row[f"weight.{w.plugin}"] = rec.assignment.weights[w.plugin]
    for a in space.args:
        row[f"arg.{a.key}"] = rec.assignment.args.get(a.key)
    ev = rec.evaluation
    row["seconds"] = round(ev.seconds, 3) if ev else None
    for m in METRICS:
        row[m] = ev.values[m] if ev else None
    return row


def write_trials_csv(out: StudyOutcome, space: SearchSpace, path: Path) -> Path:
    """One row per trial: its weights (0 = off) and args, then every metric (seed mean);
    the objective metric(s) come first."""
    recs = out.records if any(r is out.baseline for r in out.records) else [out.baseline, *out.records]
    rows = [_row_values(r, space) for r in recs]
    first = ["number", "state", "baseline", *out.settings.metrics]
    cols = first + [c for c in rows[0] if c not in first]
    return write_rows(path, cols, ([("" if row[c] is None else row[c]) for c in cols] for row in rows))


def _assignment_json(rec: TrialRecord) -> dict[str, Any]:
    return {
        "trial": rec.number if rec.number >= 0 else None,
        "weights": rec.assignment.weights,
        "args": rec.assignment.args,
        "values": rec.values,
        "metrics": rec.evaluation.values if rec.evaluation else None,
    }


def write_summary(
    out: StudyOutcome, space: SearchSpace, path: Path, simulation: dict[str, Any], warnings: list[str]
) -> Path:
    s = out.settings
    doc = {
        "simulation": simulation,
        "warnings": warnings,
        "metrics": s.metrics,
        "directions": s.directions,
        "profile": space.profile_name,
        "weight_range": [space.range.low, space.range.high],
        "weight_scale": "log" if space.range.log else "linear",
        "params": [a.spec for a in space.args],
        "trials": len(out.records),
        "failed_trials": sum(r.state != "COMPLETE" for r in out.records),
        "seed": s.seed,
        "sim_seeds": s.sim_seeds,
        "eval_seeds": s.eval_seeds,
        "sampler": s.sampler,
        "wall_s": out.wall_s,
        "baseline": _assignment_json(out.baseline),
        "best": _assignment_json(out.best),
        "pareto": [_assignment_json(r) for r in out.pareto] if len(s.metrics) > 1 else None,
        "held_out": {
            k: {"values": ev.values, "per_seed": {str(sd): v for sd, v in ev.per_seed.items()}}
            for k, ev in out.held_out.items()
        },
    }
    return write_json(path, doc, indent=2, newline=True)


def _subtitle(space: SearchSpace, simulation: dict[str, Any]) -> str:
    """Workload, profile (and its configuration file) and replay mode of the trials."""
    workload = str(simulation.get("workload") or "workload")
    if "/" in workload and not workload.startswith("synthetic"):
        workload = Path(workload).name
    config = simulation.get("config")
    config = Path(config).name if config else "default configuration"
    return f"{workload} · profile {space.profile_name} (base: {config}) · {simulation.get('mode', 'time')} mode"


def _change(base: float | None, best: float | None) -> str:
    """Relative change, or the difference when the base is 0."""
    if base is None or best is None:
        return "-"
    if base:
        return f"{100 * (best - base) / abs(base):+.1f} %"
    return f"{best - base:+.4g}"


def print_report(
    out: StudyOutcome, space: SearchSpace, written: dict[str, Path], console: Console | None = None
) -> None:
    """The base config beside the best on each metric, and their weights and args; each table a
    block per row where the terminal is too narrow for it (no name cut)."""
    from rich.console import Console
    from rich.markup import escape

    s = out.settings
    con = console if console is not None else Console()
    dirs = ", ".join(f"{m} ({d})" for m, d in zip(s.metrics, s.directions, strict=True))
    caption = f"tuned on seeds {','.join(map(str, s.sim_seeds))}"
    if out.held_out:
        caption += f"; held out: seeds {','.join(map(str, s.eval_seeds))}"
    shown = list(s.metrics)
    for extra in ("gpu.unallocated_pct", "pods.failed", "gpu.frag_pct.mean", "queueing_delay_s.p90"):
        if (
            extra not in shown
            and out.baseline.evaluation
            and out.baseline.evaluation.values.get(extra) is not None
        ):
            shown.append(extra)

    def row(m: str, seeds: str, b: float | None, v: float | None) -> list[str]:
        name = f"[bold]{m}[/bold]" if m in s.metrics else m  # the metrics tuned for, in bold
        return [name, seeds, _fmt(b), _fmt(v), _change(b, v)]

    rows = []
    for m in shown:
        b = out.baseline.evaluation.values[m] if out.baseline.evaluation else None
        v = out.best.evaluation.values[m] if out.best.evaluation else None
        rows.append(row(m, "tuned", b, v))
    if out.held_out:
        rows += [
            row(m, "held out", out.held_out["baseline"].values[m], out.held_out["best"].values[m]) for m in shown
        ]
    title = f"kubesched tune: base config vs {_label(out.best)}, of {_study(out)}; {dirs}"
    print_table(title, ("metric", "seeds", "base", "best", "change"), rows, right=("base", "best", "change"),
                keys=2, console=con)
    con.print(caption, style="dim", highlight=False)
    weights = [
        [dim.plugin, str(out.baseline.assignment.weights[dim.plugin]), str(out.best.assignment.weights[dim.plugin])]
        for dim in space.weights
    ]
    weights += [
        [a.key, escape(str(out.baseline.assignment.args.get(a.key, "(unset)"))),
         escape(str(out.best.assignment.args.get(a.key)))]
        for a in space.args
    ]
    print_table(f"{space.profile_name}: weights (0: off), args", ("plugin / arg", "base config", "best"), weights,
                right=("base config", "best"), console=con)
    if len(s.metrics) > 1:
        con.print(f"Pareto front: {len(out.pareto)} trial(s): " + ", ".join(_label(r) for r in out.pareto))
    for what, path in written.items():
        con.print(f"{what}: {path}")
