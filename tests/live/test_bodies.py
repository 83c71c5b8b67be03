"""Request bodies as kube-scheduler writes them (Binding, events, status patches)."""

from __future__ import annotations

import datetime as dt

from kubesched.api.objects import Pod
from kubesched.framework.diagnosis import MAX_MESSAGE_LEN
from kubesched.live import bodies
from kubesched.testing import make_pod

T = dt.datetime(2025, 3, 4, 5, 6, 7, 123456, tzinfo=dt.UTC).timestamp()


def pod() -> Pod:
    d = make_pod("web-1", namespace="shop", uid="u-1")
    d["metadata"]["resourceVersion"] = "42"
    return Pod.parse(d)


def test_binding_targets_the_node_and_pins_the_uid() -> None:
    assert bodies.binding(pod(), "n7") == {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "web-1", "namespace": "shop", "uid": "u-1"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "n7"},
    }


def test_events_v1_scheduled() -> None:
    ev = bodies.event("events.k8s.io/v1", pod(), bodies.SCHEDULED, "Successfully assigned shop/web-1 to n7", "kubesched", "kubesched-h", T)
    assert ev["apiVersion"] == "events.k8s.io/v1"
    assert ev["metadata"] == {"name": f"web-1.{int(T * 1e9):x}", "namespace": "shop"}
    assert ev["eventTime"] == "2025-03-04T05:06:07.123456Z"
    assert (ev["type"], ev["reason"], ev["action"]) == ("Normal", "Scheduled", "Binding")
    assert ev["note"] == "Successfully assigned shop/web-1 to n7"
    assert ev["reportingController"] == "kubesched"
    assert ev["reportingInstance"] == "kubesched-h"
    assert ev["regarding"] == {
        "kind": "Pod",
        "namespace": "shop",
        "name": "web-1",
        "apiVersion": "v1",
        "uid": "u-1",
        "resourceVersion": "42",
    }


def test_failed_scheduling_note_is_truncated_like_upstream() -> None:
    long = "0/3 nodes are available: " + "x" * 2000
    ev = bodies.event("events.k8s.io/v1", pod(), bodies.FAILED_SCHEDULING, long, "kubesched", "i", T)
    assert (ev["type"], ev["reason"], ev["action"]) == ("Warning", "FailedScheduling", "Scheduling")
    assert len(ev["note"]) == MAX_MESSAGE_LEN and ev["note"].endswith(" ...")
    core = bodies.event("v1", pod(), bodies.FAILED_SCHEDULING, "short", "kubesched", "i", T)
    assert core["involvedObject"]["name"] == "web-1"
    assert core["source"] == {"component": "kubesched"}
    assert (core["message"], core["count"], core["firstTimestamp"]) == ("short", 1, "2025-03-04T05:06:07Z")


def test_condition_patch_merges_by_type_and_nominates() -> None:
    p = bodies.scheduled_condition_patch("False", "Unschedulable", "0/1 nodes are available: 1 Too many pods.", T)
    cond = p["status"]["conditions"][0]
    assert cond == {
        "type": "PodScheduled",
        "status": "False",
        "lastProbeTime": None,
        "lastTransitionTime": "2025-03-04T05:06:07Z",
        "reason": "Unschedulable",
        "message": "0/1 nodes are available: 1 Too many pods.",
    }
    assert "nominatedNodeName" not in p["status"]
    assert bodies.scheduled_condition_patch("False", "Unschedulable", "m", T, "n2")["status"]["nominatedNodeName"] == "n2"
    assert bodies.nominated_patch("") == {"status": {"nominatedNodeName": None}}  # null clears it


def test_has_condition_compares_status_reason_message() -> None:
    d = make_pod("a", uid="a")
    d["status"] = {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "m"}]}
    p = Pod.parse(d)
    assert bodies.has_condition(p, "False", "Unschedulable", "m")
    assert not bodies.has_condition(p, "False", "Unschedulable", "other")
    assert not bodies.has_condition(pod(), "False", "Unschedulable", "m")


def test_disruption_target() -> None:
    c = bodies.disruption_target_patch("kubesched", T)["status"]["conditions"][0]
    assert (c["type"], c["status"], c["reason"]) == ("DisruptionTarget", "True", "PreemptionByScheduler")
    assert c["message"] == "kubesched: preempting to accommodate a higher priority pod"
