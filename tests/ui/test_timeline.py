"""The timeline moves one snapshot along a run: any step, reached forwards or backwards, equals the
cluster rebuilt from the start; simulate's new files describe the run the UI replays."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from kubesched.ui.sources import open_source
from kubesched.ui.timeline import Timeline


def _state(tl: Timeline, step: int) -> tuple:
    snap = tl.seek(step)
    return (
        [n.name for n in snap.nodes],
        snap.requested.copy(),
        sorted((snap.nodes[r].name, uid) for r, pods in enumerate(snap.pods_on[: snap.n]) for uid in pods),
    )


def _fresh(tl: Timeline, step: int) -> tuple:
    return _state(tl.copy(), step)


def test_seek_back_and_forth_equals_a_rebuild(sim_dir: Path) -> None:
    tl = open_source(str(sim_dir)).timeline
    assert tl is not None and len(tl) > 20
    n = len(tl)
    for step in (n, n // 3, 2 * n // 3, 5, n // 2, 0, n):
        got, want = _state(tl, step), _fresh(tl, step)
        assert got[0] == want[0] and got[2] == want[2]
        assert np.array_equal(got[1], want[1])


def test_cluster_run_adopts_its_final_snapshot() -> None:
    from tests.ui.conftest import PREEMPT

    tl = open_source(None, files=[PREEMPT]).timeline
    assert tl is not None
    end, rebuilt = _state(tl, len(tl)), _fresh(tl, len(tl))
    assert end[2] == rebuilt[2] and np.array_equal(end[1], rebuilt[1])
    assert _state(tl, 0)[2] == [("node-a", "batch-a"), ("node-b", "batch-b")]


def test_simulate_writes_attempts_and_inputs(sim_dir: Path) -> None:
    summary = json.loads((sim_dir / "summary.json").read_text())
    with (sim_dir / "attempts.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == summary["run"]["scheduling_attempts"]
    assert {r["outcome"] for r in rows} <= {"scheduled", "unschedulable", "error"}
    with (sim_dir / "events.csv").open() as f:
        events = list(csv.DictReader(f))
    for r in rows[:50]:
        # the attempt saw the pod's arrival, and nothing after its own start
        seq = int(r["event_seq"])
        before = events[:seq]
        assert any(e["event"] == "arrive" and e["pod"] == r["pod"] for e in before)
        if r["outcome"] == "scheduled":
            assert events[seq]["event"] == "scheduled" and events[seq]["pod"] == r["pod"]
    inputs = json.loads((sim_dir / "inputs.json").read_text())
    assert inputs["synthetic"] == "default" and inputs["seed"] == 3 and inputs["mode"] == "time"
    assert inputs["synth"] == ["nodes.0.count=6", "pods.count=120", "pods.arrivalRate=0.5"]
    assert inputs["config"] is None and not (sim_dir / "config.yaml").exists()
