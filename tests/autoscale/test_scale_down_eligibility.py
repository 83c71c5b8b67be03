"""Which nodes scale-down may consider (Cluster Autoscaler's core/scaledown/eligibility), through
the autoscaler's loop as ``kubesched autoscale`` runs it live and the simulator runs it.

TestFilterOutUnremovable is ported from kubernetes/autoscaler
cluster-autoscaler/core/scaledown/eligibility/eligibility_test.go: all 16 of its cases. Upstream's
getTestCases(true, ...) appends its two DaemonSet cases to the unsuffixed list, so the seven
common cases run twice, both times with IgnoreDaemonSetsUtilization=false: they run here under
both names, plus the two DaemonSet cases."""

from __future__ import annotations

import time

import numpy as np
import pytest

from kubesched.autoscale.config import GROUP_LABEL, AutoscalerConfig, Delay, NodeGroup, ScaleDown
from kubesched.autoscale.configfile import template_node
from kubesched.autoscale.core import ClusterAutoscaler
from kubesched.autoscale.eligibility import SCALE_DOWN_DISABLED, TO_BE_DELETED_TAINT
from kubesched.autoscale.karpenter import KarpenterLike
from kubesched.autoscale.live import LiveView
from kubesched.gpu.model import GPU_MODEL
from kubesched.testing import make_node, make_pod
from tests.autoscale.loop_helpers import FRAMEWORKS, Recorder
from tests.autoscale.readiness_helpers import set_ready

SMALL = NodeGroup("small", template_node("small", {"cpu": "4", "memory": "16Gi"}), 0, 5)


def config(mode: str = "cluster-autoscaler") -> AutoscalerConfig:
    quick = ScaleDown(unneeded_time=0.0, delay_after_add=0.0)  # an unneeded node may go at once
    return AutoscalerConfig(node_groups=[SMALL], mode=mode, provisioning_delay=Delay("constant", 0.0, 0.0), scale_down=quick).validate()


def group_node(name: str, *, memory: str | None = "16Gi", **kw) -> dict:
    return make_node(name, cpu="4", memory=memory, labels={GROUP_LABEL: "small"}, **kw)


def busy(node: str, cpu: str = "1") -> dict:
    return make_pod(f"on-{node}", requests={"cpu": cpu}, node=node)


def removed(nodes: list[dict], pods: list[dict] | None = None, mode: str = "cluster-autoscaler") -> list[str]:
    """The nodes one iteration of the loop deletes (no unneeded time to wait)."""
    prov = Recorder()
    cls = KarpenterLike if mode == "karpenter" else ClusterAutoscaler
    loop = cls(config(mode), prov, np.random.default_rng(0))
    if mode == "karpenter":
        loop.cfg.karpenter.consolidate_after = 0.0
    loop.run_once(LiveView(nodes, pods or [], FRAMEWORKS))
    return sorted(prov.deleted)


def test_node_without_memory_allocatable_is_not_unneeded():
    """CA's utilisation is an error there (info.go), so the node is not a scale-down candidate;
    its 1 of 4 CPUs (0.25) alone would have made it unneeded."""
    nodes = [group_node("no-memory", memory=None), group_node("regular", memory="16Gi")]
    pods = [busy("no-memory"), busy("regular")]
    assert removed(nodes, pods) == ["regular"]



def test_node_labelled_for_gpus_without_gpus_is_judged_by_its_gpus():
    """CA's unready GPU: utilisation 0, not its CPU's 0.6, so its pod moves and it goes."""
    unready = make_node("unready-gpu", cpu="4", memory="16Gi", labels={GROUP_LABEL: "small", GPU_MODEL: "V100M16"})
    spare = make_node("spare", cpu="4", memory="16Gi")  # no node group: never removed
    assert removed([unready, spare], [busy("unready-gpu", "2400m")]) == ["unready-gpu"]


# ---- eligibility_test.go: TestFilterOutUnremovable --------------------------------------------


