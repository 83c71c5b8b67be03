"""The status ConfigMap as Cluster Autoscaler writes it (v1.30+): ``kube-system/cluster-autoscaler-status``,
``data.status`` a YAML document of ``clusterstate/api`` (``ClusterAutoscalerStatus``: ``time``,
``autoscalerStatus``, ``clusterWide`` and ``nodeGroups``, each with ``health``, ``scaleUp`` and
``scaleDown``), rewritten every iteration (``clusterstate.GetStatus`` and
``utils.WriteStatusConfigMap``).

What kubesched can say: node counts (registered, ready, not started, unready, being deleted; the
nodes asked for and not registered yet are ``unregistered``), health by CA's rules, each group's
target size (registered plus upcoming) and min/max, scale-up ``InProgress`` while a group's
scale-up has nodes to come, ``Unhealthy`` for an unhealthy group and ``Backoff`` after a node
never registered, scale-down candidates (the unneeded nodes). Readiness and health are
``kubesched.autoscale.health``'s, as the loop reads them. A condition's ``lastTransitionTime``
stays until its status changes, as upstream.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from dataclasses import dataclass, field
from typing import Any

import yaml

from kubesched.autoscale.core import ClusterAutoscaler
from kubesched.autoscale.interface import LoopRecord
from kubesched.live.bodies import rfc3339
from kubesched.state.snapshot import Snapshot

log = logging.getLogger("kubesched.autoscale")

STATUS_CONFIGMAP = "cluster-autoscaler-status"  # CA's --status-config-map-name default
STATUS_NAMESPACE = "kube-system"  # CA's --namespace default
LAST_UPDATED = "cluster-autoscaler.kubernetes.io/last-updated"  # annotation: the status's time


def go_time(t: float) -> str:
    """Go's ``2006-01-02 15:04:05.999999999 -0700 MST`` in UTC (CA's ConfigMapLastUpdateFormat):
    fractional seconds without trailing zeros."""
    d = dt.datetime.fromtimestamp(t, dt.UTC)
    frac = f"{d.microsecond:06d}".rstrip("0")
    return f"{d:%Y-%m-%d %H:%M:%S}{'.' + frac if frac else ''} +0000 UTC"


def go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String`` for whole seconds: ``15m0s``, ``1h0m0s``, ``30s``."""
    s = int(round(seconds))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    if h:
        return f"{h}h{m}m{sec}s"
    return f"{m}m{sec}s" if m else f"{sec}s"


@dataclass
class StatusBuilder:
    """Builds ``ClusterAutoscalerStatus`` documents, remembering the last one for the
    conditions' ``lastTransitionTime``."""

    last: dict[str, dict[str, Any]] = field(default_factory=dict)  # condition path -> condition

    def condition(self, key: str, cond: dict[str, Any], probe: str) -> dict[str, Any]:
        before = self.last.get(key)
        cond["lastProbeTime"] = probe
        cond["lastTransitionTime"] = before["lastTransitionTime"] if before and before["status"] == cond["status"] else probe
        self.last[key] = cond
        return cond

    def build(self, loop: ClusterAutoscaler, snap: Snapshot, record: LoopRecord, now: float) -> dict[str, Any]:
        probe = rfc3339(now)
        loop.measure(snap, now)  # after the iteration: its scale-ups are upcoming now
        health = loop.health
        candidates: dict[str, int] = {}
        for name in record.unneeded:
            if name in snap.row_of and (g := loop.group_of(snap.nodes[snap.row_of[name]])) is not None:
                candidates[g] = candidates.get(g, 0) + 1
        sizes = loop.group_sizes(snap)
        groups = []
        for g in loop.cfg.node_groups:
            healthy = health.group_healthy(g.name)
            cond = {"status": "Healthy" if healthy else "Unhealthy", "nodeCounts": health.groups[g.name].counts(),
                    "cloudProviderTarget": sizes[g.name], "minSize": g.min_size, "maxSize": g.max_size}
            groups.append({
                "name": g.name,
                "health": self.condition(f"{g.name}/health", cond, probe),
                "scaleUp": self.condition(f"{g.name}/scaleUp", scale_up(loop, g.name, healthy, now), probe),
                "scaleDown": self.condition(f"{g.name}/scaleDown", scale_down(candidates.get(g.name, 0)), probe),
            })
        in_progress = any(x["scaleUp"]["status"] == "InProgress" for x in groups)
        total = {"status": "Healthy" if health.cluster_healthy() else "Unhealthy", "nodeCounts": health.total.counts()}
        cluster = {
            "health": self.condition("health", total, probe),
            "scaleUp": self.condition("scaleUp", {"status": "InProgress" if in_progress else "NoActivity"}, probe),
            "scaleDown": self.condition("scaleDown", scale_down(sum(candidates.values())), probe),
        }
        return {"time": go_time(now), "autoscalerStatus": "Running", "clusterWide": cluster, "nodeGroups": groups}


