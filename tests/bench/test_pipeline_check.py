"""bench/pipeline_check.py: placement hashes that two checkouts can compare line by line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "pipeline_check.py"


def placements(*workloads: str) -> list[list[str]]:
    args = [a for w in workloads for a in ("--workload", w)]
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "placements", "--scale", "0.02", *args],
        capture_output=True, text=True, check=True, timeout=300,
    ).stdout
    return [line.split() for line in out.splitlines()]


def test_placement_hash_does_not_depend_on_what_ran_before() -> None:
    both = placements("SchedulingBasic/5000Nodes_10000Pods", "TopologySpreading")
    alone = placements("TopologySpreading")
    assert [row[0] for row in both] == ["SchedulingBasic/5000Nodes_10000Pods", "TopologySpreading/5000Nodes_5000Pods"]
    assert all(int(row[1]) > 0 and len(row[2]) == 16 for row in both)
    assert alone == both[1:]  # pod uids count across a process; the hash keys pods by name


def test_replay_runs_inside_call_tracing() -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "replay", "BestFit", "--pods", "40"],
        capture_output=True, text=True, check=True, timeout=300,
    ).stdout
    assert out.startswith("BestFit: ") and " pods on 10 nodes, " in out
