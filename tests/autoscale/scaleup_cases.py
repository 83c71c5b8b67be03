"""One scale-up iteration of ``ClusterAutoscaler`` on a small cluster, as Cluster Autoscaler's
orchestrator tests set one up (``ScaleUpTestConfig``): nodes (each of a node group or none), pods
running on them, pending pods, and node groups whose templates look like their nodes."""

from __future__ import annotations

from collections import Counter

import numpy as np

from kubesched.autoscale.config import GROUP_LABEL, AutoscalerConfig, Delay, NodeGroup
from kubesched.autoscale.configfile import template_node
from kubesched.autoscale.core import ClusterAutoscaler
from kubesched.autoscale.live import LiveView
from kubesched.testing import make_node, make_pod
from tests.autoscale.loop_helpers import FRAMEWORKS, UNSCHEDULABLE, Recorder

MIB = 2**20


def node(name: str, cpu_m: int, mem: int, group: str = "", **extra: int) -> dict:
    """BuildTestNode: ``cpu_m`` millicores, ``mem`` bytes, 100 pods; in ``group`` if given."""
    return make_node(name, cpu=f"{cpu_m}m", memory=str(mem), pods=100, labels={GROUP_LABEL: group} if group else None, extra=extra or None)


def group(name: str, cpu_m: int, mem: int, min_size: int = 0, max_size: int = 10, **kw: object) -> NodeGroup:
    """A node group whose template is a ``cpu_m``/``mem`` node."""
    g = NodeGroup(name, template_node(name, {"cpu": f"{cpu_m}m", "memory": str(mem), "pods": 100}), min_size, max_size)
    for k, v in kw.items():
        setattr(g, k, v)
    return g


def pod(name: str, cpu_m: int, mem: int = 0, on: str = "") -> dict:
    """BuildTestPod: running on ``on``, or pending (marked unschedulable) without it."""
    requests = {"cpu": f"{cpu_m}m", **({"memory": str(mem)} if mem else {})}
    if on:
        return make_pod(name, requests=requests, node=on)
    return {**make_pod(name, requests=requests), "status": UNSCHEDULABLE}


class Provider(Recorder):
    """A Recorder that also records the nodes given up on."""

    def __init__(self) -> None:
        super().__init__()
        self.cancelled: list[str] = []

    def cancel(self, name: str) -> None:
        self.cancelled.append(name)


def loop(cfg: AutoscalerConfig, seed: int = 0) -> tuple[ClusterAutoscaler, Provider]:
    cfg.provisioning_delay = Delay("constant", 0.0, 0.0)
    prov = Provider()
    return ClusterAutoscaler(cfg.validate(), prov, np.random.default_rng(seed)), prov


def scale_up(cfg: AutoscalerConfig, nodes: list[dict], pods: list[dict], seed: int = 0) -> dict[str, int]:
    """The nodes asked for in one iteration, per group."""
    ca, prov = loop(cfg, seed)
    ca.run_once(LiveView(nodes, pods, FRAMEWORKS))
    return dict(Counter(prov.created))


class ViewAt(LiveView):
    """A LiveView at a chosen time (seconds), so that a test can step the clock."""

    def __init__(self, t: float, nodes: list[dict], pods: list[dict]) -> None:
        super().__init__(nodes, pods, FRAMEWORKS)
        self.t = t

    def now(self) -> float:
        return self.t

    def created(self, pod: object) -> float:
        return 0.0
