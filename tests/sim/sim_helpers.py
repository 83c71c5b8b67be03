"""Small hand-built clusters and pods for the simulator tests."""

from __future__ import annotations

from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.config import SchedulerConfig, default_config
from kubesched.config.load import parse_config
from kubesched.framework.registry import Registry
from kubesched.gpu.model import GPU_COUNT, GPU_MILLI, GPU_MODEL
from kubesched.plugins import in_tree_registry


def node(name: str, cpu: str = "4", mem: str = "8Gi", gpus: int = 0, model: str = "V100", **labels: str) -> Node:
    alloc: dict[str, Any] = {"cpu": cpu, "memory": mem, "pods": "110"}
    lab = dict(labels)
    if gpus:
        alloc[GPU_COUNT] = str(gpus)
        alloc[GPU_MILLI] = str(gpus * 1000)
        lab[GPU_MODEL] = model
    return Node.parse({"kind": "Node", "metadata": {"name": name, "labels": lab}, "status": {"allocatable": alloc}})


def pod(
    name: str, cpu: str = "1", mem: str = "1Gi", gpus: int = 0, milli: int = 1000, priority: int | None = None
) -> Pod:
    ann = {GPU_COUNT: str(gpus), GPU_MILLI: str(milli)} if gpus else {}
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": mem}}}]}
    if priority is not None:
        spec["priority"] = priority
    return Pod.parse({"kind": "Pod", "metadata": {"name": name, "uid": name, "annotations": ann}, "spec": spec})


def default_cfg() -> tuple[SchedulerConfig, Registry]:
    reg = in_tree_registry()
    return default_config(reg.points_of), reg


def gpu_cfg(score: str = "BestFitScore") -> tuple[SchedulerConfig, Registry]:
    """The FGD paper's profile shape: default filters + Open-Gpu-Share, one GPU score plugin."""
    reg = in_tree_registry()
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 100,
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {
                    "multiPoint": {"enabled": [{"name": "Open-Gpu-Share"}, {"name": score, "weight": 1000}]},
                    "score": {"disabled": [{"name": "*"}], "enabled": [{"name": score, "weight": 1000}]},
                },
            }
        ],
    }
    return parse_config(doc, "test-config", reg.points_of), reg
