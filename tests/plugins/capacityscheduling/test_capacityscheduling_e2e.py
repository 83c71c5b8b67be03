"""Elastic quotas end to end: borrowing, reclaiming by preemption, max, PDBs, the CLI, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from quota_testlib import cpu_node, cpu_pod, cpu_quota, quota, start

from kubesched.app import example_path
from kubesched.cli import main

QUOTAS = [cpu_quota("web", "4", "8"), cpu_quota("batch", "4", "8")]


def test_a_namespace_borrows_unused_min_up_to_the_total() -> None:
    quotas = [cpu_quota("web", "4", "8"), cpu_quota("batch", "4", "16")]
    run = start([cpu_node("n1", "16"), *quotas, *(cpu_pod(f"b{i}", "batch") for i in range(5))])
    run.until_idle()
    # 4 pods (8 CPUs) fit the mins of both quotas together; the fifth would go beyond them
    assert sorted(run.bound) == ["b0", "b1", "b2", "b3"]
    assert run.results["b4"].message.startswith(
        "0/1 nodes are available: Pod batch/b4 is rejected in PreFilter because total ElasticQuota used is more than min."
    )
    assert run.preempted == []  # nothing to take back from: batch is the borrower


def test_the_lender_reclaims_its_min_by_preempting_the_borrower() -> None:
    bound = [cpu_pod(f"b{i}", "batch", node="n1") for i in range(3)]  # batch uses 6: 2 borrowed from web
    run = start([cpu_node("n1", "8"), *QUOTAS, *bound, cpu_pod("w0", "web"), cpu_pod("w1", "web")])
    run.until_idle()
    assert run.bound == {"w0": "n1", "w1": "n1"}
    assert len(run.preempted) == 1 and run.preempted[0].startswith("b")  # exactly the borrowed share
    plugin = run.sched.frameworks["default-scheduler"].plugins["CapacityScheduling"]
    infos = plugin.infos(run.sched.snapshot)
    assert (infos["web"].used["cpu"], infos["batch"].used["cpu"]) == (4000, 4000)


def test_a_namespace_within_min_never_loses_pods_to_cross_quota_preemption() -> None:
    bound = [cpu_pod(f"b{i}", "batch", node="n1") for i in range(2)] + [cpu_pod(f"w{i}", "web", node="n1") for i in range(2)]
    run = start([cpu_node("n1", "8"), *QUOTAS, *bound, cpu_pod("w2", "web", prio=1000)])
    run.until_idle()
    # web would go above its min (4) while all mins are in use: only its own lower-priority pods
    # could make room, and preempting one of them leaves web at its min again
    assert run.results["w2"].node == "n1"
    assert run.preempted in (["w0"], ["w1"])


def test_max_caps_a_namespace_even_with_room_on_the_node() -> None:
    run = start([cpu_node("n1", "32"), cpu_quota("web", "4", "4"), cpu_quota("batch", "12", "16"),
                 *(cpu_pod(f"w{i}", "web") for i in range(3))])
    run.until_idle()
    assert sorted(run.bound) == ["w0", "w1"]
    assert run.results["w2"].message.startswith(
        "0/1 nodes are available: Pod web/w2 is rejected in PreFilter because ElasticQuota web is more than Max."
    )


def test_victims_protected_by_a_pod_disruption_budget_are_spared() -> None:
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "keep", "namespace": "batch"},
        "spec": {"selector": {"matchLabels": {"app": "keep"}}},
        "status": {"disruptionsAllowed": 0},
    }
    docs = [
        cpu_node("n1", "2"),
        cpu_node("n2", "2"),
        cpu_quota("web", "2", "4"),
        cpu_quota("batch", "2", "4"),
        pdb,
        cpu_pod("b-keep", "batch", node="n1", labels={"app": "keep"}),
        cpu_pod("b-free", "batch", node="n2"),
        cpu_pod("w0", "web"),
    ]
    run = start(docs)
    run.until_idle()
    assert run.preempted == ["b-free"] and run.bound == {"w0": "n2"}


def test_example_reclaims_borrowed_capacity(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["schedule", "-f", example_path("capacityscheduling-cluster.yaml"),
         "--config", example_path("capacityscheduling.yaml"), "--seed", "1", "-o", "json"]
    )
    assert code == 0
    placed = {p["pod"]: p for p in json.loads(capsys.readouterr().out)["placements"]}
    assert placed["web/web-0"]["node"] == placed["web/web-1"]["node"] == "node-a"
    assert placed["web/web-2"]["node"] is None and placed["batch/batch-3"]["node"] is None
    assert "total ElasticQuota used is more than min" in placed["batch/batch-3"]["message"]


def write(tmp_path: Path, docs: list[dict]) -> str:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


@pytest.mark.parametrize(
    ("docs", "where"),
    [
        ([quota("ns", {"cpu": "8"}, {"cpu": "4"})], "documents[1].spec.min.cpu: min 8 must not exceed max 4"),
        ([quota("ns", {"cpu": "many"})], "documents[1].spec.min.cpu"),
        ([quota("ns", None, {"memory": "-1Gi"})], "documents[1].spec.max.memory: must be greater than or equal to 0"),
        ([{**quota("ns"), "spec": {"min": ["cpu"]}}], "documents[1].spec.min: expected an object"),
        ([{**quota("ns"), "apiVersion": "scheduling.example.com/v1"}], "documents[1].apiVersion: unsupported apiVersion"),
        ([quota("ns"), {**quota("ns"), "metadata": {"name": "second", "namespace": "ns"}}], 'namespace "ns" has two ElasticQuotas'),
    ],
)
def test_bad_elastic_quota_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], docs: list[dict], where: str) -> None:
    path = write(tmp_path, [cpu_node("n1", "4"), *docs])
    assert main(["schedule", "-f", path]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and path in err and where in err, err