def build_test_node(name: str, *, taints: list[dict] | None = None, annotations: dict | None = None, ready: bool = True) -> dict:
    """BuildTestNode(name, 1000, 10) in node group ng1: 1000m CPU, 10 bytes of memory;
    SetNodeReadyState(``ready``)."""
    d = make_node(name, cpu="1000m", memory="10", labels={GROUP_LABEL: "small"}, taints=taints)
    if annotations:
        d["metadata"]["annotations"] = annotations
    return set_ready(d, ready)


def unremovable_cases(now: float) -> list[tuple]:
    regular = build_test_node("regular")
    just_deleted = build_test_node("justDeleted", taints=[{"key": TO_BE_DELETED_TAINT, "value": str(int(now) - 30), "effect": "NoSchedule"}])
    no_scale_down = build_test_node("noScaleDown", annotations={SCALE_DOWN_DISABLED: "true"})
    big_pod = make_pod("bigPod", requests={"cpu": "600m"}, node="regular")
    small_pod = make_pod("smallPod", requests={"cpu": "100m"}, node="regular")
    unready = build_test_node("unready", ready=False)
    common = [
        ("regular node stays", [regular], [], ["regular"], False),
        ("recently deleted node is filtered out", [regular, just_deleted], [], ["regular"], False),
        ("marked no scale down is filtered out", [no_scale_down, regular], [], ["regular"], False),
        ("highly utilized node is filtered out", [regular], [big_pod], [], False),
        ("underutilized node stays", [regular], [small_pod], ["regular"], False),
        ("unready node stays", [unready], [], ["unready"], False),
        ("unready node is filtered oud when scale-down of unready is disabled", [unready], [], [], False, False),
    ]
    ds_pod = make_pod("dsPod", requests={"cpu": "500m"}, node="regular")
    ds_pod["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": "ds", "controller": True}]
    common = [c if len(c) == 6 else (*c, True) for c in common]  # scaleDownUnready: true but in the last
    return [
        *[(d + " IgnoreDaemonSetUtilization=false", *rest) for d, *rest in common],
        *[(d, *rest) for d, *rest in common],  # upstream's second round, unsuffixed
        ("high utilization daemonsets node is filtered out", [regular], [small_pod, ds_pod], [], False, True),
        ("high utilization daemonsets node stays", [regular], [small_pod, ds_pod], ["regular"], True, True),
    ]


NOW = time.time()
CASES = unremovable_cases(NOW)


@pytest.mark.parametrize(("desc", "nodes", "pods", "want", "ignore_ds", "unready"), CASES, ids=[c[0] for c in CASES])
def test_filter_out_unremovable(desc, nodes, pods, want, ignore_ds, unready):
    cfg = config()
    cfg.scale_down.ignore_daemonsets_utilization = ignore_ds
    cfg.scale_down.unready_enabled = unready
    ca = ClusterAutoscaler(cfg, Recorder(), np.random.default_rng(0))
    view = LiveView(nodes, pods, FRAMEWORKS)
    ca.measure(view.snapshot, NOW)
    assert ca.filter_out_unremovable(view.snapshot, NOW) == want


# ---- the same, through the loop -----------------------------------------------------------------


@pytest.mark.parametrize("mode", ["cluster-autoscaler", "karpenter"])
def test_protected_node_is_neither_drained_nor_deleted(mode):
    """An operator's scale-down-disabled node stays, empty or busy; the unprotected one goes
    (the Karpenter-like mode's consolidation honours the annotation too)."""
    protected = group_node("protected")
    protected["metadata"]["annotations"] = {SCALE_DOWN_DISABLED: "true"}
    assert removed([protected, group_node("other")], mode=mode) == ["other"]
    assert removed([protected, make_node("spare", cpu="4", memory="16Gi")], [busy("protected")], mode=mode) == []


def test_node_being_deleted_is_left_to_its_deletion_then_considered_again():
    fresh = {"key": TO_BE_DELETED_TAINT, "value": str(int(time.time()) - 30), "effect": "NoSchedule"}
    stale = {**fresh, "value": str(int(time.time()) - 600)}  # a deletion that did not finish
    assert removed([group_node("going", taints=[fresh])]) == []
    assert removed([group_node("stuck", taints=[stale])]) == ["stuck"]
