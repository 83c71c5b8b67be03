"""A score plugin returning a score outside [0, 100]: that pod's attempt fails with kube-scheduler's
error naming the plugin, and the scheduler goes on with the other pods (per-node and vectorised)."""

from __future__ import annotations

import json
import textwrap

import pytest
import yaml

from kubesched.cli import main
from kubesched.testing import make_node, make_pod

PLUGINS = textwrap.dedent("""
    import numpy as np

    from kubesched.framework.interfaces import ScorePlugin
    from kubesched.framework.simple import NodeScorePlugin


    class Overflow(NodeScorePlugin):
        name = "Overflow"

        def score_node(self, pod, node):
            return 101 if pod.labels.get("bad") == "per-node" and node.name == "b" else 50


    class Negative(ScorePlugin):
        name = "Negative"

        def score(self, state, pod, snap, rows):
            return np.full(len(rows), -5 if pod.labels.get("bad") == "vector" else 10, np.int64)
""")


def upstream_error(plugin: str, score: int) -> str:
    # framework/runtime/framework.go RunScorePlugins
    return (
        f'applying score defaultWeights on Score plugins: plugin "{plugin}" returns an invalid score '
        f"{score}, it should in the range of [0, 100] after normalizing"
    )


@pytest.fixture
def files(tmp_path):
    plugin = tmp_path / "bad_scores.py"
    plugin.write_text(PLUGINS)
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(
        yaml.safe_dump_all(
            [
                make_node("a", cpu="4", memory="8Gi"),
                make_node("b", cpu="4", memory="8Gi"),
                make_pod("per-node", labels={"bad": "per-node"}),
                make_pod("vector", labels={"bad": "vector"}),
                make_pod("fine"),
            ]
        )
    )
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {
                        "schedulerName": "default-scheduler",
                        "plugins": {"score": {"enabled": [{"name": "Overflow"}, {"name": "Negative"}]}},
                    }
                ],
            }
        )
    )
    return ["-f", str(cluster), "--config", str(cfg), "--plugin-path", str(plugin)]


def test_out_of_range_scores_fail_that_pod_only(files, capsys):
    code = main(["schedule", *files, "--seed", "1", "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    placed = {p["pod"]: p for p in json.loads(out.out)["placements"]}
    assert placed["default/per-node"]["node"] is None
    assert placed["default/per-node"]["message"] == upstream_error("Overflow", 101)
    assert placed["default/vector"]["node"] is None
    assert placed["default/vector"]["message"] == upstream_error("Negative", -5)
    assert placed["default/fine"]["node"] in ("a", "b")  # the scheduler went on


def test_explain_names_the_plugin(files, capsys):
    code = main(["explain", *files, "default/vector", "-o", "json"])
    out = capsys.readouterr()
    assert code in (0, 1), out.err
    assert upstream_error("Negative", -5) in strings(json.loads(out.out))


def strings(doc: object) -> list[str]:
    """Every string value in a JSON document."""
    if isinstance(doc, dict):
        return [s for v in doc.values() for s in strings(v)]
    if isinstance(doc, list):
        return [s for v in doc for s in strings(v)]
    return [doc] if isinstance(doc, str) else []
