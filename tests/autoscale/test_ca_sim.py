"""The scale-up options in the simulator (``simulate_elastic``, what ``kubesched experiment
elastic --autoscaler FILE`` runs): the same loop as live, so the same decisions on virtual time."""

from __future__ import annotations

from kubesched.autoscale.config import AutoscalerConfig, Delay, NodeGroup, ScaleDown
from kubesched.autoscale.configfile import load
from kubesched.sim.workload import Workload
from tests.autoscale.test_elastic_sim import SMALL, base_nodes, pods, run


def small_groups(*names: str, max_size: int = 10) -> list[NodeGroup]:
    return [NodeGroup(n, SMALL, 0, max_size) for n in names]


def sim_cfg(**kw: object) -> AutoscalerConfig:
    c = AutoscalerConfig(provisioning_delay=Delay("constant", 60.0, 0.0), scale_down=ScaleDown(enabled=False), **kw)
    return c.validate()


def test_cores_total_caps_the_simulated_cluster():
    ps, arr, dur = pods(6, duration=None)  # 3-CPU pods: one per 4-CPU node
    c = sim_cfg(node_groups=small_groups("a"))
    c.resource_limits.max["cpu"] = 16
    s = run(Workload([], ps, arr, dur), c, end=900.0).summary
    assert s["peak_nodes"] == 4 and s["bound"] == 4  # 16 cores: four nodes, two pods left pending


def test_balancing_splits_the_simulated_scale_up():
    """Two similar groups of 2 nodes each and four one-node pods: balanced, one scale-up of four
    nodes split 2 + 2; unbalanced, a group's room caps its option, so it takes two scale-ups."""
    ps, arr, dur = pods(4, duration=None)
    c = sim_cfg(node_groups=small_groups("a", "b", max_size=2), balance_similar_node_groups=True)
    s = run(Workload([], ps, arr, dur), c, end=900.0).summary
    assert (s["scale_ups"], s["nodes_added"], s["bound"]) == (1, 4, 4)
    c.balance_similar_node_groups = False
    s = run(Workload([], ps, arr, dur), c, end=900.0).summary
    assert (s["scale_ups"], s["nodes_added"], s["bound"]) == (2, 4, 4)


def test_min_size_is_enforced_in_the_simulator():
    grp = NodeGroup("a", SMALL, 3, 10)
    c = sim_cfg(node_groups=[grp], enforce_node_group_min_size=True)
    res = run(Workload(base_nodes(grp, 1), [], [], []), c, end=300.0)
    assert res.summary["nodes_added"] == 2 and res.series["nodes"][-1] == 3


def test_flags_in_the_simulator():
    doc = {"flags": ["--max-nodes-per-scaleup=2", "--scale-down-enabled=false"], "nodeGroups": [{"name": "a", "template": {"cpu": "4", "memory": "16Gi"}}]}
    c = load(doc, "as.yaml")
    c.provisioning_delay = Delay("constant", 60.0, 0.0)
    ps, arr, dur = pods(5, duration=None)
    s = run(Workload([], ps, arr, dur), c, end=900.0).summary
    assert s["bound"] == 5 and s["scale_ups"] >= 3  # two nodes per scan at most
