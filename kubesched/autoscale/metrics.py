"""Cluster Autoscaler's Prometheus metrics (``cluster-autoscaler/metrics/metrics.go``: namespace
``cluster_autoscaler``, the same names, labels and buckets) for ``kubesched autoscale``, on a
registry of their own, served by ``kubesched.server.httpd`` as ``kubesched run``'s are.

Modelled: ``cluster_safe_to_autoscale``, ``nodes_count{state}``, ``node_groups_count{node_group_type}``,
``unschedulable_pods_count``, ``max_nodes_count``, ``last_activity{activity}``,
``function_duration_seconds{function}`` (main, scaleUp, scaleDown), ``errors_total{type}``,
``scaled_up_nodes_total``, ``scaled_up_gpu_nodes_total{gpu_name}``, ``failed_scale_ups_total{reason}``
(``timeout``: a node that never registered), ``scaled_down_nodes_total{reason}`` (``empty``,
``underutilized``, ``unready``), ``scaled_down_gpu_nodes_total{reason,gpu_name}``, ``evicted_pods_total``,
``unneeded_nodes_count``, ``unremovable_nodes_count{reason}`` and ``scale_down_in_cooldown``.

In Karpenter-like mode the same, from its ``KarpenterRecord`` (a drifted or expired node is no
scale-down reason of CA's: its pods count as evicted, the node only in Karpenter's counter), and
two of Karpenter's own (``pkg/metrics/metrics.go``): ``karpenter_nodeclaims_created_total{reason,
nodepool,min_values_relaxed}`` (``provisioned``, or the disruption a replacement is for) and
``karpenter_nodeclaims_disrupted_total{reason,nodepool,capacity_type}`` (``empty``,
``underutilized``, ``drifted``, ``expired``).
"""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import choose_encoder

from kubesched.autoscale.core import ClusterAutoscaler
from kubesched.autoscale.interface import LoopRecord
from kubesched.autoscale.karprecord import EXPIRED, KarpenterRecord
from kubesched.autoscale.nodepool import DRIFTED
from kubesched.autoscale.status import cluster_healthy
from kubesched.gpu.model import node_gpu_count, node_gpu_model

NAMESPACE = "cluster_autoscaler"
# metrics.go's functionDuration buckets
FUNCTION_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1.0, 2.5, 5.0, 7.5, 10.0, 12.5, 15.0, 17.5, 20.0, 22.5, 25.0, 27.5, 30.0, 50.0, 75.0, 100.0, 1000.0)
NODE_STATES = ("ready", "unready", "notStarted", "longUnregistered", "unregistered")


