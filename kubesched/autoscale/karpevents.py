"""Events of the Karpenter-like provisioner in ``kubesched autoscale``: Cluster Autoscaler's
(``TriggeredScaleUp``, ``NotTriggerScaleUp``, ``ScaleDown`` and the status ConfigMap's, source
``cluster-autoscaler``, as ``kubesched.autoscale.events``), so that dashboards and alerts built on
CA keep working, and Karpenter's own, source ``karpenter``, with the reasons and messages of
kubernetes-sigs/karpenter (``pkg/events/reason.go``):

* pod ``Nominated`` "Pod should schedule on: nodeclaim/NAME" (provisioning/scheduling/events.go),
  for each pod packed onto a claim launched for it, and "... nodeclaim/NAME, node/NAME" for a
  pending pod that a node registered lately will take;
* NodeClaim ``DisruptionLaunching`` "Launching NodeClaim: Underutilized" on each replacement
  launched for a disruption (disruption/events/events.go ``Launching``);
* node and NodeClaim ``DisruptionTerminating`` "Disrupting Node: Drifted" / "Disrupting
  NodeClaim: Drifted" on each node a disruption deletes (``Terminating``; Empty, Underutilized or
  Drifted; expiration, a separate controller upstream, writes none);
* pod ``Evicted`` "Evicted pod" on each pod evicted from a node deleted (node termination's
  eviction queue);
* node and NodeClaim ``DisruptionBlocked`` "Node is nominated for a pending pod" / "Node is
  deleting or marked for deletion" on a node of a pool that disruption may not take
  (``Blocked``, from ValidateNodeDisruptable's error, its first letter upper-cased);
* node and NodeClaim ``Unconsolidatable`` "NodePool "p" has consolidation disabled" / "...
  has non-empty consolidation disabled" (consolidation's ShouldDisrupt), "Can't replace with a
  cheaper node", "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot
  node" (single-node consolidation), deduplicated for 15 minutes.

As Karpenter's recorder, an event is dropped when one of the same reason about the same object
(its dedupe values) was published less than 2 minutes before, and ``Nominated`` events share a
token bucket of 10, refilled at 5 a second (PodNominationRateLimiter).

A NodeClaim is named after its node; live, the NodeClaim objects themselves are not written, so
its events regard ``karpenter.sh/v1`` NodeClaims by name. ``NotTriggerScaleUp`` is written on the
pods the batch considered that no claim could take, also in an iteration that launched claims
for other pods; with NodePools its reasons are counted per pool, as CA counts them per group.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any

from kubesched.api.objects import Pod
from kubesched.autoscale.core import ClusterAutoscaler
from kubesched.autoscale.events import (
    MAX_SIZE_REACHED,
    NORMAL,
    EventRecorder,
    LoopEvents,
    ScaleUpReasons,
    node_ref,
)
from kubesched.autoscale.interface import ClusterView, LoopRecord
from kubesched.autoscale.karpenter import KarpenterLike
from kubesched.autoscale.karprecord import EXPIRED, PROVISIONING, KarpenterRecord
from kubesched.autoscale.nodepool import API_VERSION, exceeds, node_resources
from kubesched.live.bodies import pod_ref
from kubesched.live.ratelimit import TokenBucket

COMPONENT = "karpenter"
DEDUPE_TIMEOUT = 120.0  # pkg/events/recorder.go defaultDedupeTimeout
UNCONSOLIDATABLE_TIMEOUT = 900.0  # disruption/events.go: Unconsolidatable's DedupeTimeout
NOMINATION_QPS, NOMINATION_BURST = 5.0, 10  # PodNominationRateLimiter: one bucket for all Nominated events

# why no node of a pool can take a pod, in Karpenter's words where it has them
LIMITS_EXCEEDED = "all available instance types exceed limits for nodepool"
NO_INSTANCE_TYPES = "nodepool requirements filtered out all available instance types"


def claim_ref(name: str) -> dict[str, Any]:
    return {"kind": "NodeClaim", "name": name, "apiVersion": API_VERSION}


def title(reason: str) -> str:
    """cases.Title(language.Und, cases.NoLower): the first letter of each word upper-cased."""
    return " ".join(w[:1].upper() + w[1:] for w in reason.split(" "))


class PoolReasons(ScaleUpReasons):
    """Why no NodePool launches a node for a pod: per pool, the union of its offerings' reasons
    (instance type at its max, the pool's limits, the filters' reasons on the offering's node
    with the pool's labels and taints), counted over the pools and sorted."""

    loop: KarpenterLike

    def option_reasons(self, pod: Pod) -> Iterator[Collection[str]]:
        loop = self.loop
        used = loop.pool_usage(self.view.snapshot)
        for pool in loop.pools:
            offers = loop.offerings(pool)
            reasons: set[str] = set() if offers else {NO_INSTANCE_TYPES}
            over = {id(o) for o in offers if exceeds(pool.limits, used[pool.name], node_resources(o.node))}
            if offers and len(over) == len(offers):
                reasons.add(LIMITS_EXCEEDED)
            for o in offers:
                if id(o) in over:
                    continue
                g = loop.cfg.group(o.group)
                if self.sizes[g.name] >= g.max_size:
                    reasons.add(MAX_SIZE_REACHED)
                    continue
                reasons.update(self.rejected_on(pod, (pool.name, o.group, o.capacity_type), lambda o=o: o.node))
            yield reasons


class KarpenterEvents(LoopEvents):
    """``LoopEvents`` for the Karpenter-like loop: CA's events from its ``KarpenterRecord`` and
    Karpenter's own through a second recorder (source ``karpenter``)."""

    def __init__(self, recorder: EventRecorder, configmap: Any = lambda: None) -> None:
        super().__init__(recorder, configmap)
        self.karpenter = EventRecorder(recorder.core, recorder.host, recorder.clock, COMPONENT)
        self.published: dict[tuple[str, ...], float] = {}  # dedupe key -> until when it holds
        self.nominations = TokenBucket(NOMINATION_QPS, NOMINATION_BURST, clock=recorder.clock)

    def publish(
        self, ref: dict[str, Any], reason: str, message: str, *dedupe: str, timeout: float = DEDUPE_TIMEOUT, limiter: TokenBucket | None = None
    ) -> None:
        """Recorder.Publish: a Normal event, unless one with the same dedupe key is recent (the
        key is taken even when the rate limiter then drops the event, as upstream's)."""
        now = self.karpenter.clock()
        if len(self.published) > 4096:
            self.published = {k: t for k, t in self.published.items() if t > now}
        key = (reason.lower(), *dedupe)
        if self.published.get(key, -1.0) > now:
            return
        self.published[key] = now + timeout
        if limiter is not None and not limiter.try_acquire():
            return
        self.karpenter.event(ref, NORMAL, reason, message)

    def scale_up(self, loop: ClusterAutoscaler, view: ClusterView, record: LoopRecord, now: float) -> None:
        if not isinstance(record, KarpenterRecord) or not isinstance(loop, KarpenterLike):
            super().scale_up(loop, view, record, now)
            return
        if record.scale_ups:
            self.triggered(record)
        if record.unlaunchable:
            self.not_triggered(record.unlaunchable, PoolReasons(loop, view, now) if loop.pools else ScaleUpReasons(loop, view, now))
        for pod, claim in record.nominated:
            self.publish(pod_ref(pod), "Nominated", f"Pod should schedule on: nodeclaim/{claim}", pod.uid, limiter=self.nominations)
        for name, pods in loop.hinted.items():  # registered lately, the pods not tried there yet
            for pod in pods:
                message = f"Pod should schedule on: nodeclaim/{name}, node/{name}"
                self.publish(pod_ref(pod), "Nominated", message, pod.uid, limiter=self.nominations)
        for launch in record.launched:
            if launch.reason != PROVISIONING:
                self.publish(claim_ref(launch.claim), "DisruptionLaunching", f"Launching NodeClaim: {title(launch.reason)}", launch.claim, launch.reason)

    def scale_down(self, view: ClusterView, record: LoopRecord) -> None:
        super().scale_down(view, record)
        if not isinstance(record, KarpenterRecord):
            return
        snap = view.snapshot

        def node_of(name: str) -> dict[str, Any]:
            return node_ref(name, snap.nodes[snap.row_of[name]].uid if name in snap.row_of else "")

        for d in record.removed():
            if d.reason != EXPIRED:
                self.publish(node_of(d.node), "DisruptionTerminating", f"Disrupting Node: {title(d.reason)}", "node", d.node, d.reason)
                self.publish(claim_ref(d.node), "DisruptionTerminating", f"Disrupting NodeClaim: {title(d.reason)}", "claim", d.node, d.reason)
        for sd in record.scale_downs:
            for p in sd.pods:
                self.publish(pod_ref(p), "Evicted", "Evicted pod", p.namespace, p.name)
        for name, why in record.blocked:
            msg = why[:1].upper() + why[1:]
            self.publish(node_of(name), "DisruptionBlocked", msg, "node", name)
            self.publish(claim_ref(name), "DisruptionBlocked", msg, "claim", name)
        for name, why in record.unconsolidatable:
            self.publish(node_of(name), "Unconsolidatable", why, "node", name, timeout=UNCONSOLIDATABLE_TIMEOUT)
            self.publish(claim_ref(name), "Unconsolidatable", why, "claim", name, timeout=UNCONSOLIDATABLE_TIMEOUT)
