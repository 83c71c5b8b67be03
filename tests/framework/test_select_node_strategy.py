"""select_node(pod, nodes) strategies (kubesched.framework.simple.NodeSelectorStrategy), class and
decorated function, run through `kubesched schedule --plugin-path` as a user would."""

from __future__ import annotations

import json
import textwrap

import pytest
import yaml

from kubesched.api.objects import Pod
from kubesched.cli import main
from kubesched.cluster.memory import MemoryCluster
from kubesched.config.load import parse_config
from kubesched.plugins import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.testing import build_snapshot, make_node, make_pod

STRATEGIES = textwrap.dedent('''
    from kubesched.framework.simple import NodeSelectorStrategy, node_selector


    class MostPods(NodeSelectorStrategy):
        """Pack: the feasible node already running the most pods."""

        name = "MostPods"

        def select_node(self, pod, nodes):
            if pod.labels.get("pick") == "none":
                return None
            if pod.labels.get("pick") == "bogus":
                return "no-such-node"
            return max(nodes, key=lambda n: (len(n.pods), n.name)).name


    @node_selector("ByLabel")
    def by_label(pod, nodes):
        """The node named by the pod's label, if feasible."""
        want = pod.labels.get("want")
        return want if any(n.name == want for n in nodes) else None
''')


def run(tmp_path, capsys, plugin: str, pods: list[dict]) -> dict[str, dict]:
    path = tmp_path / "strategies.py"
    path.write_text(STRATEGIES)
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(
        yaml.safe_dump_all(
            [
                *[make_node(n, cpu="4", memory="8Gi") for n in "abc"],
                make_pod("x1", node="c", requests={"cpu": "1"}),
                make_pod("x2", node="c", requests={"cpu": "1"}),
                make_pod("y", node="b", requests={"cpu": "1"}),
                *pods,
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
                        "plugins": {"filter": {"enabled": [{"name": plugin}]}},
                    }
                ],
            }
        )
    )
    code = main(
        [
            "schedule",
            "-f",
            str(cluster),
            "--config",
            str(cfg),
            "--plugin-path",
            str(path),
            "--seed",
            "1",
            "-o",
            "json",
        ]
    )
    out = capsys.readouterr()
    assert code == 0, out.err
    return {p["pod"].split("/")[1]: p for p in json.loads(out.out)["placements"]}


def test_class_strategy_picks_among_feasible_nodes(tmp_path, capsys):
    got = run(
        tmp_path,
        capsys,
        "MostPods",
        [
            make_pod("small", requests={"cpu": "100m"}),  # c runs the most pods
            make_pod("big", requests={"cpu": "3"}),  # c has 2 cpu left: not feasible, b runs more than a
        ],
    )
    assert got["small"]["node"] == "c"
    assert got["big"]["node"] == "b"  # scoring alone (LeastAllocated) would have picked a


def test_none_is_unschedulable_naming_the_plugin(tmp_path, capsys):
    got = run(tmp_path, capsys, "MostPods", [make_pod("p", labels={"pick": "none"}), make_pod("q")])
    assert got["p"]["node"] is None
    assert got["p"]["message"].startswith(
        "0/3 nodes are available: 3 node(s) not chosen by MostPods: it selected no node"
    )
    assert got["q"]["node"] == "c"  # the scheduler goes on


def test_a_node_outside_the_candidates_is_a_plugin_error(tmp_path, capsys):
    got = run(tmp_path, capsys, "MostPods", [make_pod("p", labels={"pick": "bogus"}), make_pod("q")])
    assert got["p"]["node"] is None
    assert "MostPods" in got["p"]["message"] and "'no-such-node'" in got["p"]["message"]
    assert got["q"]["node"] == "c"


@pytest.mark.parametrize(("want", "node"), [("a", "a"), ("b", "b"), ("nowhere", None)])
def test_decorated_function(tmp_path, capsys, want, node):
    got = run(tmp_path, capsys, "ByLabel", [make_pod("p", labels={"want": want})])
    assert got["p"]["node"] == node
    if node is None:
        assert "not chosen by ByLabel" in got["p"]["message"]


def test_listed_with_its_extension_point(tmp_path, capsys):
    path = tmp_path / "strategies.py"
    path.write_text(STRATEGIES)
    assert main(["plugins", "list", "--plugin-path", str(path)]) == 0
    out = capsys.readouterr().out
    assert "MostPods" in out and "ByLabel" in out and "filter" in out


def test_candidates_count_pods_nominated_to_a_node(tmp_path):
    """A node held for a nominated pod of higher priority is not offered when the pod would no
    longer fit there with it: MostPods packs onto the next node on the first attempt instead of
    picking the held node and failing the cycle's re-check with the nominated pods."""
    path = tmp_path / "strategies.py"
    path.write_text(STRATEGIES)
    reg = in_tree_registry()
    reg.load_file(str(path))
    cfg = parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {"schedulerName": "default-scheduler", "plugins": {"filter": {"enabled": [{"name": "MostPods"}]}}}
            ],
        },
        "sched.yaml",
        reg.points_of,
    )
    snap = build_snapshot(
        [make_node(n, cpu="4", memory="8Gi") for n in "abc"],
        [
            make_pod("x1", node="c", requests={"cpu": "1"}),
            make_pod("x2", node="c", requests={"cpu": "1"}),
            make_pod("y", node="b", requests={"cpu": "1"}),
        ],
    )
    sched = Scheduler(cfg, snap, MemoryCluster(), reg, seed=1)
    held = Pod.parse(make_pod("held", requests={"cpu": "2"}, priority=100))
    held.nominated_node_name = "c"  # c has 2 CPUs left, all of them promised to this pod
    sched.nominated[held.uid] = held
    sched.add_pending(Pod.parse(make_pod("small", requests={"cpu": "1"}, priority=0)))
    res = sched.schedule_one()
    assert res is not None and res.message is None
    assert (res.node, res.attempt) == ("b", 1)
