"""Which nodes scale-down may consider (Cluster Autoscaler's core/scaledown/eligibility), through
the autoscaler's loop as ``kubesched autoscale`` runs it live and the simulator runs it."""

from __future__ import annotations

import numpy as np

from kubesched.app import build_registry
from kubesched.autoscale.config import (
    GROUP_LABEL,
    AutoscalerConfig,
    Delay,
    NodeGroup,
    ScaleDown,
    template_node,
)
from kubesched.autoscale.core import ClusterAutoscaler
from kubesched.autoscale.karpenter import KarpenterLike
from kubesched.autoscale.live import LiveView
from kubesched.config.load import default_config
from kubesched.gpu.model import GPU_MODEL
from kubesched.scheduler import Scheduler
from kubesched.state.snapshot import Snapshot
from kubesched.testing import make_node, make_pod

REG = build_registry()
FRAMEWORKS = Scheduler(default_config(REG.points_of), Snapshot(), None, REG, seed=0).frameworks
SMALL = NodeGroup("small", template_node("small", {"cpu": "4", "memory": "16Gi"}), 0, 5)


class Recorder:
    def __init__(self) -> None:
        self.deleted: list[str] = []

    def create(self, group, node) -> None:  # noqa: ANN001
        raise AssertionError("no scale-up expected")

    def delete(self, name: str) -> None:
        self.deleted.append(name)

    def cancel(self, name: str) -> None:
        raise AssertionError(f"{name} was given up on")


def config(mode: str = "cluster-autoscaler") -> AutoscalerConfig:
    quick = ScaleDown(unneeded_time=0.0, delay_after_add=0.0)  # an unneeded node may go at once
    return AutoscalerConfig(node_groups=[SMALL], mode=mode, provisioning_delay=Delay("constant", 0.0, 0.0), scale_down=quick).validate()


def group_node(name: str, *, memory: str | None = "16Gi", **kw) -> dict:
    return make_node(name, cpu="4", memory=memory, labels={GROUP_LABEL: "small"}, **kw)


def busy(node: str, cpu: str = "1") -> dict:
    return make_pod(f"on-{node}", requests={"cpu": cpu}, node=node)


def removed(nodes: list[dict], pods: list[dict] | None = None, mode: str = "cluster-autoscaler") -> list[str]:
    """The nodes one iteration of the loop deletes (no unneeded time to wait)."""
    prov = Recorder()
    cls = KarpenterLike if mode == "karpenter" else ClusterAutoscaler
    loop = cls(config(mode), prov, np.random.default_rng(0))
    if mode == "karpenter":
        loop.cfg.karpenter.consolidate_after = 0.0
    loop.run_once(LiveView(nodes, pods or [], FRAMEWORKS))
    return sorted(prov.deleted)


def test_node_without_memory_allocatable_is_not_unneeded():
    """CA's utilisation is an error there (info.go), so the node is not a scale-down candidate;
    its 1 of 4 CPUs (0.25) alone would have made it unneeded."""
    nodes = [group_node("no-memory", memory=None), group_node("regular", memory="16Gi")]
    pods = [busy("no-memory"), busy("regular")]
    assert removed(nodes, pods) == ["regular"]



def test_node_labelled_for_gpus_without_gpus_is_judged_by_its_gpus():
    """CA's unready GPU: utilisation 0, not its CPU's 0.6, so its pod moves and it goes."""
    unready = make_node("unready-gpu", cpu="4", memory="16Gi", labels={GROUP_LABEL: "small", GPU_MODEL: "V100M16"})
    spare = make_node("spare", cpu="4", memory="16Gi")  # no node group: never removed
    assert removed([unready, spare], [busy("unready-gpu", "2400m")]) == ["unready-gpu"]
