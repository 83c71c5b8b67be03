"""The openb elastic scenario: the openb pods replayed in time mode with compressed arrivals on a
small base cluster, under static clusters, Cluster Autoscaler (each expander) and the
Karpenter-like mode, each with a spreading and a packing scheduling profile.

Arrival of pod i: ``(creation_i - first creation) / k``; it runs for its trace duration
(``deletion - creation``, not compressed) once bound. The replay ends 15 minutes after the last
arrival (so every pod has had 15 minutes to be bound); a pod still pending 15 minutes after its
arrival has failed and is withdrawn. Node groups: one per node shape of the
node list, max = how many nodes of that shape the trace's cluster has; the base cluster is
``base`` nodes of the most common shape, which is also that group's min.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.objects import Node
from kubesched.autoscale.config import EXPANDERS, GROUP_LABEL, AutoscalerConfig, Delay, NodeGroup
from kubesched.autoscale.predicate import node_named
from kubesched.autoscale.shapes import shapes_of
from kubesched.autoscale.sim import FAIL_AFTER, ElasticResult, simulate_elastic
from kubesched.config import SchedulerConfig
from kubesched.errors import InputError
from kubesched.framework.registry import Registry
from kubesched.gpu.model import node_gpu_count
from kubesched.sim.gpu import pod_gpu_milli
from kubesched.sim.workload import Workload

PROFILES: dict[str, dict[str, Any]] = {
    # kube-scheduler's default profile (LeastAllocated: spreads) with the GPU filter
    "spread": {"plugins": {"multiPoint": {"enabled": [{"name": "Open-Gpu-Share"}]}}},
    # packing: MostAllocated for CPU and memory, GPU packing score on top
    "pack": {
        "plugins": {
            "multiPoint": {"enabled": [{"name": "Open-Gpu-Share"}, {"name": "GpuPackingScore", "weight": 10}]},
        },
        "pluginConfig": [
            {
                "name": "NodeResourcesFit",
                "args": {
                    "scoringStrategy": {
                        "type": "MostAllocated",
                        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                    }
                },
            }
        ],
    },
}
STATIC_MODES = ("static-base", "static-peak")
KARPENTER = "karpenter"


def all_modes() -> list[str]:
    return [*STATIC_MODES, *(f"ca-{e}" for e in EXPANDERS), KARPENTER]


def profile_config(name: str, registry: Registry) -> SchedulerConfig:
    from kubesched.config.load import parse_config

    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", **PROFILES[name]}],
    }
    return parse_config(doc, f"profile {name}", registry.points_of)


@dataclass
class Scenario:
    trace: Workload  # the trace as loaded (nodes: the node list, pods with their times)
    k: float = 60.0
    base: int = 8
    peak_headroom: float = 0.1
    delay: Delay = field(default_factory=Delay)
    autoscaler: AutoscalerConfig | None = None  # overrides (expander and mode set per run)

    def __post_init__(self) -> None:
        if not (math.isfinite(self.k) and self.k > 0):
            raise InputError(f"must be a positive number, got {self.k}", source="--compression")
        if self.base < 0:
            raise InputError(f"must be 0 or more, got {self.base}", source="--base-nodes")
        self.shapes = shapes_of(self.trace.nodes)
        if not self.shapes:
            raise InputError("the node list has no nodes", source="--nodes")
        self.base_shape = max(self.shapes, key=lambda s: self.shapes[s][1])
        t0 = min(self.trace.arrival, default=0.0)
        self.arrival = [(a - t0) / self.k for a in self.trace.arrival]
        self.end = max(self.arrival, default=0.0) + FAIL_AFTER

    def groups(self) -> list[NodeGroup]:
        out = []
        for name, (tmpl, count) in self.shapes.items():
            mn = self.base if name == self.base_shape else 0
            out.append(NodeGroup(name, tmpl, mn, max(count, mn)))
        return out

    def autoscaler_config(self, mode: str) -> AutoscalerConfig:
        cfg = dataclasses.replace(self.autoscaler) if self.autoscaler is not None else AutoscalerConfig()
        if not cfg.node_groups:
            cfg.node_groups = self.groups()
        cfg.provisioning_delay = self.delay
        if mode == KARPENTER:
            cfg.mode = "karpenter"
        else:
            cfg.mode = "cluster-autoscaler"
            cfg.expander = mode.removeprefix("ca-")
        return cfg.validate("scenario")

    def _nodes(self, shape: str, count: int) -> list[Node]:
        tmpl = self.shapes[shape][0]
        return [node_named(tmpl, f"{shape}-base-{i}", {GROUP_LABEL: shape}) for i in range(count)]

    def peak_demand(self) -> dict[str, float]:
        """Most CPU (milli), memory (bytes) and GPU (milli) requested at once if every pod ran
        from its arrival for its duration."""
        evs: list[tuple[float, int, int]] = []
        for i in range(len(self.trace.pods)):
            a, d = self.arrival[i], self.trace.duration[i]
            e = min(self.end, a + d) if d is not None else self.end
            evs.append((a, 1, i))
            evs.append((e, -1, i))
        evs.sort(key=lambda x: (x[0], x[1]))
        cur = [0.0, 0.0, 0.0]
        peak = [0.0, 0.0, 0.0]
        for _, sign, i in evs:
            p = self.trace.pods[i]
            for j, v in enumerate((p.requests.get("cpu", 0), p.requests.get("memory", 0), pod_gpu_milli(p))):
                cur[j] += sign * v
            peak = [max(a, b) for a, b in zip(peak, cur, strict=True)]
        return {"cpu": peak[0], "memory": peak[1], "gpu": peak[2]}

    def peak_nodes(self) -> int:
        """static-peak's size: base-shape nodes for the peak demand plus the headroom."""
        tmpl = self.shapes[self.base_shape][0]
        peak = self.peak_demand()
        cap = {"cpu": tmpl.allocatable.get("cpu", 0), "memory": tmpl.allocatable.get("memory", 0), "gpu": node_gpu_count(tmpl) * 1000}
        need = [math.ceil(peak[r] * (1 + self.peak_headroom) / cap[r]) for r in cap if cap[r] > 0]
        return max([self.base, *need])

    def workload(self, mode: str) -> Workload:
        n = self.peak_nodes() if mode == "static-peak" else self.base
        return Workload(
            self._nodes(self.base_shape, n),
            self.trace.pods,
            self.arrival,
            self.trace.duration,
            source=f"{self.trace.source}, k={self.k:g}",
        )

    def run(self, mode: str, profile: str, seed: int, registry: Registry) -> ElasticResult:
        cfg = None if mode in STATIC_MODES else self.autoscaler_config(mode)
        prices = cfg.prices if cfg is not None else (self.autoscaler.prices if self.autoscaler else None)
        res = simulate_elastic(
            profile_config(profile, registry),
            self.workload(mode),
            cfg,
            end_time=self.end,
            seed=seed,
            registry=registry,
            prices=prices,
            max_wait=FAIL_AFTER,
        )
        res.summary.update({"mode": mode, "profile": profile, "seed": seed})
        return res
