"""Scale-down of unready nodes (``scaleDown.unreadyTime``, ``scaleDown.unreadyEnabled``: CA's
``--scale-down-unready-time``, ``--scale-down-unready-enabled``) and the resource limits' mins
(``coresTotal``, ``memoryTotal``, ``gpuTotal``: no removal takes the cluster under one), through
the loop. Ported from kubernetes/autoscaler cluster-autoscaler:

* core/scaledown/legacy/legacy_test.go: TestNoScaleDownUnready, TestScaleDownNoMove,
  TestScaleDownEmptyMinCoresLimitHit, TestScaleDownEmptyMinMemoryLimitHit,
  TestScaleDownEmptyMinGpuLimitHit.
* core/scaledown/resource/limits_test.go: TestCalculateCoresAndMemoryTotal,
  TestCheckDeltaWithinLimits (4 of its 6 rows; the two with an unknown limit, a cloud provider's
  error, cannot occur).
The eligibility rows on unready nodes are in test_scale_down_eligibility.py.
"""

from __future__ import annotations

import pytest

from kubesched.autoscale import eligibility
from kubesched.autoscale.config import AutoscalerConfig, ScaleDown
from kubesched.autoscale.interface import LoopRecord
from kubesched.autoscale.limits import GIB, exceeded
from kubesched.autoscale.live import LiveView
from kubesched.gpu.model import GPU_MODEL
from tests.autoscale.loop_helpers import FRAMEWORKS
from tests.autoscale.readiness_helpers import MIN, NOW, build_node, groups, loop
from tests.autoscale.scaleup_cases import MIB, ViewAt, pod


def run(ca, nodes, pods, t: float) -> LoopRecord:
    record = ca.record = LoopRecord()
    ca.run_once(ViewAt(t, nodes, pods))
    return record


# ---- legacy_test.go: unready nodes --------------------------------------------------------------
def unready_case(**scale_down: object) -> tuple:
    """n1 unready (long ago), empty; n2 ready, 80 % used; ng1 min 1. Unneeded 1 minute, unready
    1 hour."""
    ca = loop(groups(("ng1", 1, 10)))
    ca.cfg.scale_down = ScaleDown(unneeded_time=MIN, unready_time=3600.0, utilization_threshold=0.5, **scale_down)
    nodes = [build_node("n1", "ng1", ready=False), build_node("n2", "ng1")]
    return ca, nodes, [pod("p2", 800, on="n2")]


def test_no_scale_down_unready():
    """TestNoScaleDownUnready: unneeded for 5 minutes, the unready n1 is not removed (it needs an
    hour); after 2 hours it is, as an unready node."""
    ca, nodes, pods = unready_case()
    run(ca, nodes, pods, NOW - 5 * MIN)
    record = run(ca, nodes, pods, NOW)
    assert ca.provider.deleted == []
    assert record.unremovable["n1"] == eligibility.NOT_UNREADY_LONG_ENOUGH
    assert record.unremovable["n2"] == eligibility.NOT_UNDERUTILIZED
    record = run(ca, nodes, pods, NOW - 5 * MIN + 2 * 3600)
    assert ca.provider.deleted == ["n1"]
    assert [(sd.node, sd.unready) for sd in record.scale_downs] == [("n1", True)]


def test_a_ready_node_waits_unneeded_time_only():
    """The same n1 ready goes after the 1-minute unneededTime."""
    ca, nodes, pods = unready_case()
    nodes[0] = build_node("n1", "ng1")
    run(ca, nodes, pods, NOW - 5 * MIN)
    record = run(ca, nodes, pods, NOW)
    assert ca.provider.deleted == ["n1"] and not record.scale_downs[0].unready


def test_unready_nodes_stay_when_their_scale_down_is_disabled():
    """--scale-down-unready-enabled=false: an unready node is no candidate at all
    (ScaleDownUnreadyDisabled), however long it waits."""
    ca, nodes, pods = unready_case(unready_enabled=False)
    run(ca, nodes, pods, NOW)
    record = run(ca, nodes, pods, NOW + 3 * 3600)
    assert ca.provider.deleted == [] and "n1" not in ca.unneeded_since
    assert record.unremovable["n1"] == eligibility.SCALE_DOWN_UNREADY_DISABLED


def test_a_node_not_started_is_no_candidate_until_its_startup_time_is_over():
    """A node created 5 minutes ago and not ready is NotStarted: neither a candidate nor given
    a reason; 15 minutes after its creation it is Unready, and its unready time starts then."""
    ca, nodes, pods = unready_case()
    nodes[0] = build_node("n1", "ng1", ready=False, created=NOW - 5 * MIN)
    record = run(ca, nodes, pods, NOW)
    assert "n1" not in ca.unneeded_since and "n1" not in record.unremovable
    record = run(ca, nodes, pods, NOW + 10 * MIN)
    assert ca.unneeded_since["n1"] == NOW + 10 * MIN
    assert record.unremovable["n1"] == eligibility.NOT_UNREADY_LONG_ENOUGH
    run(ca, nodes, pods, NOW + 10 * MIN + 3600)
    assert ca.provider.deleted == ["n1"]


def test_scale_down_no_move():
    """TestScaleDownNoMove: n1's pod could only move to n2, which is unready (tainted
    not-ready): n1 stays; n2, 80 % used, is no candidate."""
    ca = loop(groups(("ng1", 1, 10)))
    ca.cfg.scale_down = ScaleDown(unneeded_time=MIN, unready_time=3600.0, utilization_threshold=0.5)
    nodes = [build_node("n1", "ng1"), build_node("n2", "ng1", ready=False)]
    p1 = pod("p1", 100, on="n1")
    p1["metadata"]["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": "job", "uid": "job", "controller": True}]
    pods = [p1, pod("p2", 800, on="n2")]
    run(ca, nodes, pods, NOW - 5 * MIN)
    record = run(ca, nodes, pods, NOW)
    assert ca.provider.deleted == []
    assert record.unremovable["n1"] == eligibility.NO_PLACE_TO_MOVE_PODS


