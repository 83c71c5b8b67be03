"""The output folder: CSV columns, JSON keys, PNG files, the self-contained HTML report."""

from __future__ import annotations

import base64
import csv
import json
import re
from pathlib import Path

import pytest
from sim_helpers import gpu_cfg, node, pod

from kubesched.sim.metrics import ARRIVAL_BIN_COLUMNS, EVENT_COLUMNS, TIME_BIN_COLUMNS
from kubesched.sim.report import write_outputs
from kubesched.sim.runner import simulate
from kubesched.sim.workload import Workload

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SUMMARY_KEYS = {
    "mode",
    "seed",
    "source",
    "profiles",
    "config",
    "nodes",
    "pods",
    "failed_by_reason",
    "failed_messages",
    "gated_messages",
    "allocation_pct",
    "gpu",
    "queueing_delay_s",
    "utilization_pct",
    "arrived_workload_pct",
    "workload_resource",
    "run",
    "skipped_rows",
}


def small_gpu_workload() -> Workload:
    nodes = [node(f"g{i}", cpu="8", mem="32Gi", gpus=2) for i in range(3)]
    pods = [pod(f"p{i}", "1", gpus=1, milli=300 + 100 * (i % 5)) for i in range(14)]
    return Workload(nodes, pods, [float(3 * i) for i in range(14)], [20.0 + i for i in range(14)])


def header(path: Path) -> list[str]:
    with path.open() as f:
        return next(csv.reader(f))


@pytest.mark.parametrize("mode", ["time", "arrival"])
def test_every_output_is_written(tmp_path: Path, mode: str) -> None:
    cfg, reg = gpu_cfg("GpuPackingScore")
    res = simulate(cfg, small_gpu_workload(), mode=mode, seed=2, registry=reg, bins=10)
    write_outputs(res, tmp_path, plots=mode == "time")
    assert header(tmp_path / "events.csv") == list(EVENT_COLUMNS)
    bins_cols = TIME_BIN_COLUMNS if mode == "time" else ARRIVAL_BIN_COLUMNS
    assert header(tmp_path / "bins.csv") == list(bins_cols)
    assert header(tmp_path / "pods.csv")[:3] == ["pod", "arrival", "state"]
    with (tmp_path / "pods.csv").open() as f:
        assert sum(1 for _ in f) == 15  # header + one row per pod
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert set(summary) == SUMMARY_KEYS
    assert summary["mode"] == mode and summary["pods"]["total"] == 14
    assert summary["gpu"]["fragmentation_available"] is True
    html = (tmp_path / "report.html").read_text()
    assert "<table>" in html and "http://" not in html and "https://" not in html  # no network needed
    if mode == "time":
        pngs = sorted(tmp_path.glob("*.png"))
        assert {p.stem for p in pngs} == {"allocation", "gpu", "queue", "utilization"}
        for p in pngs:
            data = p.read_bytes()
            assert len(data) > 1000 and data.startswith(PNG_SIGNATURE)
        embedded = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", html)
        assert len(embedded) == len(pngs)
        assert {base64.b64decode(e) for e in embedded} == {p.read_bytes() for p in pngs}
    else:
        assert not list(tmp_path.glob("*.png")) and "data:image/png" not in html


def test_csv_values_are_plain_numbers(tmp_path: Path) -> None:
    cfg, reg = gpu_cfg("BestFitScore")
    res = simulate(cfg, small_gpu_workload(), seed=0, registry=reg, bins=5)
    write_outputs(res, tmp_path, plots=False)
    with (tmp_path / "events.csv").open() as f:
        rows = list(csv.DictReader(f))
    sched = [r for r in rows if r["event"] == "scheduled"]
    assert len(sched) == 14
    assert all(float(r["queue_delay"]) >= 0 and float(r["gpu_alloc_pct"]) > 0 for r in sched)
    assert all(r["queue_delay"] == "" for r in rows if r["event"] == "arrive")  # NaN is written empty
