"""`schedule` accounts for every pending pod: victims and nominations of preemptors, and why the
pods it left out were not tried; `explain` states its basis and the pod's gates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cli_testlib import NODES, render, write_cluster

from kubesched.cli import main
from kubesched.render import explain_table, schedule_table
from kubesched.testing import make_node, make_pod


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def schedule_json(capsys, path: str, *extra: str) -> dict:
    code, out, err = run(capsys, "schedule", "-f", path, "--seed", "1", "-o", "json", *extra)
    assert code == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> str:
    return write_cluster(tmp_path_factory.mktemp("outcomes"))


def test_every_unbound_pod_is_accounted_for_once(capsys, cluster):
    data = schedule_json(capsys, cluster)
    docs = list(yaml.safe_load_all(Path(cluster).read_text()))
    unbound = {f"{d['metadata']['namespace']}/{d['metadata']['name']}" for d in docs if d["kind"] == "Pod" and not d["spec"].get("nodeName")}
    listed = [p["pod"] for p in data["placements"]] + [e["pod"] for e in data["skipped"]]
    assert sorted(listed) == sorted(unbound)


def test_skipped_pods_and_their_reasons(capsys, cluster):
    data = schedule_json(capsys, cluster)
    skipped = {e["pod"]: e for e in data["skipped"]}
    assert skipped == {
        "ml/train-gated": {
            "pod": "ml/train-gated",
            "reason": "SchedulingGated",
            "plugin": "SchedulingGates",
            "message": "waiting for scheduling gates: [example.com/quota]",
        },
        "ml/volcano-job-0": {
            "pod": "ml/volcano-job-0",
            "reason": "OtherScheduler",
            "plugin": None,
            "message": 'spec.schedulerName "volcano" matches no profile (default-scheduler)',
        },
        "batch/report-28391200-zx9k": {
            "pod": "batch/report-28391200-zx9k",
            "reason": "Terminal",
            "plugin": None,
            "message": "status.phase is Succeeded: the pod has finished",
        },
    }
    # listed in input order
    assert [e["pod"] for e in data["skipped"]] == ["ml/train-gated", "ml/volcano-job-0", "batch/report-28391200-zx9k"]
    # a pod being deleted is taken from the queue and skipped there, with kube-scheduler's message
    leaving = next(p for p in data["placements"] if p["pod"] == "web/web-frontend-old-5c4b3a2-rr2dd")
    assert leaving["node"] is None
    assert leaving["message"] == "skip schedule deleting pod: web/web-frontend-old-5c4b3a2-rr2dd"


def test_preemption_victims_and_nomination(capsys, cluster):
    data = schedule_json(capsys, cluster)
    by_pod = {p["pod"]: p for p in data["placements"]}
    critical = by_pod["critical/ingest-priority-0"]
    # zone a's untainted nodes are full of priority-0 batch pods: one is evicted, the pod is nominated there
    assert critical["node"] == critical["nominated_node"]
    (victim,) = critical["victims"]
    assert victim["node"] == critical["node"] and victim["pod"].startswith("batch/batch-etl-28391234-")
    assert NODES.index(victim["node"]) in (0, 3, 6)
    # nobody else preempted or was nominated
    others = [p for p in data["placements"] if p["pod"] != "critical/ingest-priority-0"]
    assert all(p["victims"] == [] and p["nominated_node"] is None for p in others)


def test_nominated_but_still_pending(capsys, tmp_path):
    """A preemptor whose victims are still terminating keeps its nomination and fails this run."""
    victim = make_pod("old", requests={"cpu": "1"}, node="n1", priority=0)
    victim["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    docs = [make_node("n1", cpu="1", memory="4Gi"), victim, make_pod("urgent", requests={"cpu": "1"}, priority=1000)]
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    data = schedule_json(capsys, str(path))
    (p,) = data["placements"]
    assert p["node"] is None and p["nominated_node"] == "n1" and p["victims"] == []
    assert p["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")


def test_table_shows_victims_and_skipped(capsys, cluster):
    data = schedule_json(capsys, cluster)
    critical = next(p for p in data["placements"] if p["pod"] == "critical/ingest-priority-0")
    text = render(lambda c: schedule_table(_batch(data), console=c), 200)
    line = next(line for line in text.splitlines() if "after preempting" in line)
    assert critical["nominated_node"] in line and critical["victims"][0]["pod"] in line
    assert "not scheduled (SchedulingGated): waiting for scheduling gates: [example.com/quota]" in text
    assert "3 not scheduled (1 SchedulingGated, 1 OtherScheduler, 1 Terminal)" in text
    assert "1 pod(s) preempted" in text


def test_namespace_flag_shows_one_namespace_of_the_whole_run(capsys, cluster):
    every = schedule_json(capsys, cluster)
    for ns in ("batch", "critical", "ml", "web"):
        shown = schedule_json(capsys, cluster, "-n", ns)
        assert shown == {
            "placements": [p for p in every["placements"] if p["pod"].startswith(f"{ns}/")],
            "skipped": [e for e in every["skipped"] if e["pod"].startswith(f"{ns}/")],
        }
        assert shown["placements"] or shown["skipped"]
    # a shown pod's victims are shown whatever their namespace
    critical = schedule_json(capsys, cluster, "--namespace", "critical")["placements"]
    assert [v["pod"] for p in critical for v in p["victims"]] == ["batch/batch-etl-28391234-3"]


def test_namespace_flag_table_numbers_and_preemptions_from_elsewhere(capsys, cluster):
    every = schedule_json(capsys, cluster)
    order = [p["pod"] for p in every["placements"]]
    code, out, err = run(capsys, "schedule", "-f", cluster, "--seed", "1", "-n", "batch")
    assert code == 0 and err == ""
    text = " ".join(out.split())
    assert "5 pending pod(s) in namespace batch (of 24)" in text
    for pod in ("batch/cron-cleanup-29000000-00", "batch/cron-cleanup-29000000-03"):
        # numbered by its place in the whole run, where the other namespaces' pods came first
        assert f"│ {order.index(pod) + 1} │ {pod}" in out
    assert "web/" not in out and "critical/" not in text.split("namespaces:")[0]
    assert "4 placed, 0 unschedulable, 1 not scheduled (1 Terminal)" in text
    assert "1 pod(s) of batch preempted for pods of other namespaces: batch/batch-etl-28391234-3 (by critical/ingest-priority-0)" in text


def test_namespace_flag_with_no_pending_pod(capsys, cluster):
    code, out, err = run(capsys, "schedule", "-f", cluster, "-n", "kube-system", "-o", "json", "--seed", "0")
    assert code == 0 and json.loads(out) == {"placements": [], "skipped": []}
    assert err == 'kubesched: no pending pod in namespace "kube-system" (24 in all)\n'


def _batch(data: dict):  # noqa: ANN202
    from kubesched.batch import BatchResult

    return BatchResult(data["placements"], data["skipped"], len(NODES), ["default-scheduler"])


# ---- explain ----------------------------------------------------------------------------------
def explain_json(capsys, *argv: str) -> dict:
    code, out, err = run(capsys, "explain", *argv, "--seed", "1", "-o", "json")
    assert code == 0, err
    return json.loads(out)


def test_explain_states_the_gate(capsys, cluster):
    data = explain_json(capsys, "-f", cluster, "ml/train-gated")
    assert data["gated"] == {"plugin": "SchedulingGates", "message": "waiting for scheduling gates: [example.com/quota]"}
    assert data["selected"] is not None  # the verdict it would get once ungated
    text = render(lambda c: explain_table(data, console=c), 120)
    assert "Gated: waiting for scheduling gates: [example.com/quota] (SchedulingGates)" in " ".join(text.split())


def test_explain_basis_input_versus_after_schedule(capsys):
    """On the shipped example, explain selects a node for ml/train-8gpu that schedule reports
    unschedulable: the other pending pods take the GPUs first. --after-schedule agrees with schedule."""
    before = explain_json(capsys, "ml/train-8gpu")
    assert before["basis"] == "input" and before["selected"] is not None
    sched = {p["pod"]: p for p in json.loads(run(capsys, "schedule", "--seed", "1", "-o", "json")[1])["placements"]}
    assert sched["ml/train-8gpu"]["node"] is None
    after = explain_json(capsys, "ml/train-8gpu", "--after-schedule")
    assert after["basis"] == "after-schedule" and after["selected"] is None
    assert after["schedule"] == sched["ml/train-8gpu"]
    assert after["message"].startswith("0/12 nodes are available:")
    text = " ".join(render(lambda c: explain_table(before, console=c), 120).split())
    assert "Basis: the input cluster as given; the other pending pods are not placed first" in text
    text = " ".join(render(lambda c: explain_table(after, console=c), 120).split())
    assert "Basis: the cluster after the other pending pods were placed" in text


def test_explain_after_schedule_of_a_placed_pod(capsys, cluster):
    """A pod schedule placed is taken off its node again and judged beside everything else."""
    after = explain_json(capsys, "-f", cluster, "critical/ingest-priority-0", "--after-schedule")
    placed = after["schedule"]["node"]
    assert placed and after["schedule"]["victims"]
    # its victim is gone, so the node it was placed on is feasible again
    node = next(n for n in after["nodes"] if n["name"] == placed)
    assert node["feasible"]


def test_explain_namespace_flag(capsys, cluster):
    a = explain_json(capsys, "-f", cluster, "-n", "ml", "train-llm-huge")
    b = explain_json(capsys, "-f", cluster, "ml/train-llm-huge")
    assert a == b and a["pod"] == "ml/train-llm-huge"
    code, _, err = run(capsys, "explain", "-f", cluster, "-n", "web", "ml/train-llm-huge")
    assert code == 2 and 'names namespace "ml" but -n says "web"' in err
    code, _, err = run(capsys, "explain", "-f", cluster, "train-llm-huge")  # default namespace
    assert code == 2 and 'pod "default/train-llm-huge" not found' in err
