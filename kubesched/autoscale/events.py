"""Kubernetes events as Cluster Autoscaler emits them, written through the official client.

CA records core/v1 Events with client-go's legacy recorder (source component
``cluster-autoscaler``), and so does this module, with that recorder's correlator: an event equal
to one already written (same object, type, reason and message) bumps that Event's ``count`` and
``lastTimestamp`` instead of adding another, and each such series is rate limited as client-go's
spam filter does (a burst of 25, then one per 5 minutes), so a pod pending for hours is one Event
whose count grows, not one Event per iteration.

What is recorded, with CA's reasons and messages:

* on pods: ``TriggeredScaleUp`` "pod triggered scale-up: [{group 1->2 (max: 5)}]";
  ``NotTriggerScaleUp`` "pod didn't trigger scale-up: 1 max node group size reached, 2 Insufficient
  cpu" (per node group, its reasons, counted; only in iterations without a scale-up, as CA);
  ``ScaleDown`` "deleting pod for node scale down" on each pod a scale-down evicts;
* on nodes: ``ScaleDown`` "marked the node as toBeDeleted/unschedulable";
* on the status ConfigMap (only while it is written, as CA's LogEventRecorder): ``ScaledUpGroup``
  "Scale-up: setting group g size to 2 instead of 1 (max: 5)", ``ScaleDownEmpty`` "Scale-down:
  removing empty node "n"", ``ScaleDown`` "Scale-down: node n removed with drain",
  ``ScaleUpTimedOut`` "Nodes added to group g failed to register within 15m0s", ``ClusterUnhealthy``
  "Cluster is unhealthy" (a Warning, in an iteration the cluster's readiness stopped).
  A group too unready to grow is "not ready for scale-up" in ``NotTriggerScaleUp``.
"""

from __future__ import annotations

import logging
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.autoscale.config import GROUP_LABEL
from kubesched.autoscale.core import ClusterAutoscaler
from kubesched.autoscale.interface import ClusterView, LoopRecord
from kubesched.autoscale.predicate import PredicateChecker, node_named
from kubesched.autoscale.status import go_duration
from kubesched.live.bodies import pod_ref, rfc3339
from kubesched.live.ratelimit import TokenBucket

log = logging.getLogger("kubesched.autoscale")

COMPONENT = "cluster-autoscaler"
NORMAL, WARNING = "Normal", "Warning"
# client-go's EventCorrelator defaults: LRU cache of series, and the spam filter's token bucket
CACHE_SIZE = 4096
SPAM_BURST = 25
SPAM_REFILL = 300.0  # seconds per token (qps 1/300)
# CA's SkippedReasons (core/scaleup/orchestrator/skippedreasons.go)
MAX_SIZE_REACHED = "max node group size reached"
BACKOFF = "in backoff after failed scale-up"
NOT_READY = "not ready for scale-up"  # an unhealthy group (too many unready nodes)
MAX_TOTAL_REACHED = "max total nodes in cluster reached"


def node_ref(name: str, uid: str = "") -> dict[str, Any]:
    ref: dict[str, Any] = {"kind": "Node", "name": name, "apiVersion": "v1"}
    if uid:
        ref["uid"] = uid
    return ref


@dataclass
class _Series:
    name: str
    namespace: str
    count: int
    bucket: TokenBucket


class EventRecorder:
    """core/v1 Events with client-go's dedup and spam filter; writes are best effort (a failure
    is logged, as the broadcaster drops events)."""

    def __init__(self, core: Any, host: str = "", clock: Callable[[], float] = time.time, component: str = COMPONENT) -> None:
        self.core = core
        self.host = host
        self.clock = clock
        self.component = component
        self._series: OrderedDict[tuple, _Series] = OrderedDict()
        self.dropped = 0  # events the spam filter held back

    def event(self, ref: dict[str, Any], typ: str, reason: str, message: str) -> None:
        t = self.clock()
        namespace = ref.get("namespace") or "default"  # cluster-scoped objects: the default namespace
        key = (ref.get("kind"), namespace, ref.get("name"), ref.get("uid", ""), typ, reason, message)
        s = self._series.get(key)
        if s is not None:
            if not s.bucket.try_acquire():
                self.dropped += 1
                return
            self._series.move_to_end(key)
            if self._patch(s, t):
                return
            del self._series[key]  # the Event is gone (expired, deleted): a new one
        name = self._create(ref, namespace, typ, reason, message, t)
        if name:
            bucket = TokenBucket(1 / SPAM_REFILL, SPAM_BURST, clock=self.clock)
            bucket.try_acquire()  # the first event of the series takes a token too
            self._series[key] = _Series(name, namespace, 1, bucket)
            while len(self._series) > CACHE_SIZE:
                self._series.popitem(last=False)

    def _patch(self, s: _Series, t: float) -> bool:
        try:
            self.core.patch_namespaced_event(s.name, s.namespace, {"count": s.count + 1, "lastTimestamp": rfc3339(t)})
        except Exception as e:  # noqa: BLE001 - best effort
            log.debug("event %s/%s: count update failed (%s)", s.namespace, s.name, e)
            return False
        s.count += 1
        return True

    def _create(self, ref: dict[str, Any], namespace: str, typ: str, reason: str, message: str, t: float) -> str:
        name = f"{ref.get('name')}.{int(t * 1e9):x}"  # client-go's <object>.<unix nanoseconds, hex>
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": ref,
            "reason": reason,
            "message": message,
            "type": typ,
            "source": {"component": self.component, **({"host": self.host} if self.host else {})},
            "firstTimestamp": rfc3339(t),
            "lastTimestamp": rfc3339(t),
            "eventTime": None,
            "count": 1,
            "reportingComponent": "",
            "reportingInstance": "",
        }
        try:
            self.core.create_namespaced_event(namespace, body)
        except Exception as e:  # noqa: BLE001 - best effort
            log.warning("event %s on %s %s not written: %s", reason, ref.get("kind"), ref.get("name"), e)
            return ""
        return name


