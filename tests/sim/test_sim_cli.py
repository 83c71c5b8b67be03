"""`kubesched simulate` from the command line: sources, outputs, and bad input (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kubesched.cli import main

MANIFESTS = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata:
  name: late
  annotations: {kubesched.io/add-time: "30"}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: first
  annotations: {kubesched.io/arrival-time: "5", kubesched.io/duration: "10"}
spec: {containers: [{name: c, resources: {requests: {cpu: "2"}}}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: second
  annotations: {kubesched.io/arrival-time: "6"}
spec: {containers: [{name: c, resources: {requests: {cpu: "2"}}}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: third
  annotations: {kubesched.io/arrival-time: "7.5"}
spec: {containers: [{name: c, resources: {requests: {cpu: "2"}}}]}
"""

FGD_NO_ARGS = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint: {enabled: [{name: Open-Gpu-Share}, {name: FGDScore}]}
"""


def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_manifest_workload_with_timeline_annotations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = write(tmp_path, "cluster.yaml", MANIFESTS)
    out = tmp_path / "out"
    rc = main(["simulate", "-f", f, "--out-dir", str(out), "--no-plots", "-o", "json", "--seed", "4"])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary == json.loads((out / "summary.json").read_text())
    pods = {r.split(",")[0]: r.split(",") for r in (out / "pods.csv").read_text().splitlines()[1:]}
    # first: 5..15; second waits for it (t=15, delay 9); third waits for the late node (t=30)
    assert pods["default/first"][4:6] == ["5.0", "15.0"]
    assert pods["default/second"][4] == "15.0" and pods["default/second"][6] == "9.0"
    assert pods["default/third"][3:5] == ["late", "30.0"]
    assert summary["pods"]["running_at_end"] == 2 and summary["nodes"]["final"] == 2


def test_synthetic_run_writes_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "syn"
    rc = main(["simulate", "--synthetic", "--synth", "pods.count=60", "--synth", "nodes.0.count=3", "--out-dir", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "report.html" in printed and "scheduled" in printed
    s = json.loads((out / "summary.json").read_text())
    assert s["pods"]["total"] == 60 and s["nodes"]["initial"] == 3
    assert (out / "report.html").stat().st_size > 10_000 and (out / "allocation.png").exists()


def bad(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    try:
        rc = main(argv)
    except SystemExit as e:  # argparse: unknown flags and values
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


def test_bad_input_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "o")
    f = write(tmp_path, "c.yaml", MANIFESTS)
    assert "unrecognized arguments: --bogus" in bad(["simulate", "--synthetic", "--bogus"], capsys)
    assert "invalid choice: 'sideways'" in bad(["simulate", "--synthetic", "--mode", "sideways"], capsys)
    assert "exactly one workload" in bad(["simulate", "--out-dir", out], capsys)
    assert "exactly one workload" in bad(["simulate", "--synthetic", "-f", f, "--out-dir", out], capsys)
    assert "exactly one workload" in bad(["simulate", "--nodes", "gpu", "--synthetic", "--out-dir", out], capsys)
    assert "--nodes: only with --trace" in bad(["simulate", "--nodes", "gpu", "--out-dir", out], capsys)
    assert '--nodes: "cpu": no such file, and not a shipped openb node list' in bad(
        ["simulate", "--trace", "default", "--nodes", "cpu", "--out-dir", out], capsys
    )
    assert "--bins" in bad(["simulate", "--synthetic", "--bins", "0", "--out-dir", out], capsys)
    assert "--usage-fraction" in bad(["simulate", "--synthetic", "--usage-fraction", "0.9:0.1", "--out-dir", out], capsys)
    assert "--max-wait: only with --mode time" in bad(
        ["simulate", "--synthetic", "--mode", "arrival", "--max-wait", "5", "--out-dir", out], capsys
    )
    # an output folder that cannot be created (a file is in the way)
    blocker = write(tmp_path, "file.txt", "x")
    line = bad(["simulate", "--synthetic", "--out-dir", f"{blocker}/sub"], capsys)
    assert line.startswith("kubesched: error:") and "cannot write to the output folder" in line
    # synthetic spec fields are validated with their path
    spec = write(tmp_path, "spec.yaml", yaml.safe_dump({"pods": {"count": 5, "duration": {"dist": "weibull"}}}))
    line = bad(["simulate", "--synthetic", spec, "--out-dir", out], capsys)
    assert f"{spec}: pods.duration.dist: unknown value" in line
    assert "pods.cout" in bad(["simulate", "--synthetic", "--synth", "pods.cout=5", "--out-dir", out], capsys)
    # a bad timeline annotation names the file, the object and the annotation
    broken = write(tmp_path, "b.yaml", MANIFESTS.replace('arrival-time: "6"', 'arrival-time: "soon"'))
    line = bad(["simulate", "-f", broken, "--out-dir", out], capsys)
    assert f"{broken}: pod default/second: metadata.annotations.kubesched.io/arrival-time" in line
    gpu = write(tmp_path, "g.yaml", MANIFESTS.replace('duration: "10"', 'duration: "10", alibabacloud.com/gpu-count: "x"'))
    line = bad(["simulate", "-f", gpu, "--out-dir", out], capsys)
    assert f"{gpu}: pod default/first: metadata.annotations" in line and "invalid integer" in line
    negative = write(tmp_path, "n.yaml", MANIFESTS.replace('duration: "10"', 'duration: "-3"'))
    assert "must be greater than 0 seconds" in bad(["simulate", "-f", negative, "--out-dir", out], capsys)
    # FGDScore without typical pods fails when the profile is built: still before any output
    cfg = write(tmp_path, "fgd.yaml", FGD_NO_ARGS)
    assert "FGDScoreArgs" in bad(["simulate", "--synthetic", "--config", cfg, "--out-dir", out], capsys)
    # nothing was written for any of them, not even the folder
    assert not (tmp_path / "o").exists()


CRASHY = '''
from kubesched.framework.simple import NodeScorePlugin


class Crashy(NodeScorePlugin):
    name = "Crashy"

    def score_node(self, pod, node):
        return int(node.node.labels["zone"])
'''


def test_a_crashing_plugin_fails_the_pod_and_debug_shows_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The pod's failure names the plugin, the exception and the node; --debug adds the traceback."""
    plugin = tmp_path / "crashy.py"
    plugin.write_text(CRASHY)
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"schedulerName": "default-scheduler", "plugins": {"score": {"enabled": [{"name": "Crashy"}]}}}],
            }
        )
    )
    cluster = tmp_path / "c.yaml"
    node = {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "pods": "9"}}}
    pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "a", "namespace": "default"}, "spec": {"containers": [{"name": "c"}]}}
    two = {**node, "metadata": {"name": "n2"}}
    cluster.write_text(yaml.safe_dump_all([node, two, pod]))
    base = ["simulate", "-f", str(cluster), "--config", str(cfg), "--plugin-path", str(plugin), "--no-plots", "-o", "json"]
    assert main([*base, "--out-dir", str(tmp_path / "o1")]) == 0
    out = capsys.readouterr()
    summary = json.loads(out.out)
    (message,) = summary["failed_messages"]
    assert message.startswith('running Score plugins: plugin "Crashy" failed with: KeyError: \'zone\' (node n')
    assert "Traceback" not in out.err
    assert main([*base, "--out-dir", str(tmp_path / "o2"), "--debug"]) == 0
    err = capsys.readouterr().err
    assert "kubesched: debug: pod default/a: a plugin raised:" in err and err.count("Traceback") == 1
    assert f'File "{plugin}", line 9, in score_node' in err