class AutoscalerMetrics:
    """Updated once per iteration (``observe``); ``exposition`` answers ``GET /metrics``."""

    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        ns = NAMESPACE
        self.safe = Gauge("cluster_safe_to_autoscale", "Whether or not cluster is healthy enough for autoscaling. 1 if it is, 0 otherwise.", namespace=ns, registry=r)
        self.nodes = Gauge("nodes_count", "Number of nodes in cluster.", ["state"], namespace=ns, registry=r)
        self.groups = Gauge("node_groups_count", "Number of node groups managed by CA.", ["node_group_type"], namespace=ns, registry=r)
        self.unschedulable = Gauge("unschedulable_pods_count", "Number of unschedulable pods in the cluster.", namespace=ns, registry=r)
        self.max_nodes = Gauge("max_nodes_count", "Maximum number of nodes in all node groups", namespace=ns, registry=r)
        self.last_activity = Gauge("last_activity", "Last time certain part of CA logic executed.", ["activity"], namespace=ns, registry=r)
        self.duration = Histogram("function_duration_seconds", "Time taken by various parts of CA main loop.", ["function"],
                                  namespace=ns, registry=r, buckets=FUNCTION_BUCKETS)
        self.errors = Counter("errors", "The number of CA loops failed due to an error.", ["type"], namespace=ns, registry=r)
        self.scaled_up = Counter("scaled_up_nodes", "Number of nodes added by CA.", namespace=ns, registry=r)
        self.scaled_up_gpu = Counter("scaled_up_gpu_nodes", "Number of GPU nodes added by CA, by GPU name.", ["gpu_name"], namespace=ns, registry=r)
        self.failed = Counter("failed_scale_ups", "Number of times scale-up operation has failed.", ["reason"], namespace=ns, registry=r)
        self.scaled_down = Counter("scaled_down_nodes", "Number of nodes removed by CA.", ["reason"], namespace=ns, registry=r)
        self.scaled_down_gpu = Counter("scaled_down_gpu_nodes", "Number of GPU nodes removed by CA, by reason and GPU name.",
                                       ["reason", "gpu_name"], namespace=ns, registry=r)
        self.evicted = Counter("evicted_pods", "Number of pods evicted by CA", namespace=ns, registry=r)
        self.claims_created = Counter("karpenter_nodeclaims_created", "Number of nodeclaims created in total by Karpenter.",
                                      ["reason", "nodepool", "min_values_relaxed"], registry=r)
        self.claims_disrupted = Counter("karpenter_nodeclaims_disrupted", "Number of nodeclaims disrupted in total by Karpenter.",
                                        ["reason", "nodepool", "capacity_type"], registry=r)
        self.unneeded = Gauge("unneeded_nodes_count", "Number of nodes currently considered unneeded by CA.", namespace=ns, registry=r)
        self.unremovable = Gauge("unremovable_nodes_count", "Number of nodes currently considered unremovable by CA.", ["reason"], namespace=ns, registry=r)
        self.cooldown = Gauge("scale_down_in_cooldown", "Whether or not the scale down is in cooldown. 1 if its, 0 otherwise.", namespace=ns, registry=r)
        self._unremovable_seen: set[str] = set()
        self.groups.labels("autoprovisioned").set(0)
        for c in (self.failed.labels("timeout"), self.scaled_down.labels("empty"), self.scaled_down.labels("underutilized")):
            c.inc(0)  # present from the first scrape, at 0

    def observe(self, loop: ClusterAutoscaler, status: dict[str, Any], record: LoopRecord, unschedulable: int,
                started: float, main_seconds: float) -> None:
        """One iteration: ``status`` is the status document built for it (node counts, health)."""
        counts = status["clusterWide"]["health"]["nodeCounts"]
        reg = counts["registered"]
        for state, v in zip(NODE_STATES, (reg["ready"], reg["unready"]["total"], reg["notStarted"],
                                          counts["longUnregistered"], counts["unregistered"]), strict=True):
            self.nodes.labels(state).set(v)
        self.safe.set(1 if cluster_healthy(status) else 0)
        self.groups.labels("autoscaled").set(len(loop.cfg.node_groups))
        self.unschedulable.set(unschedulable)
        self.max_nodes.set(loop.cfg.max_nodes_total)
        for activity in ("main", "autoscaling", *(("scaleUp",) if record.pending else ()), "scaleDown"):
            self.last_activity.labels(activity).set(int(started))
        self.duration.labels("main").observe(main_seconds)
        for fn, seconds in record.durations.items():
            self.duration.labels(fn).observe(seconds)
        for info in record.scale_ups:
            added = info.new - info.current
            self.scaled_up.inc(added)
            tmpl = loop.cfg.group(info.group).template
            if node_gpu_count(tmpl):
                self.scaled_up_gpu.labels(node_gpu_model(tmpl) or "generic").inc(added)
        for _ in record.failed:
            self.failed.labels("timeout").inc()
        not_ca = self.observe_karpenter(record)
        for sd in record.scale_downs:
            reason = "unready" if sd.unready else "empty" if sd.empty else "underutilized"
            self.evicted.inc(len(sd.pods))
            if sd.node in not_ca:
                continue
            self.scaled_down.labels(reason).inc()
            tmpl = loop.cfg.group(sd.group).template if sd.group else None
            if tmpl is not None and node_gpu_count(tmpl):
                self.scaled_down_gpu.labels(reason, node_gpu_model(tmpl) or "generic").inc()
        self.unneeded.set(len(record.unneeded))
        by_reason: dict[str, int] = {}
        for reason in record.unremovable.values():
            by_reason[reason] = by_reason.get(reason, 0) + 1
        for reason in set(by_reason) | self._unremovable_seen:  # a reason no node has any more: 0
            self.unremovable.labels(reason).set(by_reason.get(reason, 0))
        self._unremovable_seen |= set(by_reason)
        self.cooldown.set(1 if record.cooldown else 0)

    def observe_karpenter(self, record: LoopRecord) -> set[str]:
        """Karpenter's counters; returns the nodes removed for a reason CA does not have."""
        if not isinstance(record, KarpenterRecord):
            return set()
        for launch in record.launched:
            self.claims_created.labels(launch.reason, launch.pool, "false").inc()
        for d in record.removed():
            self.claims_disrupted.labels(d.reason.lower(), d.pool, d.capacity_type).inc()
        return {d.node for d in record.removed() if d.reason in (DRIFTED, EXPIRED)}

    def error(self, kind: str) -> None:
        self.errors.labels(kind).inc()

    def exposition(self, accept: str | None = None) -> tuple[bytes, str]:
        """(body, content type) for ``GET /metrics``: text format, or OpenMetrics if asked for."""
        encoder, content_type = choose_encoder(accept or "")
        return encoder(self.registry), content_type