class ScaleUpReasons:
    """CA's ReasonsMessage for the pods no scale-up helps in one iteration: each node group's
    reasons (skipped: at max size, backing off; rejected: the filters' reasons on the group's
    template node), counted over the groups and sorted. Pods of one scheduling signature share
    the filters' answer, as CA's equivalence groups do."""

    def __init__(self, loop: ClusterAutoscaler, view: ClusterView, now: float) -> None:
        self.loop, self.view, self.now = loop, view, now
        self.checker = PredicateChecker(view.framework_for)
        self.sizes = loop.group_sizes(view.snapshot)
        self.rejected: dict[tuple[object, ...], tuple[str, ...]] = {}

    def rejected_on(self, pod: Pod, key: tuple[str, ...], node: Callable[[], Node]) -> tuple[str, ...]:
        """The filters' reasons on the template ``node()`` (made only when not cached), per pod
        signature and ``key``."""
        k = (pod.signature() or pod.uid, *key)
        if k not in self.rejected:
            scratch = self.view.snapshot.copy(nodes=(), pods=False)
            self.rejected[k] = self.checker.reasons(scratch, pod, scratch.add_node(node())) or ()
        return self.rejected[k]

    def option_reasons(self, pod: Pod) -> Iterator[Collection[str]]:
        """Each node group's reasons, in the order of CA's filterValidScaleUpNodeGroups."""
        loop = self.loop
        for g in loop.cfg.node_groups:
            if not loop.health.group_healthy(g.name):
                yield (NOT_READY,)
            elif loop.groups[g.name].backoff_until > self.now:
                yield (BACKOFF,)
            elif self.sizes[g.name] >= g.max_size:
                yield (MAX_SIZE_REACHED,)
            else:
                yield self.rejected_on(pod, (g.name,), lambda g=g: node_named(g.template, f"template-{g.name}", {GROUP_LABEL: g.name}))

    def message(self, pod: Pod) -> str:
        loop = self.loop
        if loop.cfg.max_nodes_total and loop.cluster_size(self.view.snapshot) >= loop.cfg.max_nodes_total:
            return MAX_TOTAL_REACHED
        counted = Counter(r for reasons in self.option_reasons(pod) for r in reasons)
        return ", ".join(sorted(f"{n} {r}" for r, n in counted.items()))


class LoopEvents:
    """Turns one iteration's ``LoopRecord`` into CA's events. ``configmap`` gives the status
    ConfigMap's reference when it is written (its events are skipped otherwise)."""

    def __init__(self, recorder: EventRecorder, configmap: Callable[[], dict[str, Any] | None] = lambda: None) -> None:
        self.recorder = recorder
        self.configmap = configmap

    def _on_configmap(self, typ: str, reason: str, message: str) -> None:
        ref = self.configmap()
        if ref is not None:
            self.recorder.event(ref, typ, reason, message)

    def emit(self, loop: ClusterAutoscaler, view: ClusterView, record: LoopRecord, now: float) -> None:
        if record.cluster_unhealthy:  # RunOnce stopped before scaling: CA's LogRecorder event, nothing else
            self._on_configmap(WARNING, "ClusterUnhealthy", "Cluster is unhealthy")
            return
        for group, _ in record.failed:
            self._on_configmap(WARNING, "ScaleUpTimedOut",
                               f"Nodes added to group {group} failed to register within {go_duration(loop.cfg.max_node_provision_time)}")
        self.scale_up(loop, view, record, now)
        self.scale_down(view, record)

    def triggered(self, record: LoopRecord) -> None:
        """ScaledUpGroup on the ConfigMap per group grown, TriggeredScaleUp on each pod it is for."""
        for info in record.scale_ups:
            self._on_configmap(NORMAL, "ScaledUpGroup",
                               f"Scale-up: setting group {info.group} size to {info.new} instead of {info.current} (max: {info.max})")
        infos = "[" + " ".join(str(i) for i in record.scale_ups) + "]"
        for p in record.triggered:
            self.recorder.event(pod_ref(p), NORMAL, "TriggeredScaleUp", f"pod triggered scale-up: {infos}")

    def not_triggered(self, pods: list[Pod], why: ScaleUpReasons) -> None:
        for p in pods:
            self.recorder.event(pod_ref(p), NORMAL, "NotTriggerScaleUp", f"pod didn't trigger scale-up: {why.message(p)}")

    def scale_up(self, loop: ClusterAutoscaler, view: ClusterView, record: LoopRecord, now: float) -> None:
        if record.scale_ups:
            self.triggered(record)
        else:
            self.not_triggered(record.pending, ScaleUpReasons(loop, view, now))

    def scale_down(self, view: ClusterView, record: LoopRecord) -> None:
        ev = self.recorder.event
        for sd in record.scale_downs:
            if sd.empty:
                self._on_configmap(NORMAL, "ScaleDownEmpty", f'Scale-down: removing empty node "{sd.node}"')
            node = view.snapshot.nodes[view.snapshot.row_of[sd.node]] if sd.node in view.snapshot.row_of else None
            ev(node_ref(sd.node, node.uid if node is not None else ""), NORMAL, "ScaleDown", "marked the node as toBeDeleted/unschedulable")
            for p in sd.pods:
                ev(pod_ref(p), NORMAL, "ScaleDown", "deleting pod for node scale down")
            if not sd.empty:
                self._on_configmap(NORMAL, "ScaleDown", f"Scale-down: node {sd.node} removed with drain")

