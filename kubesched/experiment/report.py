"""Files of an experiment folder.

- ``runs/<trace>/<policy>/seed-<s>.csv``: the binned curves of one run (level 0..130: unallocated %,
  frag amount %, frag ratio %); ``.json`` beside it holds the whole ``RunRecord`` (read back by
  ``--resume``).
- ``runs.csv``: one row per run (failed pods, unallocated at 100/130 %, frag at 100 %, seconds).
- ``aggregate.csv`` / ``aggregate.json``: n, mean, sd, median, q25, q75, min, max per trace x policy
  x metric x level.
- ``comparison.csv`` and ``summary.md``: measured vs published, the within-spread verdicts and the
  ranking check.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from kubesched.experiment import published
from kubesched.experiment.aggregate import Comparison, ranking
from kubesched.experiment.grid import RunSpec
from kubesched.experiment.runner import LEVELS, METRICS, RunRecord
from kubesched.kit.report import markdown_table, pm, write_json, write_rows
from kubesched.kit.stats import Stats

STAT_FIELDS = ("n", "mean", "sd", "median", "q25", "q75", "low", "high")


def _num(v: Any, digits: int = 4) -> Any:
    if isinstance(v, float):
        return "" if not math.isfinite(v) else round(v, digits)
    return v


def run_paths(out: Path, spec: RunSpec | RunRecord) -> tuple[Path, Path]:
    base = out / "runs" / spec.trace / spec.policy / f"seed-{spec.seed}"
    return base.with_suffix(".csv"), base.with_suffix(".json")


def write_run(out: Path, rec: RunRecord) -> None:
    csv_path, json_path = run_paths(out, rec)
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    header = ["arrived_pct", *(f"{m}_pct" for m in METRICS)]
    write_rows(csv_path, header, ([lvl, *(_num(rec.curves[m][lvl]) for m in METRICS)] for lvl in LEVELS))
    write_json(json_path, rec.to_json(), atomic=True)


def read_run(out: Path, spec: RunSpec) -> RunRecord | None:
    """The finished run of ``spec`` in ``out``, if there is one made with the same settings."""
    _, json_path = run_paths(out, spec)
    try:
        rec = RunRecord.from_json(json.loads(json_path.read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return rec if rec.matches(spec) else None


RUN_COLUMNS = (
    "trace", "policy", "seed", "pods", "events", "failed", "nodes", "gpus",
    "unallocated_100", "unallocated_130", "frag_amount_100", "frag_ratio_100", "run_seconds", "total_seconds",
    "cpu_seconds", "gpu_model",
)


def write_runs_csv(out: Path, records: Iterable[RunRecord]) -> Path:
    rows = (
        [
            r.trace, r.policy, r.seed, r.pods, r.events, r.failed, r.nodes, r.gpus,
            _num(r.at("unallocated", 100)), _num(r.at("unallocated", 130)),
            _num(r.at("frag_amount", 100)), _num(r.at("frag_ratio", 100)),
            r.run_seconds, r.total_seconds, _num(r.cpu_seconds, 3), r.gpu_model,
        ]
        for r in sorted(records, key=lambda r: (r.trace, r.policy, r.seed))
    )
    return write_rows(out / "runs.csv", RUN_COLUMNS, rows)


def write_aggregate(out: Path, agg: dict[tuple[str, str, str, int], Stats]) -> tuple[Path, Path]:
    rows = (
        [trace, policy, metric, lvl, *(_num(getattr(st, k)) for k in STAT_FIELDS)]
        for (trace, policy, metric, lvl), st in sorted(agg.items())
    )
    csv_path = write_rows(out / "aggregate.csv", ["trace", "policy", "metric", "arrived_pct", *STAT_FIELDS], rows)
    tree: dict[str, Any] = {}
    for (trace, policy, metric, lvl), st in sorted(agg.items()):
        node = tree.setdefault(trace, {}).setdefault(policy, {}).setdefault(metric, {})
        node[str(lvl)] = {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                          for k, v in ((k, getattr(st, k)) for k in STAT_FIELDS)}
    json_path = write_json(out / "aggregate.json", {"source": "kubesched experiment fgd", "stats": tree}, indent=1)
    return csv_path, json_path


def write_comparison(out: Path, comps: Sequence[Comparison]) -> Path:
    header = [
        "trace", "policy", "arrived_pct", "n", "measured_mean", "measured_sd", "published_mean", "published_sd",
        "diff", "abs_diff", "two_se", "within_2se", "in_published_range", "within_spread",
    ]
    rows = (
        [
            c.trace, c.policy, c.level, c.measured.n, _num(c.measured.mean, 3), _num(c.measured.sd, 3),
            c.published.mean, "" if c.published.sd is None else c.published.sd, _num(c.diff, 3),
            _num(abs(c.diff), 3), _num(2 * c.se, 3), _flag(c.within_2se), _flag(c.in_range), _flag(c.within),
        ]
        for c in comps
    )
    return write_rows(out / "comparison.csv", header, rows)


def comparison_rows(comps: Sequence[Comparison]) -> list[dict[str, Any]]:
    """The comparison as the ``-o json`` document holds it: numbers, or null where there is none."""

    def num(v: float | None) -> float | None:
        return None if v is None or not math.isfinite(v) else v

    return [
        {
            "trace": c.trace, "policy": c.policy, "arrived_pct": c.level, "n": c.measured.n,
            "measured_mean": num(c.measured.mean), "measured_sd": num(c.measured.sd),
            "published_mean": c.published.mean, "published_sd": c.published.sd, "diff": num(c.diff),
            "within_spread": c.within,
        }
        for c in comps
    ]


def _flag(v: bool | None) -> str:
    return "" if v is None else ("yes" if v else "no")


def summary_markdown(comps: Sequence[Comparison], policies: Sequence[str]) -> str:
    """Per trace and level: measured vs published, |diff|, within spread; then the ranking verdict."""
    order = {p: i for i, p in enumerate(policies)}
    lines = [
        "# FGD reproduction: measured vs published unallocated GPU %",
        "",
        f"Published: {published.SOURCE}.",
        "Within spread: |mean diff| ≤ 2·SE (SE of the difference of the two means) or inside the "
        "published 10-seed range (default @100 % only).",
        "",
    ]
    keys = sorted({(c.trace, c.level) for c in comps}, key=lambda k: (k[0] != "default", k[0], k[1]))
    for trace, level in keys:
        cs = sorted((c for c in comps if c.trace == trace and c.level == level), key=lambda c: order.get(c.policy, 99))
        header = ("policy", "n", "measured mean ± sd", "published mean ± sd", "abs diff", "2·SE", "within spread")
        rows = (
            (
                c.policy, c.measured.n, pm(c.measured.mean, c.measured.sd), pm(c.published.mean, c.published.sd),
                f"{abs(c.diff):.2f}", "" if not math.isfinite(c.se) else f"{2 * c.se:.2f}", _flag(c.within) or "n/a",
            )
            for c in cs
        )
        lines += [f"## {trace} @ {level} % arrived", "", *markdown_table(header, rows)]
        if len(cs) > 1:
            rk = ranking(cs)
            verdict = "same" if rk.exact else ("consistent" if rk.consistent else "DIFFERENT")
            note = "" if rk.exact else " (swapped: " + ", ".join(f"{a}<{b}" for a, b in rk.swaps) + ")"
            lines += [
                "",
                f"Ranking (least unallocated first): measured {' < '.join(rk.measured)}; "
                f"published {' < '.join(rk.published)}: **{verdict}**{note}.",
            ]
        lines.append("")
    lines += [
        "Ranking: *same* = identical order; *consistent* = only pairs the paper itself cannot separate "
        "(published gap ≤ 2·SE) are swapped; *DIFFERENT* otherwise.",
        "",
    ]
    return "\n".join(lines)


def write_summary(out: Path, comps: Sequence[Comparison], policies: Sequence[str]) -> Path:
    path = out / "summary.md"
    path.write_text(summary_markdown(comps, policies))
    return path
