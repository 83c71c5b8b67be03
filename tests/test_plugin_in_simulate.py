"""The tutorial's path: a plugin written with `kubesched plugins new` runs unchanged in `simulate`."""

from __future__ import annotations

import csv
from pathlib import Path

import yaml

from kubesched.cli import main
from kubesched.testing import make_node, make_pod


def test_scaffolded_plugin_steers_a_simulation(tmp_path: Path, capsys) -> None:
    assert main(["plugins", "new", "LowLatencyFirst", "--dir", str(tmp_path)]) == 0
    capsys.readouterr()
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(3)]
    nodes.append(make_node("n3", cpu="4", memory="8Gi", labels={"example.com/preferred": "true"}))
    pods = []
    for i in range(6):
        p = make_pod(f"p{i}", requests={"cpu": "500m"})
        p["metadata"]["annotations"] = {"kubesched.io/arrival-time": str(i), "kubesched.io/duration": "2.5"}
        pods.append(p)
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(nodes + pods))
    config = tmp_path / "sched.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {
                        "schedulerName": "default-scheduler",
                        "plugins": {"score": {"enabled": [{"name": "LowLatencyFirst", "weight": 50}]}},
                    }
                ],
            }
        )
    )
    out = tmp_path / "out"
    code = main(
        [
            "simulate", "-f", str(cluster), "--config", str(config),
            "--plugin-path", str(tmp_path / "low_latency_first.py"),
            "--out-dir", str(out), "--seed", "1", "--no-progress",
        ]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    with open(out / "pods.csv") as f:
        rows = list(csv.DictReader(f))
    nodes_of = {r["pod"].split("/")[-1]: r["node"] for r in rows}
    assert nodes_of == {f"p{i}": "n3" for i in range(6)}
