"""The printed tables of ``experiment elastic`` and ``experiment fgd`` at 80, 120 and 200 columns:
every mode, profile, trace and policy name and every figure whole on one line, nothing cut ("…"),
no line wider than the terminal (issue 29: the elastic table was a fixed 98-column f-string, the
fgd table wrapped its names at 80 columns); where the table fits, it is the one table."""

from __future__ import annotations

import pytest
from cli_testlib import WIDTHS, max_line, render, whole

from kubesched.autoscale.experiment import COLUMNS, print_means
from kubesched.autoscale.scenario import PROFILES, all_modes
from kubesched.kit.report import pm, print_table


def _aggs() -> list[dict]:
    aggs = []
    for i, mode in enumerate(all_modes()):
        for profile in PROFILES:
            aggs.append({
                "mode": mode, "profile": profile, "gpu_hours": 123456.0 + i, "gpu_hours_vs_static_peak": 0.8765,
                "failed_pct": 12.345, "pending_p95_s": 1234.5, "pending_p99_s": 98765.4,
                "pending_over_60s_pct": 45.67, "allocation_efficiency": None if i == 0 else 0.91,
                "peak_nodes": 321.0, "evictions": 4567.0, "meets_goal": i % 2 == 0,
            })  # fmt: skip
    return aggs


@pytest.mark.parametrize("width", WIDTHS)
def test_elastic_means_whole(width):
    aggs = _aggs()
    text = render(lambda c: print_means(aggs, console=c), width)
    tokens = set(all_modes()) | set(PROFILES) | {h for h, _, _ in COLUMNS[2:]}  # mode, profile: the head line
    tokens |= {"123456", "0.88", "12.35", "1234.5", "98765.4", "45.67", "0.91", "321", "4567", "yes", "no"}
    assert not whole(text, tokens), f"cut at {width} columns: {whole(text, tokens)}\n{text}"
    assert "…" not in text and max_line(text) <= width
    wide = sum("│ karpenter" in line for line in text.splitlines()) == len(PROFILES)
    assert wide == (width >= 120), text  # the table where it fits (~100 columns), blocks at 80


FGD_HEADER = ("trace", "arrived", "policy", "n", "measured", "published", "within spread")
POLICIES = ("Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD")


@pytest.mark.parametrize("width", WIDTHS)
def test_fgd_summary_whole(width, monkeypatch, capsys):
    """As ``experiment fgd`` prints it: on stdout, the terminal's width from $COLUMNS."""
    monkeypatch.setenv("COLUMNS", str(width))
    rows = [
        (trace, f"{lvl} %", p, "10", pm(12.3456, 1.234), pm(11.1, 0.9), "[green]yes" if p == "FGD" else "[red]no")
        for trace in ("default", "multi_gpu_50", "gpushare100") for lvl in (100, 130) for p in POLICIES
    ]
    print_table("kubesched experiment fgd → out/summary.md", FGD_HEADER, rows, right=("n",), keys=3)
    text = capsys.readouterr().out
    tokens = set(FGD_HEADER[3:]) | set(POLICIES) | {"multi_gpu_50", "gpushare100", "130 %", "12.35 ± 1.23", "11.10 ± 0.90"}
    assert not whole(text, tokens), f"cut at {width} columns: {whole(text, tokens)}\n{text}"
    assert "…" not in text and "[green]" not in text and max_line(text) <= width
    assert sum("GpuClustering" in line for line in text.splitlines()) == 6  # a row (or block) per row
