"""The openb trace ships inside the package: every file readable, named as the commands take it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from kubesched.cli import main
from kubesched.errors import InputError
from kubesched.trace.bundled import OPENB_DIR, node_list, pod_list, trace_names
from kubesched.trace.openb import read_nodes, read_pods

PAPER_TRACES = {
    "default", "gpushare40", "gpushare60", "gpushare80", "gpushare100", "multigpu20", "multigpu30", "multigpu40",
    "multigpu50", "gpuspec10", "gpuspec20", "gpuspec25", "gpuspec33", "cpu050", "cpu100", "cpu200", "cpu250",
}


def test_every_trace_of_the_paper_ships_with_its_licence() -> None:
    assert PAPER_TRACES <= set(trace_names())
    assert "Apache License" in (OPENB_DIR / "LICENSE").read_text()
    readme = (OPENB_DIR / "README.md").read_text()
    assert "Beware of Fragmentation" in readme and "alibaba/clusterdata" in readme


def test_shipped_lists_have_the_documented_sizes() -> None:
    assert len(read_nodes(node_list("all"))) == 1523
    gpu = read_nodes(node_list("gpu"))
    assert len(gpu) == 1213
    assert len(read_pods(pod_list("default")).pods) == 8152


@pytest.mark.parametrize("name", sorted(PAPER_TRACES))
def test_every_shipped_pod_list_reads(name: str) -> None:
    trace = read_pods(pod_list(name))
    assert len(trace.pods) > 1000 and not trace.skipped


@pytest.mark.parametrize(
    ("spec", "stem"),
    [
        ("default", "openb_pod_list_default"),
        ("openb_pod_list_default", "openb_pod_list_default"),
        ("openb_pod_list_default.csv", "openb_pod_list_default"),
        ("openb_pod_list_default.csv.gz", "openb_pod_list_default"),
    ],
)
def test_pod_list_names(spec: str, stem: str) -> None:
    assert pod_list(spec) == OPENB_DIR / f"{stem}.csv.gz"


def test_node_list_names() -> None:
    assert node_list("all").name == "openb_node_list_all_node.csv.gz"
    assert node_list("gpu") == node_list("openb_node_list_gpu_node.csv")
    with pytest.raises(InputError, match=r'^--nodes: "cpu": no such file, and not a shipped openb node list'):
        node_list("cpu")


def test_a_path_wins_over_a_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "default").write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,1024,0,0\n")
    assert pod_list("default") == Path("default")
    assert len(read_pods(pod_list("default")).pods) == 1


def test_unknown_name_lists_the_shipped_ones() -> None:
    with pytest.raises(InputError) as e:
        pod_list("nope")
    assert str(e.value).startswith('--trace: "nope": no such file, and not a shipped openb pod list (names: cpu0, ')
    assert "default" in str(e.value)


def test_corrupt_gzip_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "pods.csv.gz"
    bad.write_bytes(gzip.compress(b"name,cpu_milli,memory_mib,num_gpu,gpu_milli\n")[:-12] + b"garbage!")
    with pytest.raises(InputError, match=r"pods\.csv\.gz.*cannot read"):
        read_pods(bad)


def test_simulate_by_trace_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    argv = ["simulate", "--trace", "default", "--nodes", "gpu", "--mode", "arrival", "--limit", "200"]
    assert main([*argv, "--no-plots", "--out-dir", str(out), "-o", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["source"] == "default on gpu" and summary["nodes"]["initial"] == 1213
    assert summary["pods"]["scheduled"] == 200
    assert main(["simulate", "--nodes", "gpu", "--out-dir", str(out)]) == 2
    assert "--nodes: only with --trace" in capsys.readouterr().err
