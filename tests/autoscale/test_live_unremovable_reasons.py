"""Why a node is not removed, as Cluster Autoscaler's simulator.UnremovableReason names it: what
``kubesched autoscale`` logs and counts in ``cluster_autoscaler_unremovable_nodes_count{reason}``,
from the ``LoopRecord`` the loop fills when a watcher sets one."""

from __future__ import annotations

import time

import numpy as np

from kubesched.autoscale import eligibility as el
from kubesched.autoscale.config import GROUP_LABEL, AutoscalerConfig, Delay, NodeGroup, ScaleDown
from kubesched.autoscale.configfile import template_node
from kubesched.autoscale.core import ClusterAutoscaler
from kubesched.autoscale.interface import LoopRecord
from kubesched.autoscale.live import LiveView
from kubesched.autoscale.scaledown import SAFE_TO_EVICT
from kubesched.testing import make_node, make_pod
from tests.autoscale.loop_helpers import FRAMEWORKS, Recorder

SMALL = NodeGroup("small", template_node("small", {"cpu": "4", "memory": "16Gi"}), 0, 10)
PINNED = NodeGroup("pinned", template_node("pinned", {"cpu": "4", "memory": "16Gi"}), 1, 10)


def group_node(name: str, group: str = "small", memory: str | None = "16Gi", **kw) -> dict:
    return make_node(name, cpu="4", memory=memory, labels={GROUP_LABEL: group}, **kw)


def record_of(nodes: list[dict], pods: list[dict], unneeded_time: float = 0.0) -> tuple[LoopRecord, list[str]]:
    cfg = AutoscalerConfig(node_groups=[SMALL, PINNED], provisioning_delay=Delay("constant", 0.0, 0.0),
                           scale_down=ScaleDown(unneeded_time=unneeded_time, delay_after_add=0.0, max_drain_parallelism=5)).validate()
    prov = Recorder()
    loop = ClusterAutoscaler(cfg, prov, np.random.default_rng(0))
    record = loop.record = LoopRecord()
    loop.run_once(LiveView(nodes, pods, FRAMEWORKS))
    return record, prov.deleted


def test_each_node_that_stays_has_its_reason():
    now = int(time.time())
    annotated = group_node("annotated")
    annotated["metadata"]["annotations"] = {el.SCALE_DOWN_DISABLED: "true"}
    nodes = [
        make_node("outside", cpu="4", memory="16Gi"),
        group_node("busy"),
        group_node("no-memory", memory=None),
        annotated,
        group_node("deleting", taints=[{"key": el.TO_BE_DELETED_TAINT, "value": str(now - 30), "effect": "NoSchedule"}]),
        group_node("last-pinned", group="pinned"),
        group_node("blocked"),
        group_node("goes"),
    ]
    blocked = make_pod("precious", requests={"cpu": "100m"}, node="blocked")
    blocked["metadata"]["annotations"] = {SAFE_TO_EVICT: "false"}
    pods = [make_pod("big", requests={"cpu": "3"}, node="busy"), blocked, make_pod("light", requests={"cpu": "100m"}, node="goes")]
    record, deleted = record_of(nodes, pods)
    assert deleted == ["goes"]
    assert record.unremovable == {
        "outside": el.NOT_AUTOSCALED,
        "busy": el.NOT_UNDERUTILIZED,
        "no-memory": el.UNEXPECTED_ERROR,
        "annotated": el.ANNOTATED,
        "deleting": el.BEING_DELETED,
        "last-pinned": el.MIN_SIZE_REACHED,
        "blocked": el.BLOCKED_BY_POD,
    }
    (sd,) = record.scale_downs
    assert (sd.node, sd.group, sd.empty, [p.name for p in sd.pods]) == ("goes", "small", False, ["light"])
    assert set(record.unneeded) == {"last-pinned", "blocked", "goes"}


def test_unneeded_not_long_enough_and_no_place_to_move_pods():
    # one node, its pod has nowhere else to go (no other node)
    record, deleted = record_of([group_node("alone")], [make_pod("p", requests={"cpu": "100m"}, node="alone")])
    assert deleted == [] and record.unremovable == {"alone": el.NO_PLACE_TO_MOVE_PODS}
    record, deleted = record_of([group_node("fresh")], [], unneeded_time=600)
    assert deleted == [] and record.unremovable == {"fresh": el.NOT_UNNEEDED_LONG_ENOUGH}


def test_the_simulator_sets_no_record_and_pays_nothing():
    cfg = AutoscalerConfig(node_groups=[SMALL]).validate()
    loop = ClusterAutoscaler(cfg, Recorder(), np.random.default_rng(0))
    loop.run_once(LiveView([group_node("n")], [], FRAMEWORKS))
    assert loop.record is None


def daemon_pod(name: str, node: str) -> dict:
    """A DaemonSet's pod, pinned to its node as the DaemonSet controller pins it."""
    d = make_pod(name, requests={"cpu": "100m"}, node=node)
    d["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": "ds", "controller": True}]
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    d["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}
    return d


def test_daemonset_and_mirror_pods_do_not_hold_a_node():
    """CA's GetPodsToMove leaves them out: a node with only those is empty, and a busy node
    drains though its DaemonSet pod fits nowhere else (before: NoPlaceToMovePods, kept forever)."""
    mirror = make_pod("static", requests={"cpu": "100m"}, node="only-daemons")
    mirror["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "x"}
    nodes = [group_node("only-daemons"), group_node("busy-daemons"), make_node("spare", cpu="4", memory="16Gi")]
    pods = [daemon_pod("ds-a", "only-daemons"), mirror, daemon_pod("ds-b", "busy-daemons"),
            make_pod("app", requests={"cpu": "100m"}, node="busy-daemons"), daemon_pod("ds-c", "spare")]
    record, deleted = record_of(nodes, pods)
    assert sorted(deleted) == ["busy-daemons", "only-daemons"]
    assert {sd.node: sd.empty for sd in record.scale_downs} == {"only-daemons": True, "busy-daemons": False}
