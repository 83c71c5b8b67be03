"""A pending pod that fits on a node registered lately keeps that node in use: Cluster
Autoscaler packs such pods into the snapshot its scale-down reads (filter-out-schedulable), so a
node the scheduler has not filled yet is neither unneeded nor a free destination for a drain."""

from __future__ import annotations

import numpy as np

from kubesched.app import build_registry
from kubesched.autoscale.config import AutoscalerConfig, Delay, NodeGroup, ScaleDown
from kubesched.autoscale.configfile import template_node
from kubesched.autoscale.core import ClusterAutoscaler
from kubesched.autoscale.karpenter import KarpenterLike
from kubesched.autoscale.live import LiveView, node_body
from kubesched.config.load import default_config
from kubesched.scheduler import Scheduler
from kubesched.state.snapshot import Snapshot
from kubesched.testing import make_pod

REG = build_registry()
FRAMEWORKS = Scheduler(default_config(REG.points_of), Snapshot(), None, REG, seed=0).frameworks
SMALL = NodeGroup("small", template_node("small", {"cpu": "4", "memory": "16Gi"}), 0, 5)
PENDING = {
    **make_pod("p", requests={"cpu": "3", "memory": "1Gi"}),
    "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]},
}


class Recorder:
    def __init__(self) -> None:
        self.created: list[dict] = []
        self.deleted: list[str] = []

    def create(self, group, node) -> None:  # noqa: ANN001
        self.created.append(node_body(node))

    def delete(self, name: str) -> None:
        self.deleted.append(name)

    def cancel(self, name: str) -> None:
        raise AssertionError(f"{name} was given up on")


def config(mode: str) -> AutoscalerConfig:
    quick = ScaleDown(unneeded_time=0.0, delay_after_add=0.0)  # an empty node may go at once
    return AutoscalerConfig(node_groups=[SMALL], mode=mode, provisioning_delay=Delay("constant", 0.0, 0.0), scale_down=quick).validate()


def test_ca_keeps_a_new_node_that_a_pending_pod_fits_on_then_removes_it_once_empty():
    prov = Recorder()
    ca = ClusterAutoscaler(config("cluster-autoscaler"), prov, np.random.default_rng(0))
    ca.run_once(LiveView([], [PENDING], FRAMEWORKS))
    assert [n["metadata"]["name"] for n in prov.created] == ["small-1"]
    # the node registered; the scheduler has not bound the pod yet: no second node, no removal
    ca.run_once(LiveView(prov.created, [PENDING], FRAMEWORKS))
    assert len(prov.created) == 1 and prov.deleted == []
    assert list(ca.hinted) == ["small-1"]
    # the pod went away: the empty node is removed
    ca.run_once(LiveView(prov.created, [], FRAMEWORKS))
    assert prov.deleted == ["small-1"]


def test_karpenter_does_not_consolidate_a_node_a_pending_pod_is_about_to_land_on():
    prov = Recorder()
    kp = KarpenterLike(config("karpenter"), prov, np.random.default_rng(0))
    kp.cfg.karpenter.batch_idle = 0.0
    kp.cfg.karpenter.consolidate_after = 0.0
    kp.run_once(LiveView([], [PENDING], FRAMEWORKS))  # the batch opens and closes at once
    assert [n["metadata"]["name"] for n in prov.created] == ["small-1"]
    kp.last_consolidation = -float("inf")
    kp.run_once(LiveView(prov.created, [PENDING], FRAMEWORKS))
    assert len(prov.created) == 1 and prov.deleted == []
    kp.last_consolidation = -float("inf")
    kp.run_once(LiveView(prov.created, [], FRAMEWORKS))
    assert prov.deleted == ["small-1"]
