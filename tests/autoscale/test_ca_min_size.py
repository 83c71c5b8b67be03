"""``enforceNodeGroupMinSize`` (CA's ``--enforce-node-group-min-size``): node groups below their
min grow to it at the end of the iteration, pending pods or not. Ported from kubernetes/autoscaler
core/scaleup/orchestrator/orchestrator_test.go: TestScaleUpToMeetNodeGroupMinSize (1 of 1: ng1 at
1 of min 3 gets one node, all the 48-core limit leaves; ng2 at its min gets none); the other
tests are kubesched's, on the rules of ScaleUpToNodeGroupMinSize (backoff, upcoming nodes,
maxNodesTotal)."""

from __future__ import annotations

from kubesched.autoscale.config import AutoscalerConfig
from kubesched.autoscale.configfile import load
from kubesched.autoscale.live import LiveView
from tests.autoscale.loop_helpers import FRAMEWORKS
from tests.autoscale.scaleup_cases import group, loop, node, pod, scale_up


def min_size_case(**cfg: object) -> AutoscalerConfig:
    c = AutoscalerConfig(node_groups=[group("ng1", 16000, 32, min_size=3), group("ng2", 16000, 32, min_size=1)], enforce_node_group_min_size=True)
    c.resource_limits.max.update(cpu=48, memory=1000)
    for k, v in cfg.items():
        setattr(c, k, v)
    return c


NODES = [node("n1", 16000, 32, "ng1"), node("n2", 16000, 32, "ng2")]


def test_scale_up_to_meet_node_group_min_size():
    assert scale_up(min_size_case(), NODES, []) == {"ng1": 1}  # 48 - 32 cores left: one 16-core node


def test_min_size_is_not_enforced_unless_asked():
    assert scale_up(min_size_case(enforce_node_group_min_size=False), NODES, []) == {}


def test_without_limits_groups_grow_to_their_min():
    c = min_size_case()
    c.resource_limits.max.update(cpu=0, memory=0)
    assert scale_up(c, NODES, []) == {"ng1": 2}


def test_max_nodes_total_caps_it():
    c = min_size_case(max_nodes_total=3)
    c.resource_limits.max.update(cpu=0, memory=0)
    assert scale_up(c, NODES, []) == {"ng1": 1}


def test_upcoming_nodes_count_and_the_next_iteration_asks_no_more():
    c = min_size_case()
    c.resource_limits.max.update(cpu=0, memory=0)
    ca, prov = loop(c)
    view = LiveView(NODES, [], FRAMEWORKS)
    ca.run_once(view)
    ca.run_once(LiveView(NODES, [], FRAMEWORKS))  # the two nodes are upcoming: ng1's target is 3
    assert prov.created == ["ng1", "ng1"]
    assert ca.stats.scale_ups == 1 and ca.in_cooldown(view.now())  # delayAfterAdd runs, as after any scale-up


def test_a_group_backing_off_is_left_below_its_min():
    c = min_size_case()
    c.resource_limits.max.update(cpu=0, memory=0)
    ca, prov = loop(c)
    view = LiveView(NODES, [], FRAMEWORKS)
    ca.groups["ng1"].backoff_until = view.now() + 300
    ca.run_once(view)
    assert prov.created == []


def test_pending_pods_scale_up_first_and_min_size_tops_up():
    """The regular scale-up runs first (ng1 +1 for the pod); its node counts towards the min."""
    c = min_size_case(expander="priority", priorities={10: ["^ng1$"]})
    c.resource_limits.max.update(cpu=0, memory=0)
    ca, prov = loop(c)
    ca.run_once(LiveView(NODES, [pod("p", 15000, 16)], FRAMEWORKS))
    assert prov.created == ["ng1", "ng1"] and ca.stats.scale_ups == 2


def test_read_from_the_file():
    doc = {"enforceNodeGroupMinSize": True, "nodeGroups": [{"name": "g", "template": {"cpu": "8", "memory": "8Gi"}, "min": 2}]}
    assert load(doc, "a.yaml").enforce_node_group_min_size is True
