"""Figures are valid PNGs of the expected size; the report files hold the aggregated numbers."""

from __future__ import annotations

import csv
import json
import struct
from pathlib import Path

from experiment_helpers import record

from kubesched.experiment.aggregate import aggregate, compare
from kubesched.experiment.figures import draw_all
from kubesched.experiment.grid import RunSpec
from kubesched.experiment.published import POLICIES
from kubesched.experiment.report import (
    read_run,
    summary_markdown,
    write_aggregate,
    write_comparison,
    write_run,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC and data[12:16] == b"IHDR" and data[-8:-4] == b"IEND"
    return struct.unpack(">II", data[16:24])


def _records() -> list:
    recs = []
    for t in ("default", "gpushare40", "gpushare60"):
        for i, p in enumerate(POLICIES):
            for s in (1, 2, 3):
                base = 4.0 + i + 0.1 * s
                recs.append(record(t, p, s, {lvl: base + max(0.0, 100 - lvl) for lvl in range(0, 131)}))
    return recs


def test_figures_are_pngs(tmp_path: Path) -> None:
    agg = aggregate(_records())
    paths = draw_all(agg, ["default", "gpushare40", "gpushare60"], list(POLICIES), tmp_path)
    names = sorted(p.name for p in paths)
    assert names == [
        "bars_default.png", "bars_gpushare.png", "curve_default.png", "curve_gpushare40.png",
        "curve_gpushare60.png", "frag_default.png",
    ]
    for p in paths:
        w, h = _png_size(p)
        assert w > 300 and h > 300
    # the gpushare bars have two panels: wider than the single-trace default one
    assert _png_size(tmp_path / "bars_gpushare.png")[0] > _png_size(tmp_path / "bars_default.png")[0]


def test_report_files(tmp_path: Path) -> None:
    recs = _records()
    agg = aggregate(recs)
    write_aggregate(tmp_path, agg)
    rows = list(csv.DictReader(open(tmp_path / "aggregate.csv")))
    row = next(r for r in rows if (r["trace"], r["policy"], r["metric"], r["arrived_pct"]) ==
               ("default", "FGD", "unallocated", "100"))
    assert (row["n"], float(row["mean"]), float(row["sd"])) == ("3", 9.2, 0.1)  # 9.1, 9.2, 9.3
    tree = json.loads((tmp_path / "aggregate.json").read_text())["stats"]
    assert tree["default"]["FGD"]["unallocated"]["100"]["median"] == 9.2
    comps = compare(agg)
    write_comparison(tmp_path, comps)
    crow = next(r for r in csv.DictReader(open(tmp_path / "comparison.csv"))
                if (r["trace"], r["policy"], r["arrived_pct"]) == ("default", "FGD", "100"))
    assert float(crow["diff"]) == round(9.2 - 4.77, 3) and crow["within_spread"] == "no"
    md = summary_markdown(comps, list(POLICIES))
    assert "## default @ 100 % arrived" in md and "| FGD | 3 | 9.20 ± 0.10 | 4.77 ± 0.11 | 4.43 |" in md
    assert "**DIFFERENT**" in md  # synthetic FGD is worst: the ranking cannot match


def test_run_record_round_trip(tmp_path: Path) -> None:
    rec = record("default", "FGD", 7, {100: 4.5})
    write_run(tmp_path, rec)
    back = read_run(tmp_path, RunSpec("default", "FGD", 7, "."))
    assert back is not None and back.to_json() == rec.to_json()
    assert (tmp_path / "runs/default/FGD/seed-7.csv").read_text().splitlines()[101].startswith("100,4.5,")
    assert read_run(tmp_path, RunSpec("default", "FGD", 8, ".")) is None
    assert read_run(tmp_path, RunSpec("default", "FGD", 7, ".", tune=1.2)) is None  # other settings
    assert read_run(tmp_path, RunSpec("default", "FGD", 7, ".", max_pods=100)) is None
