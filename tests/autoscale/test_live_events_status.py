"""The pieces of ``kubesched autoscale``'s status and events that need no API server: client-go's
event correlation (one Event per repeated message, its count bumped; the spam filter's burst of
25 then one per 5 minutes), NotTriggerScaleUp's reasons, and the status document's times and
transitions."""

from __future__ import annotations

import time

import numpy as np

from kubesched.api.objects import Pod
from kubesched.autoscale.config import GROUP_LABEL, AutoscalerConfig, NodeGroup
from kubesched.autoscale.configfile import template_node
from kubesched.autoscale.core import ClusterAutoscaler
from kubesched.autoscale.events import SPAM_BURST, SPAM_REFILL, EventRecorder, ScaleUpReasons
from kubesched.autoscale.live import LiveView
from kubesched.autoscale.status import StatusBuilder, go_duration, go_time
from kubesched.testing import make_node, make_pod
from tests.autoscale.loop_helpers import FRAMEWORKS, Recorder


class FakeCore:
    """The two CoreV1Api calls the recorder makes, recorded."""

    def __init__(self) -> None:
        self.created: list[dict] = []
        self.patched: list[tuple[str, dict]] = []

    def create_namespaced_event(self, namespace: str, body: dict) -> None:
        self.created.append(body)

    def patch_namespaced_event(self, name: str, namespace: str, body: dict) -> None:
        self.patched.append((name, body))


POD = {"kind": "Pod", "namespace": "default", "name": "p", "uid": "u1", "apiVersion": "v1"}


def test_a_repeated_event_bumps_one_events_count():
    core, t = FakeCore(), [1000.0]
    rec = EventRecorder(core, clock=lambda: t[0])
    for _ in range(3):
        rec.event(POD, "Normal", "NotTriggerScaleUp", "pod didn't trigger scale-up: 1 Insufficient cpu")
        t[0] += 10
    (ev,) = core.created
    assert ev["count"] == 1 and ev["involvedObject"] == POD and ev["metadata"]["namespace"] == "default"
    assert ev["source"] == {"component": "cluster-autoscaler"} and ev["metadata"]["name"].startswith("p.")
    assert [(n, b["count"]) for n, b in core.patched] == [(ev["metadata"]["name"], 2), (ev["metadata"]["name"], 3)]
    assert core.patched[-1][1]["lastTimestamp"] == "1970-01-01T00:17:00Z"
    # another message, or another object: a new Event
    rec.event(POD, "Normal", "NotTriggerScaleUp", "pod didn't trigger scale-up: 2 Insufficient cpu")
    rec.event({"kind": "Node", "name": "n1", "apiVersion": "v1"}, "Normal", "ScaleDown", "marked the node as toBeDeleted/unschedulable")
    assert len(core.created) == 3 and core.created[2]["metadata"]["namespace"] == "default"  # nodes' events: default


def test_spam_filter_burst_then_one_per_five_minutes():
    core, t = FakeCore(), [0.0]
    rec = EventRecorder(core, clock=lambda: t[0])
    for _ in range(SPAM_BURST + 10):  # within a second
        rec.event(POD, "Normal", "TriggeredScaleUp", "pod triggered scale-up: [{g 0->1 (max: 3)}]")
        t[0] += 0.01
    assert 1 + len(core.patched) == SPAM_BURST and rec.dropped == 10
    t[0] += SPAM_REFILL  # one token back
    rec.event(POD, "Normal", "TriggeredScaleUp", "pod triggered scale-up: [{g 0->1 (max: 3)}]")
    rec.event(POD, "Normal", "TriggeredScaleUp", "pod triggered scale-up: [{g 0->1 (max: 3)}]")
    assert core.patched[-1][1]["count"] == SPAM_BURST + 1 and rec.dropped == 11


def test_go_formats():
    assert go_time(1700800099.546750) == "2023-11-24 04:28:19.54675 +0000 UTC"
    assert go_time(1700800099.0) == "2023-11-24 04:28:19 +0000 UTC"
    assert (go_duration(900), go_duration(30), go_duration(3600)) == ("15m0s", "30s", "1h0m0s")


def test_a_conditions_transition_time_stays_until_its_status_changes():
    b = StatusBuilder()
    first = b.condition("scaleUp", {"status": "NoActivity"}, "T1")
    again = b.condition("scaleUp", {"status": "NoActivity"}, "T2")
    changed = b.condition("scaleUp", {"status": "InProgress"}, "T3")
    assert (first["lastTransitionTime"], again["lastTransitionTime"], again["lastProbeTime"]) == ("T1", "T1", "T2")
    assert changed["lastTransitionTime"] == "T3"


def test_not_triggered_reasons_are_counted_over_the_groups():
    """CA's ReasonsMessage: a group at its max is skipped ("max node group size reached"), one
    backing off too; the others reject the pod with the filters' reasons on their template."""
    groups = [NodeGroup(n, template_node(n, {"cpu": "2", "memory": "4Gi"}), 0, m) for n, m in (("full", 1), ("a", 3), ("b", 3))]
    loop = ClusterAutoscaler(AutoscalerConfig(node_groups=groups).validate(), Recorder(), np.random.default_rng(0))
    view = LiveView([make_node("full-1", cpu="2", memory="4Gi", labels={GROUP_LABEL: "full"})], [], FRAMEWORKS)
    pod = Pod.parse(make_pod("huge", requests={"cpu": "3"}))
    now = time.time()
    assert ScaleUpReasons(loop, view, now).message(pod) == "1 max node group size reached, 2 Insufficient cpu"
    loop.groups["a"].backoff_until = now + 300
    assert ScaleUpReasons(loop, view, now).message(pod) == "1 Insufficient cpu, 1 in backoff after failed scale-up, 1 max node group size reached"


def test_an_unhealthy_group_is_not_ready_for_scale_up_and_backoff_comes_before_max_size():
    """filterValidScaleUpNodeGroups' order: IsNodeGroupReadyToScaleUp ("not ready for scale-up"
    for a group too unready, then backoff) before the max size."""
    groups = [NodeGroup(n, template_node(n, {"cpu": "2", "memory": "4Gi"}), 0, m) for n, m in (("sick", 9), ("full", 5))]
    loop = ClusterAutoscaler(AutoscalerConfig(node_groups=groups).validate(), Recorder(), np.random.default_rng(0))
    nodes = [make_node(f"full-{i}", cpu="2", memory="4Gi", labels={GROUP_LABEL: "full"}) for i in range(5)]
    nodes += [make_node(f"sick-{i}", cpu="2", memory="4Gi", labels={GROUP_LABEL: "sick"}) for i in range(5)]
    for n in nodes[6:]:  # 4 of sick's 5 never became Ready (no creationTimestamp: long ago)
        n["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    view = LiveView(nodes, [], FRAMEWORKS)
    now = time.time()
    loop.measure(view.snapshot, now)
    assert loop.health.cluster_healthy() and not loop.health.group_healthy("sick")
    pod = Pod.parse(make_pod("huge", requests={"cpu": "3"}))
    assert ScaleUpReasons(loop, view, now).message(pod) == "1 max node group size reached, 1 not ready for scale-up"
    loop.groups["full"].backoff_until = now + 300  # at its max and backing off: the backoff is named
    assert ScaleUpReasons(loop, view, now).message(pod) == "1 in backoff after failed scale-up, 1 not ready for scale-up"
