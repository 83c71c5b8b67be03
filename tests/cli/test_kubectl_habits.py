"""kubectl's habits on the cluster commands: ``-f DIR`` (its .json/.yaml/.yml files in name order)
and ``-R``, ``-A/--all-namespaces``, ``-o name`` and ``-o wide``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from kubesched.batch import BatchResult
from kubesched.cli import build_parser, main
from kubesched.commands.flags import expand_files
from kubesched.manifest_paths import expand
from kubesched.render import schedule_wide
from kubesched.testing import make_node, make_pod


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main([*argv, "--seed", "1"])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """nodes.yaml, pods.json and notes.md at the top; more pods in sub/ (and a deeper one)."""
    (tmp_path / "b-nodes.yaml").write_text(yaml.safe_dump(make_node("n1", cpu="4")))
    (tmp_path / "a-pods.json").write_text(json.dumps(make_pod("top", namespace="web", requests={"cpu": "1"})))
    (tmp_path / "notes.md").write_text("not a manifest: kind: Nope\n")
    sub = tmp_path / "sub"
    (sub / "deeper").mkdir(parents=True)
    (sub / "pods.yml").write_text(yaml.safe_dump(make_pod("below", namespace="ml", requests={"cpu": "1"})))
    (sub / "deeper" / "p.yaml").write_text(yaml.safe_dump(make_pod("deepest", requests={"cpu": "1"})))
    return tmp_path


def test_a_directory_reads_its_manifests_in_name_order(folder: Path) -> None:
    assert expand([str(folder)]) == [str(folder / "a-pods.json"), str(folder / "b-nodes.yaml")]


def test_recursive_walks_depth_first_in_name_order(folder: Path) -> None:
    """As filepath.Walk: sub/'s files come where "sub" sorts, after the top's a-, b- files."""
    assert expand([str(folder)], recursive=True) == [
        str(folder / "a-pods.json"),
        str(folder / "b-nodes.yaml"),
        str(folder / "sub" / "deeper" / "p.yaml"),
        str(folder / "sub" / "pods.yml"),
    ]


def test_a_named_file_is_read_whatever_its_name(folder: Path) -> None:
    assert expand([str(folder / "notes.md"), "-"]) == [str(folder / "notes.md"), "-"]


def test_schedule_f_dir_and_R(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    code, out, _ = run(capsys, "schedule", "-f", str(folder), "-o", "json")
    assert code == 0 and [p["pod"] for p in json.loads(out)["placements"]] == ["web/top"]
    code, out, _ = run(capsys, "schedule", "-f", str(folder), "-R", "-o", "json")
    assert code == 0
    assert sorted(p["pod"] for p in json.loads(out)["placements"]) == ["default/deepest", "ml/below", "web/top"]


def test_a_directory_without_manifests_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    code, out, err = run(capsys, "schedule", "-f", str(tmp_path))
    assert (code, out) == (2, "")
    assert err == (
        f"kubesched: error: {tmp_path}: no .json, .yaml or .yml file in this directory "
        "(-R/--recursive reads its subdirectories)\n"
    )


def test_simulate_and_explain_take_directories(folder: Path) -> None:
    for argv in (["simulate", "-f", str(folder), "-R"], ["explain", "web/top", "-f", str(folder)]):
        args = build_parser().parse_args(argv)
        expand_files(args)
        assert str(folder / "b-nodes.yaml") in args.file


def test_all_namespaces_wins_over_namespace_as_in_kubectl(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    _, only_web, _ = run(capsys, "schedule", "-f", str(folder), "-R", "-n", "web", "-o", "name")
    assert only_web == "pod/top\n"
    _, every, _ = run(capsys, "schedule", "-f", str(folder), "-R", "-n", "web", "-A", "-o", "name")
    assert sorted(every.splitlines()) == ["pod/below", "pod/deepest", "pod/top"]


def test_output_name_lists_every_pod_as_kubectl(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "schedule", "-o", "name")
    _, js, _ = run(capsys, "schedule", "-o", "json")
    data = json.loads(js)
    listed = [e["pod"].split("/")[1] for e in (*data["placements"], *data["skipped"])]
    assert code == 0 and out.splitlines() == [f"pod/{n}" for n in listed]


def test_output_wide_is_one_line_per_pod_never_cut_at_80_columns() -> None:
    message = "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: " + "x" * 60
    result = BatchResult(
        placements=[
            {"pod": "ns/a-pod-with-a-rather-long-generated-name-7d9f8b6c5-x2x4q", "node": "node-1", "profile": "p",
             "message": None, "nominated_node": None, "victims": []},
            {"pod": "ns/b", "node": None, "profile": "p", "message": message, "nominated_node": "node-2",
             "victims": [{"pod": "ns/low", "node": "node-2"}]},
        ],
        nodes=3,
    )
    buf = io.StringIO()
    schedule_wide(result, Console(file=buf, width=80, color_system=None))
    lines = buf.getvalue().splitlines()
    assert lines[0].split() == ["#", "POD", "PROFILE", "NODE", "NOMINATED", "NODE", "PREEMPTED", "MESSAGE"]
    assert lines[1].split() == ["1", "ns/a-pod-with-a-rather-long-generated-name-7d9f8b6c5-x2x4q", "p", "node-1", "<none>", "<none>"]
    assert lines[2].split(None, 6) == ["2", "ns/b", "p", "<none>", "node-2", "ns/low", message]
    assert all(line == line.rstrip() for line in lines)
