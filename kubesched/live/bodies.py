"""Request bodies exactly as kube-scheduler sends them: Binding, Events, pod status patches."""

from __future__ import annotations

import datetime as dt
from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.diagnosis import truncate_message

# Event reasons and actions (pkg/scheduler/schedule_one.go, framework/preemption).
SCHEDULED = ("Normal", "Scheduled", "Binding")
FAILED_SCHEDULING = ("Warning", "FailedScheduling", "Scheduling")
PREEMPTED = ("Normal", "Preempted", "Preempting")

REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"


def micro_time(t: float) -> str:
    """metav1.MicroTime on the wire: RFC 3339 with microseconds, UTC."""
    return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def rfc3339(t: float) -> str:
    """metav1.Time on the wire: RFC 3339 in whole seconds, UTC."""
    return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod_ref(pod: Pod) -> dict[str, Any]:
    """The ObjectReference of a pod (events' ``regarding``/``involvedObject``)."""
    ref: dict[str, Any] = {"kind": "Pod", "namespace": pod.namespace, "name": pod.name, "apiVersion": "v1"}
    if pod.uid:
        ref["uid"] = pod.uid
    rv = (pod.raw.get("metadata") or {}).get("resourceVersion")
    if rv:
        ref["resourceVersion"] = str(rv)
    return ref


def binding(pod: Pod, node: str) -> dict[str, Any]:
    """The v1 Binding that ``POST .../pods/{name}/binding`` takes (DefaultBinder)."""
    md: dict[str, Any] = {"name": pod.name, "namespace": pod.namespace}
    if pod.uid:
        md["uid"] = pod.uid  # the API server refuses the binding if the pod was recreated meanwhile
    return {"apiVersion": "v1", "kind": "Binding", "metadata": md, "target": {"apiVersion": "v1", "kind": "Node", "name": node}}


def event_name(pod: Pod, t: float) -> str:
    """client-go's recorder names events ``<object name>.<unix nanoseconds in hex>``."""
    return f"{pod.name}.{int(t * 1e9):x}"


def event(
    api: str,
    pod: Pod,
    kind: tuple[str, str, str],
    note: str,
    controller: str,
    instance: str,
    t: float,
    related: Pod | None = None,
) -> dict[str, Any]:
    """An Event as kube-scheduler's events recorder writes it: events.k8s.io/v1, or the same
    event as a core/v1 Event for ``api`` "v1" (clusters that do not serve events.k8s.io/v1)."""
    typ, reason, action = kind
    md = {"name": event_name(pod, t), "namespace": pod.namespace}
    ev: dict[str, Any]
    if api == "v1":
        ev = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": md,
            "involvedObject": pod_ref(pod),
            "reason": reason,
            "message": truncate_message(note),
            "type": typ,
            "source": {"component": controller},
            "firstTimestamp": rfc3339(t),
            "lastTimestamp": rfc3339(t),
            "eventTime": micro_time(t),
            "count": 1,
            "action": action,
            "reportingComponent": controller,
            "reportingInstance": instance,
        }
    else:
        ev = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": md,
            "eventTime": micro_time(t),
            "reportingController": controller,
            "reportingInstance": instance,
            "action": action,
            "reason": reason,
            "regarding": pod_ref(pod),
            "note": truncate_message(note),
            "type": typ,
        }
    if related is not None:
        ev["related"] = pod_ref(related)
    return ev


def series_patch(count: int, t: float) -> dict[str, Any]:
    """A repeat of an isomorphic event within the dedup window: bump its series (events/v1)."""
    return {"series": {"count": count, "lastObservedTime": micro_time(t)}}


def scheduled_condition_patch(
    status: str, reason: str, message: str, t: float, nominated: str | None = None
) -> dict[str, Any]:
    """A strategic merge patch of pod status: the PodScheduled condition (merged by ``type``) and,
    when the attempt nominated a node or cleared the nomination, ``nominatedNodeName``."""
    cond = {
        "type": "PodScheduled",
        "status": status,
        "lastProbeTime": None,
        "lastTransitionTime": rfc3339(t),
        "reason": reason,
        "message": message,
    }
    st: dict[str, Any] = {"conditions": [cond]}
    if nominated is not None:
        st["nominatedNodeName"] = nominated or None  # null deletes the field
    return {"status": st}


def nominated_patch(node: str) -> dict[str, Any]:
    return {"status": {"nominatedNodeName": node or None}}


def disruption_target_patch(controller: str, t: float) -> dict[str, Any]:
    """What a preemption victim gets before it is deleted (DisruptionTarget, PreemptionByScheduler)."""
    return {
        "status": {
            "conditions": [
                {
                    "type": "DisruptionTarget",
                    "status": "True",
                    "lastTransitionTime": rfc3339(t),
                    "reason": "PreemptionByScheduler",
                    "message": f"{controller}: preempting to accommodate a higher priority pod",
                }
            ]
        }
    }


def has_condition(pod: Pod, status: str, reason: str, message: str) -> bool:
    """The pod (as last seen) already carries this PodScheduled condition: no patch is needed."""
    for c in (pod.raw.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "PodScheduled":
            return c.get("status") == status and c.get("reason") == reason and c.get("message") == message
    return False
