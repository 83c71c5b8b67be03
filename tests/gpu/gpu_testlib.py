"""Builders for GPU nodes and pods, and the fragmentation oracles' inputs.

The two typical-pod lists are the inputs of the FGD simulator's own unit tests
(hkust-adsl/kubernetes-scheduler-simulator pkg/utils/frag_test.go), written here as
(milli-CPU, milli-GPU, GPU count, model, popularity) tuples.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kubesched.gpu.frag import FragModel, TypicalPods
from kubesched.gpu.model import GPU_COUNT, GPU_INDEX, GPU_MILLI, GPU_MODEL
from kubesched.testing import make_node, make_pod

# TestingGenerateGetTypicalPods: 35 specs, popularity in percent (they sum to 95.06, not 100).
TYPICAL_35 = [
    (6000, 465, 1, "", 9.33), (8000, 440, 1, "2080", 9.15), (8000, 475, 1, "T4", 8.76),
    (8000, 440, 1, "P100", 8.72), (2000, 465, 1, "", 8.68), (12000, 900, 1, "", 8.65),
    (4000, 900, 1, "", 8.43), (16000, 678, 1, "T4", 8.36), (8000, 500, 1, "", 8.29),
    (6000, 511, 1, "", 8.11), (14000, 1000, 2, "2080", 0.54), (4000, 1000, 1, "2080", 0.43),
    (32000, 1000, 2, "T4", 0.43), (16000, 1000, 1, "V100M16", 0.40), (64000, 1000, 2, "", 0.40),
    (10000, 1000, 2, "", 0.40), (11400, 1000, 1, "T4", 0.36), (16000, 1000, 1, "T4", 0.36),
    (4000, 1000, 2, "", 0.36), (14000, 1000, 2, "V100M16", 0.36), (8000, 1000, 4, "", 0.36),
    (16000, 1000, 2, "", 0.32), (2000, 1000, 1, "T4", 0.32), (6000, 1000, 1, "", 0.32),
    (4000, 1000, 1, "", 0.32), (5000, 1000, 1, "", 0.32), (32000, 1000, 4, "V100M16", 0.32),
    (32000, 1000, 2, "", 0.32), (24000, 1000, 8, "2080", 0.32), (40000, 1000, 4, "", 0.29),
    (32000, 1000, 8, "", 0.29), (32000, 1000, 1, "T4", 0.29), (16000, 1000, 1, "", 0.25),
    (7000, 1000, 1, "V100M16", 0.25), (24000, 1000, 1, "T4", 0.25),
]  # fmt: skip

# TestingGenerateGetTypicalPodsWithNonGpu: includes CPU-only specs (milli-GPU 0).
TYPICAL_WITH_CPU = [
    (15700, 1000, 1, "", 28.69), (11900, 1000, 1, "", 18.93), (11400, 1000, 1, "", 12.27),
    (1000, 0, 0, "", 7.36), (18710, 1000, 1, "", 4.85), (8200, 1000, 1, "", 3.79),
    (16400, 1000, 1, "", 3.31), (9810, 1000, 1, "", 1.97), (15200, 1000, 1, "", 1.87),
    (11200, 1000, 1, "", 1.81), (14200, 1000, 1, "", 1.76), (12000, 0, 0, "", 1.65),
    (14900, 1000, 1, "", 1.39), (60200, 1000, 4, "", 1.23), (64200, 1000, 8, "", 1.07),
    (32200, 1000, 4, "", 1.01), (17400, 1000, 2, "", 0.91), (30200, 1000, 2, "", 0.69),
    (16000, 1000, 1, "", 0.64), (15000, 1000, 1, "", 0.59), (64000, 1000, 8, "", 0.53),
    (15000, 0, 0, "", 0.53), (11910, 1000, 1, "", 0.53), (120200, 1000, 8, "", 0.48),
    (11300, 1000, 1, "", 0.37), (30000, 1000, 2, "", 0.32), (9800, 1000, 1, "", 0.32),
    (8000, 1000, 1, "", 0.32), (2000, 1000, 1, "", 0.27), (2000, 80, 1, "", 0.27),
    (1000, 1000, 1, "", 0.27),
]  # fmt: skip


def typical(specs: list[tuple[int, int, int, str, float]]) -> TypicalPods:
    return TypicalPods.from_specs([(c, g, n, m, p / 100) for c, g, n, m, p in specs])


def node_frag(specs: TypicalPods, left: list[int], cpu_left: int, model: str) -> float:
    """F_n(M) of one node given its GPUs' milli left, CPU left and card model."""
    fm = FragModel(specs, ["", model])
    return float(fm.amount(np.asarray([left], np.int64), np.asarray([cpu_left]), np.asarray([1]))[0])


def gpu_node(name: str, gpus: int, model: str = "G2", cpu: str = "64", memory: str = "256Gi") -> dict:
    extra = {GPU_COUNT: gpus, GPU_MILLI: 1000 * gpus} if gpus else {}
    labels = {GPU_MODEL: model} if model else {}
    return make_node(name, cpu=cpu, memory=memory, labels=labels, extra=extra)


def gpu_pod(
    name: str,
    milli: int = 0,
    count: int = 1,
    *,
    cpu: str = "1",
    memory: str = "1Gi",
    node: str | None = None,
    index: str | None = None,
    model: str | None = None,
) -> dict:
    d: dict[str, Any] = make_pod(name, requests={"cpu": cpu, "memory": memory}, node=node)
    ann: dict[str, str] = {}
    if milli:
        ann = {GPU_MILLI: str(milli), GPU_COUNT: str(count)}
    if model:
        ann[GPU_MODEL] = model
    if index is not None:
        ann[GPU_INDEX] = index
    d["metadata"]["annotations"] = ann
    return d
