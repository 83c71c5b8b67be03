"""Nodes with a readiness, as Cluster Autoscaler's test utilities build them (utils/test:
``BuildTestNode``, ``SetNodeReadyState``, ``SetNodeNotReadyTaint``), and a loop whose clock and
upcoming nodes a test sets."""

from __future__ import annotations

import numpy as np

from kubesched.autoscale.config import GROUP_LABEL, AutoscalerConfig, NodeGroup
from kubesched.autoscale.configfile import template_node
from kubesched.autoscale.core import ClusterAutoscaler, Upcoming
from kubesched.autoscale.health import NOT_READY_TAINT
from kubesched.autoscale.live import LiveView
from kubesched.autoscale.predicate import node_named
from kubesched.live.bodies import rfc3339
from kubesched.testing import make_node
from tests.autoscale.loop_helpers import FRAMEWORKS, Recorder

NOW = 1_700_000_000.0
MIN = 60.0


def build_node(name: str, group: str = "", *, cpu: str = "1000m", memory: str = "1000", ready: bool | None = True, created: float | None = None) -> dict:
    """BuildTestNode in ``group`` (none: no node group), then SetNodeReadyState(``ready``):
    condition Ready True, or False plus the not-ready taint; ``created`` sets its
    creationTimestamp (none: Go's zero time, long ago). ``ready=None``: no condition at all."""
    d = make_node(name, cpu=cpu, memory=memory, labels={GROUP_LABEL: group} if group else None)
    if ready is not None:
        set_ready(d, ready)
    if created is not None:
        d["metadata"]["creationTimestamp"] = rfc3339(created)
    return d


def set_ready(d: dict, ready: bool) -> dict:
    """SetNodeReadyState: the Ready condition; unready adds the not-ready taint."""
    conditions = [c for c in d["status"].get("conditions", []) if c["type"] != "Ready"]
    d["status"]["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}, *conditions]
    if not ready:
        not_ready_taint(d)
    return d


def not_ready_taint(d: dict) -> dict:
    """SetNodeNotReadyTaint."""
    d["spec"]["taints"] = [*d["spec"].get("taints", []), {"key": NOT_READY_TAINT, "effect": "NoSchedule"}]
    return d


def remove_not_ready_taint(d: dict) -> dict:
    """RemoveNodeNotReadyTaint."""
    d["spec"]["taints"] = [t for t in d["spec"].get("taints", []) if t["key"] != NOT_READY_TAINT]
    return d


def groups(*specs: tuple[str, int, int]) -> list[NodeGroup]:
    """(name, min, max) groups of 1-CPU nodes."""
    return [NodeGroup(n, template_node(n, {"cpu": "1", "memory": "1000"}), lo, hi) for n, lo, hi in specs]


def loop(ngs: list[NodeGroup], **options: object) -> ClusterAutoscaler:
    cfg = AutoscalerConfig(node_groups=ngs)
    for k, v in options.items():
        setattr(cfg, k, v)
    return ClusterAutoscaler(cfg.validate(), Recorder(), np.random.default_rng(0))


def ask(ca: ClusterAutoscaler, group: str, count: int, at: float = NOW) -> None:
    """``count`` nodes of ``group`` asked for at ``at`` and not registered (a scale-up under way)."""
    g = ca.cfg.group(group)
    for _ in range(count):
        name = ca.new_name(group)
        ca.upcoming[name] = Upcoming(group, at, node_named(g.template, name, {GROUP_LABEL: group}))


def measured(ca: ClusterAutoscaler, nodes: list[dict], now: float = NOW) -> LiveView:
    """The cluster's readiness and health as the loop measures them at ``now``."""
    view = LiveView(nodes, [], FRAMEWORKS)
    ca.measure(view.snapshot, now)
    return view


