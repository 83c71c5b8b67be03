"""``-o json|yaml`` of the commands that write a folder of results (experiment fgd|elastic, tune,
learn search|eval): stdout is the command's result document alone (it parses, and holds the keys
docs/cli.md#result-documents lists), progress stays on stderr; each run is the smallest its own
tests use."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from kubesched.cli import main

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def documented_keys(command: str) -> set[str]:
    """The top-level keys docs/cli.md's table for ``command`` lists (its first column, in backticks)."""
    text = DOCS.read_text()
    start = text.index(f"#### `{command}`")
    ends = [i for i in (text.find("\n#### ", start + 1), text.find("\n## ", start + 1)) if i != -1]
    section = text[start:min(ends, default=len(text))]
    return set(re.findall(r"^\| `([A-Za-z_]+)` \|", section, re.MULTILINE))


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    assert main(argv) == 0
    out = capsys.readouterr().out
    return json.loads(out)  # stdout is the document and nothing else


def test_experiment_fgd(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["experiment", "fgd", "--traces", "default", "--policies", "FGD", "--seeds", "42", "--max-nodes", "30",
            "--max-pods", "150", "--workers", "1", "--no-plots", "-d", str(tmp_path / "o")]
    doc = run_json([*argv, "-o", "json"], capsys)
    assert set(doc) == documented_keys("experiment fgd") == {"grid", "stats", "comparison"}
    assert doc["grid"]["ran"] == 1 and doc["grid"]["seeds"] == [42]
    assert doc["stats"]["default"]["FGD"]["unallocated"]["100"]["n"] == 1
    assert doc["comparison"] == []  # a node/pod subset is not the paper's experiment
    # yaml: the same document (the run is reused, so the wall time may differ)
    assert main([*argv, "--resume", "-o", "yaml"]) == 0
    again = yaml.safe_load(capsys.readouterr().out)
    assert again["stats"] == doc["stats"] and again["grid"]["reused"] == 1


def test_experiment_elastic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["experiment", "elastic", "--limit", "100", "--seeds", "0", "--workers", "1", "--modes",
            "static-peak,karpenter", "--profiles", "pack", "--no-plots", "-d", str(tmp_path / "o")]
    doc = run_json([*argv, "-o", "json"], capsys)
    assert set(doc) == documented_keys("experiment elastic")
    assert [(a["mode"], a["profile"]) for a in doc["aggregate"]] == [("static-peak", "pack"), ("karpenter", "pack")]
    assert doc["scenario"]["pods"] == 100 and len(doc["runs"]) == 2
    assert doc == json.loads((tmp_path / "o" / "summary.json").read_text())


def test_tune(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["tune", "--synthetic", "--synth", "pods.count=30", "--metric", "pods.failed", "--trials", "2",
            "--no-plots", "-d", str(tmp_path / "o")]
    doc = run_json([*argv, "-o", "json"], capsys)
    assert set(doc) == documented_keys("tune")
    assert doc["metrics"] == ["pods.failed"] and doc["best"]["values"] == [0]
    assert main([*argv, "-o", "yaml"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["baseline"] == doc["baseline"]


def test_learn_search(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["learn", "search", "--max-nodes", "40", "--max-pods", "200", "--trials", "2", "--finalists", "1",
            "--train-seeds", "0", "--val-seeds", "100", "--workers", "1", "--no-progress", "-d", str(tmp_path / "o")]
    capsys.readouterr()
    assert main([*argv, "-o", "json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert set(doc) == documented_keys("learn search")
    assert [t["number"] for t in doc["trials"]] == [0, 1] and doc["val_seeds"] == [100]
    # --no-progress: one line per trial on stderr, counted against --trials
    assert [line.split(" ")[0] for line in captured.err.splitlines()] == ["[1/2]", "[2/2]"]


def test_learn_eval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["learn", "eval", "--max-nodes", "40", "--max-pods", "200", "--seeds", "100", "--workers", "1",
            "--no-plots", "--no-progress", "-d", str(tmp_path / "o")]
    capsys.readouterr()
    assert main([*argv, "-o", "json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    # --no-progress: a line per run (trace, policy, seed), counted against all of them
    assert captured.err.splitlines() == ["[1/2] default FGD seed 100", "[2/2] default BestFit seed 100"]
    assert set(doc) <= documented_keys("learn eval") and "latency" not in doc  # latency: with --model only
    assert set(doc["traces"]["default"]["policies"]) == {"FGD", "BestFit"} and doc["seeds"] == [100]


def test_a_folder_for_o_is_pointed_to_out_dir(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["experiment", "elastic", "-o", "runs"])
    assert exit_.value.code == 2
    assert "'runs' is not an output format (table, json, yaml); the output folder is -d/--out-dir DIR" in (
        capsys.readouterr().err
    )


# The other commands with -o json: simulate, multicluster simulate, bench, plugins list, config
# view have a table in Result documents; schedule, explain and multicluster schedule|explain have
# their contract, with an example, in their own sections.
CONTRACTS_ELSEWHERE = {
    "schedule": ("cli.md", "`-o json` (contract)", "## `kubesched schedule`"),
    "explain": ("cli.md", "`-o json` (contract)", "## `kubesched explain`"),
    "multicluster schedule": ("multicluster.md", "`schedule`:", "## JSON and YAML"),
    "multicluster explain": ("multicluster.md", "`explain` adds `attempts`", "## JSON and YAML"),
}


def json_commands() -> list[str]:
    """Every command (as typed after ``kubesched``) whose -o/--output accepts json."""
    import argparse

    from kubesched.cli import build_parser

    found: list[str] = []

    def accepts_json(action: argparse.Action) -> bool:
        if action.choices is not None:
            return "json" in action.choices
        try:
            return action.type("json") == "json"  # type: ignore[misc]
        except (TypeError, argparse.ArgumentTypeError):
            return False

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, [*path, name])
            elif "--output" in action.option_strings and accepts_json(action):
                found.append(" ".join(path))

    walk(build_parser(), [])
    return found


def test_every_command_with_o_json_is_described() -> None:
    commands = json_commands()
    assert {"schedule", "simulate", "bench", "multicluster simulate", "learn eval"} <= set(commands)
    text = DOCS.read_text()
    for command in commands:
        if command in CONTRACTS_ELSEWHERE:
            doc, marker, section = CONTRACTS_ELSEWHERE[command]
            body = (DOCS.parent / doc).read_text()
            start = body.index(section)
            assert marker in body[start:body.find("\n## ", start + 1)], command
        else:
            assert f"#### `{command}`" in text, f"{command}: -o json is not described in docs/cli.md"
            assert documented_keys(command), command


def test_simulate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["simulate", "--synthetic", "--synth", "pods.count=40", "--synth", "nodes.0.count=3", "--no-plots", "--no-progress", "-d", str(tmp_path / "o")]
    doc = run_json([*argv, "-o", "json"], capsys)
    assert set(doc) == documented_keys("simulate")
    assert doc == json.loads((tmp_path / "o" / "summary.json").read_text())
    assert main([*argv, "-o", "yaml"]) == 0
    again = yaml.safe_load(capsys.readouterr().out)
    assert again["pods"] == doc["pods"] and again["seed"] == doc["seed"]


def test_multicluster_simulate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "small.yaml"
    scenario.write_text(
        "kind: EdgeCloudScenario\ntimeScale: 2000\nsites:\n"
        "- {name: edge-a, region: Japan East, tier: edge, share: 0.01, users: 2}\n"
        "- {name: cloud, region: West US 2, tier: cloud, share: 0.04}\n"
    )
    doc = run_json(["multicluster", "simulate", "--scenario", str(scenario), "--limit", "40", "--seeds", "0",
                    "--no-plots", "--no-progress", "-d", str(tmp_path / "o"), "-o", "json"], capsys)
    assert set(doc) == documented_keys("multicluster simulate")
    assert doc["seeds"] == [0] and set(doc["aggregate"]) == {"isolated", "cloud-only", "collaborative"}
    assert main(["multicluster", "simulate", "--scenario", str(scenario), "--limit", "40", "--seeds", "0",
                 "--no-plots", "--no-progress", "-d", str(tmp_path / "o"), "-o", "yaml"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["aggregate"] == doc["aggregate"]


def test_bench(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(["bench", "--workload", "SchedulingBasic/5000Nodes_10000Pods", "--scale", "0.01", "--no-progress", "-o", "json"], capsys)
    assert set(doc) == documented_keys("bench") and doc["schema"] == "kubesched.bench/v1"
    assert [r["workload"] for r in doc["results"]] == ["SchedulingBasic/5000Nodes_10000Pods"]


def test_plugins_list_and_config_view(capsys: pytest.CaptureFixture[str]) -> None:
    plugins = run_json(["plugins", "list", "-o", "json"], capsys)
    assert set(plugins) == documented_keys("plugins list")
    assert {"name", "origin", "target", "points", "error"} == set(plugins["plugins"][0])
    config = run_json(["config", "view", "-o", "json"], capsys)
    assert set(config) == documented_keys("config view")
    assert config["profiles"][0]["schedulerName"] == "default-scheduler"
