"""`kubesched simulate` (time mode) and Permit: waiting pods are released at exactly their timeout
on the virtual clock, not at the next timeline event, and a gang that cannot complete ends the run."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from kubesched.cli import main

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint: {enabled: [{name: Coscheduling}]}
    queueSort: {enabled: [{name: Coscheduling}], disabled: [{name: "*"}]}
    postFilter: {disabled: [{name: Coscheduling}]}
  pluginConfig:
  - name: Coscheduling
    args: {permitWaitingTimeSeconds: 10}
"""

TIMEOUT = "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin Coscheduling."


def manifests(node_cpu: str, arrivals: list[float], extra: str = "") -> str:
    docs = [
        f"""apiVersion: v1
kind: Node
metadata: {{name: n1}}
status: {{allocatable: {{cpu: "{node_cpu}", memory: 8Gi, pods: "10"}}}}""",
        """apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: pg, namespace: default}
spec: {minMember: 3}""",
    ]
    for i, t in enumerate(arrivals):
        docs.append(
            f"""apiVersion: v1
kind: Pod
metadata:
  name: pg-{i}
  labels: {{scheduling.x-k8s.io/pod-group: pg}}
  annotations: {{kubesched.io/arrival-time: "{t}", kubesched.io/duration: "100"}}
spec: {{containers: [{{name: c, resources: {{requests: {{cpu: "2"}}}}}}]}}"""
        )
    return "\n---\n".join(docs) + extra


def simulate(tmp_path: Path, cluster: str, capsys: pytest.CaptureFixture[str]) -> tuple[list[dict], dict]:
    (tmp_path / "cluster.yaml").write_text(cluster)
    (tmp_path / "sched.yaml").write_text(CONFIG)
    out = tmp_path / "out"
    argv = ["simulate", "-f", str(tmp_path / "cluster.yaml"), "--config", str(tmp_path / "sched.yaml")]
    rc = main([*argv, "--out-dir", str(out), "--no-plots", "--no-progress", "-o", "json", "--seed", "1"])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    with (out / "events.csv").open() as f:
        return list(csv.DictReader(f)), summary


def test_a_gang_that_cannot_complete_is_released_at_exactly_its_timeout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Room for two of three members; nothing else happens until t=100: the two that fit wait at
    Permit from t=5 and are released at t=15, and the run ends (the gang does not spin forever)."""
    later = """
---
apiVersion: v1
kind: Pod
metadata:
  name: later
  annotations: {kubesched.io/arrival-time: "100", kubesched.io/duration: "5"}
spec: {containers: [{name: c, resources: {requests: {cpu: "100m"}}}]}"""
    events, summary = simulate(tmp_path, manifests("5", [5, 5, 5], later), capsys)
    released = [(float(e["time"]), e["pod"]) for e in events if e["message"] == TIMEOUT]
    assert released[:2] == [(15.0, "default/pg-0"), (15.0, "default/pg-1")]
    assert not any(e["event"] == "scheduled" and e["pod"].startswith("default/pg-") for e in events)
    assert summary["pods"]["scheduled"] == 1  # ``later`` fits beside the gang's held members
    assert summary["pods"]["failed"] == 3 and summary["pods"]["running_at_end"] == 0


def test_a_released_gang_completes_when_a_node_joins_later(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Room for two of three members until a second node joins at t=20: the first two are released
    at t=15 (their timeout, not the node's arrival), and all three start together at t=20."""
    n2 = """
---
apiVersion: v1
kind: Node
metadata:
  name: n2
  annotations: {kubesched.io/add-time: "20"}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}"""
    events, summary = simulate(tmp_path, manifests("4", [5, 5, 5], n2), capsys)
    released = [(float(e["time"]), e["pod"]) for e in events if e["message"] == TIMEOUT]
    assert released[:2] == [(15.0, "default/pg-0"), (15.0, "default/pg-1")]
    scheduled = sorted((float(e["time"]), e["pod"]) for e in events if e["event"] == "scheduled")
    assert scheduled == [(20.0, "default/pg-0"), (20.0, "default/pg-1"), (20.0, "default/pg-2")]
    assert summary["pods"]["scheduled"] == 3