def scale_up(loop: ClusterAutoscaler, group: str, healthy: bool, now: float) -> dict[str, Any]:
    """buildScaleUpStatusNodeGroup: InProgress, else Unhealthy, else Backoff, else NoActivity."""
    if loop.health.scaling_up(group):
        return {"status": "InProgress"}
    if not healthy:
        return {"status": "Unhealthy"}
    if loop.groups[group].backoff_until > now:
        return {"status": "Backoff", "backoffInfo": {
            "errorCode": "timeout",
            "errorMessage": f"Scale-up timed out for node group {group} after {go_duration(loop.cfg.max_node_provision_time)}",
        }}
    return {"status": "NoActivity"}


def scale_down(candidates: int) -> dict[str, Any]:
    """api.ScaleDownCondition (``candidates`` left out at 0, as its ``omitempty``)."""
    if candidates:
        return {"status": "CandidatesPresent", "candidates": candidates}
    return {"status": "NoCandidates"}


def cluster_healthy(status: dict[str, Any]) -> bool:
    return bool(status["clusterWide"]["health"]["status"] == "Healthy")


class StatusConfigMap:
    """Writes the status to ``namespace/name`` through the official client, as
    ``WriteStatusConfigMap``: read it, update ``data.status`` and the last-updated annotation, or
    create it. Failures are logged and retried at the next iteration."""

    def __init__(self, core: Any, namespace: str = STATUS_NAMESPACE, name: str = STATUS_CONFIGMAP) -> None:
        self.core = core
        self.namespace = namespace
        self.name = name
        self.ref: dict[str, Any] | None = None  # the ConfigMap as last written: what its events regard

    def write(self, status: dict[str, Any], now: float | None = None) -> None:
        from kubernetes.client.exceptions import ApiException

        stamp = go_time(time.time() if now is None else now)
        text = yaml.safe_dump(status, sort_keys=False, default_flow_style=False)
        try:
            try:
                cm = self.core.read_namespaced_config_map(self.name, self.namespace)
            except ApiException as e:
                if e.status != 404:
                    raise
                body = {"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": self.name, "namespace": self.namespace, "annotations": {LAST_UPDATED: stamp}},
                        "data": {"status": text}}
                cm = self.core.create_namespaced_config_map(self.namespace, body)
            else:
                cm.data = {**(cm.data or {}), "status": text}
                cm.metadata.annotations = {**(cm.metadata.annotations or {}), LAST_UPDATED: stamp}
                cm = self.core.replace_namespaced_config_map(self.name, self.namespace, cm)
        except Exception as e:  # noqa: BLE001 - the status is best effort, as upstream's
            log.warning("failed to write status configmap %s/%s: %s", self.namespace, self.name, e)
            return
        md = cm.metadata
        self.ref = {"kind": "ConfigMap", "namespace": md.namespace, "name": md.name, "uid": md.uid,
                    "apiVersion": "v1", "resourceVersion": md.resource_version}
