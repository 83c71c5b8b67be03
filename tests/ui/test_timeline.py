"""The timeline moves one snapshot along a run: any step, reached forwards or backwards, equals the
cluster rebuilt from the start (the GPUs each pod holds included); simulate's new files describe
the run the UI replays."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from kubesched.ui.sources import open_source
from kubesched.ui.timeline import Timeline
from kubesched.ui.views import gpu_columns
from tests.ui.conftest import ui_client


def _state(tl: Timeline, step: int) -> tuple:
    snap = tl.seek(step)
    return (
        [n.name for n in snap.nodes],
        snap.requested.copy(),
        sorted((snap.nodes[r].name, uid) for r, pods in enumerate(snap.pods_on[: snap.n]) for uid in pods),
        gpu_columns(snap)[1].tolist(),  # milli used per GPU
    )


def _fresh(tl: Timeline, step: int) -> tuple:
    return _state(tl.copy(), step)


def test_seek_back_and_forth_equals_a_rebuild(sim_dir: Path) -> None:
    tl = open_source(str(sim_dir)).timeline
    assert tl is not None and len(tl) > 20
    n = len(tl)
    for step in (n, n // 3, 2 * n // 3, 5, n // 2, 0, n):
        got, want = _state(tl, step), _fresh(tl, step)
        assert got[0] == want[0] and got[2] == want[2] and got[3] == want[3]
        assert np.array_equal(got[1], want[1])


def test_gpus_at_a_step_do_not_depend_on_the_order_steps_were_visited_in(sim_dir: Path) -> None:
    # the default configuration records no GPU indices: the UI seats each pod on its GPUs
    # itself, and a pod re-added by moving back (a completed pod) must sit where it sat
    with (sim_dir / "pods.csv").open() as f:
        assert not any(r.get("gpu_index") for r in csv.DictReader(f))
    forward, scrambled = (ui_client(open_source(str(sim_dir))) for _ in range(2))
    n = forward.get("/api/meta").json()["steps"]
    want = {s: forward.get(f"/api/cluster?step={s}").json() for s in range(n + 1)}
    busy = [s for s, d in want.items() if sum(u for row in d["nodes"]["gpu_used"] for u in row if u > 0)]
    assert len(busy) > n // 2  # GPUs are in use over most of the run
    assert sum(s.kind == "delete" for s in open_source(str(sim_dir)).timeline.steps) > 20  # pods to re-add
    order = [n, *range(n - 1, -1, -3), *np.random.default_rng(7).permutation(n + 1).tolist()]
    for s in order:
        assert scrambled.get(f"/api/cluster?step={s}").json() == want[s], f"step {s}"


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
