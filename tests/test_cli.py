"""The kubesched command: every output format, and every class of bad input (exit 2, one line)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kubesched.app import example_path
from kubesched.cli import main
from kubesched.testing import make_node, make_pod


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def write(tmp_path: Path, name: str, docs: list[dict] | str) -> str:
    p = tmp_path / name
    p.write_text(docs if isinstance(docs, str) else yaml.safe_dump_all(docs))
    return str(p)


@pytest.fixture
def small(tmp_path: Path) -> str:
    docs = [
        make_node("n1", cpu="3", memory="4Gi", labels={"zone": "a"}),
        make_node("n2", cpu="4", memory="8Gi", labels={"zone": "b"}),
        make_pod("big", requests={"cpu": "2"}),
        make_pod("huge", requests={"cpu": "16"}),
        make_pod("small", requests={"cpu": "100m"}, spec={"nodeSelector": {"zone": "a"}}),
        make_pod("running", requests={"cpu": "2"}, node="n1"),
    ]
    return write(tmp_path, "cluster.yaml", docs)


def test_schedule_json_contract(capsys, small):
    code, out, err = run(capsys, "schedule", "-f", small, "--seed", "1", "-o", "json")
    assert code == 0, err
    data = json.loads(out)
    by_pod = {p["pod"]: p for p in data["placements"]}
    assert set(by_pod) == {"default/big", "default/huge", "default/small"}
    assert by_pod["default/big"]["node"] == "n2"
    assert by_pod["default/small"]["node"] == "n1"
    assert by_pod["default/huge"]["node"] is None
    # 16 CPUs exceed both nodes' allocatable: unresolvable, so preemption cannot help
    assert by_pod["default/huge"]["message"] == (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling."
    )
    assert all(p["profile"] == "default-scheduler" for p in data["placements"])
    # the original four fields stay; later versions only add fields
    assert set(data["placements"][0]) == {"pod", "node", "profile", "message", "nominated_node", "victims"}
    assert set(data) == {"placements", "skipped"} and data["skipped"] == []


def test_schedule_yaml_and_table(capsys, small):
    code, out, _ = run(capsys, "schedule", "-f", small, "--seed", "1", "-o", "yaml")
    assert code == 0
    assert {p["pod"] for p in yaml.safe_load(out)["placements"]} == {"default/big", "default/huge", "default/small"}
    code, out, _ = run(capsys, "schedule", "-f", small, "--seed", "1")
    assert code == 0 and "2 placed, 1 unschedulable" in out


def test_schedule_is_reproducible_with_a_seed(capsys):
    outs = [run(capsys, "schedule", "--seed", "7", "-o", "json")[1] for _ in range(2)]
    assert outs[0] == outs[1]


def test_example_cluster_and_users_v1beta1_config(capsys):
    code, out, err = run(
        capsys, "schedule", "--config", example_path("scheduler-v1beta1.yaml"), "--seed", "1", "-o", "json"
    )
    assert code == 0, err
    placements = json.loads(out)["placements"]
    assert len(placements) == 26
    failed = {p["pod"] for p in placements if not p["node"]}
    assert {"ml/train-8gpu", "ml/needs-a100"} <= failed and len(failed) <= 3
    assert all(p["message"] for p in placements if not p["node"])
    msg = {p["pod"]: p["message"] for p in placements}["ml/needs-a100"]
    assert msg.startswith("0/12 nodes are available: 12 node(s) didn't match Pod's node affinity/selector.")


def test_explain_json_contract(capsys, small):
    code, out, err = run(capsys, "explain", "-f", small, "default/big", "--seed", "1", "-o", "json")
    assert code == 0, err
    data = json.loads(out)
    assert set(data) == {"pod", "profile", "nodes", "selected", "message", "basis", "gated"}
    assert data["basis"] == "input" and data["gated"] is None
    assert data["pod"] == "default/big" and data["selected"] == "n2" and data["message"] is None
    n1, n2 = data["nodes"]
    assert n1["name"] == "n1" and not n1["feasible"] and n1["total"] is None and n1["score"] == []
    fit = next(f for f in n1["filter"] if f["plugin"] == "NodeResourcesFit")
    assert fit == {"plugin": "NodeResourcesFit", "code": "Unschedulable", "reasons": ["Insufficient cpu"]}
    assert n2["feasible"] and n2["total"] == sum(s["weighted"] for s in n2["score"])
    for s in n2["score"]:
        assert s["weighted"] == s["normalized"] * s["weight"]
    # every enabled filter plugin reports on every node
    assert [f["plugin"] for f in n1["filter"]] == [f["plugin"] for f in n2["filter"]]


def test_explain_pod_file_with_node_name(capsys, small, tmp_path):
    pod = write(tmp_path, "pod.yaml", [make_pod("pinned", requests={"cpu": "100m"}, node="n1")])
    code, out, err = run(capsys, "explain", "-f", small, "--pod", pod, "-o", "json")
    assert code == 0, err
    data = json.loads(out)
    n2 = next(n for n in data["nodes"] if n["name"] == "n2")
    nodename = next(f for f in n2["filter"] if f["plugin"] == "NodeName")
    assert nodename["code"] == "UnschedulableAndUnresolvable"
    assert nodename["reasons"] == ["node(s) didn't match the requested node name"]
    assert data["selected"] == "n1"


def test_explain_unschedulable_gives_message(capsys, small):
    code, out, _ = run(capsys, "explain", "-f", small, "default/huge", "-o", "json")
    data = json.loads(out)
    assert data["selected"] is None
    assert data["message"] == "0/2 nodes are available: 2 Insufficient cpu."


def test_explain_table(capsys, small):
    code, out, _ = run(capsys, "explain", "-f", small, "default/big", "--seed", "1")
    assert code == 0 and "selected: n2" in out


def test_plugins_list_and_config_view(capsys):
    code, out, _ = run(capsys, "plugins", "list", "-o", "json")
    names = {p["name"] for p in json.loads(out)["plugins"]}
    assert {"NodeResourcesFit", "InterPodAffinity", "PodTopologySpread", "DefaultPreemption"} <= names
    code, out, _ = run(capsys, "config", "view", "-o", "json")
    assert code == 0 and json.loads(out)["profiles"]


BAD_INPUTS = [
    ("malformed.yaml", "kind: Node\nmetadata: {name: [\n", "invalid YAML at line"),
    ("kind.yaml", "apiVersion: v1\nkind: Gizmo\nmetadata: {name: x}\n", 'unknown kind "Gizmo"'),
    (
        "qty.yaml",
        yaml.safe_dump(make_pod("p", requests={"cpu": "1.2.3"})),
        'spec.containers[0].resources.requests.cpu: invalid quantity "1.2.3"',
    ),
    (
        "sel.yaml",
        yaml.safe_dump(
            make_pod(
                "p",
                spec={
                    "affinity": {
                        "podAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "labelSelector": {"matchExpressions": [{"key": "a", "operator": "Near"}]},
                                    "topologyKey": "zone",
                                }
                            ]
                        }
                    }
                },
            )
        ),
        "matchExpressions[0].operator",
    ),
]


@pytest.mark.parametrize("name, text, expected", BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_cluster_input(capsys, tmp_path, name, text, expected):
    path = write(tmp_path, name, text)
    code, out, err = run(capsys, "schedule", "-f", path, "-o", "json")
    assert code == 2
    assert out == ""  # nothing placed
    assert err.count("\n") == 1 and path in err and expected in err, err


BAD_CONFIGS = [
    (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: s\n  plugins:\n    score:\n      enabled:\n      - name: NoSuchPlugin\n",
        "NoSuchPlugin",
    ),
    (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: s\n  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
        "      scoringStrategy:\n        type: Fastest\n",
        "scoringStrategy.type",
    ),
    ("apiVersion: kubescheduler.config.k8s.io/v9\nkind: KubeSchedulerConfiguration\n", "apiVersion"),
]


@pytest.mark.parametrize("text, expected", BAD_CONFIGS)
def test_bad_config(capsys, tmp_path, small, text, expected):
    cfg = write(tmp_path, "sched.yaml", text)
    code, out, err = run(capsys, "schedule", "-f", small, "--config", cfg)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and cfg in err and expected in err, err


def test_missing_file_and_unknown_pod(capsys, small, tmp_path):
    code, _, err = run(capsys, "schedule", "-f", str(tmp_path / "nope.yaml"))
    assert code == 2 and "nope.yaml" in err
    code, _, err = run(capsys, "explain", "-f", small, "default/ghost")
    assert code == 2 and 'pod "default/ghost" not found' in err


def test_console_script_prints_no_traceback(tmp_path):
    bad = write(tmp_path, "bad.yaml", "kind: [\n")
    proc = subprocess.run(
        [sys.executable, "-m", "kubesched.cli", "schedule", "-f", bad], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("kubesched: error: ")


def test_preemption_avoids_pdb_protected_victims(capsys, tmp_path):
    docs = [
        make_node("n1", cpu="1", memory="4Gi"),
        make_node("n2", cpu="1", memory="4Gi"),
        make_pod("guarded", requests={"cpu": "1"}, node="n1", priority=0, labels={"app": "db"}),
        make_pod("loose", requests={"cpu": "1"}, node="n2", priority=0, labels={"app": "batch"}),
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "db", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "db"}}, "minAvailable": 1},
            "status": {"disruptionsAllowed": 0},
        },
        make_pod("urgent", requests={"cpu": "1"}, priority=1000),
    ]
    path = write(tmp_path, "c.yaml", docs)
    # without the PDB, seeds 1 and 6 pick n1 (equal candidates, random dry-run offset)
    for seed in ("1", "6"):
        code, out, err = run(capsys, "schedule", "-f", path, "--seed", seed, "-o", "json")
        assert code == 0, err
        (placement,) = json.loads(out)["placements"]
        assert placement == {
            "pod": "default/urgent",
            "node": "n2",
            "profile": "default-scheduler",
            "message": None,
            "nominated_node": "n2",
            "victims": [{"pod": "default/loose", "node": "n2"}],
        }


def test_a_pod_being_deleted_is_skipped_not_scheduled(capsys, tmp_path):
    """skipPodSchedule: a pending pod with metadata.deletionTimestamp is not placed (nor retried);
    its FailedScheduling message is kube-scheduler's."""
    going = make_pod("going", requests={"cpu": "1"})
    going["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump_all([make_node("n1", cpu="4", memory="8Gi"), going, make_pod("staying")]))
    assert main(["schedule", "-f", str(path), "-o", "json"]) == 0
    placements = json.loads(capsys.readouterr().out)["placements"]
    none = {"nominated_node": None, "victims": []}
    assert placements == [
        {"pod": "default/going", "node": None, "profile": "default-scheduler",
         "message": "skip schedule deleting pod: default/going", **none},
        {"pod": "default/staying", "node": "n1", "profile": "default-scheduler", "message": None, **none},
    ]
    out = tmp_path / "sim"
    assert main(["simulate", "-f", str(path), "--out-dir", str(out), "--no-plots", "-o", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["pods"]["failed"] == 1 and summary["pods"]["scheduled"] == 1
    assert summary["failed_messages"] == {"skip schedule deleting pod: default/going": 1}