# ---- legacy_test.go: the limits' mins -----------------------------------------------------------
def empty_scale_down(cfg_limits: dict[str, int], nodes: list[dict]) -> tuple[list[str], LoopRecord]:
    """simpleScaleDownEmpty: empty ready nodes of ng1 (min 1), unneeded long enough."""
    ca = loop(groups(("ng1", 1, 10)))
    ca.cfg.scale_down = ScaleDown(unneeded_time=0.0)
    ca.cfg.resource_limits.min.update(cfg_limits)
    for r in cfg_limits:
        ca.cfg.resource_limits.max.setdefault(r, 50)
    record = run(ca, nodes, [], NOW)
    return ca.provider.deleted, record


def test_scale_down_empty_min_cores_limit_hit():
    """TestScaleDownEmptyMinCoresLimitHit: 3 cores, min 2: only the 1-core node may go."""
    deleted, record = empty_scale_down({"cpu": 2}, [build_node("n1", "ng1", cpu="2000m"), build_node("n2", "ng1")])
    assert deleted == ["n2"]
    assert record.unremovable["n1"] == eligibility.MINIMAL_RESOURCE_LIMIT_EXCEEDED


def test_scale_down_empty_min_memory_limit_hit():
    """TestScaleDownEmptyMinMemoryLimitHit: 6000 MiB, min 4000 MiB: two of the 1000-MiB nodes go."""
    nodes = [build_node("n1", "ng1", cpu="2000m", memory=str(1000 * MIB))]
    nodes += [build_node(n, "ng1", memory=str(m * MIB)) for n, m in (("n2", 1000), ("n3", 1000), ("n4", 3000))]
    deleted, record = empty_scale_down({"memory": 4000 * MIB}, nodes)
    assert len(deleted) == 2 and set(deleted) <= {"n1", "n2", "n3"}
    assert record.unremovable["n4"] == eligibility.MINIMAL_RESOURCE_LIMIT_EXCEEDED


def test_scale_down_empty_min_gpu_limit_hit():
    """TestScaleDownEmptyMinGpuLimitHit: six 1-GPU nodes of the default type, its min 4: two
    go (the other type's min of 5 does not apply to them)."""
    nodes = []
    for i in range(1, 7):
        d = build_node(f"n{i}", "ng1", memory=str(1000 * MIB))
        d["status"]["allocatable"]["nvidia.com/gpu"] = d["status"]["capacity"]["nvidia.com/gpu"] = "1"
        d["metadata"]["labels"][GPU_MODEL] = "nvidia-tesla-k80"
        nodes.append(d)
    deleted, _ = empty_scale_down({"nvidia-tesla-k80": 4, "nvidia-tesla-p100": 5}, nodes)
    assert len(deleted) == 2


def test_without_a_min_every_empty_node_above_the_group_min_goes():
    deleted, _ = empty_scale_down({}, [build_node("n1", "ng1", cpu="2000m"), build_node("n2", "ng1")])
    assert deleted == ["n1"]  # the group's min size (1) keeps the other


# ---- limits_test.go -------------------------------------------------------------------------------
def test_calculate_cores_and_memory_total():
    """TestCalculateCoresAndMemoryTotal: 7 nodes, the last being deleted: 42 cores, 44000 MiB
    (what a min of 1 leaves to remove: one less)."""
    sizes = [(2, 7500), (2, 7500), (2, 7500), (12, 8000), (16, 7500), (8, 6000), (6, 16000)]
    nodes = [build_node(f"n{i}", "ng1", cpu=f"{c * 1000}m", memory=str(m * MIB)) for i, (c, m) in enumerate(sizes, 1)]
    nodes[6]["spec"]["taints"] = [{"key": eligibility.TO_BE_DELETED_TAINT, "value": str(int(NOW)), "effect": "NoSchedule"}]
    ca = loop(groups(("ng1", 0, 10)))
    ca.cfg.resource_limits.min.update(cpu=1, memory=1)
    assert ca.scale_down_left(LiveView(nodes, [], FRAMEWORKS).snapshot, NOW) == {"cpu": 41, "memory": 44000 * MIB - 1}


@pytest.mark.parametrize(
    ("limits", "delta", "want"),
    [
        ({"a": 10}, {"a": 10}, []),
        ({"a": 10}, {"a": 11}, ["a"]),
        ({"a": 10}, {"b": 10}, []),
        ({"a": 10, "b": 20, "c": 30}, {"a": 11, "b": 20, "c": 31}, ["a", "c"]),
    ],
)
def test_check_delta_within_limits(limits, delta, want):
    assert exceeded(limits, delta) == want


def test_min_limits_read_from_the_file_and_flags():
    """coresTotal / memoryTotal's MIN (memory in GiB, as CA's --memory-total) bound scale-down."""
    from kubesched.autoscale.configfile import load

    cfg = load({"flags": ["--cores-total=4:320", "--memory-total=2:100"], "nodeGroups": []}, "as.yaml", groups_required=False)
    assert (cfg.resource_limits.min["cpu"], cfg.resource_limits.min["memory"]) == (4, 2 * GIB)
    assert isinstance(cfg, AutoscalerConfig)
