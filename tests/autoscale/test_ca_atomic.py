"""Atomic node groups (``nodeGroups[].zeroOrMaxNodeScaling``: CA's ZeroOrMaxNodeScaling option)
grow straight to their max or not at all, and the estimation limit ``maxNodesPerScaleUp``
(``--max-nodes-per-scaleup``). Ported from kubernetes/autoscaler
core/scaleup/orchestrator/orchestrator_test.go: TestZeroOrMaxNodeScaling (6 of 6 cases; every
group atomic, as upstream's NodeGroupDefaults; where upstream forces the expander's choice the
priority expander makes it here)."""

from __future__ import annotations

import pytest

from kubesched.autoscale.config import AutoscalerConfig
from kubesched.autoscale.configfile import load
from kubesched.errors import InputError
from tests.autoscale.scaleup_cases import group, node, pod, scale_up


def atomic(*groups, **cfg) -> AutoscalerConfig:
    for g in groups:
        g.zero_or_max_node_scaling = True
    return AutoscalerConfig(node_groups=list(groups), **cfg)


def ng1_busy() -> tuple[list[dict], list[dict]]:
    return [node("n1", 900, 900, "ng1")], [pod("p1", 900, 900, on="n1")]


def test_atomic_scale_up_ok():
    nodes, pods = ng1_busy()
    cfg = atomic(group("ng1", 900, 900, 0, 5), group("ng2", 1000, 1000, 0, 5))
    assert scale_up(cfg, nodes, pods + [pod("p-new", 1000, 1000)]) == {"ng2": 5}


def test_atomic_scale_up_with_similar_node_groups():
    nodes, pods = ng1_busy()
    cfg = atomic(group("ng1", 900, 900, 0, 5), group("ng2", 1000, 1000, 0, 5), group("ng3", 1000, 1000, 0, 4), balance_similar_node_groups=True)
    extra = [pod(f"p-new-{i}", 1000, 1000) for i in (1, 2, 3, 4)]
    assert scale_up(cfg, nodes, pods + extra) == {"ng3": 4}  # least waste; atomic groups are not balanced


def test_atomic_scale_up_mixed():
    nodes = [node("n1", 500, 2000, "ng1"), node("n2", 2000, 500, "ng2")]
    pods = [pod("p1", 400, 1900, on="n1"), pod("p2", 1900, 400, on="n2")]
    extra = [pod("p-triggering", 1000, 1000), pod("p-remaining", 2000, 2000), pod("p-awaiting", 100, 1800)]
    groups = (group("ng1", 500, 2000, 0, 5), group("ng2", 2000, 500, 0, 5), group("ng3", 1000, 1000, 0, 5))
    cfg = atomic(*groups, expander="priority", priorities={10: ["^ng3$"]})
    assert scale_up(cfg, nodes, pods + extra) == {"ng3": 5}


@pytest.mark.parametrize(
    ("limits", "case"),
    [({"cpu": 3}, "max cores limit hit"), ({"memory": 3000}, "max memory limit hit")],
)
def test_atomic_scale_up_limit_hit(limits, case):
    nodes, pods = ng1_busy()
    cfg = atomic(group("ng1", 900, 900, 0, 5), group("ng2", 1000, 1000, 0, 3))
    cfg.resource_limits.max.update(limits)
    extra = [pod("p-new-1", 1000, 1000), pod("p-new-2", 1000, 1000)]
    assert scale_up(cfg, nodes, pods + extra) == {}, case  # three nodes at once would exceed it
    cfg.node_groups[1].zero_or_max_node_scaling = False
    assert scale_up(cfg, nodes, pods + extra) == {"ng2": 2}, case  # not atomic: two fit


def test_atomic_scale_up_max_nodes_count_limit_hit():
    nodes = [node("n1", 900, 900, "ng1"), node("n2", 900, 900, "ng1")]
    pods = [pod("p1", 900, 900, on="n1"), pod("p2", 900, 900, on="n1")]
    cfg = atomic(group("ng1", 900, 900, 0, 2), group("ng2", 1000, 1000, 0, 5), max_nodes_total=5)
    assert scale_up(cfg, nodes, pods + [pod("p-new-1", 1000, 1000), pod("p-new-2", 1000, 1000)]) == {}


def test_an_atomic_group_at_some_size_adds_the_rest():
    cfg = atomic(group("ng2", 1000, 1000, 0, 5))
    assert scale_up(cfg, [node("m1", 1000, 1000, "ng2")], [pod("x", 1000, 1000, on="m1"), pod("p-new", 1000, 1000)]) == {"ng2": 4}


def test_max_nodes_per_scale_up_caps_the_estimate():
    cfg = AutoscalerConfig(node_groups=[group("ng", 1000, 1000, 0, 10)], max_nodes_per_scale_up=2)
    extra = [pod(f"p{i}", 1000, 1000) for i in range(5)]
    assert scale_up(cfg, [], extra) == {"ng": 2}
    cfg.max_nodes_per_scale_up = 1000
    assert scale_up(cfg, [], extra) == {"ng": 5}


def test_read_from_the_file():
    doc = {"maxNodesPerScaleUp": 50, "nodeGroups": [{"name": "g", "template": {"cpu": "8", "memory": "8Gi"}, "max": 4, "zeroOrMaxNodeScaling": True}]}
    cfg = load(doc, "a.yaml")
    assert cfg.max_nodes_per_scale_up == 50 and cfg.node_groups[0].zero_or_max_node_scaling


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"maxNodesPerScaleUp": 0}, "a.yaml: maxNodesPerScaleUp: must be at least 1, got 0"),
        ({"nodeGroups": [{"name": "g", "template": {"cpu": "8", "memory": "8Gi"}, "zeroOrMaxNodeScaling": 1}]}, "a.yaml: nodeGroups[0].zeroOrMaxNodeScaling: invalid value"),
    ],
)
def test_bad_values_name_the_field(doc, message):
    with pytest.raises(InputError) as e:
        load({"nodeGroups": [{"name": "g", "template": {"cpu": "8", "memory": "8Gi"}}], **doc}, "a.yaml")
    assert str(e.value).startswith(message), str(e.value)
